import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { cardGatewayDelivery, FakeCardGateway, RAISED_LIMITS_ENV } from './fake-card-gateway';
import { request } from './http-client';
import { eventually } from './payment-hub-fixture';
import { PrivateMariaDb } from './private-mariadb';
import { PrivateRedis } from './private-redis';
import { startServiceProcess, type ServiceProcess } from './service-process';
import { capturingLogger } from './staff-api';
import { setOption } from '../../src/demo/woocommerce-schema';
import { createTestShop, startApi, type RunningApi, type TestShop } from './test-shop';

/**
 * A stage for fault tests of the payment webhooks: the real `npm run worker` and the API (in this process)
 * against a MariaDB and a Redis of the test's own, which the test kills and starts; card-gateway
 * deliveries kept so they can be sent again as the provider does; and, when an expectation fails, a
 * diagnosis of where the webhooks are, what the workers logged, and what MariaDB and Redis hold.
 */

/** The recovery the issue asks for. */
export const RECOVERY_MS = 60_000;
export const WEBHOOK_PATH = '/payment-hub/v1/webhook/card_gateway';

export interface Delivery {
  handle: string;
  eventId: string;
  body: Buffer;
  headers: Record<string, string>;
  /** Every answer, in order (0: no answer, the connection failed). */
  answers: number[];
}

export interface Stage {
  t: ExecutionContext;
  redis: PrivateRedis;
  mariadb: PrivateMariaDb;
  shop: TestShop;
  fake: FakeCardGateway;
  /** The API in this process, or the real `npm run api` as a child process. */
  api: Pick<RunningApi, 'url' | 'stop'>;
  /** What the API logged so far, in order: an in-process API's captured lines, or a child process's parsed ones. */
  apiLog: { entries: { event?: unknown }[] };
  workerEnv: Record<string, string>;
  worker: ServiceProcess;
  /** Workers killed by the test (their logs are kept for the diagnosis). */
  killedWorkers: ServiceProcess[];
  deliveries: Delivery[];
  /** Seeded pending orders not yet named by a delivery (their invoice handles are `order-<id>`). */
  unpaidOrders: number[];
  /** Orders named by a delivery. */
  paidOrders: Map<string, number>;
}

export interface StageOptions {
  /**
   * Pending orders to seed: the first deliveries settle their invoices `order-<id>` (the card gateway plugin's
   * default handle), so each event finds its order inside its transaction and hands its payment to WooCommerce
   * (the companion plugin is present); later deliveries name invoices of no order.
   */
  orders?: number;
}

export async function setUp(t: ExecutionContext, name: string, options: StageOptions = {}): Promise<Stage> {
  const redis = await PrivateRedis.start();
  const mariadb = await PrivateMariaDb.start();
  const shop = await createTestShop(name, { host: mariadb.host, port: mariadb.port });
  const unpaidOrders = options.orders ? await seedUnpaidOrders(shop, options.orders) : [];
  const fake = new FakeCardGateway();
  await fake.start();
  const env = { REDIS_URL: redis.url, CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: fake.webhookSecret, ...RAISED_LIMITS_ENV };
  const apiLog = capturingLogger();
  const api = await startApi(shop.config(env), apiLog);
  const workerEnv = { ...env, DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, DB_HOST: mariadb.host, DB_PORT: String(mariadb.port) };
  const worker = startServiceProcess('worker', workerEnv);
  const stage: Stage = { t, redis, mariadb, shop, fake, api, apiLog, workerEnv, worker, killedWorkers: [], deliveries: [], unpaidOrders, paidOrders: new Map() };
  t.teardown(async () => {
    // For a closer look: every worker's log lines, and the API's, as JSON lines in this directory.
    const logDir = process.env.DOUBLE_FAULT_LOG_DIR;
    if (logDir) {
      fs.mkdirSync(logDir, { recursive: true });
      [...stage.killedWorkers, stage.worker].forEach((worker, index) => fs.writeFileSync(path.join(logDir, `${name}-worker-${index}.jsonl`),
        worker.logs.map((line) => JSON.stringify(line)).join('\n') + '\n'));
      fs.writeFileSync(path.join(logDir, `${name}-api.jsonl`), stage.apiLog.entries.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
    }
    await Promise.allSettled([stage.worker.kill(), ...stage.killedWorkers.map((killed) => killed.kill())]);
    await api.stop().catch(() => undefined);
    await fake.stop();
    await redis.stop();
    await shop.drop().catch(() => undefined);
    await mariadb.cleanup();
  });
  await worker.logged('worker_started');
  return stage;
}

/**
 * `count` pending orders of 10.00, their ids in ascending order, in a shop whose companion plugin is present (so
 * an order's payment is handed to WooCommerce).
 */
export async function seedUnpaidOrders(shop: TestShop, count: number): Promise<number[]> {
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(Date.now() / 1000) }), 'no');
  const unpaidOrders: number[] = [];
  let left = count;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (left > 0) {
      left -= 1;
      unpaidOrders.push(await shop.seeder.createOrder({ status: 'pending', total: '10.00' }));
    }
  }));
  return unpaidOrders.sort((a, b) => a - b);
}

