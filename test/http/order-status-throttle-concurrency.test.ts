import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { basic, request, simultaneous } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Failed attempts are counted before the answer is decided, so simultaneous failures cannot slip past the limit.
// Each test comes from an address of its own (X-Forwarded-For through the trusted loopback), as clients would.

let shop: TestShop;
const running: RunningApi[] = [];
const LIMITS = { HELPDESK_THROTTLE_MAX_FAILURES: '10', HELPDESK_THROTTLE_WINDOW_SECONDS: '900', HELPDESK_THROTTLE_BLOCK_SECONDS: '900' };

test.before(async () => {
  shop = await createTestShop('os_throttle_race');
});

test.after.always(async () => {
  await Promise.allSettled(running.map((a) => a.stop()));
  await shop?.drop();
});

async function api(env: Record<string, string>): Promise<RunningApi> {
  const started = await startApi(shop.config({ ...LIMITS, ...env }));
  running.push(started);
  return started;
}

const lookups = (a: RunningApi, n: number, headers: Record<string, string>, body: unknown) =>
  simultaneous(a.url, n, 'POST', '/helpdesk/v1/order-status', { headers, body });

test('When 300 lookups that all fail arrive at once with the right key, Then at most 10 are evaluated (404) and the rest are 429', async (t) => {
  const a = await api({ HELPDESK_API_KEY: 'key-race-lookups' });
  const counts = await lookups(a, 300, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.77', authorization: basic('key-race-lookups', HELPDESK_SECRET) }, { order_number: '424242', email: 'guess@example.dk' });
  t.true((counts[404] ?? 0) <= 10, JSON.stringify(counts));
  t.true((counts[404] ?? 0) >= 1, JSON.stringify(counts));
  t.is((counts[404] ?? 0) + (counts[429] ?? 0), 300, JSON.stringify(counts));
});

test('When 300 requests with a wrong secret arrive at once, Then at most 10 are evaluated (401) and the rest are 429', async (t) => {
  const a = await api({ HELPDESK_API_KEY: 'key-race-secrets' });
  const counts = await lookups(a, 300, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.78', authorization: basic('key-race-secrets', 'wrong-secret') }, { order_number: '1', email: 'a@example.dk' });
  t.true((counts[401] ?? 0) <= 10, JSON.stringify(counts));
  t.true((counts[401] ?? 0) >= 1, JSON.stringify(counts));
  t.is((counts[401] ?? 0) + (counts[429] ?? 0), 300, JSON.stringify(counts));
});

test('When lookups succeed, Then they use up nothing: more than the limit of them in a row are all answered', async (t) => {
  const orderId = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    billing: { first_name: 'Anna', country: 'DK', email: 'anna@example.dk' }, lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }],
  });
  const a = await api({ HELPDESK_API_KEY: HELPDESK_KEY });
  for (let i = 0; i < 25; i++) {
    const res = await request(a.url, 'POST', '/helpdesk/v1/order-status', {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.79', authorization: basic(HELPDESK_KEY, HELPDESK_SECRET) }, body: { order_number: String(orderId), email: 'anna@example.dk' },
    });
    t.is(res.status, 200, `lookup ${i + 1}: ${res.text}`);
  }
});

test('When 25 lookups that all succeed arrive at once and each takes a while, Then every one is answered 200: those beyond the limit wait for a place', async (t) => {
  const orderId = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    billing: { first_name: 'Bo', country: 'DK', email: 'bo@example.dk' }, lineItems: [{ name: 'Te', qty: 1, total: '100' }],
  });
  // A site extension that asks another system (a carrier, say) makes each answer take 100 ms, so the lookups overlap.
  const module = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-slow-extension-')), 'extensions.js');
  fs.writeFileSync(module, 'module.exports = { async helpdesk_order_status_data(data) { await new Promise((resolve) => setTimeout(resolve, 100)); return data; } };');
  const a = await api({ HELPDESK_API_KEY: HELPDESK_KEY, SITE_EXTENSIONS: module });
  const counts = await lookups(a, 25, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.80', authorization: basic(HELPDESK_KEY, HELPDESK_SECRET) }, { order_number: String(orderId), email: 'bo@example.dk' });
  t.deepEqual(counts, { 200: 25 });
});
