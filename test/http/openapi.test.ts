import test, { type ExecutionContext } from 'ava';
import { ApiDescription, registeredOperations } from '../support/api-description';
import { ROUTES } from '../../src/entry-points/http/routes/contracts';
import { cardGatewayDelivery } from '../support/fake-card-gateway';
import { openStaffServices } from '../support/staff-api';
import { basic, request, type TestResponse } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import {
  createApiKey, createCancellationReason, createStaffUser, logIn, restNonce, WP_SECRETS, WP_SECRETS_ENV, type ApiKey, type StaffSession,
} from '../support/wordpress-fixtures';
import { shopEventsKey, signHandOver } from '../../src/woocommerce-handover/handover-signature';

const WEBHOOK_SECRET = 'openapi-test-webhook-secret';
const HELPDESK = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' };

let shop: TestShop;
let api: RunningApi;
let description: ApiDescription;
let key: ApiKey;
let session: StaffSession;
let managerId: number;
const ids: Record<string, number> = {};

const staffHeaders = () => ({ authorization: basic(key.consumerKey, key.consumerSecret), 'x-forwarded-proto': 'https' });

/** Sends the request and checks the answer against the document; `path` is the documented path, `url` the one requested. */
async function exchange(t: ExecutionContext, method: string, path: string, options: { url?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<TestResponse> {
  const res = await request(api.url, method, options.url ?? path, { headers: options.headers, body: options.body });
  description.checkResponse(t, method, path, res);
  if (res.status < 300 && options.body !== undefined && typeof options.body === 'object' && !Buffer.isBuffer(options.body)) {
    description.checkRequestBody(t, method, path, options.body);
  }
  return res;
}

test.before(async () => {
  shop = await createTestShop('openapi', { hpos: true });
  const billing = { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: 'mette@example.dk', phone: '20123456' };
  ids.order = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), paidGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '199.00',
    paymentMethodTitle: 'Kort', billing, shipping: { first_name: 'Mette', last_name: 'Hansen', country: 'DK' },
    lineItems: [{ name: 'Kaffe', qty: 1, total: '199.00' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }],
  });
  ids.subscription = await shop.seeder.createSubscription({ status: 'active', parentId: ids.order, billing, total: '199.00', currency: 'DKK' });
  ids.cancelled = await shop.seeder.createSubscription({ status: 'cancelled', billing, total: '199.00', currency: 'DKK' });
  ids.reason = await createCancellationReason(shop, 'Too expensive');
  const manager = await createStaffUser(shop, { login: 'anna', roles: ['shop_manager'] });
  managerId = manager.id;
  // A failed card payment on the order, with its failure, a planned retry and a webhook about it; and an order whose
  // open payment's gateway cannot be reached (CARD_GATEWAY_API_URL is a closed port).
  const otherBilling = { first_name: 'Ole', last_name: 'Berg', country: 'DK', email: 'ole@example.dk', phone: '20999999' };
  ids.paidOrder = await shop.seeder.createOrder({ status: 'pending', billing: otherBilling, total: '99.00' });
  ids.unreachableOrder = await shop.seeder.createOrder({ status: 'pending', billing: otherBilling, total: '99.00' });
  const payment = async (orderId: number, externalId: string, status: string) => {
    const [result] = await shop.db.query(
      `INSERT INTO ${shop.prefix}sidecar_payments (provider, external_id, status, order_id, agreement_id, amount_minor, currency, created_at, updated_at)
       VALUES ('card_gateway', ?, ?, ?, NULL, 9900, 'DKK', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`, [externalId, status, orderId]);
    return (result as { insertId: number }).insertId;
  };
  const failed = await payment(ids.paidOrder, `order-${ids.paidOrder}`, 'FAILED');
  for (const [name, value] of [['failure_code', 'insufficient_funds'], ['failure_description', 'Insufficient funds'], ['failure_state', 'soft_declined']]) {
    await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_payment_meta (payment_id, meta_key, meta_value) VALUES (?, ?, ?)`, [failed, name, value]);
  }
  await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_payment_retries (order_id, subscription_id, payment_id, attempt, status, scheduled_at, idempotency_key, result, created_at, updated_at)
     VALUES (?, ?, ?, 1, 'PENDING', UTC_TIMESTAMP(3) + INTERVAL 12 HOUR, ?, NULL, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`, [ids.paidOrder, ids.subscription, failed, `retry-${failed}-1`]);
  const about = cardGatewayDelivery({ event_type: 'invoice_failed', invoice: `order-${ids.paidOrder}` }, WEBHOOK_SECRET);
  await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_webhooks (provider, external_id, event_type, status, raw_body, attempts, created_at, updated_at)
     VALUES ('card_gateway', ?, 'invoice_failed', 'PROCESSED', ?, 1, NOW(3), NOW(3))`, [String(about.payload.event_id), about.body]);
  await payment(ids.unreachableOrder, `order-${ids.unreachableOrder}`, 'AUTHORIZED');
  // An order captured twice, the later capture flagged by the worker's sweep.
  ids.twiceOrder = await shop.seeder.createOrder({ status: 'processing', billing: otherBilling, total: '99.00' });
  const kept = await payment(ids.twiceOrder, `order-${ids.twiceOrder}`, 'CAPTURED');
  const later = await payment(ids.twiceOrder, `order-${ids.twiceOrder}-2`, 'CAPTURED');
  await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_payment_meta (payment_id, meta_key, meta_value) VALUES (?, 'second_capture_of', ?)`, [later, String(kept)]);
  key = await createApiKey(shop, manager.id, 'read_write');
  session = await logIn(shop, manager);
  const config = shop.config({
    ...WP_SECRETS_ENV, CARD_GATEWAY_WEBHOOK_SECRET: WEBHOOK_SECRET, CARD_GATEWAY_API_URL: 'http://127.0.0.1:9', CARD_GATEWAY_API_KEY: 'priv_openapi_test',
  });
  const services = await openStaffServices(config);
  await services.refreshCustomerContacts.execute();
  await services.close();
  api = await startApi(config);
  const res = await request(api.url, 'GET', '/openapi.json');
  description = new ApiDescription(res.json);
});

