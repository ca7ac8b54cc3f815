import test from 'ava';
import { hashPasswordLikeWordPress, phpassHash } from '../../src/wordpress/passwords';
import { basic, request, simultaneous } from '../support/http-client';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import { addApplicationPassword, createApiKey, createStaffUser, logIn, restNonce, WP_SECRETS_ENV, type StaffUser } from '../support/wordpress-fixtures';

// Staff routes limit failed authentications per client address, as the order status route does, and
// check passwords stored with phpass or bcrypt off the event loop.

const LOOKUP = '/shop/v3/helpdesk/v1/list?email=nobody%40example.dk';
const PASSWORD = 'abcdABCD1234efghEFGH5678';

let shop: TestShop;
let api: RunningApi;
let manager: StaffUser;

test.before(async () => {
  shop = await createTestShop('staff_throttle');
  manager = await createStaffUser(shop, { login: 'petra.pre68', roles: ['shop_manager'] });
  // Created before WordPress 6.8: one phpass and one bcrypt hash, each costly to check.
  await addApplicationPassword(shop, manager.id, { name: 'Old phpass', hash: phpassHash('some other password') });
  await addApplicationPassword(shop, manager.id, { name: 'Old bcrypt', hash: await hashPasswordLikeWordPress(PASSWORD, 8) });
  api = await startApi(shop.config({ ...WP_SECRETS_ENV, HELPDESK_THROTTLE_MAX_FAILURES: '10', HELPDESK_THROTTLE_WINDOW_SECONDS: '900', HELPDESK_THROTTLE_BLOCK_SECONDS: '900' }));
});

test.after.always(async () => {
  await api?.stop();
  await shop?.drop();
});

const lookup = (headers: Record<string, string>) => request(api.url, 'GET', LOOKUP, { headers: { 'x-forwarded-proto': 'https', ...headers } });

test('When 20 logins with a wrong application password arrive at once from one address, Then at most 10 are checked (401), the rest 429, and the address stays blocked', async (t) => {
  const from = { 'x-forwarded-for': '203.0.113.30' };
  const counts = await simultaneous(api.url, 20, 'GET', LOOKUP, { headers: { 'x-forwarded-proto': 'https', ...from, authorization: basic(manager.login, 'wrong-password') } });
  t.true((counts[401] ?? 0) >= 1 && (counts[401] ?? 0) <= 10, JSON.stringify(counts));
  t.is((counts[401] ?? 0) + (counts[429] ?? 0), 20, JSON.stringify(counts));

  const right = await lookup({ ...from, authorization: basic(manager.login, PASSWORD) });
  t.is(right.status, 429, 'blocked, even with the right password');
  t.truthy(right.headers['retry-after']);
  t.is((await lookup({ 'x-forwarded-for': '203.0.113.31', authorization: basic(manager.login, PASSWORD) })).status, 200, 'another address signs in');
});

test('When the right application password comes again and again, Then every request is answered and none counts as a failure', async (t) => {
  const from = { 'x-forwarded-for': '203.0.113.40' };
  for (let i = 0; i < 15; i++) t.is((await lookup({ ...from, authorization: basic(manager.login, PASSWORD) })).status, 200, `request ${i + 1}`);
});

test('When WooCommerce API key secrets are guessed from one address, Then they count too', async (t) => {
  const key = await createApiKey(shop, manager.id, 'read_write');
  const from = { 'x-forwarded-for': '2001:db8:30::1' };
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await lookup({ ...from, authorization: basic(key.consumerKey, `cs_${String(i).padStart(40, '0')}`) })).status);
  t.deepEqual(statuses, [...new Array(10).fill(401), 429, 429]);
  t.is((await lookup({ 'x-forwarded-for': '2001:db8:30::99', authorization: basic(key.consumerKey, key.consumerSecret) })).status, 429, 'the whole /64 is blocked');
});

test('When a valid cookie comes again and again with a stale nonce from one address, Then each is 403 rest_cookie_invalid_nonce and none counts as a failure', async (t) => {
  const from = { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' };
  // A user of its own: logging in replaces the user's sessions, and the tests run at once.
  const user = await createStaffUser(shop, { login: 'stella.stale', roles: ['shop_manager'] });
  const session = await logIn(shop, user);
  const stale = restNonce({ uid: user.id, token: session.token, nowSeconds: Math.floor(Date.now() / 1000), ticksAgo: 2 });
  const path = '/renewal-discounts/v1/discounts';
  for (let i = 0; i < 15; i++) {
    const res = await request(api.url, 'GET', path, { headers: { ...from, cookie: session.cookie, 'x-wp-nonce': stale } });
    t.is(res.status, 403, `request ${i + 1}`);
    t.is(res.json.code, 'rest_cookie_invalid_nonce');
  }
  t.is((await request(api.url, 'GET', path, { headers: { ...from, ...session.headers } })).status, 200, 'not blocked');
});

test('When the whole API gets a POST with X-HTTP-Method-Override: DELETE on a discount, Then it is cancelled', async (t) => {
  const session = await logIn(shop, await createStaffUser(shop, { login: 'otto.override', roles: ['shop_manager'] }));
  const subscription = await shop.seeder.createSubscription({ status: 'active', total: '99.00' });
  const created = await request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: session.headers, body: { subscription, type: 1, amount: 5 } });
  t.is(created.status, 201, created.text);
  const cancelled = await request(api.url, 'POST', `/renewal-discounts/v1/discounts/${created.json.id}`, { headers: { ...session.headers, 'x-http-method-override': 'DELETE' } });
  t.is(cancelled.status, 200, cancelled.text);
  t.is(cancelled.json.status, 'cancelled');
  const elsewhere = await request(api.url, 'POST', '/helpdesk/v1/order-status', { headers: { 'x-http-method-override': 'DELETE' } });
  t.not(elsewhere.status, 405, 'outside the staff routes the header changes nothing');
});
