import test from 'ava';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

test.before(async () => {
  shop = await createTestShop('pay_race', {});
  fake = new FakeCardGateway();
  await fake.start();
  api = await startApi(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey }));
});

test.after.always(async () => {
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test('When 200 events for one new payment are processed at once, Then none fails: each is PROCESSED or SKIPPED, and there is one payment', async (t) => {
  const handle = 'inv-race-1';
  fake.setInvoice(handle, { state: 'settled', amount: 4900 });
  const types = ['invoice_created', 'invoice_authorized', 'invoice_settled'];
  // Stored first, with no worker running, so the worker finds all 200 at once.
  for (let batch = 0; batch < 10; batch++) {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      sendCardGatewayEvent(api.url, { event_type: types[(batch * 20 + i) % 3], invoice: handle }, fake.webhookSecret)));
    t.true(answers.every(({ res }) => res.status === 200));
  }

  // As the real worker runs: ten jobs at a time on a pool of ten connections.
  const worker = await startTestWorker(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey }), { poolSize: 10, concurrency: 10 });
  try {
    const rows = await eventually(async () => {
      const found = await q(`SELECT status, last_error FROM ${shop.prefix}sidecar_webhooks`);
      return found.every((row) => row.status === 'PROCESSED' || row.status === 'SKIPPED' || row.status === 'FAILED') ? found : null;
    }, 60_000, 'every webhook to reach a final status') as any[];
    t.is(rows.length, 200);
    t.deepEqual(rows.filter((row) => row.status === 'FAILED').map((row) => row.last_error), []);
  } finally {
    await worker.stop();
  }
  const payments = await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [handle]);
  t.deepEqual(payments.map((row) => row.status), ['CAPTURED']);
});
