import test from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import { basic, request } from '../support/http-client';
import { capturingLogger, openStaffServices, startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop } from '../support/test-shop';
import {
  addApplicationPassword, cookieHeader, createApiKey, createCancellationReason, createStaffUser, displayedApplicationPassword,
  logIn, loggedInCookieValue, restNonce, setSessions, setUserCapabilities, setUserMeta, userMeta, WP_SECRETS, WP_SECRETS_ENV,
  type ApiKey, type StaffUser,
} from '../support/wordpress-fixtures';

// Staff authentication on every scheme WordPress and WooCommerce accept, and every refusal. The routes
// behave the same in every storage mode (see the *-scenarios files for those); this runs on posts storage.

const HTTPS = { 'x-forwarded-proto': 'https' };
const LOOKUP = '/shop/v3/helpdesk/v1/list?email=nobody%40example.dk';
const REASONS = '/subscription-support/v1/cancellation-reasons';
const DISCOUNTS = '/renewal-discounts/v1/discounts';

let shop: TestShop;
let api: RunningStaffApi;
const log = capturingLogger();
let manager: StaffUser;
let customer: StaffUser;
let admin: StaffUser;
let keys: Record<'readWrite' | 'read' | 'write' | 'customer', ApiKey>;
let subscriptionId: number;

test.before(async () => {
  shop = await createTestShop('staff_auth');
  manager = await createStaffUser(shop, { login: 'anna.manager', roles: ['shop_manager'], displayName: 'Anna Holm' });
  customer = await createStaffUser(shop, { login: 'carl.customer', roles: ['customer'] });
  admin = await createStaffUser(shop, { login: 'site admin', email: 'admin@shop.example.dk', roles: ['administrator'] });
  keys = {
    readWrite: await createApiKey(shop, manager.id, 'read_write'),
    read: await createApiKey(shop, manager.id, 'read'),
    write: await createApiKey(shop, manager.id, 'write'),
    customer: await createApiKey(shop, customer.id, 'read_write'),
  };
  subscriptionId = await shop.seeder.createSubscription({ status: 'active', billing: { first_name: 'Mette', email: 'mette@example.dk' }, total: '199.00' });
  await createCancellationReason(shop, 'Too expensive');
  api = await startStaffApi(shop.config(WP_SECRETS_ENV), { log });
});

test.after.always(async () => {
  await api?.stop();
  await shop?.drop();
});

let managers = 0;
/** A shop manager of its own, so tests running side by side never replace each other's sessions. */
const freshManager = () => createStaffUser(shop, { login: `manager.${++managers}`, roles: ['shop_manager'] });

const get = (path: string, headers: Record<string, string>) => request(api.url, 'GET', path, { headers });
const createDiscount = (headers: Record<string, string>) =>
  request(api.url, 'POST', DISCOUNTS, { headers, body: { subscription: subscriptionId, type: 1, amount: 10 } });

// ---------------------------------------------------------------------------------------------------------------
// WooCommerce REST API keys

test('When a read_write API key is sent as Basic over HTTPS, Then the customer lookup answers', async (t) => {
  const res = await get(LOOKUP, { ...HTTPS, authorization: basic(keys.readWrite.consumerKey, keys.readWrite.consumerSecret) });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.json, {});
});

test('When the key pair comes as consumer_key/consumer_secret query parameters, Then WooCommerce would accept it and so does the service', async (t) => {
  const path = `${LOOKUP}&consumer_key=${keys.read.consumerKey}&consumer_secret=${keys.read.consumerSecret}`;
  t.is((await get(path, HTTPS)).status, 200);
});

test('When the consumer secret is wrong by one character, Then it is 401 unauthorized with a Basic challenge', async (t) => {
  const secret = keys.readWrite.consumerSecret.slice(0, -1) + (keys.readWrite.consumerSecret.endsWith('a') ? 'b' : 'a');
  const res = await get(LOOKUP, { ...HTTPS, authorization: basic(keys.readWrite.consumerKey, secret) });
  t.is(res.status, 401);
  t.deepEqual(res.json, { code: 'unauthorized', message: res.json.message, data: { status: 401 } });
  t.regex(String(res.headers['www-authenticate']), /^Basic /);
});

