import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { cardGatewayDelivery, FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { basic, request, type TestResponse } from '../support/http-client';
import { openHub } from '../support/payment-hub-fixture';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop, type TestShopOptions } from '../support/test-shop';
import {
  createApiKey, createStaffUser, logIn, restNonce, WP_SECRETS_ENV, type ApiKey, type StaffSession, type StaffUser,
} from '../support/wordpress-fixtures';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * What the staff panels in WP admin call, as a browser calls it through `wp.apiFetch`: the logged-in cookie and a
 * `wp_rest` nonce, DELETE sent as POST with `X-HTTP-Method-Override`; renewal discounts and one order's payments and
 * reconciliation, in one storage mode (one test file per mode). Real MariaDB and Redis, a loopback card gateway.
 */
export function staffPanelScenarios(name: string, options: TestShopOptions) {
  let shop: TestShop;
  let api: RunningStaffApi;
  let card: FakeCardGateway;
  let hub: PaymentHub & { close(): Promise<void> };
  let manager: StaffUser;
  let customer: StaffUser;
  let managerKey: ApiKey;
  let readKey: ApiKey;
  let session: StaffSession;
  /** One session each, made once: logging in replaces the user's sessions. */
  let customerSession: StaffSession;
  let subscriptionId: number;

  const env = () => ({ ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, RECONCILE_MAX_PER_SECOND: '50' });
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<TestResponse> =>
    request(api.url, method, path, { headers, ...(body === undefined ? {} : { body }) });
  const asManager = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => call(method, path, { ...session.headers, ...extra }, body);
  const withKey = (key: ApiKey) => ({ 'x-forwarded-proto': 'https', authorization: basic(key.consumerKey, key.consumerSecret) });
  const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
  const paymentsOf = (orderId: number) => q(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);

  async function cardWebhook(event: CardGatewayDeliveryEvent) {
    const delivery = cardGatewayDelivery(event, card.webhookSecret);
    const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
    if (stored.kind !== 'stored') throw new Error('not stored');
    return { id: stored.id, outcome: await hub.processCardGatewayWebhook.execute(stored.id) };
  }

  /** A renewal whose card payment failed by webhook (a soft decline: a retry is planned), then settled at the gateway with no webhook telling. */
  async function failedThenSettledQuietly() {
    const subscription = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', nextPaymentGmt: new Date() });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscription) } });
    const handle = `order-${orderId}`;
    card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-panel', error: 'insufficient_funds', error_state: 'soft_declined' });
    const failed = await cardWebhook({ event_type: 'invoice_failed', invoice: handle });
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-panel' });
    return { orderId, subscriptionId: subscription, handle, failedWebhook: failed.id };
  }

  test.before(async () => {
    shop = await createTestShop(name, options);
    card = new FakeCardGateway();
    await card.start();
    manager = await createStaffUser(shop, { login: 'petra.panel', roles: ['shop_manager'] });
    customer = await createStaffUser(shop, { login: 'carl.customer', roles: ['customer'] });
    managerKey = await createApiKey(shop, manager.id, 'read_write');
    readKey = await createApiKey(shop, manager.id, 'read');
    session = await logIn(shop, manager);
    customerSession = await logIn(shop, customer);
    const billing = { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: 'mette@example.dk', phone: '20123456' };
    const parent = await shop.seeder.createOrder({ status: 'completed', billing, total: '199.00' });
    subscriptionId = await shop.seeder.createSubscription({ status: 'active', parentId: parent, billing, total: '199.00', currency: 'DKK' });
    api = await startStaffApi(shop.config(env()));
    hub = await openHub(shop.config(env()), () => new Date());
  });

  test.after.always(async () => {
    await api?.stop();
    await hub?.close().catch(() => undefined);
    await card?.stop();
    await shop?.drop();
  });

  // -------------------------------------------------------------------------------------------------------------
  // Renewal discounts with the logged-in cookie

  test.serial('When a shop manager lists, creates and cancels a discount with the cookie and nonce (DELETE sent as POST with X-HTTP-Method-Override), Then each works', async (t) => {
    const list = await asManager('GET', '/renewal-discounts/v1/discounts');
    t.is(list.status, 200, list.text);
    t.true(Array.isArray(list.json));
    t.truthy(list.headers['x-wp-total']);

    const created = await asManager('POST', '/renewal-discounts/v1/discounts', { subscription: subscriptionId, type: 1, amount: 10 });
    t.is(created.status, 201, created.text);
    t.like(created.json, { subscription: subscriptionId, status: 'pending', created_by: manager.id });

    const cancelled = await asManager('POST', `/renewal-discounts/v1/discounts/${created.json.id}`, undefined, { 'x-http-method-override': 'DELETE' });
    t.is(cancelled.status, 200, cancelled.text);
    t.like(cancelled.json, { id: created.json.id, status: 'cancelled' });
    const again = await asManager('POST', `/renewal-discounts/v1/discounts/${created.json.id}`, undefined, { 'x-http-method-override': 'delete' });
    t.is(again.status, 409, 'the override is read in any case; a cancelled discount cannot be cancelled again');
    t.is(again.json.code, 'invalid_state');
    t.is((await asManager('GET', `/renewal-discounts/v1/discounts/${created.json.id}`)).json.status, 'cancelled');
  });

  test.serial('When the override names another method, or comes on a GET, Then the request is routed as it arrived', async (t) => {
    const created = await asManager('POST', '/renewal-discounts/v1/discounts', { subscription: subscriptionId, type: 1, amount: 5 });
    t.is(created.status, 201, created.text);
    const id = created.json.id;
    const asGet = await asManager('POST', `/renewal-discounts/v1/discounts/${id}`, undefined, { 'x-http-method-override': 'GET' });
    t.is(asGet.status, 405, 'no POST route there; GET is not an override WordPress applies for apiFetch');
    const getWithOverride = await asManager('GET', `/renewal-discounts/v1/discounts/${id}`, undefined, { 'x-http-method-override': 'DELETE' });
    t.is(getWithOverride.status, 200);
    t.is(getWithOverride.json.status, 'pending', 'only a POST is overridden');
    t.is((await asManager('GET', `/renewal-discounts/v1/discounts/${id}`)).json.status, 'pending');
  });

  test('When a customer\'s valid cookie and nonce call renewal discounts or an order\'s payments, Then it is 403 forbidden', async (t) => {
    for (const [method, path] of [['GET', '/renewal-discounts/v1/discounts'], ['GET', '/payment-hub/v1/orders/1/payments'], ['POST', '/payment-hub/v1/orders/1/reconcile']]) {
      const res = await call(method, path, customerSession.headers);
      t.is(res.status, 403, `${method} ${path}`);
      t.deepEqual(res.json, { code: 'forbidden', message: res.json.message, data: { status: 403 } });
    }
  });

  test('When no cookie and no credentials are sent, Then it is 401 unauthorized with no Basic challenge (a browser would open a sign-in dialog)', async (t) => {
    for (const [method, path] of [['GET', '/renewal-discounts/v1/discounts'], ['GET', '/payment-hub/v1/orders/1/payments'], ['POST', '/payment-hub/v1/orders/1/reconcile']]) {
      const res = await call(method, path, { 'x-forwarded-proto': 'https', 'x-wp-nonce': session.nonce });
      t.is(res.status, 401, `${method} ${path}`);
      t.deepEqual(res.json, { code: 'unauthorized', message: res.json.message, data: { status: 401 } });
      t.is(res.headers['www-authenticate'], undefined);
    }
  });

  test('When Basic credentials come with a cookie, Then Basic decides (a wrong key is 401 with its challenge, whatever the cookie)', async (t) => {
    t.is((await call('GET', '/renewal-discounts/v1/discounts', withKey(managerKey))).status, 200);
    const wrong = await call('GET', '/renewal-discounts/v1/discounts', { ...session.headers, authorization: basic(managerKey.consumerKey, 'cs_wrong') });
    t.is(wrong.status, 401);
    t.regex(String(wrong.headers['www-authenticate']), /^Basic /);
  });

  test.serial('When the nonce is two ticks old, Then it is 403 rest_cookie_invalid_nonce and nothing is done; with a fresh nonce the same request works', async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const stale = restNonce({ uid: manager.id, token: session.token, nowSeconds: now, ticksAgo: 2 });
    const before = (await asManager('GET', `/renewal-discounts/v1/discounts?subscription=${subscriptionId}`)).json.length;
    const body = { subscription: subscriptionId, type: 1, amount: 7 };
    const refused = await asManager('POST', '/renewal-discounts/v1/discounts', body, { 'x-wp-nonce': stale });
    t.is(refused.status, 403);
    t.deepEqual(refused.json, { code: 'rest_cookie_invalid_nonce', message: 'Cookie check failed', data: { status: 403 } });
    t.is((await asManager('GET', `/renewal-discounts/v1/discounts?subscription=${subscriptionId}`)).json.length, before, 'nothing created');
    const missing = await call('GET', '/payment-hub/v1/orders/1/payments', { cookie: session.cookie, 'x-forwarded-proto': 'https' });
    t.is(missing.status, 403);
    t.is(missing.json.code, 'rest_cookie_invalid_nonce');

    // What apiFetch does next: a fresh nonce from admin-ajax.php?action=rest-nonce, and the request once more.
    const fresh = restNonce({ uid: manager.id, token: session.token, nowSeconds: Math.floor(Date.now() / 1000) });
    const retried = await asManager('POST', '/renewal-discounts/v1/discounts', body, { 'x-wp-nonce': fresh });
    t.is(retried.status, 201, retried.text);
  });

  // -------------------------------------------------------------------------------------------------------------
  // One order's payments

  test.serial('When an order\'s card payment failed and a retry is planned, Then its payments answer shows the payment with its failure, the retry and the webhooks, newest first', async (t) => {
    const renewal = await failedThenSettledQuietly();
    // A second delivery about the same invoice, and one about another order's, which must not show.
    const later = cardGatewayDelivery({ event_type: 'invoice_created', invoice: renewal.handle }, card.webhookSecret);
    const laterStored = await hub.webhooks.insertPending('card_gateway', String(later.payload.event_id), 'invoice_created', later.body);
    const other = cardGatewayDelivery({ event_type: 'invoice_created', invoice: 'order-999999' }, card.webhookSecret);
    await hub.webhooks.insertPending('card_gateway', String(other.payload.event_id), 'invoice_created', other.body);
    if (laterStored.kind !== 'stored') throw new Error('not stored');

    const res = await asManager('GET', `/payment-hub/v1/orders/${renewal.orderId}/payments?_locale=user`);
    t.is(res.status, 200, res.text);
    t.deepEqual(Object.keys(res.json), ['order_id', 'payments', 'retries', 'webhooks', 'warnings', 'dunning']);
    t.like(res.json.dunning, { status: 'open', provider: 'card_gateway', amount: 14900, currency: 'DKK' });
    t.is(res.json.order_id, renewal.orderId);

    t.is(res.json.payments.length, 1);
    const [payment] = res.json.payments;
    t.deepEqual(Object.keys(payment), ['id', 'provider', 'external_id', 'status', 'amount', 'currency', 'failure_code', 'failure_description', 'failure_state', 'created_at', 'updated_at']);
    t.like(payment, { provider: 'card_gateway', external_id: renewal.handle, status: 'FAILED', amount: 14900, currency: 'DKK', failure_code: 'insufficient_funds', failure_state: 'soft_declined' });
    t.regex(payment.created_at, ISO);
    t.regex(payment.updated_at, ISO);

    t.true(res.json.retries.length >= 1, JSON.stringify(res.json.retries));
    const [retry] = res.json.retries;
    t.deepEqual(Object.keys(retry), ['attempt', 'status', 'scheduled_at', 'result']);
    t.like(retry, { attempt: 1, status: 'PENDING', result: null });
    t.regex(retry.scheduled_at, ISO);
    t.true(Date.parse(retry.scheduled_at) > Date.now(), 'planned, not made yet');

    t.deepEqual(res.json.webhooks.map((webhook: { id: number }) => webhook.id), [laterStored.id, renewal.failedWebhook], 'newest first, only this order\'s');
    t.deepEqual(Object.keys(res.json.webhooks[0]), ['id', 'provider', 'external_id', 'event_type', 'status', 'created_at']);
    t.like(res.json.webhooks[0], { provider: 'card_gateway', event_type: 'invoice_created', status: 'PENDING' });
    t.like(res.json.webhooks[1], { provider: 'card_gateway', event_type: 'invoice_failed', status: 'PROCESSED' });
    t.regex(res.json.webhooks[1].created_at, ISO);

    // The same by WooCommerce API key (edit_shop_orders through the shop manager's role).
    const byKey = await call('GET', `/payment-hub/v1/orders/${renewal.orderId}/payments`, withKey(readKey));
    t.is(byKey.status, 200);
    t.deepEqual(byKey.json, res.json);
  });

  test('When an order has no payments, Then the answer has empty arrays', async (t) => {
    const orderId = await shop.seeder.createOrder({ status: 'processing', total: '10.00' });
    const res = await asManager('GET', `/payment-hub/v1/orders/${orderId}/payments`);
    t.is(res.status, 200, res.text);
    t.deepEqual(res.json, { order_id: orderId, payments: [], retries: [], webhooks: [], warnings: [], dunning: null });
  });

  test('When the order is unknown, not a number, or a subscription, Then it is 404 order_not_found', async (t) => {
    for (const id of ['99999999', 'abc', '0', '-1', '1.5', String(subscriptionId)]) {
      for (const [method, suffix] of [['GET', 'payments'], ['POST', 'reconcile']]) {
        const res = await asManager(method, `/payment-hub/v1/orders/${id}/${suffix}`);
        t.is(res.status, 404, `${method} ${id}/${suffix}: ${res.text}`);
        t.deepEqual(res.json, { code: 'order_not_found', message: res.json.message, data: { status: 404 } });
      }
    }
  });

  // -------------------------------------------------------------------------------------------------------------
  // Reconciling one order

  test.serial('When staff reconcile an order whose payment the gateway now says is settled, Then the answer shows it changed and the payment is then CAPTURED', async (t) => {
    const renewal = await failedThenSettledQuietly();
    const other = await failedThenSettledQuietly();
    const res = await asManager('POST', `/payment-hub/v1/orders/${renewal.orderId}/reconcile`);
    t.is(res.status, 200, res.text);
    t.deepEqual(Object.keys(res.json), ['dry_run', 'scope', 'summary', 'items', 'skipped']);
    t.deepEqual(res.json.skipped, []);
    t.is(res.json.dry_run, false);
    t.deepEqual(res.json.scope, { order_id: renewal.orderId });
    t.deepEqual(res.json.summary, { checked: 1, found: 1, changed: 1, would_change: 0, unreachable: 0 });
    t.deepEqual(Object.keys(res.json.items[0]), ['kind', 'provider', 'id', 'external_id', 'order_id', 'local_status', 'provider_state', 'outcome', 'events', 'notes', 'error']);
    t.like(res.json.items[0], {
      kind: 'payment', provider: 'card_gateway', external_id: renewal.handle, order_id: renewal.orderId, local_status: 'FAILED',
      provider_state: 'settled', outcome: 'changed', events: ['invoice_settled'], error: null,
    });
    t.regex(res.json.items[0].notes[0], /^invoice_settled: PROCESSED/);

    t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'CAPTURED' }]);
    const payments = await asManager('GET', `/payment-hub/v1/orders/${renewal.orderId}/payments`);
    t.like(payments.json.payments[0], { status: 'CAPTURED', external_id: renewal.handle });
    t.deepEqual(await paymentsOf(other.orderId), [{ external_id: other.handle, status: 'FAILED' }], 'another order is left alone');
    t.is(card.requestsTo('POST', '/v1/charge').length, 0, 'nothing charged');

    // Asked again: nothing open about it any more.
    const again = await asManager('POST', `/payment-hub/v1/orders/${renewal.orderId}/reconcile`);
    t.is(again.status, 200);
    t.deepEqual(again.json, { dry_run: false, scope: { order_id: renewal.orderId }, summary: { checked: 0, found: 0, changed: 0, would_change: 0, unreachable: 0 }, items: [], skipped: [] });
  });

  test.serial('When the gateway cannot be reached, Then the answer says so (outcome unreachable, with the error) and the payment is left as it was', async (t) => {
    const renewal = await failedThenSettledQuietly();
    card.failNextReads(503, 1, 0, `/v1/invoice/${renewal.handle}`);
    const res = await asManager('POST', `/payment-hub/v1/orders/${renewal.orderId}/reconcile`);
    t.is(res.status, 200, res.text);
    t.is(res.json.summary.unreachable, 1);
    t.like(res.json.items[0], { outcome: 'unreachable', external_id: renewal.handle });
    t.regex(res.json.items[0].error, /503/);
    t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'FAILED' }]);
  });

  test.serial('When the card gateway is not configured where the API runs, Then staff\'s reconcile does not ask it: the answer says so (skipped, with what is unset) and the payment is left as it was', async (t) => {
    const renewal = await failedThenSettledQuietly();
    const requests = card.requests.length;
    const unconfigured = await startStaffApi(shop.config({ ...env(), CARD_GATEWAY_API_KEY: '' }));
    try {
      const res = await request(unconfigured.url, 'POST', `/payment-hub/v1/orders/${renewal.orderId}/reconcile`, { headers: session.headers });
      t.is(res.status, 200, res.text);
      t.deepEqual(res.json, {
        dry_run: false, scope: { order_id: renewal.orderId }, summary: { checked: 0, found: 0, changed: 0, would_change: 0, unreachable: 0 }, items: [],
        skipped: [{ provider: 'card_gateway', reason: 'CARD_GATEWAY_API_KEY unset', items: 1 }],
      });
    } finally {
      await unconfigured.stop();
    }
    t.is(card.requests.length, requests, 'the gateway was not asked');
    t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'FAILED' }]);
  });

  test.serial('When reconcile is asked badly (GET, a read-only key, no nonce, a customer, an unknown order), Then it is 4xx and nothing changes, here or at the gateway', async (t) => {
    const renewal = await failedThenSettledQuietly();
    const requests = card.requests.length;
    const path = `/payment-hub/v1/orders/${renewal.orderId}/reconcile`;
    const attempts: [string, TestResponse][] = [
      ['GET', await asManager('GET', path)],
      ['read-only key', await call('POST', path, withKey(readKey))],
      ['no nonce', await call('POST', path, { cookie: session.cookie, 'x-forwarded-proto': 'https' })],
      ['customer', await call('POST', path, customerSession.headers)],
      ['unknown order', await asManager('POST', '/payment-hub/v1/orders/99999999/reconcile')],
      ['override on reconcile', await asManager('POST', path, undefined, { 'x-http-method-override': 'PUT' })],
    ];
    for (const [what, res] of attempts) t.true(res.status >= 400 && res.status < 500, `${what}: ${res.status} ${res.text}`);
    t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'FAILED' }]);
    t.is(card.requests.length, requests, 'the gateway was not asked');
  });
}
