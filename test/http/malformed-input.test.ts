import net from 'node:net';
import test from 'ava';
import { basic, request } from '../support/http-client';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery } from '../support/fake-mobile-wallet';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import { createApiKey, createStaffUser, type ApiKey } from '../support/wordpress-fixtures';

// Bodies and request lines an attacker controls, on every route that reads one: each is refused with 400
// naming what is wrong, never a 5xx, never a crash, and nothing is stored.

const WALLET_URL = 'https://sidecar.shop.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-webhook-secret-for-malformed-input';
const LONE = '\ud800';
const HTTPS = { 'x-forwarded-proto': 'https' };

let shop: TestShop;
let cardGateway: FakeCardGateway;
let wallet: FakeMobileWallet;
let api: RunningApi;
let key: ApiKey;
let subscriptionId: number;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const count = async (table: string) => Number((await q(`SELECT COUNT(*) AS n FROM ${shop.prefix}${table}`))[0].n);
const staff = () => ({ ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) });

test.before(async () => {
  shop = await createTestShop('malformed');
  cardGateway = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([cardGateway.start(), wallet.start()]);
  await q(`INSERT INTO ${shop.prefix}sidecar_mobile_wallet_webhooks (registration_id, url, events, secret, created_at) VALUES ('reg-1', ?, '[]', ?, NOW(3))`, [WALLET_URL, WALLET_SECRET]);
  const manager = await createStaffUser(shop, { login: 'anna.manager', roles: ['shop_manager'] });
  key = await createApiKey(shop, manager.id, 'read_write');
  subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '199.00', billing: { email: 'mette@example.dk' } });
  api = await startApi(shop.config({
    CARD_GATEWAY_API_URL: cardGateway.url, CARD_GATEWAY_API_KEY: cardGateway.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: cardGateway.webhookSecret,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
  }));
});

test.after.always(async () => {
  await api?.stop();
  await Promise.all([cardGateway?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test('When a discount amount is an object whose toString is not a function, Then it is 400 invalid_params naming amount, whatever the type', async (t) => {
  for (const type of [1, 999, undefined]) {
    const res = await request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: staff(), body: { subscription: subscriptionId, type, amount: { toString: 1 } } });
    t.is(res.status, 400, `type ${type}: ${res.text}`);
    t.is(res.json.code, 'invalid_params');
    t.true(res.json.data.params.includes('amount'), `type ${type}: ${res.text}`);
  }
  t.is(await count('sidecar_renewal_discounts'), 0);
});

test('When text in a staff or order status body holds a lone surrogate, Then it is 400 invalid_params naming the field and nothing is stored', async (t) => {
  const discount = await request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: staff(), body: { subscription: subscriptionId, type: 1, amount: 10, created_via: `rest${LONE}` } });
  t.is(discount.status, 400, discount.text);
  t.deepEqual(discount.json.data, { status: 400, params: ['created_via'] });
  t.is(await count('sidecar_renewal_discounts'), 0);

  const lookup = await request(api.url, 'POST', '/helpdesk/v1/order-status', {
    headers: { ...HTTPS, authorization: basic(HELPDESK_KEY, HELPDESK_SECRET) }, body: { order_number: '1', email: `a${LONE}@example.dk` },
  });
  t.is(lookup.status, 400, lookup.text);
  t.deepEqual(lookup.json.data, { status: 400, params: ['email'] });
});

test('When a signed mobile wallet event has a lone surrogate in agreementId, Then it is 400, the wallet is not asked and nothing is stored', async (t) => {
  const asked = wallet.requests.length;
  const delivery = mobileWalletDelivery({ eventType: 'recurring.agreement-activated.v1', agreementId: `agr-${LONE}` }, { secret: WALLET_SECRET, url: WALLET_URL });
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body });
  t.is(res.status, 400, res.text);
  t.is(res.json.code, 'invalid_params');
  t.is(wallet.requests.length, asked);
  t.is(await count('sidecar_agreements'), 0);
});

test('When a signed card gateway event has a lone surrogate in its event id or invoice, Then it is 400 naming the field and nothing is stored', async (t) => {
  for (const [field, event] of [
    ['event_id', { event_type: 'invoice_settled', invoice: 'inv-1', event_id: `evt-${LONE}` }],
    ['invoice', { event_type: 'invoice_settled', invoice: `inv-${LONE}` }],
  ] as const) {
    const { res } = await sendCardGatewayEvent(api.url, event, cardGateway.webhookSecret);
    t.is(res.status, 400, res.text);
    t.deepEqual(res.json.data, { status: 400, params: [field] });
  }
  t.is(await count('sidecar_webhooks'), 0);
});

test('When the request target or Host makes no URL, Then it is 400 and the API keeps serving', async (t) => {
  const raw = (head: string) => new Promise<string>((resolve, reject) => {
    const { port } = new URL(api.url);
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(`${head}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => { answer += chunk; });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
  t.regex(await raw('POST http://[bad/helpdesk/v1/order-status HTTP/1.1\r\nHost: shop.example.dk'), /^HTTP\/1\.1 400 /);
  t.regex(await raw('GET /health HTTP/1.1\r\nHost: [bad'), /^HTTP\/1\.1 400 /);
  t.is((await request(api.url, 'GET', '/health')).status, 200);
});
