import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createLogger } from '../../src/logger';
import { basic, request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let shop: TestShop;
let api: RunningApi;
let untrusted: RunningApi;
/** With the site's filters (SITE_EXTENSIONS), one of which fails. */
let filtered: RunningApi;
let tmp: string;
let orderId: number;
// The service's own logger, writing its JSON lines where this file keeps them to read them back.
const logged: Record<string, any>[] = [];
const logger = createLogger({
  write(chunk: string) {
    for (const text of chunk.split('\n').filter(Boolean)) logged.push(JSON.parse(text));
  },
});

const lines = (match: Record<string, unknown>) => logged.filter((line) => Object.entries(match).every(([key, value]) => line[key] === value));
/** The first line matching, once written (the access line is written as the answer's connection closes). */
const lineOnceWritten = async (match: Record<string, unknown>): Promise<Record<string, any>> =>
  (await eventually(async () => lines(match)[0] ?? null, 5000, JSON.stringify(match)))!;

test.before(async () => {
  shop = await createTestShop('request_id', { hpos: true });
  orderId = await shop.seeder.createOrder({ status: 'processing', total: '100', billing: { email: 'anna@example.dk', country: 'DK' } });
  api = await startApi(shop.config(), logger);
  untrusted = await startApi(shop.config({ TRUSTED_PROXIES: '10.9.9.9' }), logger);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'request-id-'));
  const extensions = path.join(tmp, 'extensions.js');
  fs.writeFileSync(extensions, `module.exports = {
    async helpdesk_order_status_data(data) { await new Promise((resolve) => setTimeout(resolve, 5)); throw new Error('broken filter'); },
  };`);
  filtered = await startApi(shop.config({ SITE_EXTENSIONS: extensions }), logger);
});