test('When the consumer key is unknown, or the stored hash itself is sent as the key, Then it is 401', async (t) => {
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(`ck_${'0'.repeat(40)}`, keys.readWrite.consumerSecret) })).status, 401);
  const [row] = (await shop.db.query<any[]>(`SELECT consumer_key FROM wp_woocommerce_api_keys WHERE key_id = ?`, [keys.readWrite.keyId]))[0];
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(row.consumer_key, keys.readWrite.consumerSecret) })).status, 401);
});

test('When a valid key arrives over plain HTTP, Then it is 401 (WooCommerce only takes Basic over SSL)', async (t) => {
  t.is((await get(LOOKUP, { authorization: basic(keys.readWrite.consumerKey, keys.readWrite.consumerSecret) })).status, 401);
});

test('When no credentials are sent, Then it is 401', async (t) => {
  t.is((await get(LOOKUP, HTTPS)).status, 401);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: 'Bearer abc' })).status, 401);
});

test('When a read key reads, Then it passes; when it writes, Then it is 401 as WooCommerce answers a key without write permission', async (t) => {
  t.is((await get(DISCOUNTS, { ...HTTPS, authorization: basic(keys.read.consumerKey, keys.read.consumerSecret) })).status, 200);
  const res = await createDiscount({ ...HTTPS, authorization: basic(keys.read.consumerKey, keys.read.consumerSecret) });
  t.is(res.status, 401);
  t.is(res.json.code, 'unauthorized');
});

test('When a write key writes, Then it passes; when it reads, Then it is 401', async (t) => {
  t.is((await createDiscount({ ...HTTPS, authorization: basic(keys.write.consumerKey, keys.write.consumerSecret) })).status, 201);
  t.is((await get(DISCOUNTS, { ...HTTPS, authorization: basic(keys.write.consumerKey, keys.write.consumerSecret) })).status, 401);
});

test('When the key belongs to a customer (no manage_woocommerce), Then it is 403 forbidden', async (t) => {
  const res = await get(LOOKUP, { ...HTTPS, authorization: basic(keys.customer.consumerKey, keys.customer.consumerSecret) });
  t.is(res.status, 403);
  t.deepEqual(res.json, { code: 'forbidden', message: res.json.message, data: { status: 403 } });
});

test('When a key is used, Then its last_access is written in the site\'s local time, as WooCommerce does', async (t) => {
  await get(LOOKUP, { ...HTTPS, authorization: basic(keys.readWrite.consumerKey, keys.readWrite.consumerSecret) });
  let lastAccess: string | null = null;
  for (let i = 0; i < 40 && !lastAccess; i++) {
    const [[row]] = await shop.db.query<any[]>(`SELECT last_access FROM wp_woocommerce_api_keys WHERE key_id = ?`, [keys.readWrite.keyId]);
    lastAccess = row.last_access;
    if (!lastAccess) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.truthy(lastAccess);
  const copenhagenNow = new Date().toLocaleString('sv-SE', { timeZone: 'Europe/Copenhagen' });
  const skew = Math.abs(Date.parse(`${lastAccess!.replace(' ', 'T')}Z`) - Date.parse(`${copenhagenNow.replace(' ', 'T')}Z`));
  t.true(skew < 120_000, `${lastAccess} is Copenhagen's wall-clock time (${copenhagenNow})`);
});

// ---------------------------------------------------------------------------------------------------------------
// Capabilities from roles and the user's own grants

test('When a shop manager has manage_woocommerce denied on their own account, Then it is 403; a customer granted it passes', async (t) => {
  const denied = await createStaffUser(shop, { login: 'dora.denied', roles: ['shop_manager'], caps: { manage_woocommerce: false } });
  const deniedKey = await createApiKey(shop, denied.id, 'read_write');
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(deniedKey.consumerKey, deniedKey.consumerSecret) })).status, 403);
  const granted = await createStaffUser(shop, { login: 'gus.granted', roles: ['customer'], caps: { manage_woocommerce: true } });
  const grantedKey = await createApiKey(shop, granted.id, 'read_write');
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(grantedKey.consumerKey, grantedKey.consumerSecret) })).status, 200);
});

