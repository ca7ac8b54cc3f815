import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { setOption } from '../../src/demo/woocommerce-schema';
import { PAYMENT_HUB, paymentHub, type CommandRun } from '../support/cli-process';
import { FakeWordPress, LOGGED_IN_KEY, LOGGED_IN_SALT } from '../support/fake-wordpress';
import { createTestShop, type TestShop } from '../support/test-shop';

// The CLI configured the way an operator configures the service: a `.env` in the folder it runs in (with PATH the
// only variable of the environment), which every command reads the same way, NODE_EXTRA_CA_CERTS included.

let shop: TestShop;
const folders: string[] = [];

test.before(async () => {
  shop = await createTestShop('operator_env');
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) }), 'no');
});

test.after.always(async () => {
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  await shop?.drop();
});

/** A folder of its own holding `files` (`.env` among them). */
function folderWith(files: Record<string, string>): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'operator-env-'));
  folders.push(folder);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(folder, name), text);
  return folder;
}

const dotEnv = (variables: Record<string, string>) => Object.entries(variables).map(([name, value]) => `${name}=${value}`).join('\n') + '\n';

interface Check { check: string; status: string; detail: string }

test('When .env names the shop\'s wp-config.php (WP_CONFIG_FILE), Then doctor reads it as workers list does: the configuration and the database pass', async (t) => {
  const folder = folderWith({
    'wp-config.php': `<?php\ndefine( 'DB_NAME', '${shop.dbName}' );\ndefine( 'DB_USER', 'root' );\ndefine( 'DB_PASSWORD', '' );\ndefine( 'DB_HOST', '127.0.0.1' );\n$table_prefix = '${shop.prefix}';\n`,
  });
  fs.writeFileSync(path.join(folder, '.env'), dotEnv({ WP_CONFIG_FILE: path.join(folder, 'wp-config.php') }));

  const workers = await paymentHub(['workers', 'list', '--json'], {}, folder);
  t.is(workers.code, 0, workers.stderr);

  const doctor = await paymentHub(['doctor', '--json'], {}, folder);
  const checks = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks;
  const statusOf = (name: string) => checks.find((check) => check.check === name)?.status;
  t.not(statusOf('configuration'), 'fail', JSON.stringify(checks, null, 2));
  t.is(statusOf('database'), 'ok', JSON.stringify(checks, null, 2));
  t.not(statusOf('woocommerce'), 'fail');
  t.is(statusOf('migrations'), 'ok');
});

test('When .env sets DB_NAME and the environment sets it too, Then the environment wins', async (t) => {
  const folder = folderWith({ '.env': dotEnv({ DB_NAME: 'no_such_shop_database', DB_TABLE_PREFIX: shop.prefix }) });
  const doctor = await paymentHub(['doctor', '--json'], { DB_NAME: shop.dbName }, folder);
  const checks = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks;
  t.is(checks.find((check) => check.check === 'database')?.status, 'ok', JSON.stringify(checks, null, 2));
});

test('When WordPress is served with a private CA and only .env names it (NODE_EXTRA_CA_CERTS), Then the hand-over reaches it; without that line it does not', async (t) => {
  const tls = selfSignedCertificate(folderWith({}));
  const wordpress = new FakeWordPress(shop, undefined, tls);
  await wordpress.start();
  const settings = { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: wordpress.url, WP_LOGGED_IN_KEY: LOGGED_IN_KEY, WP_LOGGED_IN_SALT: LOGGED_IN_SALT };
  try {
    const untrusted = await paymentHub(['woocommerce', 'status', '--json'], {}, folderWith({ '.env': dotEnv(settings) }));
    t.is(untrusted.code, 1);
    t.regex(JSON.parse(untrusted.stdout).route_message, /SELF_SIGNED|certificate/i);

    const trusted = await paymentHub(['woocommerce', 'status', '--json'], {}, folderWith({ '.env': dotEnv({ ...settings, NODE_EXTRA_CA_CERTS: tls.certFile }) }));
    t.is(trusted.code, 0, trusted.stdout + trusted.stderr);
    t.like(JSON.parse(trusted.stdout), { route: 'applied', companion_version: 3 });
    t.true(wordpress.received.some((request) => request.verified));
  } finally {
    await wordpress.stop();
  }
});

test('When .env names a CA file that holds no certificate, Then the command stops with one line naming NODE_EXTRA_CA_CERTS', async (t) => {
  const folder = folderWith({ 'not-a-ca.pem': 'hello\n' });
  fs.writeFileSync(path.join(folder, '.env'), dotEnv({ DB_NAME: shop.dbName, NODE_EXTRA_CA_CERTS: path.join(folder, 'not-a-ca.pem') }));
  const run = await paymentHub(['woocommerce', 'status'], {}, folder);
  t.is(run.code, 1);
  t.is(run.stderr, 'configuration error: NODE_EXTRA_CA_CERTS names a file with no PEM certificate\n');
});

test('When the site\'s LOGGED_IN_SALT is unknown but its URL is, Then woocommerce status names the salt, and where it is read from, and not the URL', async (t) => {
  const run = await paymentHub(['woocommerce', 'status', '--json'], {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: 'https://shop.example.dk', WP_LOGGED_IN_KEY: LOGGED_IN_KEY,
  }, folderWith({}));
  t.is(run.code, 1);
  const status = JSON.parse(run.stdout);
  t.is(status.route, 'not_configured');
  t.is(status.route_message, 'its LOGGED_IN_SALT (WP_CONFIG_FILE or WP_LOGGED_IN_SALT, or the logged_in_salt option) is unknown');

  await setOption(shop.db, shop.prefix, 'siteurl', '', 'yes');
  try {
    const neither = await paymentHub(['woocommerce', 'status', '--json'], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix }, folderWith({}));
    t.regex(JSON.parse(neither.stdout).route_message, /^the site's URL \(SHOP_URL, or the siteurl option\) and its LOGGED_IN_KEY .* and its LOGGED_IN_SALT .* are unknown$/);
  } finally {
    await setOption(shop.db, shop.prefix, 'siteurl', 'https://shop.example.dk', 'yes');
  }
});

