import test from 'ava';
import { FakeCardGateway, sendInvoiceSettled, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { PrivateRedis } from '../support/private-redis';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { capturingLogger } from '../support/staff-api';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The real `npm run worker` process against a Redis of this test's own, which the test stops and starts.

let redis: PrivateRedis;
let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
const apiLog = capturingLogger();
let worker: ServiceProcess;
let sent = 0;
const eventIds: string[] = [];

async function deliverSettled(): Promise<number> {
  const { res, eventId } = await sendInvoiceSettled(api.url, fake, `inv-${++sent}`);
  eventIds.push(eventId);
  return res.status;
}

async function allProcessed(what: string): Promise<void> {
  await eventually(async () => {
    if (worker.hasExited()) throw new Error(`the worker exited (${await worker.exited}): ${JSON.stringify(worker.logs.slice(-20))}`);
    const [rows] = await shop.db.query(`SELECT status FROM ${shop.prefix}sidecar_webhooks`) as any[];
    return rows.length === eventIds.length && rows.every((row: any) => row.status === 'PROCESSED');
  }, 60_000, what);
}

/** Both the API's and the worker's queue connections are back, counting from the `since`-th log line of each. */
async function queuesAvailable(since: { api: number; worker: number }): Promise<void> {
  const events = () => ({
    api: apiLog.entries.slice(since.api).map((entry) => entry.event),
    worker: worker.logs.slice(since.worker).map((line) => line.event),
  });
  try {
    await eventually(async () => events().api.includes('queue_available') && events().worker.includes('queue_available'), 30_000, 'the queues to be available again');
  } catch (error) {
    throw new Error(`${(error as Error).message}; logged since the restart: ${JSON.stringify(events())}`);
  }
}

/** Webhooks the worker's sweep had to process itself, because the queue could not take them. */
const sweptByWorker = (since: number) => worker.logs.slice(since).filter((line) => line.event === 'webhooks_swept').reduce((sum, line) => sum + Number(line.processed), 0);

test.before(async () => {
  redis = await PrivateRedis.start();
  shop = await createTestShop('worker_outage', {});
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

test('When Redis stops, restarts, and restarts again after a 0.3 s gap, Then the worker keeps running, processes from the table meanwhile and takes jobs from the queue again', async (t) => {
  for (let i = 0; i < 3; i++) t.is(await deliverSettled(), 200);
  await allProcessed('the first webhooks to be processed through the queue');
  t.is(sweptByWorker(0), 0);

  await redis.stop();
  for (let i = 0; i < 5; i++) t.is(await deliverSettled(), 200, 'stored and answered while Redis is away');
  await allProcessed('the worker to process the stored webhooks from the table while Redis is away');
  // The sweep logs after its batch commits, and the log reaches this test through a pipe: wait for the line.
  await eventually(async () => sweptByWorker(0) >= 5, 10_000, 'the sweep to log what it processed').catch(() => undefined);
  t.is(sweptByWorker(0), 5, 'the sweep processed them, the queue being away');
  // The queue's stalled-job check runs every 5 s; it has been attempted during the outage by now.
  await new Promise((resolve) => setTimeout(resolve, 6000));
  t.false(worker.hasExited(), 'the worker rides out the outage');

  for (const gapMs of [0, 300]) {
    if (gapMs) {
      await redis.stop();
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    const since = { api: apiLog.entries.length, worker: await worker.linesSoFar() };
    await redis.start();
    await queuesAvailable(since);
    for (let i = 0; i < 5; i++) t.is(await deliverSettled(), 200);
    await allProcessed('the webhooks after Redis came back to be processed');
    t.is(sweptByWorker(since.worker), 0, 'the queue carried them once Redis was back');
  }

  const [rows] = await shop.db.query(`SELECT external_id, attempts FROM ${shop.prefix}sidecar_webhooks`) as any[];
  t.deepEqual(rows.map((row: any) => row.external_id).sort(), [...eventIds].sort());
  t.true(rows.every((row: any) => row.attempts === 1), 'each webhook was processed exactly once');
  t.false(worker.hasExited(), 'the worker never exited');
  worker.signal('SIGTERM');
  t.is(await worker.exited, 0, 'and stops cleanly when told to');
});