/** A new settled invoice at the fake gateway and its signed `invoice_settled` delivery (kept, to send again). */
export function newDelivery(stage: Stage): Delivery {
  const orderId = stage.unpaidOrders.shift();
  const handle = orderId === undefined ? `inv-${stage.deliveries.length + 1}` : `order-${orderId}`;
  if (orderId !== undefined) stage.paidOrders.set(handle, orderId);
  stage.fake.setInvoice(handle, { state: 'settled', amount: 1000 });
  const { body, headers, payload } = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: handle }, stage.fake.webhookSecret);
  const delivery = { handle, eventId: String(payload.event_id), body, headers, answers: [] };
  stage.deliveries.push(delivery);
  return delivery;
}

export async function send(stage: Stage, delivery: Delivery): Promise<number> {
  const status = await request(stage.api.url, 'POST', WEBHOOK_PATH, { headers: delivery.headers, body: delivery.body })
    .then((res) => res.status, () => 0);
  delivery.answers.push(status);
  return status;
}

export const stored = (delivery: Delivery) => delivery.answers.includes(200);

/** `count` new deliveries, `parallel` at once; each sent once. */
export async function deliverNew(stage: Stage, count: number, parallel = 10): Promise<Delivery[]> {
  const batch = Array.from({ length: count }, () => newDelivery(stage));
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < batch.length) await send(stage, batch[next++]!);
  }));
  return batch;
}

