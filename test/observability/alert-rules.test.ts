import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from '../support/http-client';
import { codeBlocks, readDoc } from '../support/markdown';
import { startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi } from '../support/test-shop';

// The shipped alert rules, checked and unit-tested by Prometheus's own promtool (Debian's `prometheus`
// package), and held against what GET /metrics really serves, so no rule watches a series that is never there.

const ROOT = path.resolve(__dirname, '../../..');
const RULES = path.join(ROOT, 'src/observability/alerts/shop-sidecar.rules.yml');
const RULE_TESTS = path.join(ROOT, 'test/observability/shop-sidecar.rules.test.yml');
const DASHBOARD = path.join(ROOT, 'src/observability/grafana/shop-sidecar.dashboard.json');

function promtool(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('promtool', args, { cwd: path.dirname(RULE_TESTS) }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve({ code: 127, output: 'promtool is not installed (Debian: apt-get install prometheus)' });
        return;
      }
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

test('promtool check rules: the rules file is valid', async (t) => {
  const checked = await promtool(['check', 'rules', RULES]);
  t.is(checked.code, 0, checked.output);
  t.regex(checked.output, /SUCCESS: \d+ rules found/);
});

test('promtool test rules: each alert fires when it should, with its labels and annotations, and not before', async (t) => {
  const tested = await promtool(['test', 'rules', RULE_TESTS]);
  t.is(tested.code, 0, tested.output);
});

test('promtool check config: the operator\'s guide\'s prometheus.yml is valid with the rules file, and scrapes /metrics under the job name the rules expect', async (t) => {
  const blocks = codeBlocks(readDoc('docs/operators-guide.md')).filter((block) => block.language === 'yaml' && block.lines[0].includes('prometheus.yml'));
  t.is(blocks.length, 1);
  const config = blocks[0].lines.join('\n');
  t.regex(config, /job_name: shop-sidecar\n/);
  t.regex(config, /metrics_path: \/metrics\n/);
  t.regex(fs.readFileSync(RULES, 'utf8'), /job="shop-sidecar"/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prometheus-config-'));
  try {
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), `${config}\n`);
    // As the guide says: the rules file copied beside it.
    fs.copyFileSync(RULES, path.join(dir, 'shop-sidecar.rules.yml'));
    const checked = await promtool(['check', 'config', path.join(dir, 'prometheus.yml')]);
    t.is(checked.code, 0, checked.output);
    t.regex(checked.output, /SUCCESS: \d+ rules found/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('The Grafana dashboard is importable: one Prometheus datasource variable, a query in every panel, no two panels in one place', (t) => {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
  t.is(dashboard.uid, 'shop-sidecar');
  t.deepEqual(dashboard.templating.list.map((variable: { name: string; type: string }) => [variable.name, variable.type]), [['datasource', 'datasource']]);
  const places = new Set<string>();
  for (const panel of dashboard.panels) {
    t.true(panel.targets.length > 0 && panel.targets.every((target: { expr: string }) => /\bsidecar_/.test(target.expr)), panel.title);
    places.add(`${panel.gridPos.x},${panel.gridPos.y}`);
  }
  t.is(places.size, dashboard.panels.length);
});

test('Every sidecar_ series the rules and the dashboard watch is served by GET /metrics', async (t) => {
  const text = fs.readFileSync(RULES, 'utf8') + fs.readFileSync(DASHBOARD, 'utf8');
  const watched = [...new Set((text.match(/\bsidecar_[a-z_]+/g) ?? []).map((name) => name.replace(/_bucket$/, '')))];
  const shop = await createTestShop('alert_rules');
  const config = shop.config();
  const api = await startApi(config);
  // The worker reports itself, so the workers' series are there too.
  const worker = await startTestWorker(config);
  try {
    const served = (await request(api.url, 'GET', '/metrics')).text;
    const names = new Set(served.split('\n').filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2]));
    // A counter's series are named with _total; a rule may name either.
    const missing = watched.filter((name) => !names.has(name) && !names.has(name.replace(/_total$/, '')));
    t.deepEqual(missing, []);
  } finally {
    await worker.stop();
    await api.stop();
    await shop.drop();
  }
});