test.after.always(async () => {
  await api?.stop();
  await shop?.drop();
});

test('When /openapi.json is fetched, Then it is JSON that an OpenAPI 3.1 validator accepts', async (t) => {
  const res = await exchange(t, 'GET', '/openapi.json');
  t.is(res.status, 200);
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const validator = new Validator();
  const result = await validator.validate(res.json);
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
  t.is(validator.version, '3.1');
});

test('When the server\'s routes are listed, Then each is documented, and the document describes no route the server lacks', (t) => {
  t.deepEqual(description.operations(), registeredOperations(api.server));
});

test('When the document is compared with the routes\' contracts, Then its path parameters, query strings and bodies are the schemas the server checks requests with', (t) => {
  const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));
  t.is(ROUTES.length, description.operations().length);
  for (const contract of ROUTES) {
    const { path, method } = contract.definition;
    const operation = description.document.paths[path][method];
    const parameters: any[] = (operation.parameters ?? []).filter((parameter: any) => !parameter.$ref);
    for (const [name, segment] of Object.entries(contract.shapes.params)) {
      t.deepEqual(parameters.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema, asJson(segment.schema), `${method} ${path} {${name}}`);
    }
    t.deepEqual(parameters.filter((parameter) => parameter.in === 'path').length, Object.keys(contract.shapes.params).length, `${method} ${path}: path parameters`);
    t.deepEqual(parameters.find((parameter) => parameter.in === 'query')?.schema, contract.shapes.query ? asJson(contract.shapes.query.schema) : undefined, `${method} ${path}: query`);
    t.deepEqual(operation.requestBody?.content['application/json'].schema, contract.shapes.body ? asJson(contract.shapes.body.schema) : undefined, `${method} ${path}: body`);
  }
});

