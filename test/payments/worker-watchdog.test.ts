import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import mysql from 'mysql2/promise';
import { FakeCardGateway, sendInvoiceSettled } from '../support/fake-card-gateway';
import { request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The real `npm run worker` while its jobs wait on a lock the test holds (LOCK TABLES on the payments
// table: every payment transaction waits for it, as behind a long ALTER): the watchdog replaces a worker
// whose jobs stop finishing, and SIGTERM ends one within PM2's kill_timeout. What either let go of is
// processed by the next worker, once.

const BIN = path.resolve(__dirname, '../../../bin/payment-hub');
const EVENTS = 20;

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let env: Record<string, string>;
const workers: ServiceProcess[] = [];

test.before(async () => {
  shop = await createTestShop('worker_watchdog', {});
  fake = new FakeCardGateway();
  await fake.start();
  env = {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix,
    CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret,
  };
  api = await startApi(shop.config(env));
});

test.after.always(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

function startWorker(extra: Record<string, string> = {}): ServiceProcess {
  const worker = startServiceProcess('worker', { ...env, ...extra });
  workers.push(worker);
  return worker;
}

async function deliver(prefix: string): Promise<string[]> {
  const handles = Array.from({ length: EVENTS }, (_, i) => `${prefix}-${i}`);
  for (const handle of handles) t_is200((await sendInvoiceSettled(api.url, fake, handle)).res.status);
  return handles;
}
function t_is200(status: number): void {
  if (status !== 200) throw new Error(`delivery answered ${status}`);
}

/** A connection of the test's own holding the payments table, so payment transactions wait. */
async function lockPayments(): Promise<mysql.Connection> {
  const connection = await mysql.createConnection({ host: '127.0.0.1', user: 'root', database: shop.dbName });
  await connection.query(`LOCK TABLES ${shop.prefix}sidecar_payments WRITE`);
  return connection;
}

const webhookRows = async (handles: string[]) => (await shop.db.query(
  `SELECT status, locked_until < NOW(3) OR locked_until IS NULL AS free, CAST(raw_body AS CHAR) AS body FROM ${shop.prefix}sidecar_webhooks`) as any)[0]
  .filter((row: any) => handles.some((handle) => row.body.includes(`"${handle}"`)));

async function processedOnceByAFreshWorker(t: any, handles: string[]): Promise<void> {
  const fresh = startWorker();
  await eventually(async () => (await webhookRows(handles)).every((row: any) => row.status === 'PROCESSED'), 60_000, 'a fresh worker to process what was let go of');
  const [payments] = await shop.db.query(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE external_id IN (?) ORDER BY external_id`, [handles]) as any[];
  t.deepEqual(payments.map((row: any) => [row.external_id, row.status]), [...handles].sort().map((handle) => [handle, 'CAPTURED']), 'one captured payment each');
  fresh.signal('SIGTERM');
  t.is(await fresh.exited, 0);
}

test.serial('When jobs stop finishing, Then the watchdog logs what they wait for, records it for the CLI and /metrics, frees them and exits; a fresh worker processes them once', async (t) => {
  const handles = await deliver('inv-watchdog');
  const lock = await lockPayments();
  let worker: ServiceProcess;
  try {
    // 5 s: twenty invoice reads at the card gateway's 25 a second are done well before, on a busy machine too.
    worker = startWorker({ WORKER_STALL_SECONDS: '5' });
    const code = await Promise.race([worker.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    t.is(code, 1, 'the stalled worker exits for PM2 to start a fresh one');
  } finally {
    await lock.end();
  }

  const stalled = worker.logs.find((line) => line.event === 'worker_stalled') as any;
  t.truthy(stalled, 'the stall is logged');
  t.true(stalled.jobsInFlight > 0);
  t.like(stalled.database, { limit: 10 });
  // The whole report in the message, and whether the limits went unshared, when it names calls waiting at the limits: to tell what held them.
  const limitsLog = worker.logs.filter((line: any) => String(line.event).startsWith('provider_limits'));
  t.like(stalled.providerCalls, { waitingAtLimits: 0 }, `no call was waiting for a place under the provider's limits: ${JSON.stringify([stalled, ...limitsLog])}`);
  const rows = await webhookRows(handles);
  t.true(rows.every((row: any) => row.status !== 'PROCESSED' && Number(row.free) === 1), `nothing processed, and nothing held: ${JSON.stringify(rows.map((row: any) => [row.status, row.free]))}`);

  const listed = await promisify(execFile)(process.execPath, [BIN, 'workers', 'list', '--json'], { env: { ...process.env, ...env } });
  const [record] = JSON.parse(listed.stdout);
  t.like(record, { state: 'stalled', pid: worker.child.pid });
  t.regex(String(record.stall_reason), /jobsInFlight/);
  const metrics = await request(api.url, 'GET', '/metrics');
  t.regex(metrics.text, new RegExp(`sidecar_worker_stalled\\{worker="[^"]+/${worker.child.pid}/[^"]+"\\} 1`));

  await processedOnceByAFreshWorker(t, handles);
});

test.serial('When SIGTERM comes while every job waits on a lock, Then the worker exits 0 within PM2\'s kill_timeout, its jobs left unprocessed and free; a fresh worker processes them once', async (t) => {
  const handles = await deliver('inv-sigterm');
  const lock = await lockPayments();
  try {
    const worker = startWorker();
    await worker.logged('worker_started');
    await eventually(async () => {
      const [[row]] = await shop.db.query(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_webhooks WHERE locked_until > NOW(3)`) as any[];
      return Number(row.n) > 0;
    }, 20_000, 'the worker to take the webhooks up');
    const signalled = Date.now();
    worker.signal('SIGTERM');
    const code = await Promise.race([worker.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 45_000))]);
    const seconds = (Date.now() - signalled) / 1000;
    t.is(code, 0);
    t.true(seconds < 40, `exited ${seconds.toFixed(1)} s after SIGTERM; PM2 kills it at 40 s`);
    t.log(`exited ${seconds.toFixed(1)} s after SIGTERM`);
    t.true((await webhookRows(handles)).every((row: any) => row.status !== 'PROCESSED' && Number(row.free) === 1), 'nothing processed, and nothing held');
  } finally {
    await lock.end();
  }
  await processedOnceByAFreshWorker(t, handles);
});
