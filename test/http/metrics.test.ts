import test from 'ava';
import { loadConfig } from '../../src/config';
import { cardGatewayDelivery } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { basic, request } from '../support/http-client';
import { parsePrometheusText, series, total, type Sample } from '../support/prometheus-text';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Every API of this file shares the shop's Redis namespace, so their metrics meet: the tests run one at a time.
const WEBHOOK_SECRET = 'metrics-test-webhook-secret';
const HELPDESK = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' };

let shop: TestShop;
let api: RunningApi;
let orderId: number;
const running: RunningApi[] = [];

async function startOne(env: Record<string, string> = {}): Promise<RunningApi> {
  const started = await startApi(shop.config({ CARD_GATEWAY_WEBHOOK_SECRET: WEBHOOK_SECRET, ...env }));
  running.push(started);
  return started;
}

async function scrape(from: RunningApi = api): Promise<Sample[]> {
  const res = await request(from.url, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.text}`);
  return parsePrometheusText(res.text);
}

const lookup = (a: RunningApi, body: unknown, headers: Record<string, string> = HELPDESK) => request(a.url, 'POST', '/helpdesk/v1/order-status', { headers, body });
const ORDER_STATUS = { method: 'POST', route: '/helpdesk/v1/order-status' };

test.before(async () => {
  shop = await createTestShop('metrics', { hpos: true });
  orderId = await shop.seeder.createOrder({ status: 'processing', total: '100', billing: { email: 'anna@example.dk', country: 'DK' } });
  api = await startOne();
});

test.after.always(async () => {
  await Promise.allSettled(running.map((a) => a.stop()));
  await shop?.drop();
});

test.serial('When requests are made between two scrapes, Then their counters and latency histograms move by route and status', async (t) => {
  const before = await scrape();
  t.is((await lookup(api, { order_number: String(orderId), email: 'anna@example.dk' })).status, 200);
  t.is((await lookup(api, { order_number: String(orderId), email: 'other@example.dk' })).status, 404);
  t.is((await lookup(api, { order_number: String(orderId), email: 'other@example.dk' })).status, 404);
  t.is((await lookup(api, { order_number: String(orderId), email: 'anna@example.dk' }, { 'x-forwarded-proto': 'https' })).status, 401);
  t.is((await request(api.url, 'GET', '/health')).status, 200);
  t.is((await request(api.url, 'GET', '/no/such/route')).status, 404);
  const after = await scrape();

  const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
  t.is(moved('sidecar_http_requests_total', { ...ORDER_STATUS, status: '200' }), 1);
  t.is(moved('sidecar_http_requests_total', { ...ORDER_STATUS, status: '404' }), 2);
  t.is(moved('sidecar_http_requests_total', { ...ORDER_STATUS, status: '401' }), 1);
  t.is(moved('sidecar_http_requests_total', { method: 'GET', route: '/health', status: '200' }), 1);
  t.is(moved('sidecar_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  t.is(moved('sidecar_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }), 1, 'the first scrape is counted once it has been answered');
  t.is(moved('sidecar_http_request_duration_seconds_count', { ...ORDER_STATUS, status: '404' }), 2);
  // A failed lookup is answered no sooner than 15 ms after it arrived: neither lands in the 10 ms bucket.
  t.is(moved('sidecar_http_request_duration_seconds_bucket', { ...ORDER_STATUS, status: '404', le: '0.01' }), 0);
  t.is(moved('sidecar_http_request_duration_seconds_bucket', { ...ORDER_STATUS, status: '404', le: '+Inf' }), 2);
  t.true(moved('sidecar_http_request_duration_seconds_sum', { ...ORDER_STATUS, status: '404' }) >= 0.03);
  t.true(series(after, 'sidecar_http_requests_total').every((sample) => sample.labels.api_process), 'each series names its process');
});

test.serial('When the throttle blocks a key, Then the block is counted', async (t) => {
  const throttled = await startOne({ HELPDESK_THROTTLE_MAX_FAILURES: '2', HELPDESK_API_KEY: 'metrics-key' });
  const headers = { authorization: basic('metrics-key', HELPDESK_SECRET), 'x-forwarded-proto': 'https' };
  const before = total(await scrape(throttled), 'sidecar_throttle_blocks_total');
  for (let i = 0; i < 2; i++) t.is((await lookup(throttled, { order_number: String(orderId), email: `guess${i}@example.dk` }, headers)).status, 404);
  t.is((await lookup(throttled, { order_number: String(orderId), email: 'anna@example.dk' }, headers)).status, 429);
  t.is(total(await scrape(throttled), 'sidecar_throttle_blocks_total') - before, 1);
  await throttled.stop();
  running.splice(running.indexOf(throttled), 1);
});

test.serial('When webhooks, dunning attempts and WooCommerce changes are stored, Then the scrape reads their counts from the tables', async (t) => {
  const before = await scrape();
  t.is(total(before, 'sidecar_webhooks', { provider: 'card_gateway', status: 'PENDING' }), 0);
  t.is(total(before, 'sidecar_webhook_oldest_pending_age_seconds'), 0);

  const delivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-1' }, WEBHOOK_SECRET);
  t.is((await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: delivery.headers, body: delivery.body })).status, 200);
  const forged = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-2' }, 'wrong secret');
  t.is((await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: forged.headers, body: forged.body })).status, 401);
  await shop.db.query(`UPDATE ${shop.prefix}sidecar_webhooks SET created_at = NOW(3) - INTERVAL 90 SECOND WHERE status = 'PENDING'`);
  await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_webhooks (provider, external_id, event_type, status, raw_body, attempts, created_at, updated_at)
     VALUES ('card_gateway', 'evt-failed', 'invoice_failed', 'FAILED', '{}', 5, NOW(3), NOW(3))`);
  for (const [attempt, status] of [[1, 'FAILED'], [2, 'FAILED'], [3, 'PENDING']] as const) {
    await shop.db.query(
      `INSERT INTO ${shop.prefix}sidecar_payment_retries (order_id, subscription_id, payment_id, attempt, status, scheduled_at, idempotency_key, created_at, updated_at)
       VALUES (?, 1, 1, ?, ?, NOW(3), ?, NOW(3), NOW(3))`, [orderId, attempt, status, `retry-${orderId}-${attempt}`]);
  }
  for (const status of ['pending', 'applying', 'failed', 'applied']) {
    await shop.db.query(
      `INSERT INTO ${shop.prefix}sidecar_woocommerce_changes (op, object_id, payload, status, attempts, created_at) VALUES ('order_payment_failed', ?, '{}', ?, 0, NOW(3))`, [orderId, status]);
  }

  const after = await scrape();
  t.is(total(after, 'sidecar_webhooks', { provider: 'card_gateway', status: 'PENDING' }), 1);
  t.is(total(after, 'sidecar_webhooks', { provider: 'card_gateway', status: 'FAILED' }), 1);
  t.is(total(after, 'sidecar_webhooks', { provider: 'mobile_wallet', status: 'PROCESSED' }), 0, 'a status with no rows is 0, not missing');
  const age = total(after, 'sidecar_webhook_oldest_pending_age_seconds');
  t.true(age >= 90 && age < 120, `oldest pending age ${age}`);
  t.is(total(after, 'sidecar_webhook_queue_jobs', { state: 'waiting' }), 1, 'no worker runs here, so the job waits');
  t.is(total(after, 'sidecar_dunning_attempts', { status: 'FAILED' }), 2);
  t.is(total(after, 'sidecar_dunning_attempts', { status: 'PENDING' }), 1);
  t.is(total(after, 'sidecar_dunning_attempts', { status: 'SUCCEEDED' }), 0);
  t.is(total(after, 'sidecar_woocommerce_changes', { state: 'waiting' }), 2);
  t.is(total(after, 'sidecar_woocommerce_changes', { state: 'failed' }), 1);
  t.is(total(after, 'sidecar_source_up', { source: 'database' }), 1);
  t.is(total(after, 'sidecar_source_up', { source: 'queue' }), 1);
});