test('When the order status route answers 200, 400, 401 and 404, Then each answer matches its documented schema', async (t) => {
  const path = '/helpdesk/v1/order-status';
  const found = await exchange(t, 'POST', path, { headers: HELPDESK, body: { order_number: String(ids.order), email: 'mette@example.dk' } });
  t.is(found.status, 200);
  t.is((await exchange(t, 'POST', path, { headers: HELPDESK, body: { order_number: ids.order } })).json.code, 'missing_params');
  t.is((await exchange(t, 'POST', path, { headers: HELPDESK, body: { order_number: ids.order, email: 42 } })).json.code, 'invalid_params');
  t.is((await exchange(t, 'POST', path, { url: `${path}?email=x`, headers: HELPDESK, body: {} })).json.code, 'params_must_be_in_body');
  t.is((await exchange(t, 'POST', path, { headers: { 'x-forwarded-proto': 'https' }, body: { order_number: ids.order, email: 'mette@example.dk' } })).status, 401);
  t.is((await exchange(t, 'POST', path, { headers: HELPDESK, body: { order_number: ids.order, email: 'someone@example.dk' } })).status, 404);
});

test('When the customer lookup answers 200 (found and not), 400 and 401, Then each answer matches its documented schema', async (t) => {
  const path = '/shop/v3/helpdesk/v1/list';
  const found = await exchange(t, 'GET', path, { url: `${path}?email=mette%40example.dk`, headers: staffHeaders() });
  t.is(found.status, 200);
  t.is(found.json.orders.length, 1);
  t.deepEqual((await exchange(t, 'GET', path, { url: `${path}?phone=%2B4599999999`, headers: staffHeaders() })).json, {});
  t.is((await exchange(t, 'GET', path, { url: `${path}?email=a%40b.dk&phone=1`, headers: staffHeaders() })).status, 400);
  t.is((await exchange(t, 'GET', path, { url: `${path}?email=a%40b.dk`, headers: { 'x-forwarded-proto': 'https' } })).status, 401);
});

test('When the renewal discount routes answer 200, 201, 400, 404 and 409, Then each answer matches its documented schema', async (t) => {
  const headers = staffHeaders();
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/renewal-discount-types', { headers })).status, 200);
  const created = await exchange(t, 'POST', '/renewal-discounts/v1/discounts', { headers, body: { subscription: ids.subscription, type: 1, amount: 15 } });
  t.is(created.status, 201, created.text);
  t.is((await exchange(t, 'POST', '/renewal-discounts/v1/discounts', { headers, body: { subscription: 'x', amount: -1 } })).status, 400);
  t.is((await exchange(t, 'POST', '/renewal-discounts/v1/discounts', { headers, body: { subscription: ids.cancelled, type: 2, amount: 5 } })).status, 409);
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts/{id}', { url: `/renewal-discounts/v1/discounts/${created.json.id}`, headers })).status, 200);
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts/{id}', { url: '/renewal-discounts/v1/discounts/999999', headers })).status, 404);
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts', { url: `/renewal-discounts/v1/discounts?subscription=${ids.subscription}`, headers })).status, 200);
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts', { url: '/renewal-discounts/v1/discounts?per_page=1000', headers })).status, 400);
});

