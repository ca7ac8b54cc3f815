import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CONFIGURATION_EXIT_CODE } from '../../src/entry-points/service-configuration';
import { paymentHub, runCommand } from '../support/cli-process';

// A dunning cap above the card schemes' ceiling stops every process at start, and doctor names the rule.
// The configuration is refused before any connection, so no database is needed.

const root = path.resolve(__dirname, '../../..');
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'dunning-caps-'));
test.after.always(() => fs.rmSync(cwd, { recursive: true, force: true }));

const PER_DAY = 'DUNNING_MAX_CHARGES_PER_DAY must be at most 10: Mastercard allows 10 attempts per card in 24 hours';
const PER_30_DAYS = 'DUNNING_MAX_CHARGES_PER_30_DAYS must be at most 20: Visa allows 20 reattempts per card in 30 days (since 19 May 2025)';

for (const [name, env, message] of [
  ['DUNNING_MAX_CHARGES_PER_DAY is above Mastercard\'s 10', { DUNNING_MAX_CHARGES_PER_DAY: '11' }, PER_DAY],
  ['DUNNING_MAX_CHARGES_PER_30_DAYS is above Visa\'s 20', { DUNNING_MAX_CHARGES_PER_30_DAYS: '35' }, PER_30_DAYS],
] as const) {
  for (const script of ['http/main.js', 'worker/main.js']) {
    test(`When ${name}, Then ${script} stops at start with one line naming the rule`, async (t) => {
      const run = await runCommand(process.execPath, [path.join(root, 'dist/src/entry-points', script)], {
        cwd, env: { PATH: process.env.PATH ?? '', DB_NAME: 'x', ...env },
      });
      t.is(run.code, CONFIGURATION_EXIT_CODE, 'EX_CONFIG: PM2 does not restart it (stop_exit_codes)');
      t.is(run.stderr.trim(), `configuration error: ${message}`);
    });
  }

  test(`When ${name}, Then doctor fails the configuration check with the rule`, async (t) => {
    const run = await paymentHub(['doctor', '--json'], { DB_NAME: 'x', ...env }, cwd);
    t.is(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: { check: string; status: string; detail: string }[] };
    t.false(report.ok);
    t.like(report.checks.find((check) => check.check === 'configuration'), { status: 'fail', detail: message });
  });
}
