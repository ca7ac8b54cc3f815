import test from 'ava';
import { FakeCardGateway, sendInvoiceSettled } from '../support/fake-card-gateway';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { PrivateRedis } from '../support/private-redis';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// A Redis of this test's own, so it can be stopped and started while webhooks arrive.
let redis: PrivateRedis;
let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

async function deliverSettled(handle: string) {
  const { res, eventId } = await sendInvoiceSettled(api.url, fake, handle);
  return { status: res.status, eventId };
}

test.before(async () => {
  redis = await PrivateRedis.start();
  shop = await createTestShop('redis_outage', {});
  fake = new FakeCardGateway();
  await fake.start();
  const config = shop.config({ REDIS_URL: redis.url, CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey });
  api = await startApi(config);
  worker = await startTestWorker(config);
});

test.after.always(async () => {
  await worker?.stop();
  await api?.stop();
  await fake?.stop();
  await redis?.stop();
  await shop?.drop();
});

test('When Redis stops while webhooks arrive and then starts again, Then every webhook is accepted, stored and reaches a final state once', async (t) => {
  const eventIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    const { status, eventId } = await deliverSettled(`inv-before-${i}`);
    t.is(status, 200);
    eventIds.push(eventId);
  }

  await redis.stop();
  for (let i = 0; i < 10; i++) {
    const { status, eventId } = await deliverSettled(`inv-during-${i}`);
    t.is(status, 200, 'the row is the outbox: the answer does not depend on Redis');
    eventIds.push(eventId);
  }

  await redis.start();
  for (let i = 0; i < 5; i++) {
    const { status, eventId } = await deliverSettled(`inv-after-${i}`);
    t.is(status, 200);
    eventIds.push(eventId);
  }

  const rows = await eventually(async () => {
    const [found] = await shop.db.query(`SELECT external_id, status, attempts FROM ${shop.prefix}sidecar_webhooks`) as any[];
    return found.length === eventIds.length && found.every((row: any) => row.status === 'PROCESSED') ? found : null;
  }, 30_000, 'every webhook to be processed');
  t.deepEqual(rows.map((row: any) => row.external_id).sort(), [...eventIds].sort());
  const [payments] = await shop.db.query(`SELECT status, COUNT(*) AS n FROM ${shop.prefix}sidecar_payments GROUP BY status`) as any[];
  t.deepEqual(payments.map((row: any) => [row.status, Number(row.n)]), [['CAPTURED', 20]]);
  t.true(rows.every((row: any) => row.attempts === 1), 'each webhook was processed exactly once');
});
