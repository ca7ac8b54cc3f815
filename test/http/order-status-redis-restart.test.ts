import test from 'ava';
import { eventually } from '../support/payment-hub-fixture';
import { PrivateRedis } from '../support/private-redis';
import { basic, request } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The API against a Redis of this test's own, which the test stops and starts again.

const AUTH = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' };

let redis: PrivateRedis;
let shop: TestShop;
let api: RunningApi;
let match: { order_number: string; email: string };

const lookup = () => request(api.url, 'POST', '/helpdesk/v1/order-status', { headers: AUTH, body: match });

test.before(async () => {
  redis = await PrivateRedis.start();
  shop = await createTestShop('os_redis_restart', {});
  const orderId = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), paidGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    billing: { first_name: 'Anna', last_name: 'Jensen', country: 'DK', email: 'anna@example.dk' }, lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }],
  });
  match = { order_number: String(orderId), email: 'anna@example.dk' };
  api = await startApi(shop.config({ REDIS_URL: redis.url }));
});

test.after.always(async () => {
  await api?.stop();
  await redis?.stop();
  await shop?.drop();
});

test('When Redis goes away and comes back, however long it was gone, Then lookups are refused meanwhile and answered again soon after', async (t) => {
  t.is((await lookup()).status, 200);
  // Gaps that leave the API's clients at different points of their reconnection backoff.
  for (const awayMs of [300, 2500, 100, 6000, 700]) {
    await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, awayMs));
    t.is((await lookup()).status, 503, `refused while Redis is away (${awayMs} ms)`);
    await redis.start();
    await eventually(async () => (await lookup()).status === 200, 10_000, `lookups to be answered again after ${awayMs} ms away`);
  }
});