test('When the capabilities meta holds a PHP object, Then it is never unserialized and grants nothing', async (t) => {
  const user = await createStaffUser(shop, { login: 'olga.object', roles: ['administrator'] });
  await setUserCapabilities(shop, user.id, 'O:8:"stdClass":1:{s:13:"administrator";b:1;}');
  const key = await createApiKey(shop, user.id, 'read_write');
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) })).status, 403);
  await setUserCapabilities(shop, user.id, 'a:1:{s:13:"administrator";O:8:"stdClass":0:{}}');
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) })).status, 403);
});

test.serial('When the roles option changes in WP admin, Then the change applies within seconds', async (t) => {
  const editor = await createStaffUser(shop, { login: 'eve.editor', roles: ['editor'] });
  const key = await createApiKey(shop, editor.id, 'read_write');
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) })).status, 403);
  const [[roles]] = await shop.db.query<any[]>(`SELECT option_value FROM wp_options WHERE option_name = 'wp_user_roles'`);
  const withCap = String(roles.option_value).replace('s:6:"editor";a:2:{s:4:"name";s:6:"Editor";s:12:"capabilities";a:', 's:6:"editor";a:2:{s:4:"name";s:6:"Editor";s:12:"capabilities";a:');
  // Give editors manage_woocommerce by re-serializing the option with one more capability.
  const match = /s:6:"editor";a:2:\{s:4:"name";s:6:"Editor";s:12:"capabilities";a:(\d+):\{/.exec(withCap)!;
  const updated = withCap.replace(match[0], `s:6:"editor";a:2:{s:4:"name";s:6:"Editor";s:12:"capabilities";a:${Number(match[1]) + 1}:{s:18:"manage_woocommerce";b:1;`);
  await setOption(shop.db, 'wp_', 'wp_user_roles', updated);
  await new Promise((resolve) => setTimeout(resolve, 2100));
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) })).status, 200);
  await setOption(shop.db, 'wp_', 'wp_user_roles', String(roles.option_value));
});

// ---------------------------------------------------------------------------------------------------------------
// Application passwords

test('When an application password is sent as WordPress shows it (groups of four), Then it authenticates and its use is recorded', async (t) => {
  const manager = await freshManager();
  const password = await addApplicationPassword(shop, manager.id, { name: 'Dixa' });
  const res = await get(LOOKUP, { ...HTTPS, authorization: basic(manager.login, displayedApplicationPassword(password)), 'x-forwarded-for': '203.0.113.9' });
  t.is(res.status, 200, res.text);
  let stored = '';
  for (let i = 0; i < 40 && !stored.includes('203.0.113.9'); i++) {
    stored = (await userMeta(shop, manager.id, '_application_passwords')) ?? '';
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.regex(stored, /s:9:"last_used";i:\d{10};s:7:"last_ip";s:11:"203\.0\.113\.9";/);
  t.regex(stored, /s:4:"name";s:4:"Dixa"/, 'the rest of the item is kept as it was');
});

test('When the username is the account\'s email, Then the application password still authenticates (as WordPress allows)', async (t) => {
  const password = await addApplicationPassword(shop, admin.id);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic('admin@shop.example.dk', password) })).status, 200);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic('site admin', password) })).status, 200, 'a login with a space');
});