test('When the webhooks are counted, Then the counts and the oldest PENDING one come from the status_provider_created index alone', async (t) => {
  const table = `${shop.prefix}sidecar_webhooks`;
  for (const sql of [
    `SELECT provider, status, COUNT(*) AS n FROM ${table} GROUP BY status, provider`,
    `SELECT MIN(created_at) FROM ${table} WHERE status = 'PENDING'`,
  ]) {
    const [plan] = await shop.db.query<any[]>(`EXPLAIN ${sql}`);
    t.is(plan[0].key, 'status_provider_created', sql);
    t.regex(String(plan[0].Extra), /Using index|Select tables optimized away/, sql);
  }
});

test.serial('When the scrape runs, Then the database pool and Redis connections of the process are shown', async (t) => {
  const samples = await scrape();
  t.is(series(samples, 'sidecar_db_pool_max_connections').length, 1);
  t.is(total(samples, 'sidecar_db_pool_max_connections'), 4, 'the tests\' pool size');
  t.true(series(samples, 'sidecar_db_pool_connections', { state: 'idle' }).length === 1);
  t.is(total(samples, 'sidecar_db_pool_waiting_requests'), 0);
  t.is(total(samples, 'sidecar_redis_connected', { connection: 'commands' }), 1);
  t.is(total(samples, 'sidecar_redis_connected', { connection: 'throttle' }), 1);
  t.true(series(samples, 'process_resident_memory_bytes').length === 1, 'Node\'s process metrics come too');
});

