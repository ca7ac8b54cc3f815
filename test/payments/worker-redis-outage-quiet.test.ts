import fs from 'node:fs';
import test from 'ava';
import { FakeCardGateway, sendInvoiceSettled, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { PrivateRedis } from '../support/private-redis';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { capturingLogger } from '../support/staff-api';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The real `npm run worker` while Redis is away: it keeps processing stored webhooks from the table, so it
// must not spend its one thread asking Redis for the next job. bee-queue's worker retries that with a wait
// that doubles on each failure and is shared by all of its (200) loops, so within one outage the wait
// passes what a Node timer holds and becomes 1 ms: every loop asks again at once, forever, and Node warns
// (TimeoutOverflowWarning) each time.

let redis: PrivateRedis;
let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
const apiLog = capturingLogger();
let worker: ServiceProcess;

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat; counted here from field 3 (state).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

test.before(async () => {
  redis = await PrivateRedis.start();
  shop = await createTestShop('worker_outage_quiet', {});
  fake = new FakeCardGateway();
  await fake.start();
  const env = { REDIS_URL: redis.url, CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret, ...RAISED_LIMITS_ENV };
  api = await startApi(shop.config(env), apiLog);
  worker = startServiceProcess('worker', { ...env, DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix });
  await worker.logged('worker_started');
});

test.after.always(async () => {
  await worker?.kill();
  await api?.stop();
  await fake?.stop();
  await redis?.stop();
  await shop?.drop();
});

test.serial('While Redis is away, the worker stays quiet (little CPU, no line per attempt to reach it), processes stored webhooks from the table promptly, and takes jobs from the queue again once Redis is back', async (t) => {
  // A burst while the provider is slow fills the worker's places, so bee-queue runs all its loops (one per place).
  fake.latencyMs = 300;
  for (let i = 0; i < 300; i += 25) {
    const answers = await Promise.all(Array.from({ length: 25 }, (_, j) => sendInvoiceSettled(api.url, fake, `inv-before-${i + j}`)));
    for (const { res } of answers) t.is(res.status, 200);
  }
  const allProcessed = (what: string, timeoutMs: number) => eventually(async () => {
    if (worker.hasExited()) throw new Error(`the worker exited: ${JSON.stringify(worker.logs.slice(-10))}`);
    const [rows] = await shop.db.query(`SELECT status FROM ${shop.prefix}sidecar_webhooks`) as any[];
    return rows.every((row: any) => row.status === 'PROCESSED');
  }, timeoutMs, what);
  await allProcessed('the first webhooks to be processed through the queue', 20_000);
  fake.latencyMs = 0;

  await redis.stop();
  const linesBefore = worker.logs.length;
  const cpuBefore = cpuSeconds(worker.child.pid!);
  const outageMs = 12_000;
  await new Promise((resolve) => setTimeout(resolve, outageMs));
  const cpu = cpuSeconds(worker.child.pid!) - cpuBefore;
  const lines = worker.logs.slice(linesBefore);
  const events: Record<string, number> = {};
  for (const line of lines) events[String(line.event)] = (events[String(line.event)] ?? 0) + 1;
  t.log(`${outageMs / 1000} s of outage: ${cpu.toFixed(2)} CPU seconds, ${lines.length} log lines ${JSON.stringify(events)}`);
  t.true(cpu < outageMs / 1000 / 10, `the worker used ${cpu.toFixed(2)} CPU seconds in ${outageMs / 1000} s while idle`);
  t.true(lines.length < 20, 'no line per attempt to reach Redis');
  t.false(lines.some((line) => line.event === 'unparsed'), 'no warnings from Node');

  // Meanwhile the sweep has the table to itself: a burst stored now is processed after its grace (10 s), quickly.
  for (let i = 0; i < 50; i++) t.is((await sendInvoiceSettled(api.url, fake, `inv-away-${i}`)).res.status, 200);
  const storedAt = Date.now();
  await allProcessed('the webhooks stored while Redis is away to be processed by the sweep', 20_000);
  t.log(`processed by the sweep ${((Date.now() - storedAt) / 1000).toFixed(1)} s after being stored`);
  t.false(worker.logs.some((line) => line.event === 'webhook_failed' || line.event === 'worker_report_failed'), 'no attempt failed, no heartbeat was late');

  await redis.start();
  await worker.logged('queue_available');
  // The API's queue reconnects on its own timer; until it has, a webhook waits for the sweep instead.
  await eventually(async () => apiLog.entries.some((entry) => entry.event === 'queue_available'), 10_000, "the API's queue to be available again");
  const since = await worker.linesSoFar();
  for (let i = 0; i < 5; i++) t.is((await sendInvoiceSettled(api.url, fake, `inv-after-${i}`)).res.status, 200);
  await allProcessed('the webhooks after Redis came back to be processed', 8000);
  t.false(worker.logs.slice(since).some((line) => line.event === 'webhooks_swept'), 'the queue carried them');
  worker.signal('SIGTERM');
  t.is(await worker.exited, 0);
});

test.serial('When SIGTERM comes while Redis is away, Then the worker exits 0 at once', async (t) => {
  await redis.start();
  const env = { REDIS_URL: redis.url, CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret, ...RAISED_LIMITS_ENV };
  worker = startServiceProcess('worker', { ...env, DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix });
  await worker.logged('worker_started');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await redis.stop();
  await worker.logged('queue_unavailable');
  const stoppedAt = Date.now();
  worker.signal('SIGTERM');
  t.is(await worker.exited, 0);
  t.true(Date.now() - stoppedAt < 5000, `exited ${Date.now() - stoppedAt} ms after SIGTERM`);
});
