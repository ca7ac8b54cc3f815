import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../src/config';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { paymentHub } from '../support/cli-process';
import { eventually } from '../support/payment-hub-fixture';
import { request } from '../support/http-client';
import { PrivateMariaDb } from '../support/private-mariadb';
import { startServiceProcess } from '../support/service-process';
import { createTestShop, type TestShop } from '../support/test-shop';

// The shop's database reached the ways WordPress's wp-config.php can say: over TLS (MYSQL_CLIENT_FLAGS and a CA
// file) and over a Unix socket (DB_HOST `localhost:/path`), by the API, the worker and the CLI, with the whole
// configuration taken from a wp-config.php. The server is a MariaDB of this test's own that takes TLS, and a
// user that may log in only over TLS shows the connection really is encrypted.

const TLS_USER = 'sidecar_tls';
const TLS_PASSWORD = 'tls-only-password';

let mariadb: PrivateMariaDb;
let shop: TestShop;
let tls: { certFile: string; keyFile: string };
let dir: string;

test.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-connections-'));
  tls = selfSignedCertificate(path.join(dir, 'tls'));
  mariadb = await PrivateMariaDb.start({ tls });
  shop = await createTestShop('db_connections', { host: mariadb.host, port: mariadb.port });
  const admin = await mysql.createConnection({ host: mariadb.host, port: mariadb.port, user: 'root' });
  await admin.query(`CREATE USER '${TLS_USER}'@'127.0.0.1' IDENTIFIED BY '${TLS_PASSWORD}' REQUIRE SSL`);
  await admin.query(`GRANT ALL ON \`${shop.dbName}\`.* TO '${TLS_USER}'@'127.0.0.1'`);
  await admin.end();
});

test.after.always(async () => {
  await shop?.drop().catch(() => undefined);
  await mariadb?.stop().catch(() => undefined);
  await mariadb?.cleanup();
});

/** A wp-config.php as a shop has it, for this test's database. */
function wpConfigFile(name: string, lines: string[]): string {
  const file = path.join(dir, `${name}.php`);
  fs.writeFileSync(file, `<?php\n${[
    `define( 'DB_NAME', '${shop.dbName}' );`,
    ...lines,
    `$table_prefix = '${shop.prefix}';`,
    `define( 'WP_SITEURL', 'https://shop.example.dk' );`,
    `if ( ! defined( 'ABSPATH' ) ) { define( 'ABSPATH', __DIR__ . '/' ); }`,
    `require_once ABSPATH . 'wp-settings.php';`,
  ].join('\n')}\n`);
  return file;
}

const overTls = () => wpConfigFile('tls', [
  `define( 'DB_USER', '${TLS_USER}' );`,
  `define( 'DB_PASSWORD', '${TLS_PASSWORD}' );`,
  `define( 'DB_HOST', '${mariadb.host}:${mariadb.port}' );`,
  `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`,
  `define( 'MYSQL_SSL_CA', '${tls.certFile}' );`,
]);

/** The CLI as an operator runs it, in a folder of its own (no .env), configured only by the variables given. */
const cli = (args: string[], env: Record<string, string>) => paymentHub(args, env, dir);

test.serial('Configured by wp-config.php alone, the CLI reaches the database over TLS with the CA file; without the TLS flags it is refused and says so', async (t) => {
  const listed = await cli(['webhooks', 'list', '--json'], { WP_CONFIG_FILE: overTls() });
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(JSON.parse(listed.stdout), []);

  const plain = wpConfigFile('plain', [
    `define( 'DB_USER', '${TLS_USER}' );`,
    `define( 'DB_PASSWORD', '${TLS_PASSWORD}' );`,
    `define( 'DB_HOST', '${mariadb.host}:${mariadb.port}' );`,
  ]);
  const refused = await cli(['webhooks', 'list', '--json'], { WP_CONFIG_FILE: plain });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /cannot connect to the database .*Access denied/);
});

test.serial('A certificate the CA file does not vouch for is refused unless MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT says not to check it', async (t) => {
  const other = selfSignedCertificate(path.join(dir, 'other-ca'));
  const wrongCa = wpConfigFile('wrong-ca', [
    `define( 'DB_USER', '${TLS_USER}' );`,
    `define( 'DB_PASSWORD', '${TLS_PASSWORD}' );`,
    `define( 'DB_HOST', '${mariadb.host}:${mariadb.port}' );`,
    `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`,
    `define( 'MYSQL_SSL_CA', '${other.certFile}' );`,
  ]);
  const refused = await cli(['webhooks', 'list', '--json'], { WP_CONFIG_FILE: wrongCa });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /cannot connect to the database .*(certificate|self.signed)/i);
  const unchecked = await cli(['webhooks', 'list', '--json'], { WP_CONFIG_FILE: wrongCa, MYSQL_CLIENT_FLAGS: 'MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT' });
  t.is(unchecked.code, 0, unchecked.stderr);
});

/**
 * `npm run api` and `npm run worker` as the operator starts them, configured by nothing but WP_CONFIG_FILE: the
 * API's /health reaches the database, and the worker reports itself, then leaves on SIGTERM over a
 * connection of its own (its pool closed by then), exiting 0.
 */
async function apiAndWorkerFrom(t: ExecutionContext, wpConfig: string) {
  const env = { WP_CONFIG_FILE: wpConfig, PORT: '0' };
  const api = startServiceProcess('api', env);
  const worker = startServiceProcess('worker', env);
  const workers = async () => (await shop.db.query(`SELECT pid FROM ${shop.prefix}sidecar_workers`))[0] as { pid: number }[];
  try {
    const listening = await api.logged('api_listening');
    const health = await request(String(listening.url), 'GET', '/health');
    t.like(health.json, { db: 'ok' });
    await worker.logged('worker_started');
    await eventually(async () => (await workers()).some((row) => row.pid === worker.child.pid), 10_000, 'the worker\'s report');
    worker.signal('SIGTERM');
    t.is(await worker.exited, 0);
    t.false((await workers()).some((row) => row.pid === worker.child.pid), 'it left over a connection of its own');
  } finally {
    await Promise.all([api.kill(), worker.kill()]);
  }
}

test.serial('The API and the worker, configured by wp-config.php alone, run over TLS', async (t) => {
  const config = loadConfig({ WP_CONFIG_FILE: overTls() });
  t.like(config.db, { user: TLS_USER, tls: { caFile: tls.certFile, verify: true } });
  await apiAndWorkerFrom(t, overTls());
});

test.serial('Over the Unix socket DB_HOST names (localhost:/path/to/mysqld.sock), the CLI, the API and the worker reach the database', async (t) => {
  const file = wpConfigFile('socket', [
    `define( 'DB_USER', 'root' );`,
    `define( 'DB_PASSWORD', '' );`,
    `define( 'DB_HOST', 'localhost:${mariadb.socketPath}' );`,
  ]);
  t.is(loadConfig({ WP_CONFIG_FILE: file }).db.socketPath, mariadb.socketPath);
  const listed = await cli(['webhooks', 'list', '--json'], { WP_CONFIG_FILE: file });
  t.is(listed.code, 0, listed.stderr);
  await apiAndWorkerFrom(t, file);
});
