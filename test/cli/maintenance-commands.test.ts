import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { createTestShop, type TestShop } from '../support/test-shop';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../../..');
let shop: TestShop;
const tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-tls-'));
const [site, other] = [selfSignedCertificate(path.join(tlsDir, 'site')), selfSignedCertificate(path.join(tlsDir, 'other'))];

/** Runs a built entry point the way the npm scripts do; any exit code is an answer. */
async function command(script: string, args: string[], env: Record<string, string | undefined>) {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(root, 'dist/src/entry-points', script), ...args], {
      cwd: root, env: { PATH: process.env.PATH, DB_TABLE_PREFIX: shop.prefix, ...env }, timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test.before(async () => {
  shop = await createTestShop('maintenance', { prefix: 'shop9_' });
  await shop.seeder.createOrder({ status: 'processing', total: '10.00', billing: { email: 'a@example.dk', phone: '20202020', country: 'DK' } });
});

test.after.always(async () => {
  fs.rmSync(tlsDir, { recursive: true, force: true });
  await shop?.drop();
});

test('When migrate runs again, Then it changes nothing and says the schema is up to date', async (t) => {
  const again = await command('cli/migrate.js', [], { DB_NAME: shop.dbName });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /schema is up to date/);
  const [tables] = await shop.db.query(`SHOW TABLES LIKE '${shop.prefix}sidecar\\_%'`) as any[];
  t.true(tables.length >= 6);
});

test('When the operator adds and removes the order number index, Then only that index on postmeta changes', async (t) => {
  const indexes = async () => ((await shop.db.query(`SHOW INDEX FROM ${shop.prefix}postmeta`)) as any[])[0].map((row: any) => row.Key_name);
  const before = await indexes();
  t.regex((await command('cli/order-number-index.js', ['status'], { DB_NAME: shop.dbName })).stdout, /index absent/);
  t.regex((await command('cli/order-number-index.js', ['add'], { DB_NAME: shop.dbName })).stdout, /index added/);
  t.regex((await command('cli/order-number-index.js', ['add'], { DB_NAME: shop.dbName })).stdout, /index present/);
  t.deepEqual((await indexes()).filter((name: string) => !before.includes(name)), ['shop_sidecar_order_number', 'shop_sidecar_order_number']);
  t.regex((await command('cli/order-number-index.js', ['remove'], { DB_NAME: shop.dbName })).stdout, /index removed/);
  t.deepEqual(await indexes(), before);
  const usage = await command('cli/order-number-index.js', ['drop-everything'], { DB_NAME: shop.dbName });
  t.is(usage.code, 2);
});

for (const [name, env, message] of [
  // The repository's root has no .env (in CI), so the line says where it looked.
  ['DB_NAME is missing', {}, `configuration error: DB_NAME is required but not set, and there is no .env in ${root}: run it from the service's folder (where its .env is), or set the variables in the environment`],
  ['PORT is not a number', { DB_NAME: 'x', PORT: 'eighty' }, 'configuration error: PORT must be a whole number from 0 to 65535'],
  ['API_HEAP_GROWTH_PERCENT is out of range', { DB_NAME: 'x', API_HEAP_GROWTH_PERCENT: '1000' }, 'configuration error: API_HEAP_GROWTH_PERCENT must be a whole number from 0 to 400'],
  ['TRUSTED_PROXIES is not an address list', { DB_NAME: 'x', TRUSTED_PROXIES: '10.0.0.0/99' }, 'configuration error: TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges'],
  ['DUNNING_PLAN is malformed', { DB_NAME: 'x', DUNNING_PLAN: '12 hours' }, 'configuration error: DUNNING_PLAN must be a comma-separated list of waits such as 12h,1d,2d'],
  ['only one TLS file is set', { DB_NAME: 'x', TLS_CERT_FILE: __filename }, 'configuration error: TLS_KEY_FILE must be set together with the other TLS file'],
  ['TLS_CERT_FILE is not a certificate', { DB_NAME: 'x', TLS_CERT_FILE: __filename, TLS_KEY_FILE: site.keyFile }, 'configuration error: TLS_CERT_FILE is not a PEM certificate'],
  ['TLS_KEY_FILE is not a key', { DB_NAME: 'x', TLS_CERT_FILE: site.certFile, TLS_KEY_FILE: site.certFile }, 'configuration error: TLS_KEY_FILE is not an unencrypted PEM private key'],
  ['TLS_KEY_FILE is another certificate\'s key', { DB_NAME: 'x', TLS_CERT_FILE: site.certFile, TLS_KEY_FILE: other.keyFile }, 'configuration error: TLS_KEY_FILE is not the key of the certificate in TLS_CERT_FILE'],
] as const) {
  test(`When ${name}, Then the API stops at start with one line naming it`, async (t) => {
    const result = await command('http/main.js', [], { HELPDESK_API_SECRET: 'never-printed', ...env });
    t.is(result.code, 78, 'EX_CONFIG: PM2 does not restart it (stop_exit_codes)');
    t.is(result.stderr.trim(), message);
    t.false(result.stderr.includes('never-printed'));
  });
}