test('When the renewal discount routes are called with the logged-in cookie, Then they answer as with a key, and a stale nonce is the documented 403', async (t) => {
  const headers = session.headers;
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts', { headers })).status, 200);
  const created = await exchange(t, 'POST', '/renewal-discounts/v1/discounts', { headers, body: { subscription: ids.subscription, type: 1, amount: 3 } });
  t.is(created.status, 201, created.text);
  const stale = restNonce({ uid: managerId, token: session.token, nowSeconds: Math.floor(Date.now() / 1000), ticksAgo: 2 });
  const refused = await exchange(t, 'GET', '/renewal-discounts/v1/discounts', { headers: { ...headers, 'x-wp-nonce': stale } });
  t.is(refused.status, 403);
  t.is(refused.json.code, 'rest_cookie_invalid_nonce');
  t.is((await exchange(t, 'GET', '/renewal-discounts/v1/discounts', { headers: { 'x-forwarded-proto': 'https' } })).status, 401);
  // DELETE as apiFetch sends it: the answer is the DELETE operation's.
  const cancelled = await request(api.url, 'POST', `/renewal-discounts/v1/discounts/${created.json.id}`, { headers: { ...headers, 'x-http-method-override': 'DELETE' } });
  description.checkResponse(t, 'DELETE', '/renewal-discounts/v1/discounts/{id}', cancelled);
  t.is(cancelled.status, 200, cancelled.text);
  t.deepEqual(description.document.paths['/renewal-discounts/v1/discounts'].get.security.map((scheme: Record<string, unknown>) => Object.keys(scheme).sort().join('+')),
    ['wooBasic', 'wooConsumerKey+wooConsumerSecret', 'wpLoggedIn+wpNonce', 'wpLoggedIn+wpNonceQuery']);
});

test('When an order\'s payments and its reconcile answer 200, 401, 403 and 404, Then each answer matches its documented schema', async (t) => {
  const payments = '/payment-hub/v1/orders/{orderId}/payments';
  const reconcile = '/payment-hub/v1/orders/{orderId}/reconcile';
  const at = (path: string, id: number | string) => path.replace('{orderId}', String(id));
  const shown = await exchange(t, 'GET', payments, { url: at(payments, ids.paidOrder), headers: session.headers });
  t.is(shown.status, 200, shown.text);
  t.is(shown.json.payments.length, 1);
  t.is(shown.json.retries.length, 1);
  t.is(shown.json.webhooks.length, 1);
  t.deepEqual((await exchange(t, 'GET', payments, { url: at(payments, ids.order), headers: staffHeaders() })).json, { order_id: ids.order, payments: [], retries: [], webhooks: [], warnings: [], dunning: null });
  const twice = await exchange(t, 'GET', payments, { url: at(payments, ids.twiceOrder), headers: staffHeaders() });
  t.deepEqual(twice.json.warnings.map((warning: any) => [warning.code, warning.refund.external_id, warning.kept.external_id]),
    [['captured_twice', `order-${ids.twiceOrder}-2`, `order-${ids.twiceOrder}`]]);
  t.deepEqual(twice.json.warnings[0].payment_ids, [twice.json.warnings[0].refund.id, twice.json.warnings[0].kept.id], 'the payments that took the money, the later one first');
  t.is((await exchange(t, 'GET', payments, { url: at(payments, 999999), headers: session.headers })).status, 404);
  t.is((await exchange(t, 'GET', payments, { url: at(payments, ids.order), headers: { 'x-forwarded-proto': 'https' } })).status, 401);
  t.is((await exchange(t, 'GET', payments, { url: at(payments, ids.order), headers: { cookie: session.cookie, 'x-forwarded-proto': 'https' } })).status, 403);

  const nothingOpen = await exchange(t, 'POST', reconcile, { url: at(reconcile, ids.order), headers: session.headers });
  t.is(nothingOpen.status, 200, nothingOpen.text);
  t.deepEqual(nothingOpen.json.items, []);
  const unreachable = await exchange(t, 'POST', reconcile, { url: at(reconcile, ids.unreachableOrder), headers: staffHeaders() });
  t.is(unreachable.status, 200, unreachable.text);
  t.like(unreachable.json, { dry_run: false, scope: { order_id: ids.unreachableOrder }, summary: { checked: 1, unreachable: 1 } });
  t.is(unreachable.json.items[0].outcome, 'unreachable');
  t.is((await exchange(t, 'POST', reconcile, { url: at(reconcile, 'abc'), headers: session.headers })).status, 404);

  // Staff's actions on a failed renewal: an order with none is 409 with the rule's reason; unknown, 404; no credentials, 401.
  for (const action of ['charge-now', 'payment-link', 'stop-dunning']) {
    const path = `/payment-hub/v1/orders/{orderId}/${action}`;
    const refused = await exchange(t, 'POST', path, { url: at(path, ids.order), headers: session.headers, body: {} });
    t.is(refused.status, 409, refused.text);
    t.like(refused.json, { code: 'action_not_allowed', data: { status: 409, reason: 'no_dunning_case' } });
    t.is((await exchange(t, 'POST', path, { url: at(path, 999999), headers: staffHeaders() })).status, 404);
    t.is((await exchange(t, 'POST', path, { url: at(path, ids.order), headers: { 'x-forwarded-proto': 'https' } })).status, 401);
  }
});