test.serial('When several API processes run, Then a scrape of any one shows each process\'s series, and a stopped one\'s go', async (t) => {
  const other = await startOne();
  t.is((await request(other.url, 'GET', '/health')).status, 200);
  // The other process leaves a fresh snapshot every 5 seconds.
  const samples = (await eventually(async () => {
    const scraped = await scrape();
    return new Set(series(scraped, 'sidecar_http_requests_total', { route: '/health' }).map((sample) => sample.labels.api_process)).size === 2 ? scraped : null;
  }, 8000, 'the other process\'s snapshot'))!;
  t.is(total(samples, 'sidecar_metrics_processes'), 2);
  const names = [...new Set(series(samples, 'sidecar_http_requests_total').map((sample) => sample.labels.api_process))];
  t.is(names.length, 2);
  const otherName = names.find((name) => series(samples, 'sidecar_http_requests_total', { api_process: name, route: '/metrics' }).length === 0)!;
  t.is(total(samples, 'sidecar_http_requests_total', { api_process: otherName, route: '/health' }), 1, 'the other process\'s one /health request, under its own label');
  t.true(series(samples, 'process_resident_memory_bytes').length === 2);

  await other.stop();
  running.splice(running.indexOf(other), 1);
  const afterStop = await scrape();
  t.is(total(afterStop, 'sidecar_metrics_processes'), 1);
  t.is(new Set(series(afterStop, 'sidecar_http_requests_total').map((sample) => sample.labels.api_process)).size, 1);
});

test.serial('When Redis cannot be reached, Then the process answers with its own metrics and says the queue could not be read', async (t) => {
  const isolated = await startOne({ REDIS_URL: 'redis://127.0.0.1:1' });
  const samples = await scrape(isolated);
  t.is(total(samples, 'sidecar_metrics_processes'), 1);
  t.is(total(samples, 'sidecar_source_up', { source: 'queue' }), 0);
  t.is(total(samples, 'sidecar_source_up', { source: 'database' }), 1);
  t.is(total(samples, 'sidecar_redis_connected', { connection: 'commands' }), 0);
  t.is(series(samples, 'sidecar_webhook_queue_jobs').length, 0);
});

test.serial('When the client address is not in METRICS_ALLOWED, Then /metrics is 403 forbidden in the service\'s error shape', async (t) => {
  // Through the trusted proxy (127.0.0.1), the client is the address it forwards for.
  const forwarded = await request(api.url, 'GET', '/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.is(forwarded.status, 403);
  t.deepEqual(forwarded.json, { code: 'forbidden', message: forwarded.json.message, data: { status: 403 } });
  t.is((await request(api.url, 'GET', '/metrics', { headers: { 'x-forwarded-for': '::1' } })).status, 200);

  const elsewhere = await startOne({ METRICS_ALLOWED: '10.0.0.0/8,2001:db8::/32' });
  t.is((await request(elsewhere.url, 'GET', '/metrics')).status, 403);
  const range = await startOne({ METRICS_ALLOWED: '10.0.0.1,127.0.0.0/8' });
  t.is((await request(range.url, 'GET', '/metrics')).status, 200);
  // An address that is not a trusted proxy cannot claim an allowed one.
  const untrusted = await startOne({ METRICS_ALLOWED: '192.0.2.10', TRUSTED_PROXIES: '10.9.9.9' });
  t.is((await request(untrusted.url, 'GET', '/metrics', { headers: { 'x-forwarded-for': '192.0.2.10' } })).status, 403);
});

test.serial('Behind nginx as the operator\'s guide sets it up, Then only the Prometheus server\'s address reads /metrics, whatever X-Forwarded-For a client writes', async (t) => {
  // nginx (127.0.0.1, a trusted proxy) appends the address that connected to it: $proxy_add_x_forwarded_for.
  const behindNginx = await startOne({ METRICS_ALLOWED: '203.0.113.10,127.0.0.1,::1' });
  const throughNginx = (connected: string, clientWrote?: string) => request(behindNginx.url, 'GET', '/metrics', {
    headers: { 'x-forwarded-for': clientWrote === undefined ? connected : `${clientWrote}, ${connected}` },
  });
  t.is((await throughNginx('203.0.113.10')).status, 200);
  t.is((await throughNginx('198.51.100.7')).status, 403);
  t.is((await throughNginx('198.51.100.7', '203.0.113.10')).status, 403, 'a client cannot claim the Prometheus server\'s address');
  t.is((await throughNginx('198.51.100.7', '127.0.0.1')).status, 403, 'nor the loopback');
  t.is((await request(behindNginx.url, 'GET', '/metrics')).status, 200, 'curl on the machine itself');
});

test('When METRICS_ALLOWED is not a list of addresses and ranges, Then the configuration names it', (t) => {
  const error = t.throws(() => loadConfig({ DB_NAME: 'shop', METRICS_ALLOWED: '127.0.0.1,localhost' }));
  t.regex(error!.message, /^METRICS_ALLOWED /);
  t.deepEqual(loadConfig({ DB_NAME: 'shop' }).http.metricsAllowed, ['127.0.0.1', '::1']);
});