test('When payment-hub runs in a folder without .env and nothing sets DB_NAME, Then the line says there is no .env there and to run it from the service\'s folder', async (t) => {
  const folder = fs.realpathSync(folderWith({}));
  const run = await paymentHub(['workers', 'list'], {}, folder);
  t.is(run.code, 1);
  t.is(run.stdout, '');
  t.is(run.stderr, `configuration error: DB_NAME is required but not set, and there is no .env in ${folder}: run it from the service's folder (where its .env is), or set the variables in the environment\n`);

  // With a .env there, the folder is not the cause: the line names the setting alone.
  const withDotEnv = folderWith({ '.env': dotEnv({ DB_TABLE_PREFIX: shop.prefix }) });
  const missing = await paymentHub(['workers', 'list'], {}, withDotEnv);
  t.is(missing.code, 1);
  t.is(missing.stderr, 'configuration error: DB_NAME is required but not set\n');
  // doctor says the same in its configuration check.
  const doctor = await paymentHub(['doctor', '--json'], {}, folder);
  const checks = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks;
  t.regex(checks.find((check) => check.check === 'configuration')!.detail, /^DB_NAME is required but not set, and there is no \.env in /);
});

test('When DB_HOST\'s port is not a whole number from 1 to 65535, Then the command stops with one line naming DB_HOST, before connecting anywhere; PORT likewise', async (t) => {
  for (const [dbHost, port] of [['127.0.0.1:33o6', '33o6'], ['127.0.0.1:', ''], ['127.0.0.1:0', '0'], ['127.0.0.1:65536', '65536'], ['[::1]:33o6', '33o6'], ['[::1]x', 'x'],
    ['127.0.0.1:3306x:/run/mysqld/mysqld.sock', '3306x']]) {
    const run = await paymentHub(['workers', 'list'], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, DB_HOST: dbHost }, folderWith({}));
    t.is(run.code, 1, dbHost);
    t.is(run.stderr, `configuration error: DB_HOST's port must be a whole number from 1 to 65535 (DB_HOST is host:port, e.g. 127.0.0.1:3306), not "${port}"\n`, dbHost);
  }
  for (const dbHost of ['127.0.0.1:3306', '127.0.0.1']) {
    const run = await paymentHub(['workers', 'list', '--format=count'], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, DB_HOST: dbHost }, folderWith({}));
    t.is(run.code, 0, `${dbHost}: ${run.stderr}`);
  }
  const badPort = await paymentHub(['workers', 'list'], { DB_NAME: shop.dbName, PORT: 'abc' }, folderWith({}));
  t.is(badPort.code, 1);
  t.is(badPort.stderr, 'configuration error: PORT must be a whole number from 0 to 65535\n');
});

/** Whether a user other than the owner may run `file`: every folder on its path searchable, the file executable. */
function othersMayRun(file: string): boolean {
  const real = fs.realpathSync(file);
  if ((fs.statSync(real).mode & 0o005) !== 0o005) return false;
  for (let folder = path.dirname(real); ; folder = path.dirname(folder)) {
    if ((fs.statSync(folder).mode & 0o001) === 0) return false;
    if (folder === path.dirname(folder)) return true;
  }
}

/**
 * A Node binary the other user can run. CI installs the Node lines it tests into a private temporary folder
 * (mktemp -d makes it 0700), where another user cannot reach this test's own Node; a copy beside the .env is reachable.
 */
function nodeForOthers(folder: string): string {
  if (othersMayRun(process.execPath)) return process.execPath;
  const copy = path.join(folder, 'node');
  fs.copyFileSync(process.execPath, copy);
  fs.chmodSync(copy, 0o755);
  return copy;
}

/** `payment-hub` run as another user than the one that owns the folder's .env. */
function paymentHubAs(uid: number, gid: number, args: string[], cwd: string): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeForOthers(cwd), [PAYMENT_HUB, ...args], { cwd, uid, gid, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Running as root, the test can be another user (nobody, 65534) that may not read a .env kept as the operator's guide says.
(process.getuid?.() === 0 ? test : test.skip)('When .env is readable only by its owner (chmod 600 .env), Then its owner\'s commands read it, and another user\'s stop with one line saying it cannot be read', async (t) => {
  const folder = fs.realpathSync(folderWith({ '.env': dotEnv({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix }) }));
  fs.chmodSync(folder, 0o755);
  // As docs/operators-guide.md has it.
  await new Promise<void>((resolve, reject) => execFile('chmod', ['600', '.env'], { cwd: folder }, (error) => (error ? reject(error) : resolve())));
  t.is(fs.statSync(path.join(folder, '.env')).mode & 0o777, 0o600);

  const owner = await paymentHub(['workers', 'list', '--format=count'], {}, folder);
  t.is(owner.code, 0, owner.stderr);

  const other = await paymentHubAs(65534, 65534, ['workers', 'list'], folder);
  t.is(other.code, 1);
  t.is(other.stderr, `configuration error: .env in ${folder} cannot be read: permission denied: run it as the user the service runs as, who owns .env\n`);
});