test('When the stored hash is the published $generic$ vector, Then its password authenticates', async (t) => {
  // '$generic$' + base64url(BLAKE2b(pw, key "wp_fast_hash_6.8+", 30 bytes)), computed with Python's hashlib.
  const user = await createStaffUser(shop, { login: 'vera.vector', roles: ['shop_manager'] });
  await addApplicationPassword(shop, user.id, { hash: '$generic$m3p-vGVHJEquVtpOZroIk-ieMdJ7txFHWU5XUhH-' });
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, 'abcd ABCD 1234 efgh EFGH 5678') })).status, 200);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, 'abcd ABCD 1234 efgh EFGH 5679') })).status, 401);
});

test('When an application password was created before WordPress 6.8 ($P$ phpass, John the Ripper vector), Then it still authenticates', async (t) => {
  const user = await createStaffUser(shop, { login: 'otto.old', roles: ['shop_manager'] });
  await addApplicationPassword(shop, user.id, { hash: '$P$B12345678L6Lpt4BxNotVIMILOa9u81' });
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, 'JohnRipper') })).status, 200);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, 'JohnRipped') })).status, 401);
});

test('When an unknown key pair is in the query string, Then the application password in the header is still checked, as WordPress does', async (t) => {
  const user = await createStaffUser(shop, { login: 'quinn.query', roles: ['shop_manager'] });
  const password = await addApplicationPassword(shop, user.id);
  const path = `${LOOKUP}&consumer_key=ck_${'1'.repeat(40)}&consumer_secret=cs_${'1'.repeat(40)}`;
  t.is((await get(path, { ...HTTPS, authorization: basic(user.login, password) })).status, 200);
  t.is((await get(path, HTTPS)).status, 401);
});

test('When the password is wrong, the user unknown, it comes over HTTP, or it is the account password, Then it is 401', async (t) => {
  const user = await createStaffUser(shop, { login: 'walt.wrong', roles: ['shop_manager'], pass: 'correct horse battery staple' });
  const password = await addApplicationPassword(shop, user.id);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, password.slice(1) + 'x') })).status, 401);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic('no.such.user', password) })).status, 401);
  t.is((await get(LOOKUP, { authorization: basic(user.login, password) })).status, 401);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, 'correct horse battery staple') })).status, 401);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, password) })).status, 200);
});

test('When the application password belongs to a customer, Then it is 403', async (t) => {
  const password = await addApplicationPassword(shop, customer.id);
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(customer.login, password) })).status, 403);
});

test.serial('When application passwords are not in use on the site (the option is gone), Then none is checked', async (t) => {
  const user = await createStaffUser(shop, { login: 'nina.notinuse', roles: ['shop_manager'] });
  const password = await addApplicationPassword(shop, user.id);
  await shop.db.query(`DELETE FROM wp_options WHERE option_name = 'using_application_passwords'`);
  await new Promise((resolve) => setTimeout(resolve, 2100));
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, password) })).status, 401);
  await setOption(shop.db, 'wp_', 'using_application_passwords', '1');
  await new Promise((resolve) => setTimeout(resolve, 2100));
  t.is((await get(LOOKUP, { ...HTTPS, authorization: basic(user.login, password) })).status, 200);
});

// ---------------------------------------------------------------------------------------------------------------
// Logged-in cookie + X-WP-Nonce

test('When a shop manager\'s logged-in cookie comes with a fresh wp_rest nonce, Then subscription support answers', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  const res = await get(REASONS, session.headers);
  t.is(res.status, 200, res.text);
  t.true(Array.isArray(res.json));
});

test('When the nonce comes as the _wpnonce query parameter instead, Then it is accepted too', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  t.is((await get(`${REASONS}?_wpnonce=${session.nonce}`, { cookie: session.cookie, ...HTTPS })).status, 200);
});