test('When the subscription support routes answer, Then each answer matches its documented schema', async (t) => {
  const headers = session.headers;
  const base = '/subscription-support/v1';
  const one = `${base}/subscription/{subscriptionId}`;
  const at = (suffix: string, id = ids.subscription) => `${base}/subscription/${id}${suffix}`;
  t.is((await exchange(t, 'GET', `${base}/cancellation-reasons`, { headers })).status, 200);
  const recorded = await exchange(t, 'POST', `${one}/cancellation-reasons`, { url: at('/cancellation-reasons'), headers, body: { reason_post_ids: [ids.reason] } });
  t.is(recorded.status, 201, recorded.text);
  t.is((await exchange(t, 'GET', `${one}/cancellation-reasons`, { url: at('/cancellation-reasons'), headers })).status, 200);
  t.is((await exchange(t, 'GET', `${one}/cancellation-reasons/{entryId}`, { url: at(`/cancellation-reasons/${recorded.json[0].id}`), headers })).status, 200);
  t.is((await exchange(t, 'GET', `${one}/cancellation-reasons/{entryId}`, { url: at('/cancellation-reasons/999999'), headers })).status, 404);
  t.is((await exchange(t, 'POST', `${one}/cancellation-reasons`, { url: at('/cancellation-reasons'), headers, body: { reason_post_ids: [] } })).status, 400);
  t.is((await exchange(t, 'POST', `${one}/force-activate`, { url: at('/force-activate'), headers, body: {} })).status, 409);
  t.is((await exchange(t, 'POST', `${one}/pause`, { url: at('/pause', 999999), headers, body: { end_date: '2099-01-01' } })).status, 404);
  t.is((await exchange(t, 'POST', `${one}/pause`, { url: at('/pause'), headers, body: { end_date: '2020-01-01' } })).status, 400);
  const endDate = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
  t.is((await exchange(t, 'POST', `${one}/pause`, { url: at('/pause'), headers, body: { end_date: endDate } })).status, 200);
  t.is((await exchange(t, 'GET', `${base}/cancellation-reasons`, { headers: { 'x-forwarded-proto': 'https' } })).status, 401);
});

