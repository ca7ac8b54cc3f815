import test from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import { FakeCardGateway, sendInvoiceSettled } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Two real `npm run worker` processes on one database and Redis, facing a backlog of settlements from a
// gateway that enforces its documented request limits per account (10 calls in flight, bursts of 50
// calls a second): together they must stay within the account's limits, not each within them.

const BACKLOG = 200;

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
const workers: ServiceProcess[] = [];

test.before(async () => {
  shop = await createTestShop('workers_share_limits', {});
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(Date.now() / 1000) }), 'no');
  fake = new FakeCardGateway();
  await fake.start();
  api = await startApi(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret }));
});

test.after.always(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test(`When two workers share a backlog of ${BACKLOG} settlements, Then both take part, every order is paid once, and the gateway never sees more than its limits from the two together`, async (t) => {
  const orderIds: number[] = [];
  for (let i = 0; i < BACKLOG; i++) orderIds.push(await shop.seeder.createOrder({ status: 'pending', total: '10.00' }));
  for (let i = 0; i < orderIds.length; i += 25) {
    const answers = await Promise.all(orderIds.slice(i, i + 25).map((id) => sendInvoiceSettled(api.url, fake, `order-${id}`)));
    for (const { res } of answers) t.is(res.status, 200);
  }
  fake.latencyMs = 150;
  fake.enforceLimits(10, 50);

  for (let i = 0; i < 2; i++) {
    workers.push(startServiceProcess('worker', {
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix,
      CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret,
    }));
  }
  await Promise.all(workers.map((worker) => worker.logged('worker_started')));
  const started = Date.now();
  await eventually(async () => {
    const gone = workers.find((worker) => worker.hasExited());
    if (gone) throw new Error(`a worker exited: ${JSON.stringify(gone.logs.slice(-10))}`);
    const [[row]] = await shop.db.query(`SELECT COUNT(*) AS open FROM ${shop.prefix}sidecar_webhooks WHERE status NOT IN ('PROCESSED', 'SKIPPED')`) as any[];
    return Number(row.open) === 0;
  }, 60_000, `all ${BACKLOG} webhooks to be final`);
  t.log(`${BACKLOG} settlements final ${((Date.now() - started) / 1000).toFixed(1)} s after the workers started`);

  const [webhooks] = await shop.db.query(`SELECT status, COUNT(*) AS n FROM ${shop.prefix}sidecar_webhooks GROUP BY status`) as any[];
  t.deepEqual(webhooks.map((row: any) => [row.status, Number(row.n)]), [['PROCESSED', BACKLOG]]);
  const [completions] = await shop.db.query(
    `SELECT object_id, COUNT(*) AS n FROM ${shop.prefix}sidecar_woocommerce_changes WHERE op = 'order_payment_complete' GROUP BY object_id ORDER BY object_id`) as any[];
  t.deepEqual(completions.map((row: any) => [Number(row.object_id), Number(row.n)]), orderIds.map((id) => [id, 1]), 'each order handed to WooCommerce as paid once');

  t.is(fake.rateLimited, 0, 'no call turned away by the gateway\'s limits');
  t.true(fake.maxInFlight <= 10, `at most 10 calls in flight from both workers (saw ${fake.maxInFlight})`);

  // Each worker reports the jobs it finished with its heartbeat (every 5 s).
  const shares = await eventually(async () => {
    const [rows] = await shop.db.query(`SELECT jobs_finished FROM ${shop.prefix}sidecar_workers`) as any[];
    const finished = rows.map((row: any) => Number(row.jobs_finished));
    return finished.length === 2 && finished.every((n: number) => n > 0) ? finished : null;
  }, 15_000, 'both workers to report finished jobs');
  t.log(`jobs finished per worker: ${shares.join(', ')}`);

  for (const worker of workers) worker.signal('SIGTERM');
  t.deepEqual(await Promise.all(workers.map((worker) => worker.exited)), [0, 0]);
});
