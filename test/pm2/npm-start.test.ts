import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { eventually } from '../support/payment-hub-fixture';
import { basic, request } from '../support/http-client';
import { Pm2Home } from '../support/pm2-home';
import { freePort } from '../support/free-port';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, type TestShop } from '../support/test-shop';

// `npm start`: the API (cluster mode) and the worker (fork mode) under PM2 from ecosystem.config.js, each test
// with a PM2 of its own (a temporary PM2_HOME) that it kills at the end. Serial: each one is the whole service.

const API = 'shop-sidecar-api';
const WORKER = 'shop-sidecar-worker';
const ROOT = path.resolve(__dirname, '../../..');
const BAD_PLAN = 'configuration error: DUNNING_PLAN must be a comma-separated list of waits such as 12h,1d,2d';

let shop: TestShop;
const homes: Pm2Home[] = [];

function pm2Home(settings: Record<string, string>): Pm2Home {
  const home = new Pm2Home(settings);
  homes.push(home);
  return home;
}

async function serviceSettings(): Promise<Record<string, string>> {
  return {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, HOST: '127.0.0.1', PORT: String(await freePort()), SHOP_URL: 'https://shop.example.dk',
    HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET, HELPDESK_THROTTLE_MAX_FAILURES: '1000000',
  };
}

test.before(async () => {
  shop = await createTestShop('pm2_start');
});

test.after.always(async () => {
  for (const home of homes) await home.kill();
  await shop?.drop();
});