test('When health, the webhooks, the metrics and an unknown path answer, Then each answer matches its documented schema', async (t) => {
  t.is((await exchange(t, 'GET', '/health')).status, 200);
  const path = '/payment-hub/v1/webhook/{provider}';
  const delivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-1' }, WEBHOOK_SECRET);
  const stored = await exchange(t, 'POST', path, { url: '/payment-hub/v1/webhook/card_gateway', headers: delivery.headers, body: delivery.body });
  t.is(stored.status, 200);
  description.checkRequestBody(t, 'POST', path, delivery.payload);
  t.is((await exchange(t, 'POST', path, { url: '/payment-hub/v1/webhook/card_gateway', headers: delivery.headers, body: delivery.body })).json.status, 'duplicate');
  const forged = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-1' }, 'not-the-secret');
  t.is((await exchange(t, 'POST', path, { url: '/payment-hub/v1/webhook/card_gateway', headers: forged.headers, body: forged.body })).status, 401);
  t.is((await exchange(t, 'POST', path, { url: '/payment-hub/v1/webhook/paypal', body: {} })).status, 404);

  t.is((await exchange(t, 'GET', '/metrics')).status, 200);
  t.is((await exchange(t, 'GET', '/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 403);

  const unknown = await request(api.url, 'GET', '/no/such/route');
  t.is(unknown.status, 404);
  t.deepEqual(unknown.json, { code: 'not_found', message: unknown.json.message, data: { status: 404 } });
});

test('When the companion\'s notice answers 202, 400 and 401, Then each answer matches its documented schema', async (t) => {
  const path = '/payment-hub/v1/shop/order-status-changed';
  const key = shopEventsKey(`${WP_SECRETS.loggedInKey}${WP_SECRETS.loggedInSalt}`);
  const signed = (body: unknown) => {
    const text = JSON.stringify(body);
    const timestamp = Math.floor(Date.now() / 1000);
    return { body: text, headers: { 'content-type': 'application/json', 'x-shop-sidecar-timestamp': String(timestamp), 'x-shop-sidecar-signature': signHandOver(key, timestamp, text) } };
  };
  const notice = { order_id: ids.order, from: 'pending', to: 'processing' };
  const heard = await exchange(t, 'POST', path, signed(notice));
  t.is(heard.status, 202, heard.text);
  t.deepEqual(heard.json, { outcome: 'nothing_open' });
  description.checkRequestBody(t, 'POST', path, notice);
  t.is((await exchange(t, 'POST', path, signed({ order_id: 0, from: 'pending', to: 'processing' }))).status, 400);
  t.is((await exchange(t, 'POST', path, { body: JSON.stringify(notice), headers: { 'content-type': 'application/json' } })).status, 401);
});

// The documented request bodies and the handlers' own checks must agree on what is refused.
for (const [method, path, url, body] of [
  ['POST', '/helpdesk/v1/order-status', '/helpdesk/v1/order-status', { order_number: '1001' }],
  ['POST', '/helpdesk/v1/order-status', '/helpdesk/v1/order-status', { order_number: '1001', email: 'x'.repeat(321) }],
  ['POST', '/helpdesk/v1/order-status', '/helpdesk/v1/order-status', { order_number: [1], phone: '20123456' }],
  ['POST', '/renewal-discounts/v1/discounts', '/renewal-discounts/v1/discounts', { subscription: 1, type: 1 }],
  ['POST', '/renewal-discounts/v1/discounts', '/renewal-discounts/v1/discounts', { subscription: 1, type: 1, amount: 5, created_via: 'x'.repeat(101) }],
  ['POST', '/subscription-support/v1/subscription/{subscriptionId}/pause', '/subscription-support/v1/subscription/SUB/pause', { end_date: '2099-13-01' }],
  ['POST', '/subscription-support/v1/subscription/{subscriptionId}/cancellation-reasons', '/subscription-support/v1/subscription/SUB/cancellation-reasons', { reason_post_ids: Array(51).fill(1) }],
] as [string, string, string, Record<string, unknown>][]) {
  test(`When ${method} ${path} gets ${JSON.stringify(body).slice(0, 60)}, Then the document and the handler both refuse it`, async (t) => {
    t.true(description.refusesRequestBody(method, path, body), 'the document accepts it');
    const headers = path.startsWith('/helpdesk') ? HELPDESK : path.startsWith('/renewal') ? staffHeaders() : session.headers;
    const res = await exchange(t, method, path, { url: url.replace('SUB', String(ids.subscription)), headers, body });
    t.is(res.status, 400, res.text);
  });
}