test('When a valid cookie comes with a nonce missing, wrong, made for another user, action or session, Then it is 403 rest_cookie_invalid_nonce', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  const now = Math.floor(Date.now() / 1000);
  const refusals = [
    await get(REASONS, { cookie: session.cookie, ...HTTPS }),
    await get(REASONS, { ...session.headers, 'x-wp-nonce': '0123456789' }),
    await get(REASONS, { ...session.headers, 'x-wp-nonce': restNonce({ uid: customer.id, token: session.token, nowSeconds: now }) }),
    await get(REASONS, { ...session.headers, 'x-wp-nonce': restNonce({ uid: manager.id, token: session.token, nowSeconds: now, action: 'log-out' }) }),
    await get(REASONS, { ...session.headers, 'x-wp-nonce': restNonce({ uid: manager.id, token: 'another-session-token', nowSeconds: now }) }),
  ];
  for (const [index, res] of refusals.entries()) {
    t.is(res.status, 403, `refusal ${index}`);
    // WordPress's own answer, which makes apiFetch fetch a fresh nonce and retry.
    t.deepEqual(res.json, { code: 'rest_cookie_invalid_nonce', message: 'Cookie check failed', data: { status: 403 } });
    t.is(res.headers['www-authenticate'], undefined);
  }
});

test('When the nonce is right but the cookie is not valid, Then it is 401 unauthorized, not the nonce refusal', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  const forged = cookieHeader(loggedInCookieValue({ login: manager.login, userPass: manager.userPass, expiration: session.expiration, token: 'not-a-session' }));
  const res = await get(REASONS, { ...session.headers, cookie: forged });
  t.is(res.status, 401);
  t.is(res.json.code, 'unauthorized');
  t.is((await get(REASONS, { 'x-wp-nonce': session.nonce, ...HTTPS })).json.code, 'unauthorized', 'no cookie at all');
});

test('When the nonce is from the previous tick (12–24 h old), Then it is accepted; from two ticks ago, Then it is 403 rest_cookie_invalid_nonce', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  const now = Math.floor(Date.now() / 1000);
  t.is((await get(REASONS, { ...session.headers, 'x-wp-nonce': restNonce({ uid: manager.id, token: session.token, nowSeconds: now, ticksAgo: 1 }) })).status, 200);
  const stale = await get(REASONS, { ...session.headers, 'x-wp-nonce': restNonce({ uid: manager.id, token: session.token, nowSeconds: now, ticksAgo: 2 }) });
  t.is(stale.status, 403);
  t.is(stale.json.code, 'rest_cookie_invalid_nonce');
});

test('When the cookie\'s HMAC is tampered with, its login swapped, or it is malformed, Then it is 401', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  const value = loggedInCookieValue({ login: manager.login, userPass: manager.userPass, expiration: session.expiration, token: session.token });
  const tampered = value.slice(0, -1) + (value.endsWith('0') ? '1' : '0');
  t.is((await get(REASONS, { ...session.headers, cookie: cookieHeader(tampered) })).status, 401);
  const swapped = value.replace(`${manager.login}|`, `${admin.login}|`);
  t.is((await get(REASONS, { ...session.headers, cookie: cookieHeader(swapped) })).status, 401);
  t.is((await get(REASONS, { ...session.headers, cookie: cookieHeader('garbage') })).status, 401);
  t.is((await get(REASONS, { ...session.headers, cookie: cookieHeader(value, 'https://other-site.example') })).status, 401, 'cookie of another site');
});

test('When the cookie has expired, Then GET is 401 but POST within the hour of grace still passes, as in WordPress', async (t) => {
  const manager = await freshManager();
  const now = Math.floor(Date.now() / 1000);
  const token = 'QpL0w3rCaseT0kenForExpiryChecks0000000000ab';
  const expiration = now - 600;
  await setSessions(shop, manager.id, [{ token, expiration: now + 3600 }]);
  const headers = {
    cookie: cookieHeader(loggedInCookieValue({ login: manager.login, userPass: manager.userPass, expiration, token })),
    'x-wp-nonce': restNonce({ uid: manager.id, token, nowSeconds: now }), ...HTTPS,
  };
  t.is((await get(REASONS, headers)).status, 401);
  const res = await request(api.url, 'POST', `/subscription-support/v1/subscription/${subscriptionId}/force-activate`, { headers });
  t.is(res.status, 409, 'authenticated: refused only because the subscription is not on hold');
});