test.serial('When the service runs under PM2 and answers requests, Then each app\'s own log and `pm2 logs` hold its lines, and the daemon\'s pm2.log none of them', async (t) => {
  const settings = await serviceSettings();
  const pm2 = pm2Home(settings);
  const started = Date.now();
  const start = await pm2.npmStart();
  t.is(start.code, 0, start.stderr);
  t.log(`npm start: ${Date.now() - started} ms`);

  // `pm2 logs <app>` as the operator watches it: streamed from PM2's bus, not read from the files.
  const watching = spawn(process.execPath, [path.join(ROOT, 'node_modules/pm2/bin/pm2'), 'logs', API, '--raw', '--lines', '0'],
    { env: { ...process.env, PM2_HOME: pm2.home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let watched = '';
  // With --raw, PM2 prints an app's stderr lines on its own stderr.
  for (const stream of [watching.stdout!, watching.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => { watched += chunk; });
  const requestIds: string[] = [];
  const missing = (text: string) => requestIds.filter((id) => !text.includes(id));

  const base = `http://127.0.0.1:${settings.PORT}`;
  try {
    // Until `pm2 logs` has joined PM2's bus, a line is in the files only.
    const probes: string[] = [];
    await eventually(async () => {
      probes.push(String((await request(base, 'GET', '/health')).headers['x-request-id']));
      return probes.some((id) => watched.includes(id));
    }, 20_000, '`pm2 logs` to stream');
    const sent = Date.now();
    for (let i = 0; i < 40; i++) {
      // As nginx sends them (README, "Behind nginx"): the helpdesk route is served over HTTPS only.
      const answer = i % 2
        ? await request(base, 'GET', '/health')
        : await request(base, 'POST', '/helpdesk/v1/order-status', {
          headers: { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' }, body: { order_number: '999999', email: 'nobody@example.dk' },
        });
      t.true(answer.status === 200 || answer.status === 404, `${answer.status} ${answer.text}`);
      requestIds.push(String(answer.headers['x-request-id']));
    }
    await eventually(async () => missing(pm2.appLogs(API)).length === 0, 10_000, 'every request in the API\'s own log files').catch(() => undefined);
    t.log(`40 requests, then all in the API's log files: ${Date.now() - sent} ms`);
    await eventually(async () => missing(watched).length === 0, 5000, 'every request in `pm2 logs`').catch(() => undefined);
  } finally {
    watching.kill();
  }
  t.deepEqual(missing(pm2.appLogs(API)), [], 'every request\'s http_request line is in the API\'s own log files');
  t.deepEqual(missing(watched), [], 'every request\'s line is streamed by `pm2 logs shop-sidecar-api`');
  t.regex(pm2.appLogs(API), /"event":"api_listening"/);
  t.regex(pm2.appLogs(WORKER), /"event":"worker_started"/, 'the worker\'s own log holds its lines');
  t.notRegex(pm2.appLogs(WORKER), /"event":"http_request"/);
  t.deepEqual(requestIds.filter((id) => pm2.daemonLog().includes(id)), [], 'the daemon\'s pm2.log holds none of them');

  const apiLines = await pm2.pm2(['logs', API, '--nostream', '--lines', '100']);
  t.deepEqual(missing(apiLines.stdout).filter((id) => requestIds.slice(-20).includes(id)), [], '`pm2 logs shop-sidecar-api --nostream` shows the last requests');
  const workerLines = await pm2.pm2(['logs', WORKER, '--nostream', '--lines', '20']);
  t.regex(workerLines.stdout, /worker_started/);
});

test.serial('When a setting is bad, Then `npm start` exits non-zero naming it, and launches nothing', async (t) => {
  const pm2 = pm2Home({ ...await serviceSettings(), DUNNING_PLAN: 'bogus' });
  const started = Date.now();
  const start = await pm2.npmStart();
  t.log(`npm start: ${Date.now() - started} ms, exit ${start.code}`);
  t.not(start.code, 0);
  t.true(start.stderr.includes(BAD_PLAN), start.stderr);
  t.false(start.stdout.includes('launched'), start.stdout);
  t.false(pm2.daemonStarted(), 'no PM2 daemon was started');
});

test.serial('When a setting goes bad while the service runs, Then `npm run reload` refuses naming it and the service goes on; with good settings it reloads losing no request', async (t) => {
  const settings = await serviceSettings();
  const pm2 = pm2Home(settings);
  const start = await pm2.npmStart();
  t.is(start.code, 0, start.stderr);

  const refused = await pm2.npmRun('reload', { DUNNING_PLAN: 'bogus' });
  t.not(refused.code, 0);
  t.true(refused.stderr.includes(BAD_PLAN), refused.stderr);
  t.deepEqual([...new Set((await pm2.apps()).map((app) => `${app.name} ${app.pm2_env.status} ${app.pm2_env.restart_time}`))].sort(),
    [`${API} online 0`, `${WORKER} online 0`], 'nothing was replaced');

  // A client asking all through the reload, one new connection each time (as nginx without keep-alive).
  const base = `http://127.0.0.1:${settings.PORT}`;
  const statuses: (number | string)[] = [];
  let reloading = true;
  const client = (async () => {
    while (reloading) statuses.push(await request(base, 'GET', '/health', { timeoutMs: 10_000 }).then((answer) => answer.status, (error: Error) => error.message));
  })();
  const started = Date.now();
  const reloaded = await pm2.npmRun('reload');
  t.log(`npm run reload: ${Date.now() - started} ms, ${statuses.length} requests meanwhile`);
  reloading = false;
  await client;
  t.is(reloaded.code, 0, reloaded.stderr);
  t.deepEqual([...new Set((await pm2.apps()).map((app) => `${app.name} ${app.pm2_env.status} ${app.pm2_env.restart_time}`))].sort(),
    [`${API} online 1`, `${WORKER} online 1`]);
  t.true(statuses.length > 10);
  t.deepEqual(statuses.filter((status) => status !== 200), [], 'every request answered 200');
});

test.serial('When the apps get a bad setting all the same (`pm2 start` without npm), Then they stop instead of restarting, each saying why last in its own log', async (t) => {
  const pm2 = pm2Home({ ...await serviceSettings(), DUNNING_PLAN: 'bogus' });
  const started = Date.now();
  const start = await pm2.pm2(['start', 'ecosystem.config.js']);
  t.is(start.code, 0, start.stderr);
  t.log(`pm2 start: ${Date.now() - started} ms`);
  const stopped = async () => {
    const apps = await pm2.apps();
    return apps.length === 3 && apps.every((app) => app.pm2_env.status === 'stopped') ? apps : undefined;
  };
  const apps = await eventually(stopped, 20_000, 'all three processes stopped').catch(async () => pm2.apps());
  t.log(`all stopped: ${Date.now() - started} ms`);
  // Long enough for PM2 to have restarted them several times, had it wanted to.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const later = await pm2.apps();
  const states = later.map((app) => `${app.name} ${app.pm2_env.status}, ${app.pm2_env.restart_time} restarts, exit ${app.pm2_env.exit_code}`);
  t.deepEqual([...new Set(states)].sort(), [`${API} stopped, 0 restarts, exit 78`, `${WORKER} stopped, 0 restarts, exit 78`], JSON.stringify((apps ?? []).map((app) => app.pm2_env.status)));
  for (const app of later) {
    const log = fs.readFileSync(app.pm2_env.pm_err_log_path, 'utf8').trim().split('\n');
    t.is(log.at(-1), BAD_PLAN, `${app.name} ${app.pm_id}: its own log ends with the line naming the setting: ${JSON.stringify(log.slice(-3))}`);
  }
  t.false(pm2.daemonLog().includes('EPIPE'), 'no write EPIPE');
});
