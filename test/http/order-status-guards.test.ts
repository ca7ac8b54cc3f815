import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { basic, request } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

const AUTH = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' };
const MATCH = { order_number: '', email: 'anna@example.dk' };

let shop: TestShop;
let orderId: number;
let labelledId: number;
let explodingId: number;
const running: RunningApi[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-guards-'));

async function api(env: Record<string, string> = {}): Promise<RunningApi> {
  const started = await startApi(shop.config(env));
  running.push(started);
  return started;
}

const lookup = (a: RunningApi, body: unknown, headers: Record<string, string> = AUTH) =>
  request(a.url, 'POST', '/helpdesk/v1/order-status', { headers, body });

test.before(async () => {
  shop = await createTestShop('os_guards', { hpos: true, sync: true });
  const base = {
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), paidGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    paymentMethodTitle: 'Kort', billing: { first_name: 'Anna', last_name: 'Jensen', country: 'DK', email: 'anna@example.dk', phone: '21212121' },
    shipping: { first_name: 'Anna', last_name: 'Jensen', country: 'DK' }, lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }],
    shipping_lines: [{ methodId: 'dao', title: 'DAO' }],
  };
  orderId = await shop.seeder.createOrder(base);
  labelledId = await shop.seeder.createOrder({ ...base, meta: { _tracking_url: 'https://tracking.example/ABC123' } });
  explodingId = await shop.seeder.createOrder({ ...base, meta: { _explode: 'yes' } });
  MATCH.order_number = String(orderId);
});

test.after.always(async () => {
  await Promise.allSettled(running.map((a) => a.stop()));
  await shop?.drop();
});

test('When HPOS is authoritative and the posts mirror disagrees, Then the HPOS copy is shown, until the shop switches back', async (t) => {
  const a = await api();
  await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'wc-cancelled' WHERE ID = ?`, [orderId]);
  t.is((await lookup(a, MATCH)).json.status, 'processing');
  await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = 'no' WHERE option_name = 'woocommerce_custom_orders_table_enabled'`);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.is((await lookup(a, MATCH)).json.status, 'cancelled');
  await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = 'yes' WHERE option_name = 'woocommerce_custom_orders_table_enabled'`);
  await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'wc-processing' WHERE ID = ?`, [orderId]);
});

test('When failed lookups with one API key reach the limit, Then that key gets 429 with Retry-After, even with a right answer', async (t) => {
  const a = await api({ HELPDESK_THROTTLE_MAX_FAILURES: '3', HELPDESK_THROTTLE_WINDOW_SECONDS: '60', HELPDESK_THROTTLE_BLOCK_SECONDS: '30', HELPDESK_API_KEY: 'key-a' });
  const headers = { authorization: basic('key-a', HELPDESK_SECRET), 'x-forwarded-proto': 'https' };
  for (let i = 0; i < 3; i++) t.is((await lookup(a, { ...MATCH, email: `guess${i}@example.dk` }, headers)).status, 404);
  const blocked = await lookup(a, MATCH, headers);
  t.is(blocked.status, 429);
  t.deepEqual(blocked.json, { code: 'rate_limited', message: blocked.json.message, data: { status: 429 } });
  const retryAfter = Number(blocked.headers['retry-after']);
  t.true(retryAfter > 0 && retryAfter <= 30, `Retry-After ${blocked.headers['retry-after']}`);
});

test('When requests without credentials keep failing, Then the client address is blocked and other addresses are not', async (t) => {
  const a = await api({ HELPDESK_THROTTLE_MAX_FAILURES: '2', HELPDESK_THROTTLE_WINDOW_SECONDS: '60', HELPDESK_THROTTLE_BLOCK_SECONDS: '30' });
  const from = (ip: string) => ({ 'x-forwarded-proto': 'https', 'x-forwarded-for': ip });
  t.is((await lookup(a, MATCH, from('203.0.113.7'))).status, 401);
  t.is((await lookup(a, MATCH, from('203.0.113.7'))).status, 401);
  t.is((await lookup(a, MATCH, from('203.0.113.7'))).status, 429);
  t.is((await lookup(a, MATCH, from('203.0.113.8'))).status, 401);
});

test('When several API instances run, Then they share one failure count', async (t) => {
  const env = { HELPDESK_THROTTLE_MAX_FAILURES: '2', HELPDESK_THROTTLE_WINDOW_SECONDS: '60', HELPDESK_THROTTLE_BLOCK_SECONDS: '30', HELPDESK_API_KEY: 'key-shared' };
  const [one, two] = [await api(env), await api(env)];
  const headers = { authorization: basic('key-shared', HELPDESK_SECRET), 'x-forwarded-proto': 'https' };
  t.is((await lookup(one, { ...MATCH, email: 'x@example.dk' }, headers)).status, 404);
  t.is((await lookup(two, { ...MATCH, email: 'y@example.dk' }, headers)).status, 404);
  t.is((await lookup(one, MATCH, headers)).status, 429);
  t.is((await lookup(two, MATCH, headers)).status, 429);
  const startedLater = await api(env);
  t.is((await lookup(startedLater, MATCH, headers)).status, 429, 'an instance started during the block reads it from Redis');
});