test('When the session was destroyed (logged out) or has expired server-side, Then the cookie no longer works', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  t.is((await get(REASONS, session.headers)).status, 200);
  await setUserMeta(shop, manager.id, 'session_tokens', null);
  t.is((await get(REASONS, session.headers)).status, 401);
  const now = Math.floor(Date.now() / 1000);
  await setSessions(shop, manager.id, [{ token: session.token, expiration: now - 1 }]);
  t.is((await get(REASONS, session.headers)).status, 401);
});

test('When the user\'s password changes, Then cookies made with the old hash stop working', async (t) => {
  const user = await createStaffUser(shop, { login: 'paul.password', roles: ['shop_manager'] });
  const session = await logIn(shop, user);
  t.is((await get(REASONS, session.headers)).status, 200);
  await shop.db.query(`UPDATE wp_users SET user_pass = '$wp$2y$10$abcdefghijklmnopqrstuuOmIh9nZQ0v7bHgS4xEoKx2L4hM6zP5Wq' WHERE ID = ?`, [user.id]);
  t.is((await get(REASONS, session.headers)).status, 401);
});

test('When the cookie arrives over plain HTTP on an https site, Then it is 401 (the browser only sends it over HTTPS)', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  t.is((await get(REASONS, { cookie: session.cookie, 'x-wp-nonce': session.nonce })).status, 401);
});

test('When the cookie user lacks edit_shop_orders, Then it is 403', async (t) => {
  const session = await logIn(shop, customer);
  const res = await get(REASONS, session.headers);
  t.is(res.status, 403);
  t.is(res.json.code, 'forbidden');
});

test('When credentials of one scheme are used on a route of the other, Then it is 401', async (t) => {
  const manager = await freshManager();
  const session = await logIn(shop, manager);
  t.is((await get(LOOKUP, session.headers)).status, 401, 'cookie on the customer lookup');
  t.is((await get(REASONS, { ...HTTPS, authorization: basic(keys.readWrite.consumerKey, keys.readWrite.consumerSecret) })).status, 401, 'API key on subscription support');
});

test.serial('When the wp-config secrets are not configured, Then the site options WordPress generated are used', async (t) => {
  for (const [name, value] of [['logged_in_key', WP_SECRETS.loggedInKey], ['logged_in_salt', WP_SECRETS.loggedInSalt], ['nonce_key', WP_SECRETS.nonceKey], ['nonce_salt', WP_SECRETS.nonceSalt]]) {
    await setOption(shop.db, 'wp_', name, value, 'no');
  }
  const fromOptions = await startStaffApi(shop.config());
  try {
    const manager = await freshManager();
  const session = await logIn(shop, manager);
    t.is((await request(fromOptions.url, 'GET', REASONS, { headers: session.headers })).status, 200);
  } finally {
    await fromOptions.stop();
  }
});

test('When a refusal happens, Then it is logged with its reason and never with the secret', async (t) => {
  await get(LOOKUP, { ...HTTPS, authorization: basic(keys.readWrite.consumerKey, 'cs_wrong') });
  const entry = log.entries.find((e) => e.event === 'staff_request_unauthenticated' && e.fields?.reason === 'bad_consumer_secret');
  t.truthy(entry);
  t.false(JSON.stringify(log.entries).includes(keys.readWrite.consumerSecret));
});

// ---------------------------------------------------------------------------------------------------------------
// Published vectors, with the clock pinned