test.after.always(async () => {
  await Promise.allSettled([api?.stop(), untrusted?.stop(), filtered?.stop()]);
  await shop?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('When a request comes without X-Request-Id, Then the answer carries a new UUID, a different one each time', async (t) => {
  const [one, two] = [await request(api.url, 'GET', '/health'), await request(api.url, 'GET', '/health')];
  t.regex(String(one.headers['x-request-id']), UUID);
  t.regex(String(two.headers['x-request-id']), UUID);
  t.not(one.headers['x-request-id'], two.headers['x-request-id']);
});

test('When a trusted proxy sends a sane X-Request-Id, Then the answer carries that one', async (t) => {
  for (const id of ['abc', 'nginx-4f2a.9:17_x', 'a'.repeat(128)]) {
    const res = await request(api.url, 'GET', '/health', { headers: { 'x-request-id': id } });
    t.is(res.headers['x-request-id'], id);
  }
});

test('When a trusted proxy sends an X-Request-Id that is not a sane token, Then the service makes its own', async (t) => {
  for (const id of ['a'.repeat(129), 'two words', 'semi;colon', '{"json":1}', 'slash/ed', '']) {
    const res = await request(api.url, 'GET', '/health', { headers: { 'x-request-id': id } });
    t.regex(String(res.headers['x-request-id']), UUID, JSON.stringify(id));
  }
});

test('When an address that is not a trusted proxy sends X-Request-Id, Then it is ignored', async (t) => {
  const res = await request(untrusted.url, 'GET', '/health', { headers: { 'x-request-id': 'client-chosen-id' } });
  t.is(res.status, 200);
  t.regex(String(res.headers['x-request-id']), UUID);
});

test('When the answer is a refusal, of a route or of restify itself, Then it carries X-Request-Id too', async (t) => {
  const answers = [
    await request(api.url, 'GET', '/no/such/route'),
    await request(api.url, 'DELETE', '/health'),
    await request(api.url, 'POST', '/helpdesk/v1/order-status', { body: { order_number: '1', email: 'a@b.dk' } }),
    await request(api.url, 'GET', '/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } }),
  ];
  t.deepEqual(answers.map((res) => res.status), [404, 405, 401, 403]);
  for (const res of answers) t.regex(String(res.headers['x-request-id']), UUID);
});

test('When a request is answered, Then one http_request line logs its id, method, route, status, duration and client address', async (t) => {
  const headers = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.5', 'x-request-id': 'helpdesk-lookup-1' };
  const res = await request(api.url, 'POST', '/helpdesk/v1/order-status', { headers, body: { order_number: String(orderId), email: 'nobody@example.dk' } });
  t.is(res.status, 404);
  const line = await lineOnceWritten({ event: 'http_request', requestId: 'helpdesk-lookup-1' });
  t.like(line, { level: 'info', method: 'POST', route: '/helpdesk/v1/order-status', status: 404, clientIp: '203.0.113.5' });
  t.true(typeof line.durationMs === 'number' && line.durationMs >= 15, `durationMs ${line.durationMs}: a failed lookup takes at least 15 ms`);
  t.regex(line.time, /^\d{4}-\d{2}-\d{2}T/);
  t.false('aborted' in line);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(lines({ event: 'http_request', requestId: 'helpdesk-lookup-1' }).length, 1, 'one line per request');

  await request(api.url, 'GET', '/renewal-discounts/v1/discounts/77', { headers: { 'x-request-id': 'unknown-discount' } });
  const staffLine = await lineOnceWritten({ event: 'http_request', requestId: 'unknown-discount' });
  t.like(staffLine, { route: '/renewal-discounts/v1/discounts/:id', status: 401, clientIp: '127.0.0.1' }, 'the registered route, not the path asked for');
});

test('When handling a request logs events, Then each line carries that request\'s id, even among concurrent requests', async (t) => {
  const ids = Array.from({ length: 8 }, (_, i) => `concurrent-${i}`);
  // Staff routes without credentials log `staff_request_unauthenticated` after awaiting the authentication.
  await Promise.all(ids.map((id, i) => request(api.url, 'GET', '/shop/v3/helpdesk/v1/list?email=a%40b.dk', {
    headers: { 'x-request-id': id, 'x-forwarded-proto': 'https', 'x-forwarded-for': `198.51.100.${i + 1}` },
  })));
  for (const [i, id] of ids.entries()) {
    const events = lines({ event: 'staff_request_unauthenticated', ip: `198.51.100.${i + 1}` });
    t.is(events.length, 1);
    t.is(events[0].requestId, id);
  }
  logger.info('outside_any_request');
  t.false('requestId' in lines({ event: 'outside_any_request' })[0], 'a line written outside a request has no request id');
});

test('When a site filter fails while an order status lookup is handled, Then its line carries the request\'s id; without filters the lookup logs only its access line', async (t) => {
  const headers = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https', 'x-request-id': 'filtered-lookup-1' };
  const res = await request(filtered.url, 'POST', '/helpdesk/v1/order-status', { headers, body: { order_number: String(orderId), email: 'anna@example.dk' } });
  t.is(res.status, 200, res.text);
  const failed = await lineOnceWritten({ event: 'site_filter_failed', requestId: 'filtered-lookup-1' });
  t.like(failed, { level: 'error', filter: 'helpdesk_order_status_data', error: 'broken filter' });
  await lineOnceWritten({ event: 'http_request', requestId: 'filtered-lookup-1' });

  // The order status route runs outside the request context where the site has no filters (request-observer.ts):
  // its answer and its access line still carry the id, and no other line is written for it.
  const plain = await request(api.url, 'POST', '/helpdesk/v1/order-status', { headers: { ...headers, 'x-request-id': 'plain-lookup-1' }, body: { order_number: String(orderId), email: 'anna@example.dk' } });
  t.is(plain.status, 200, plain.text);
  t.is(plain.headers['x-request-id'], 'plain-lookup-1');
  await lineOnceWritten({ event: 'http_request', requestId: 'plain-lookup-1' });
  t.deepEqual(lines({ requestId: 'plain-lookup-1' }).map((line) => line.event), ['http_request']);
});