/** As the provider does: every delivery not answered 200 is sent again (a second apart) until it is. */
export async function redeliverUntilStored(stage: Stage, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pending = stage.deliveries.filter((delivery) => !stored(delivery));
    if (!pending.length) return;
    if (Date.now() > until) throw new Error(`${pending.length} deliveries still refused: ${JSON.stringify(pending.slice(0, 3).map((d) => d.answers))}`);
    for (const delivery of pending) await send(stage, delivery);
    if (stage.deliveries.some((delivery) => !stored(delivery))) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** A query on the test's own pool, which the kill breaks: null while the server is away. */
export async function query(stage: Stage, sql: string): Promise<any[] | null> {
  try {
    const [rows] = await stage.shop.db.query(sql) as any[];
    return rows;
  } catch {
    return null;
  }
}

export const webhooks = (stage: Stage) => `${stage.shop.prefix}sidecar_webhooks`;

export async function statusCounts(stage: Stage): Promise<Record<string, number>> {
  const rows = await query(stage, `SELECT status, claim_token IS NULL AS unclaimed, attempts, COUNT(*) AS n FROM ${webhooks(stage)} GROUP BY 1, 2, 3`);
  const counts: Record<string, number> = {};
  for (const row of rows ?? []) counts[`${row.status}${Number(row.unclaimed) ? ' (never claimed)' : ''} attempts=${row.attempts}`] = Number(row.n);
  return counts;
}

export function assertWorkerAlive(stage: Stage): void {
  if (stage.worker.hasExited()) throw new Error(`the worker exited unasked: ${JSON.stringify(stage.worker.logs.slice(-20))}`);
}

/** Waits until some webhooks delivered after `from` are in hand (claimed) and at least one of them is final: the sweep is busy with them. */
export async function sweepBusy(stage: Stage, deliveries: Delivery[]): Promise<void> {
  const ids = deliveries.map((delivery) => `'${delivery.eventId}'`).join(',');
  await eventually(async () => {
    assertWorkerAlive(stage);
    const rows = await query(stage, `SELECT SUM(status = 'PROCESSED') AS done, SUM(status = 'PENDING' AND claim_token IS NOT NULL) AS held
      FROM ${webhooks(stage)} WHERE external_id IN (${ids})`);
    return rows !== null && Number(rows[0].done) > 0 && Number(rows[0].held) > 0;
  }, 30_000, 'the worker\'s sweep to be processing the webhooks stored while Redis is away');
}

export async function redisKeys(stage: Stage): Promise<string> {
  const cli = (...args: string[]) => new Promise<string>((resolve) => execFile('redis-cli', ['-p', String(stage.redis.port), ...args], (error, stdout) => resolve(error ? `(${error.message})` : stdout.trim())));
  const keys = (await cli('--scan', '--pattern', '*')).split('\n').filter(Boolean).sort();
  const described = await Promise.all(keys.map(async (key) => {
    const type = await cli('type', key);
    const size = type === 'list' ? await cli('llen', key) : type === 'set' ? await cli('scard', key) : type === 'zset' ? await cli('zcard', key) : type === 'hash' ? await cli('hlen', key) : '';
    return `${key} ${type} ${size}`;
  }));
  return described.join('\n');
}

/** What the test saw, for a failure: where the webhooks are, what the worker said and did, and what waits in MariaDB and Redis. */
export async function diagnosis(stage: Stage): Promise<void> {
  const { t } = stage;
  t.log('webhooks by status:', JSON.stringify(await statusCounts(stage)));
  const stuck = await query(stage, `SELECT id, status, attempts, claim_token, locked_until, next_attempt_at, LEFT(last_error, 200) AS last_error, created_at, updated_at
    FROM ${webhooks(stage)} WHERE status <> 'PROCESSED' ORDER BY id LIMIT 5`);
  t.log('some webhooks not final:', JSON.stringify(stuck));
  t.log('database now:', JSON.stringify(await query(stage, 'SELECT NOW(3) AS now')));
  for (const worker of [...stage.killedWorkers, stage.worker]) {
    const events: Record<string, number> = {};
    for (const line of worker.logs) events[String(line.event)] = (events[String(line.event)] ?? 0) + 1;
    t.log(`worker pid ${worker.child.pid} (exited: ${worker.hasExited()}) log events:`, JSON.stringify(events));
    t.log('its last log lines:', worker.logs.slice(-12).map((line) => JSON.stringify(line)).join('\n'));
  }
  const apiEvents: Record<string, number> = {};
  for (const entry of stage.apiLog.entries) apiEvents[String(entry.event)] = (apiEvents[String(entry.event)] ?? 0) + 1;
  t.log('API log events:', JSON.stringify(apiEvents));
  const processes = await stage.mariadb.processList().catch((error: Error) => [{ error: error.message }]);
  t.log('MariaDB processlist:', JSON.stringify(processes.map((row: any) => ({ id: row.Id, db: row.db, command: row.Command, time: row.Time, state: row.State, info: row.Info && String(row.Info).slice(0, 120) }))));
  const transactions = await stage.mariadb.connect().then(async (connection) => {
    try {
      const [rows] = await connection.query(`SELECT trx_mysql_thread_id AS thread, trx_state AS state, TIMESTAMPDIFF(SECOND, trx_started, NOW()) AS seconds,
        trx_rows_locked AS rowsLocked, trx_rows_modified AS rowsModified, trx_query AS query FROM information_schema.INNODB_TRX`);
      return rows as unknown[];
    } finally {
      await connection.end().catch(() => undefined);
    }
  }).catch((error: Error) => [{ error: error.message }]);
  t.log('open InnoDB transactions:', JSON.stringify(transactions));
  t.log('Redis keys:\n' + await redisKeys(stage));
}

/** Every stored webhook final within RECOVERY_MS of `recoveredAt`; then the assertions on what it did. */
export async function assertCaughtUp(stage: Stage, recoveredAt: number): Promise<void> {
  const { t } = stage;
  const expected = stage.deliveries.filter(stored);
  try {
    await eventually(async () => {
      assertWorkerAlive(stage);
      const rows = await query(stage, `SELECT COUNT(*) AS n, SUM(status = 'PROCESSED') AS done FROM ${webhooks(stage)}`);
      return rows !== null && Number(rows[0].n) === expected.length && Number(rows[0].done) === expected.length;
    }, Math.max(0, recoveredAt + RECOVERY_MS - Date.now()), `every stored webhook to be PROCESSED within ${RECOVERY_MS / 1000} s of recovery`);
    t.log(`every stored webhook final ${((Date.now() - recoveredAt) / 1000).toFixed(1)} s after recovery`);
  } catch (error) {
    await diagnosis(stage);
    throw error;
  }

  t.is(expected.length, stage.deliveries.length, 'every delivery was stored in the end');
  const rows = (await query(stage, `SELECT external_id, status, attempts FROM ${webhooks(stage)}`))!;
  t.deepEqual(rows.map((row) => row.external_id).sort(), expected.map((delivery) => delivery.eventId).sort(), 'one row per stored event: nothing lost, nothing doubled');
  const attempts: Record<number, number> = {};
  for (const row of rows) attempts[row.attempts] = (attempts[row.attempts] ?? 0) + 1;
  t.log('webhooks by attempts:', JSON.stringify(attempts));

  // Each invoice's payment recorded once, captured, with the amount the gateway settled.
  const payments = (await query(stage, `SELECT external_id, status, amount_minor, COUNT(*) OVER (PARTITION BY external_id) AS copies FROM ${stage.shop.prefix}sidecar_payments WHERE provider = 'card_gateway'`))!;
  t.deepEqual(payments.map((row) => row.external_id).sort(), stage.deliveries.map((delivery) => delivery.handle).sort(), 'one payment per settled invoice');
  t.true(payments.every((row) => row.status === 'CAPTURED' && Number(row.amount_minor) === 1000 && Number(row.copies) === 1), 'each payment CAPTURED, for the settled amount, once');
  if (stage.paidOrders.size) {
    const linked = (await query(stage, `SELECT external_id, order_id FROM ${stage.shop.prefix}sidecar_payments WHERE external_id LIKE 'order-%'`))!;
    t.deepEqual(Object.fromEntries(linked.map((row) => [row.external_id, Number(row.order_id)])), Object.fromEntries(stage.paidOrders), 'each order-<id> payment on its order');
    const completions = (await query(stage, `SELECT object_id, COUNT(*) AS n FROM ${stage.shop.prefix}sidecar_woocommerce_changes WHERE op = 'order_payment_complete' GROUP BY object_id`))!;
    t.deepEqual(Object.fromEntries(completions.map((row) => [Number(row.object_id), Number(row.n)])), Object.fromEntries([...stage.paidOrders.values()].map((id) => [id, 1])),
      'each order handed to WooCommerce as paid, once');
  }
  const reads: Record<string, number> = {};
  for (const read of stage.fake.requestsTo('GET', '/v1/invoice/')) reads[read.path] = (reads[read.path] ?? 0) + 1;
  const readCounts: Record<number, number> = {};
  for (const count of Object.values(reads)) readCounts[count] = (readCounts[count] ?? 0) + 1;
  t.log('invoices by times read from the gateway:', JSON.stringify(readCounts));
  t.is(stage.fake.requestsTo('POST', '/v1/charge').length, 0, 'nothing was charged');

  t.false(stage.worker.hasExited(), 'no process exited unasked');
}

/**
 * Once both are back the queue carries new deliveries again: processed sooner than the sweep's grace
 * (10 s) would let it, and none by the sweep. Then the worker stops cleanly when told to.
 */
export async function assertQueueCarriesAndStop(stage: Stage): Promise<void> {
  const { t } = stage;
  const since = await stage.worker.linesSoFar();
  const fresh = await deliverNew(stage, 5);
  t.true(fresh.every(stored));
  const ids = fresh.map((delivery) => `'${delivery.eventId}'`).join(',');
  const carried = await eventually(async () => {
    const rows = await query(stage, `SELECT COUNT(*) AS n FROM ${webhooks(stage)} WHERE status = 'PROCESSED' AND external_id IN (${ids})`);
    return rows !== null && Number(rows[0].n) === fresh.length;
  }, 8000, 'new deliveries to be processed through the queue').then(() => true, () => false);
  const swept = stage.worker.logs.slice(since).filter((line) => line.event === 'webhooks_swept').reduce((sum, line) => sum + Number(line.processed), 0);
  if (!carried || swept) await diagnosis(stage);
  t.true(carried, 'new deliveries are processed within 8 s of being stored, once both are back');
  t.is(swept, 0, 'the queue carried them, not the sweep');
  t.false(stage.worker.hasExited(), 'no process exited unasked');
  stage.worker.signal('SIGTERM');
  t.is(await stage.worker.exited, 0, 'the worker stops cleanly when told to');
}

/** Both queues' connections are back (the API's and the worker's), counting from the given log positions. */
export async function queuesAvailable(stage: Stage, since: { api: number; worker: number }): Promise<void> {
  await eventually(async () => stage.apiLog.entries.slice(since.api).some((entry) => entry.event === 'queue_available')
    && stage.worker.logs.slice(since.worker).some((line) => line.event === 'queue_available'), 30_000, 'the queues to be available again');
}

export async function processedThroughQueue(stage: Stage): Promise<void> {
  await eventually(async () => {
    assertWorkerAlive(stage);
    const rows = await query(stage, `SELECT COUNT(*) AS n, SUM(status = 'PROCESSED') AS done FROM ${webhooks(stage)}`);
    return rows !== null && Number(rows[0].n) === stage.deliveries.length && Number(rows[0].done) === stage.deliveries.length;
  }, 20_000, 'the first webhooks to be processed through the queue');
}

export function countAnswers(deliveries: Delivery[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const delivery of deliveries) {
    const first = String(delivery.answers[0] ?? 'none');
    counts[first] = (counts[first] ?? 0) + 1;
  }
  return counts;
}
