import test from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import { FakeCardGateway, sendInvoiceSettled } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The real `npm run worker` facing a backlog many times larger than its database pool (10 connections),
// of the shop's most common event: a settlement whose invoice handle is `order-<id>` (the card gateway
// plugin's default), so the order is found by its number inside the payment's transaction. The gateway
// holds the worker to its documented request limits: 10 calls in flight, bursts of 50 calls a second.

const BACKLOG = 300;

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: ServiceProcess | undefined;

test.before(async () => {
  shop = await createTestShop('worker_backlog', {});
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(Date.now() / 1000) }), 'no');
  fake = new FakeCardGateway();
  await fake.start();
  api = await startApi(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret }));
});

test.after.always(async () => {
  await worker?.kill();
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test(`When ${BACKLOG} order-<id> settlements wait for a worker and the provider answers in 150 ms, Then the worker makes all of them final within 60 s under the gateway's request limits, each order paid once, and stops on SIGTERM`, async (t) => {
  const orderIds: number[] = [];
  for (let i = 0; i < BACKLOG; i++) orderIds.push(await shop.seeder.createOrder({ status: 'pending', total: '10.00' }));
  for (let i = 0; i < orderIds.length; i += 25) {
    const answers = await Promise.all(orderIds.slice(i, i + 25).map((id) => sendInvoiceSettled(api.url, fake, `order-${id}`)));
    for (const { res } of answers) t.is(res.status, 200);
  }
  fake.latencyMs = 150;
  fake.enforceLimits(10, 50);

  worker = startServiceProcess('worker', {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix,
    CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret,
  });
  await worker.logged('worker_started');
  const started = Date.now();
  await eventually(async () => {
    if (worker!.hasExited()) throw new Error(`the worker exited: ${JSON.stringify(worker!.logs.slice(-10))}`);
    const [[row]] = await shop.db.query(`SELECT COUNT(*) AS open FROM ${shop.prefix}sidecar_webhooks WHERE status NOT IN ('PROCESSED', 'SKIPPED')`) as any[];
    return Number(row.open) === 0;
  }, 60_000, `all ${BACKLOG} webhooks to be final`);
  t.log(`${BACKLOG} settlements final ${((Date.now() - started) / 1000).toFixed(1)} s after the worker started`);

  const [webhooks] = await shop.db.query(`SELECT status, COUNT(*) AS n FROM ${shop.prefix}sidecar_webhooks GROUP BY status`) as any[];
  t.deepEqual(webhooks.map((row: any) => [row.status, Number(row.n)]), [['PROCESSED', BACKLOG]]);
  const [payments] = await shop.db.query(`SELECT order_id, status FROM ${shop.prefix}sidecar_payments ORDER BY order_id`) as any[];
  t.deepEqual(payments.map((row: any) => [Number(row.order_id), row.status]), orderIds.map((id) => [id, 'CAPTURED']), 'one captured payment on each order');
  const [completions] = await shop.db.query(
    `SELECT object_id, COUNT(*) AS n FROM ${shop.prefix}sidecar_woocommerce_changes WHERE op = 'order_payment_complete' GROUP BY object_id ORDER BY object_id`) as any[];
  t.deepEqual(completions.map((row: any) => [Number(row.object_id), Number(row.n)]), orderIds.map((id) => [id, 1]), 'each order handed to WooCommerce as paid once');

  t.is(fake.rateLimited, 0, 'no call turned away by the gateway\'s limits');
  t.true(fake.maxInFlight <= 10, `at most 10 calls in flight (saw ${fake.maxInFlight})`);

  worker.signal('SIGTERM');
  t.is(await worker.exited, 0);
});