test('When Redis cannot be reached, Then the route refuses with 503 instead of counting nothing, and health says so', async (t) => {
  const a = await api({ REDIS_URL: 'redis://127.0.0.1:1' });
  const res = await lookup(a, MATCH);
  t.is(res.status, 503);
  t.is(res.json.code, 'service_unavailable');
  const health = await request(a.url, 'GET', '/health');
  t.is(health.status, 503);
  t.deepEqual(health.json, { status: 'unavailable', db: 'ok', redis: 'down', woocommerce: { mode: 'no_companion', changes_waiting: 0, changes_failed: 0, handover_lag_seconds: 0 } });
});

test('When everything is up, Then /health is 200', async (t) => {
  const a = await api();
  const health = await request(a.url, 'GET', '/health');
  t.is(health.status, 200);
  t.deepEqual(health.json, { status: 'ok', db: 'ok', redis: 'ok', woocommerce: { mode: 'no_companion', changes_waiting: 0, changes_failed: 0, handover_lag_seconds: 0 } });
});

test('When X-Forwarded-Proto comes from an address that is not a trusted proxy, Then it is 401', async (t) => {
  const a = await api({ TRUSTED_PROXIES: '10.9.9.9' });
  const res = await lookup(a, MATCH);
  t.is(res.status, 401);
  t.is(res.json.code, 'unauthorized');
});

test('When no helpdesk credentials are configured, Then every request is 401', async (t) => {
  const a = await startApi({ ...shop.config(), helpdesk: { ...shop.config().helpdesk, apiKey: undefined, apiSecret: undefined } });
  running.push(a);
  t.is((await lookup(a, MATCH)).status, 401);
});

test('When the API serves TLS itself, Then HTTPS requests are answered without a proxy header', async (t) => {
  const { certFile, keyFile } = selfSignedCertificate(path.join(tmp, 'tls'));
  const a = await api({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
  t.true(a.url.startsWith('https://'));
  const res = await lookup(a, MATCH, { authorization: AUTH.authorization });
  t.is(res.status, 200, res.text);
  t.is(res.json.order_number, String(orderId));
});

test('When site extensions are configured, Then the filters and the shipping label shape the answer, and a failing filter is skipped', async (t) => {
  const module = path.join(tmp, 'extensions.js');
  fs.writeFileSync(module, `
    module.exports = {
      helpdesk_order_status_estimated_delivery(estimated, order) {
        if (order.meta._explode) throw new Error('broken filter');
        return order.meta._tracking_url ? '2030-01-02' : estimated;
      },
      async helpdesk_order_status_data(data, order) {
        if (order.meta._explode) throw new Error('broken filter');
        delete data.payment_method_title;
        return { ...data, shop_note: 'Tak for din ordre', order_id: order.id };
      },
      shipping_label(order) {
        return order.meta._tracking_url ? { tracking_url: order.meta._tracking_url } : null;
      },
    };`);
  const a = await api({ SITE_EXTENSIONS: module });
  const plain = await lookup(a, MATCH);
  t.deepEqual(plain.json.tracking, {});
  t.is(plain.json.shop_note, 'Tak for din ordre');
  t.false('payment_method_title' in plain.json);
  t.is(plain.json.estimated_delivery, '2026-11-18');

  const labelled = await lookup(a, { ...MATCH, order_number: String(labelledId) });
  t.deepEqual(labelled.json.tracking, { tracking_url: 'https://tracking.example/ABC123' });
  t.is(labelled.json.estimated_delivery, '2030-01-02');

  const exploding = await lookup(a, { ...MATCH, order_number: String(explodingId) });
  t.is(exploding.status, 200);
  t.is(exploding.json.payment_method_title, 'Kort');
  t.is(exploding.json.estimated_delivery, '2026-11-18');
  t.false('shop_note' in exploding.json);
});

test('When a route does not exist, Then the error has the service shape', async (t) => {
  const a = await api();
  const res = await request(a.url, 'GET', '/nope');
  t.is(res.status, 404);
  t.deepEqual(res.json.data, { status: 404 });
  t.is(typeof res.json.code, 'string');
});

test('When the body is larger than the route accepts, Then it is 413 with the service shape and the connection closes', async (t) => {
  const a = await api();
  const padding = 'x'.repeat(20 * 1024);
  const res = await lookup(a, { ...MATCH, padding });
  t.is(res.status, 413);
  t.is(res.json.code, 'payload_too_large');
  t.is(res.headers.connection, 'close');
  t.is((await lookup(a, MATCH)).status, 200, 'the next request is served as usual');
});
