import test from 'ava';
import { request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { Pm2Home, type Pm2App } from '../support/pm2-home';
import { PrivateMariaDb } from '../support/private-mariadb';
import { freePort } from '../support/free-port';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, type TestShop } from '../support/test-shop';

// A configuration that cannot run never replaces one that does: `npm run reload` tries the new settings for
// real (the database with those credentials, this shop under that prefix, Redis) before PM2 touches a process,
// and a process started before its database waits for it instead of crashing in a loop. Each test has a PM2 of
// its own (a temporary PM2_HOME); the database-down test a MariaDB server of its own, stopped and started.

const API = 'shop-sidecar-api';
const WORKER = 'shop-sidecar-worker';

let shop: TestShop;
const homes: Pm2Home[] = [];
let privateServer: PrivateMariaDb | undefined;

async function serviceSettings(forShop: TestShop, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    DB_NAME: forShop.dbName, DB_TABLE_PREFIX: forShop.prefix, HOST: '127.0.0.1', PORT: String(await freePort()), SHOP_URL: 'https://shop.example.dk',
    HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET, ...extra,
  };
}

function pm2Home(settings: Record<string, string>): Pm2Home {
  const home = new Pm2Home(settings);
  homes.push(home);
  return home;
}

const states = async (pm2: Pm2Home) => [...new Set((await pm2.apps()).map((app: Pm2App) => `${app.name} ${app.pm2_env.status} ${app.pm2_env.restart_time}`))].sort();

/** A client asking /health all through `during`, one new connection each time (as nginx without keep-alive): every status seen. */
async function askThroughout(base: string, during: () => Promise<unknown>): Promise<(number | string)[]> {
  const statuses: (number | string)[] = [];
  let asking = true;
  const client = (async () => {
    while (asking) {
      statuses.push(await request(base, 'GET', '/health', { timeoutMs: 10_000 }).then((answer) => answer.status, (error: Error) => error.message));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await during();
  } finally {
    asking = false;
    await client;
  }
  return statuses;
}

test.before(async () => {
  shop = await createTestShop('pm2_check');
});

test.after.always(async () => {
  for (const home of homes) await home.kill();
  await shop?.drop();
  await privateServer?.cleanup();
});

for (const [setting, bad, named] of [
  ['DB_PASSWORD', 'wrongpassword', /^configuration error: DB_PASSWORD: the database at 127\.0\.0\.1:3306 refused 'root'@'[^']+'.*Fix: check DB_PASSWORD first: it may be wrong.*host.*The running processes were left as they are\.$/m],
  // Refused as it is read, before anything is tried: the same line's parts, the fix and what became of the service.
  ['DB_TABLE_PREFIX', 'wp-', /^configuration error: DB_TABLE_PREFIX may hold only letters, digits and underscores\. Fix: set DB_TABLE_PREFIX to \$table_prefix from the shop's wp-config\.php \(such as wp_\)\. The running processes were left as they are\.$/m],
  ['REDIS_URL', 'redis://127.0.0.1:1', /^configuration error: REDIS_URL: no answer from Redis at 127\.0\.0\.1:1.*Fix: start redis-server/m],
  ['DB_TABLE_PREFIX', 'wrong_', /^configuration error: DB_TABLE_PREFIX: no WooCommerce in \S+ with prefix wrong_\. Fix: check DB_NAME and DB_TABLE_PREFIX/m],
] as const) {
  test.serial(`When ${setting} goes wrong (${bad}) in the settings of a running service, Then \`npm run reload\` exits non-zero with one line naming ${setting}, and the old processes answer every request during and after it`, async (t) => {
    const settings = await serviceSettings(shop);
    const pm2 = pm2Home(settings);
    const start = await pm2.npmStart();
    t.is(start.code, 0, start.stderr);
    const base = `http://127.0.0.1:${settings.PORT}`;
    await eventually(async () => (await request(base, 'GET', '/health')).status === 200, 20_000, 'the service to answer');
    const before = await states(pm2);

    let refused: Awaited<ReturnType<Pm2Home['npmRun']>> | undefined;
    const during = await askThroughout(base, async () => {
      const started = Date.now();
      refused = await pm2.npmRun('reload', { [setting]: bad });
      t.log(`npm run reload with a bad ${setting}: ${Date.now() - started} ms, exit ${refused.code}`);
    });
    t.not(refused!.code, 0);
    const lines = refused!.stderr.split('\n').filter((line) => line.startsWith('configuration error:'));
    t.is(lines.length, 1, refused!.stderr);
    t.regex(lines[0]!, named);
    t.log(lines[0]);
    t.false(refused!.stdout.includes('[PM2]'), 'PM2 was not asked to reload');

    const after = await askThroughout(base, () => new Promise((resolve) => setTimeout(resolve, 2000)));
    t.deepEqual(await states(pm2), before, 'nothing was replaced or restarted');
    t.true(during.length > 3 && after.length > 3, `${during.length} requests during, ${after.length} after`);
    t.deepEqual([...during, ...after].filter((status) => status !== 200), [], 'every request answered 200');
  });
}

test.serial('When MariaDB is down at `npm start` and comes up later, Then the API and the worker wait for it, saying so once, and serve within seconds of its return, with no restart', async (t) => {
  privateServer = await PrivateMariaDb.start();
  const ownShop = await createTestShop('pm2_boot', { host: privateServer.host, port: privateServer.port });
  try {
    const settings = await serviceSettings(ownShop, { DB_HOST: privateServer.host, DB_PORT: String(privateServer.port) });
    await privateServer.stop();
    const pm2 = pm2Home(settings);
    const start = await pm2.npmStart();
    t.is(start.code, 0, start.stderr);
    t.regex(start.stderr, /^warning: no database server answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): the processes wait for it/m);
    const base = `http://127.0.0.1:${settings.PORT}`;
    await eventually(async () => pm2.appLogs(API).includes('"event":"waiting_for_database"') && pm2.appLogs(WORKER).includes('"event":"waiting_for_database"'), 30_000, 'both to say they wait');
    t.not((await request(base, 'GET', '/health').then((answer) => answer.status, () => 'refused')), 200, 'nothing serves without the database');
    await new Promise((resolve) => setTimeout(resolve, 3000));

    await privateServer.start();
    const back = Date.now();
    await eventually(async () => (await request(base, 'GET', '/health').then((answer) => answer.status, () => 0)) === 200, 30_000, 'the API to serve');
    const servedAfterMs = Date.now() - back;
    t.log(`the API served ${servedAfterMs} ms after MariaDB answered again`);
    t.true(servedAfterMs < 10_000, `${servedAfterMs} ms`);
    await eventually(async () => pm2.appLogs(WORKER).includes('"event":"worker_started"'), 20_000, 'the worker to start');

    const apps = await pm2.apps();
    t.deepEqual([...new Set(apps.map((app) => `${app.name} ${app.pm2_env.status} ${app.pm2_env.restart_time}`))].sort(), [`${API} online 0`, `${WORKER} online 0`], 'no restart');
    for (const name of [API, WORKER]) {
      const logs = pm2.appLogs(name);
      // One line per process says what it waits for, however long it waited.
      const waiting = logs.split('\n').filter((line) => line.includes('"event":"waiting_for_database"'));
      t.is(waiting.length, apps.filter((app) => app.name === name).length, `${name}: ${waiting.join('\n')}`);
      t.regex(waiting[0]!, /"fix":"start MariaDB/);
      t.regex(logs, /"event":"database_available"/);
    }
  } finally {
    await ownShop.drop().catch(() => undefined);
  }
});