test('When the cookie and nonce are the published vectors (computed independently in Python), Then they authenticate at their time', async (t) => {
  // Vectors from test/unit/wordpress-logged-in-cookie.test.ts and wordpress-rest-nonce.test.ts: user 7
  // "shop manager" with a $wp$ password hash, token Zq3X..., expiration 2026-01-01T00:00:00Z, tick 40909.
  const vectorShop = await createTestShop('staff_auth_vectors');
  try {
    await vectorShop.db.query(`ALTER TABLE wp_users AUTO_INCREMENT = 7`);
    const user = await createStaffUser(vectorShop, { login: 'shop manager', roles: ['shop_manager'] });
    t.is(user.id, 7);
    const wpPass = '$wp$2y$10$lRb1YbfKKFeEaRrCIctp7OGNziJGSNaN5nuBEFk0lSu/VYlpdDsV2';
    await vectorShop.db.query(`UPDATE wp_users SET user_pass = ? WHERE ID = 7`, [wpPass]);
    const token = 'Zq3XvW8pLkT2nB6rYd9sHf4jMc7gA1eQo5uIxRtE0wK';
    const expiration = 1767225600;
    await setSessions(vectorShop, 7, [{ token, expiration: expiration + 86400 }]);
    const hmac = 'a13d4799790d36ce593f807fd0ae7036a2058bb94838efd2f73050848efcb4cb';
    // As a browser sends it: PHP's setcookie() encodes the space as "+", "|" as %7C; another site's cookie comes first.
    const cookie = `wordpress_logged_in_0f54a48ea2dc6c1a34e4a1fe5b3a9ae4=x; ` +
      cookieHeader(`shop manager|${expiration}|${token}|${hmac}`).split('; ')[1].replace('shop%20manager', 'shop+manager');
    const env = {
      WP_LOGGED_IN_KEY: 'logged-in-key-for-tests', WP_LOGGED_IN_SALT: 'logged-in-salt-for-tests',
      WP_NONCE_KEY: 'nonce-key-for-tests', WP_NONCE_SALT: 'nonce-salt-for-tests',
    };
    // 1767225000 is ten minutes before the cookie expires, in tick 40908 (ticks change at 1767225600).
    const pinned = await startStaffApi(vectorShop.config(env), { clock: () => new Date(1767225000 * 1000) });
    try {
      const headers = (nonce: string) => ({ cookie, 'x-wp-nonce': nonce, ...HTTPS });
      t.is((await request(pinned.url, 'GET', REASONS, { headers: headers('d8dcdee1c4') })).status, 200, 'nonce of tick 40908 (this tick)');
      t.is((await request(pinned.url, 'GET', REASONS, { headers: headers('c2444e4e88') })).status, 200, 'nonce of tick 40907 (the previous one)');
      t.is((await request(pinned.url, 'GET', REASONS, { headers: headers('aa6fddd03d') })).status, 403, 'nonce of tick 40909 (not yet)');
    } finally {
      await pinned.stop();
    }
    // At 1767226600 (tick 40909) the cookie expired 1000 s ago: GET refuses it, POST has WordPress's hour of grace.
    const later = await startStaffApi(vectorShop.config(env), { clock: () => new Date(1767226600 * 1000) });
    try {
      const headers = (nonce: string) => ({ cookie, 'x-wp-nonce': nonce, ...HTTPS });
      t.is((await request(later.url, 'GET', REASONS, { headers: headers('aa6fddd03d') })).status, 401, 'expired for GET');
      const post = await request(later.url, 'POST', '/subscription-support/v1/subscription/999999/force-activate', { headers: headers('aa6fddd03d') });
      t.is(post.status, 404, 'authenticated within the grace hour; only the subscription is unknown');
      t.is(post.json.code, 'subscription_not_found');
      const stale = await request(later.url, 'POST', '/subscription-support/v1/subscription/999999/force-activate', { headers: headers('c2444e4e88') });
      t.is(stale.status, 403, 'nonce two ticks old');
      t.is(stale.json.code, 'rest_cookie_invalid_nonce');
    } finally {
      await later.stop();
    }
  } finally {
    await vectorShop.drop();
  }
});

test('When the refresh and reactivation jobs are built for the worker, Then they run on an empty shop without error', async (t) => {
  const services = await openStaffServices(shop.config());
  try {
    t.is(typeof await services.refreshCustomerContacts.execute(), 'number');
    t.is(await services.reactivatePausedSubscriptions.execute(new Date()), 0);
  } finally {
    await services.close();
  }
});
