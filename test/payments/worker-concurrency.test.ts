import test from 'ava';
import { FakeCardGateway, sendInvoiceSettled, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The worker's concurrency follows the provider's latency: provider calls that hang hold a few of its
// places, never all of them. The account's limits are raised here: under the documented ones (10 calls
// in flight) ten hanging calls fill the gateway's own count too, and the gateway would refuse the rest.

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

async function deliver(handle: string): Promise<string> {
  const { res, eventId } = await sendInvoiceSettled(api.url, fake, handle);
  if (res.status !== 200) throw new Error(`delivery answered ${res.status}: ${res.text}`);
  return eventId;
}

test.before(async () => {
  shop = await createTestShop('worker_concurrency');
  fake = new FakeCardGateway();
  await fake.start();
  const config = shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret, ...RAISED_LIMITS_ENV });
  api = await startApi(config);
  worker = await startTestWorker(config);
});

test.after.always(async () => {
  fake?.releaseHeld();
  await worker?.stop();
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test('When a dozen provider calls hang, Then the worker goes on processing other events meanwhile', async (t) => {
  fake.holdRequests((path) => path.startsWith('/v1/invoice/inv-hanging-'));
  const hanging: string[] = [];
  for (let i = 0; i < 12; i++) hanging.push(await deliver(`inv-hanging-${i}`));
  // Today's worker took ten jobs at a time: ten hanging calls held all of it.
  await eventually(async () => fake.heldInFlight >= 10, 20_000, 'the hanging calls to reach the provider');

  const others: string[] = [];
  for (let i = 0; i < 20; i++) others.push(await deliver(`inv-flowing-${i}`));
  await eventually(async () => {
    const rows = await q(`SELECT status FROM ${shop.prefix}sidecar_webhooks WHERE external_id IN (?)`, [others]);
    return rows.length === others.length && rows.every((row) => row.status === 'PROCESSED');
  }, 30_000, 'the other events to be processed');
  t.is(fake.heldInFlight, 12, 'while every hanging call is still waiting for its answer');
  const [{ pending }] = await q(`SELECT COUNT(*) AS pending FROM ${shop.prefix}sidecar_webhooks WHERE external_id IN (?) AND status = 'PENDING'`, [hanging]);
  t.is(Number(pending), 12);

  fake.releaseHeld();
  await eventually(async () => {
    const rows = await q(`SELECT status FROM ${shop.prefix}sidecar_webhooks WHERE external_id IN (?)`, [hanging]);
    return rows.every((row) => row.status === 'PROCESSED');
  }, 30_000, 'the hanging events to be processed once the provider answers');
});
