import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { verifyMobileWalletWebhook } from '../../src/payments/providers/mobile-wallet/signature.js';
import { CARD_GATEWAY_INVALID_STATUS, FakeCardGateway } from './fake-card-gateway';
import { request, type TestResponse } from './http-client';
import { FakeMobileWallet, MOBILE_WALLET_DUE_LEAD_DAYS } from './fake-mobile-wallet';

// The strict fakes themselves, spoken to over HTTP as the providers would be: each documented rule refused or
// kept, the idempotency replays, and the wallet taking (or not taking) the money on its own on its clock.

// ---------------------------------------------------------------------------------------------------------------
// Card gateway

async function startGateway(t: ExecutionContext): Promise<FakeCardGateway> {
  const fake = new FakeCardGateway();
  await fake.start();
  t.teardown(() => fake.stop());
  return fake;
}

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

function gatewayCall(fake: FakeCardGateway, method: string, path: string, body?: unknown, key = fake.apiKey): Promise<TestResponse> {
  return request(fake.url, method, path, { headers: { authorization: basic(key), accept: 'application/json' }, body });
}

const charge = (fake: FakeCardGateway, body: Record<string, unknown>) => gatewayCall(fake, 'POST', '/v1/charge', body);
let keys = 0;
/** A request of its own: a new idempotency key (the same key and handle would get the first answer again). */
const fresh = (body: Record<string, unknown>) => ({ ...body, key: `fresh-${(keys += 1)}` });

/** The documented error body: code, error, message, path, timestamp, http_status, http_reason, request_id. */
function isGatewayError(t: ExecutionContext, res: TestResponse, status: number, code?: number): void {
  t.is(res.status, status, res.text);
  t.like(res.json, { http_status: status, http_reason: http.STATUS_CODES[status], ...(code === undefined ? {} : { code }) });
  for (const field of ['code', 'error', 'message', 'path', 'timestamp', 'request_id']) t.true(field in res.json, `${field} in ${res.text}`);
}

function withCard(fake: FakeCardGateway, customer = 'cust-1', id = 'ca_0001'): string {
  fake.setPaymentMethod(id, { customer, card: { exp_date: '12-30', masked_card: '457199XXXXXX0001' } });
  return id;
}

const good = { handle: 'order-1001', key: 'k-1001', amount: 14900, currency: 'DKK', source: 'ca_0001', settle: true };

test('card gateway: a handle outside [a-zA-Z0-9_.-@] or longer than 255 characters is refused with the error body', async (t) => {
  const fake = await startGateway(t);
  withCard(fake);
  for (const handle of ['order 1', 'order#1', 'ordre-æ', '', 'h'.repeat(256)]) {
    isGatewayError(t, await charge(fake, { ...good, handle, key: `k-${handle.length}-${handle.slice(0, 5)}` }), CARD_GATEWAY_INVALID_STATUS, 1);
  }
  const longest = await charge(fake, { ...good, handle: `${'h'.repeat(250)}_.-@9`, key: 'k-255' });
  t.is(longest.status, 200, longest.text);
  t.is(fake.requestsTo('POST', '/v1/charge').length, 6);
});

test('card gateway: amount must be a positive integer in minor units, currency three capitals, source and handle given', async (t) => {
  const fake = await startGateway(t);
  withCard(fake);
  isGatewayError(t, await charge(fake, fresh({ ...good, amount: 149.5 })), CARD_GATEWAY_INVALID_STATUS, 1);
  isGatewayError(t, await charge(fake, fresh({ ...good, amount: '14900' })), CARD_GATEWAY_INVALID_STATUS, 1);
  isGatewayError(t, await charge(fake, fresh({ ...good, amount: 0 })), 400, 146);
  isGatewayError(t, await charge(fake, fresh({ ...good, amount: -100 })), 400, 146);
  const { amount: _amount, ...noAmount } = good;
  isGatewayError(t, await charge(fake, fresh(noAmount)), 400, 24);
  isGatewayError(t, await charge(fake, fresh({ ...good, currency: 'dkk' })), CARD_GATEWAY_INVALID_STATUS, 1);
  isGatewayError(t, await charge(fake, fresh({ ...good, currency: 'DKKR' })), CARD_GATEWAY_INVALID_STATUS, 1);
  const { source: _source, ...noSource } = good;
  isGatewayError(t, await charge(fake, fresh(noSource)), CARD_GATEWAY_INVALID_STATUS, 1);
  const { handle: _handle, ...noHandle } = good;
  isGatewayError(t, await charge(fake, fresh(noHandle)), CARD_GATEWAY_INVALID_STATUS, 1);
  isGatewayError(t, await charge(fake, fresh({ ...good, settle: 'yes' })), CARD_GATEWAY_INVALID_STATUS, 1);
  t.is((await charge(fake, good)).status, 200, 'the same request kept to the rules is charged');
});

test('card gateway: source auto needs a customer_handle, a known customer, and an active method; it charges the newest active one', async (t) => {
  const fake = await startGateway(t);
  isGatewayError(t, await charge(fake, fresh({ ...good, source: 'auto' })), 400, 18);
  isGatewayError(t, await charge(fake, fresh({ ...good, source: 'auto', customer_handle: 'cust-unknown' })), 404, 9);
  fake.setCustomer('cust-bare');
  isGatewayError(t, await charge(fake, fresh({ ...good, source: 'auto', customer_handle: 'cust-bare' })), 400, 110);

  withCard(fake, 'cust-1', 'ca_old');
  withCard(fake, 'cust-1', 'ca_new');
  withCard(fake, 'cust-1', 'ca_newest_failed');
  fake.failPaymentMethod('ca_newest_failed');
  withCard(fake, 'cust-2', 'ca_other');
  const res = await charge(fake, fresh({ ...good, source: 'auto', customer_handle: 'cust-1' }));
  t.is(res.status, 200, res.text);
  t.like(res.json, { state: 'settled', customer: 'cust-1', source: { card: 'ca_new' } });
});

test('card gateway: a method in state failed is refused with 400 and code 147 until it is reactivated', async (t) => {
  const fake = await startGateway(t);
  withCard(fake, 'cust-1', 'ca_vts');
  t.like(fake.failPaymentMethod('ca_vts'), { event_type: 'customer_payment_method_failed', customer: 'cust-1', payment_method: 'ca_vts' });
  const refused = await charge(fake, { ...good, source: 'ca_vts' });
  isGatewayError(t, refused, 400, 147);
  t.is(refused.json.error, 'Payment method failed');
  t.like((await gatewayCall(fake, 'GET', '/v1/payment_method/ca_vts')).json, { id: 'ca_vts', state: 'failed' });

  const event = fake.reactivatePaymentMethod('ca_vts');
  t.deepEqual(event, { event_type: 'customer_payment_method_reactivated', customer: 'cust-1', payment_method: 'ca_vts' });
  t.like((await gatewayCall(fake, 'GET', '/v1/payment_method/ca_vts')).json, { id: 'ca_vts', state: 'active' });
  const listed = await gatewayCall(fake, 'GET', '/v1/list/payment_method?customer=cust-1&state=active&size=100&from=1970-01-01');
  t.like(listed.json, { count: 1, content: [{ id: 'ca_vts' }] });
  t.like((await charge(fake, { ...good, handle: 'order-1002', key: 'k-1002', source: 'ca_vts' })).json, { state: 'settled', source: { card: 'ca_vts' } });

  isGatewayError(t, await charge(fake, { ...good, handle: 'order-1003', key: 'k-1003', source: 'ca_missing' }), 404, 19);
  isGatewayError(t, await charge(fake, { ...good, handle: 'order-1004', key: 'k-1004', source: 'ca_vts', customer_handle: 'cust-9' }), 404, 19);
  isGatewayError(t, await gatewayCall(fake, 'GET', '/v1/payment_method/ca_missing'), 404, 40);
});

test('card gateway: one settled or authorized charge per handle (79, 105); a failed handle may be charged again', async (t) => {
  const fake = await startGateway(t);
  withCard(fake);
  t.like((await charge(fake, good)).json, { state: 'settled' });
  isGatewayError(t, await charge(fake, { ...good, key: 'k-1001-again' }), 400, 79);

  t.like((await charge(fake, { ...good, handle: 'order-2001', key: 'k-2001', settle: false })).json, { state: 'authorized' });
  isGatewayError(t, await charge(fake, { ...good, handle: 'order-2001', key: 'k-2001-again' }), 400, 105);

  fake.queueChargeOutcome({ kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' });
  const declined = await charge(fake, { ...good, handle: 'order-3001', key: 'k-3001-1' });
  t.is(declined.status, 200, 'a decline is HTTP 200');
  t.like(declined.json, { state: 'failed', error: 'insufficient_funds', error_state: 'soft_declined' });
  t.like((await charge(fake, { ...good, handle: 'order-3001', key: 'k-3001-2' })).json, { state: 'settled' }, 'the failed handle is tried again');

  // A handle the test set up as settled (e.g. a renewal paid elsewhere) holds too.
  fake.setInvoice('order-4001', { state: 'settled', amount: 14900, customer: 'cust-1' });
  isGatewayError(t, await charge(fake, { ...good, handle: 'order-4001', key: 'k-4001' }), 400, 79);
});

test('card gateway: the same key and handle get the same answer; another key is a new request', async (t) => {
  const fake = await startGateway(t);
  withCard(fake);
  fake.queueChargeOutcome({ kind: 'failed', error: 'credit_card_expired', errorState: 'hard_declined' }, { kind: 'settled' });
  const first = await charge(fake, { ...good, handle: 'order-5001', key: 'k-5001' });
  const again = await charge(fake, { ...good, handle: 'order-5001', key: 'k-5001' });
  t.is(again.status, first.status);
  t.deepEqual(again.json, first.json);
  t.like(first.json, { state: 'failed', error_state: 'hard_declined' });
  t.like((await charge(fake, { ...good, handle: 'order-5001', key: 'k-5001-b' })).json, { state: 'settled' });

  // A refusal is the key's answer too.
  fake.failPaymentMethod('ca_0001');
  const refused = await charge(fake, { ...good, handle: 'order-5002', key: 'k-5002' });
  fake.reactivatePaymentMethod('ca_0001');
  const refusedAgain = await charge(fake, { ...good, handle: 'order-5002', key: 'k-5002' });
  t.is(refusedAgain.status, 400);
  t.is(refusedAgain.json.code, 147);
  t.is(refusedAgain.json.request_id, refused.json.request_id);
});

test('card gateway: a wrong or revoked private key, or a password, is 401 with the error body', async (t) => {
  const fake = await startGateway(t);
  isGatewayError(t, await gatewayCall(fake, 'GET', '/v1/charge/order-1', undefined, 'priv_wrong'), 401);
  const withPassword = await request(fake.url, 'GET', '/v1/charge/order-1', { headers: { authorization: `Basic ${Buffer.from(`${fake.apiKey}:secret`).toString('base64')}` } });
  isGatewayError(t, withPassword, 401);
  isGatewayError(t, await request(fake.url, 'GET', '/v1/charge/order-1'), 401);

  fake.addApiKey('priv_rotated');
  fake.revokeApiKey();
  isGatewayError(t, await gatewayCall(fake, 'GET', '/v1/account/webhook_settings'), 401);
  t.is((await gatewayCall(fake, 'GET', '/v1/account/webhook_settings', undefined, 'priv_rotated')).status, 200);
});

test('card gateway: a pending or authorized charge can be cancelled; a settled one cannot', async (t) => {
  const fake = await startGateway(t);
  withCard(fake);
  fake.queueChargeOutcome({ kind: 'pending' });
  t.like((await charge(fake, { ...good, handle: 'order-6001', key: 'k-6001' })).json, { state: 'pending', processing: true });
  const cancelled = await gatewayCall(fake, 'POST', '/v1/charge/order-6001/cancel');
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.json, { handle: 'order-6001', state: 'cancelled' });
  t.truthy(cancelled.json.cancelled);
  t.like((await gatewayCall(fake, 'GET', '/v1/charge/order-6001')).json, { state: 'cancelled' });
  isGatewayError(t, await gatewayCall(fake, 'POST', '/v1/charge/order-6001/cancel'), 400, 29);
  isGatewayError(t, await charge(fake, { ...good, handle: 'order-6001', key: 'k-6001-b' }), 400, 29);

  t.like((await charge(fake, { ...good, handle: 'order-6002', key: 'k-6002', settle: false })).json, { state: 'authorized' });
  t.like((await gatewayCall(fake, 'POST', '/v1/charge/order-6002/cancel')).json, { state: 'cancelled' });

  t.like((await charge(fake, { ...good, handle: 'order-6003', key: 'k-6003' })).json, { state: 'settled' });
  isGatewayError(t, await gatewayCall(fake, 'POST', '/v1/charge/order-6003/cancel'), 400, 79);
  isGatewayError(t, await gatewayCall(fake, 'POST', '/v1/charge/order-none/cancel'), 404, 31);
});

test('card gateway: over the account\'s request limits the answer is 429 with code 122', async (t) => {
  const fake = await startGateway(t);
  fake.enforceLimits(10, 3);
  fake.setInvoice('inv-1', { state: 'settled', amount: 100, customer: 'c' });
  const answers = [];
  for (let i = 0; i < 4; i += 1) answers.push(await gatewayCall(fake, 'GET', '/v1/invoice/inv-1'));
  t.deepEqual(answers.map((res) => res.status), [200, 200, 200, 429]);
  isGatewayError(t, answers[3]!, 429, 122);
});

// ---------------------------------------------------------------------------------------------------------------
// Mobile wallet

const TODAY = '2026-11-23';
const day = (offset: number) => new Date(Date.parse(`${TODAY}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
const at = (date: string, hour: number, minute = 0) => new Date(`${date}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`);

interface Wallet {
  fake: FakeMobileWallet;
  call(method: string, path: string, options?: { body?: unknown; key?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  create(agreementId: string, body: Record<string, unknown>, key: string): Promise<TestResponse>;
}

async function startWallet(t: ExecutionContext, options: ConstructorParameters<typeof FakeMobileWallet>[0] = {}): Promise<Wallet> {
  const start = at(TODAY, 9);
  const fake = new FakeMobileWallet({ now: () => start, ...options });
  await fake.start();
  t.teardown(() => fake.stop());
  const token = await request(fake.url, 'POST', '/accesstoken/get', {
    headers: { client_id: fake.clientId, client_secret: fake.clientSecret, 'ocp-apim-subscription-key': fake.subscriptionKey, 'merchant-serial-number': fake.merchantSerialNumber },
  });
  const bearer = `Bearer ${token.json.access_token}`;
  const call: Wallet['call'] = (method, path, options = {}) => request(fake.url, method, path, {
    headers: {
      authorization: bearer, 'ocp-apim-subscription-key': fake.subscriptionKey, 'merchant-serial-number': fake.merchantSerialNumber,
      ...(options.key === undefined ? {} : { 'idempotency-key': options.key }), ...options.headers,
    },
    body: options.body,
  });
  return { fake, call, create: (agreementId, body, key) => call('POST', `/recurring/v3/agreements/${agreementId}/charges`, { body, key }) };
}

/** An RFC 7807 problem of the Recurring API with this identifier. */
function isProblem(t: ExecutionContext, res: TestResponse, status: number, identifier: string): void {
  t.is(res.status, status, res.text);
  t.regex(String(res.headers['content-type']), /^application\/problem\+json/);
  t.like(res.json, { type: `https://developer.vippsmobilepay.com/docs/APIs/recurring-api/recurring-api-problems#${identifier}`, status, title: http.STATUS_CODES[status] });
  t.is(typeof res.json.detail, 'string');
  t.is(typeof res.json.instance, 'string');
}

const monthly = (overrides: Record<string, unknown> = {}) => ({
  amount: 9900, description: 'Box, December', transactionType: 'DIRECT_CAPTURE', due: day(MOBILE_WALLET_DUE_LEAD_DAYS), retryDays: 2, orderId: 'shop1-order-1001', ...overrides,
});

test('wallet: Idempotency-Key is required, 1-40 characters without # ? / \\', async (t) => {
  const { fake, call, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  isProblem(t, await call('POST', '/recurring/v3/agreements/agr_1/charges', { body: monthly() }), 400, 'idempotency-key-header');
  for (const key of ['a/b', 'a?b', 'a#b', 'a\\b', 'k'.repeat(41)]) isProblem(t, await create('agr_1', monthly(), key), 400, 'idempotency-key-header');
  t.is((await create('agr_1', monthly(), 'k'.repeat(40))).status, 201);
});

test('wallet: the same key and body get the same answer, 4xx included; the same key with another body is 409', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  const first = await create('agr_1', monthly(), 'key-1');
  t.is(first.status, 201);
  t.deepEqual(first.json, { chargeId: 'shop1-order-1001' });
  const again = await create('agr_1', monthly(), 'key-1');
  t.is(again.status, 201);
  t.deepEqual(again.json, first.json);
  isProblem(t, await create('agr_1', monthly({ amount: 9800 }), 'key-1'), 409, 'idempotency-conflict');

  const tooSoon = await create('agr_1', monthly({ due: day(1), orderId: 'shop1-order-1002' }), 'key-2');
  isProblem(t, tooSoon, 400, 'charge-due-too-soon');
  const tooSoonAgain = await create('agr_1', monthly({ due: day(1), orderId: 'shop1-order-1002' }), 'key-2');
  t.deepEqual(tooSoonAgain.json, tooSoon.json, 'the 4xx is the key\'s answer');
  isProblem(t, await create('agr_1', monthly({ orderId: 'shop1-order-1002' }), 'key-2'), 409, 'idempotency-conflict');
});

test('wallet: an orderId is used once per merchant serial number, and is at most 50 of [a-zA-Z0-9-]', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  fake.setAgreement('agr_2');
  t.is((await create('agr_1', monthly(), 'key-1')).status, 201);
  isProblem(t, await create('agr_1', monthly(), 'key-2'), 409, 'conflict');
  isProblem(t, await create('agr_2', monthly(), 'key-3'), 409, 'conflict');
  for (const orderId of ['shop1_order', 'shop1 order', 'o'.repeat(51), '']) isProblem(t, await create('agr_1', monthly({ orderId }), `key-${orderId.length}-${orderId.slice(0, 6)}`), 400, 'validation-error');
  t.is((await create('agr_1', monthly({ orderId: 'o'.repeat(50) }), 'key-50')).status, 201);
  const generated = await create('agr_1', monthly({ orderId: undefined }), 'key-gen');
  t.regex(generated.json.chargeId, /^chr-/);
});

test('wallet: description at most 45 characters, amount an integer of at least 100, the enums as documented', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  let n = 0;
  const refused = async (overrides: Record<string, unknown>, field: string) => {
    n += 1;
    const res = await create('agr_1', monthly({ orderId: `shop1-v-${n}`, ...overrides }), `v-${n}`);
    isProblem(t, res, 400, 'validation-error');
    t.like(res.json.extraDetails, [{ field }]);
  };
  await refused({ description: 'd'.repeat(46) }, 'description');
  await refused({ description: '' }, 'description');
  await refused({ amount: 0 }, 'amount');
  await refused({ amount: 99 }, 'amount');
  await refused({ amount: 9900.5 }, 'amount');
  await refused({ amount: '9900' }, 'amount');
  await refused({ transactionType: 'CAPTURE' }, 'transactionType');
  await refused({ type: 'INITIAL' }, 'type');
  await refused({ processingMode: 'ONCE' }, 'processingMode');
  await refused({ retryDays: 15 }, 'retryDays');
  await refused({ retryDays: -1 }, 'retryDays');
  await refused({ retryDays: undefined }, 'retryDays');
  await refused({ due: undefined }, 'due');
  await refused({ due: '2026-13-01' }, 'due');
  await refused({ due: '25.11.2026' }, 'due');
  t.is((await create('agr_1', monthly({ description: 'd'.repeat(45), amount: 100, orderId: 'shop1-v-ok' }), 'v-ok')).status, 201);
  isProblem(t, await create('agr_1', monthly({ type: 'UNSCHEDULED', orderId: 'shop1-v-unsch' }), 'v-unsch'), 400, 'unsupported-feature');
});

test(`wallet: due must be at least ${MOBILE_WALLET_DUE_LEAD_DAYS} days after the wallet's today and at most 2 years ahead`, async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  isProblem(t, await create('agr_1', monthly({ due: day(0), orderId: 'o-0' }), 'd-0'), 400, 'charge-due-too-soon');
  isProblem(t, await create('agr_1', monthly({ due: day(1), orderId: 'o-1' }), 'd-1'), 400, 'charge-due-too-soon');
  t.is((await create('agr_1', monthly({ due: day(2), orderId: 'o-2' }), 'd-2')).status, 201);
  t.is((await create('agr_1', monthly({ due: '2028-11-23', orderId: 'o-2y' }), 'd-2y')).status, 201);
  isProblem(t, await create('agr_1', monthly({ due: '2028-11-24', orderId: 'o-2y1' }), 'd-2y1'), 400, 'charge-due-in-too-long');
});

test('wallet: SINGLE_ATTEMPT takes retryDays 0 only', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  const res = await create('agr_1', monthly({ processingMode: 'SINGLE_ATTEMPT', retryDays: 2 }), 'single-2');
  isProblem(t, res, 400, 'validation-error');
  t.like(res.json.extraDetails, [{ field: 'retryDays' }]);
  t.is((await create('agr_1', monthly({ processingMode: 'SINGLE_ATTEMPT', retryDays: 0 }), 'single-0')).status, 201);
});

test('wallet: charges only on an ACTIVE agreement, within its amount limit', async (t) => {
  const { fake, create } = await startWallet(t);
  for (const status of ['PENDING', 'STOPPED', 'EXPIRED']) {
    fake.setAgreement(`agr_${status}`, { status });
    isProblem(t, await create(`agr_${status}`, monthly({ orderId: `o-${status}` }), `k-${status}`), 400, 'charge-creation-failed');
  }
  isProblem(t, await create('agr_none', monthly({ orderId: 'o-none' }), 'k-none'), 404, 'agreement-not-found');
  fake.setAgreement('agr_legacy', { pricing: { type: 'LEGACY', amount: 1000, currency: 'DKK' } });
  isProblem(t, await create('agr_legacy', monthly({ amount: 5001, orderId: 'o-legacy' }), 'k-legacy'), 400, 'charge-amount-too-high');
  fake.setAgreement('agr_var', { pricing: { type: 'VARIABLE', currency: 'DKK', suggestedMaxAmount: 20000, maxAmount: 5000 } });
  isProblem(t, await create('agr_var', monthly({ amount: 20001, orderId: 'o-var-1' }), 'k-var-1'), 400, 'charge-amount-too-high');
  t.is((await create('agr_var', monthly({ amount: 15000, orderId: 'o-var-2' }), 'k-var-2')).status, 201, 'above the user\'s maxAmount but within the suggested one');
});

test('wallet: 401 for a bad token or subscription key, as a problem', async (t) => {
  const { fake, call } = await startWallet(t);
  fake.setAgreement('agr_1');
  isProblem(t, await call('GET', '/recurring/v3/agreements/agr_1', { headers: { authorization: 'Bearer not-a-token' } }), 401, 'not-authorized');
  isProblem(t, await call('GET', '/recurring/v3/agreements/agr_1', { headers: { 'ocp-apim-subscription-key': 'wrong' } }), 401, 'not-authorized');
  fake.revokeTokens();
  isProblem(t, await call('GET', '/recurring/v3/agreements/agr_1'), 401, 'not-authorized');
});

test('wallet: a DUE charge cancelled before its due date is never taken; a charged one cannot be cancelled', async (t) => {
  const { fake, call, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  t.is((await create('agr_1', monthly(), 'key-1')).status, 201);
  const path = '/recurring/v3/agreements/agr_1/charges/shop1-order-1001';
  t.like((await call('GET', path)).json, { id: 'shop1-order-1001', status: 'DUE', due: `${day(2)}T00:00:00Z`, retryDays: 2, amount: 9900, transactionId: null });
  isProblem(t, await call('DELETE', path), 400, 'idempotency-key-header');
  const cancelled = await call('DELETE', path, { key: 'cancel-1' });
  t.is(cancelled.status, 204);
  t.is((await call('DELETE', path, { key: 'cancel-1' })).status, 204, 'the same key, the same answer');
  t.like((await call('GET', path)).json, { status: 'CANCELLED', summary: { captured: 0, cancelled: 9900 } });

  const run = await fake.advanceTo(at(day(5), 23));
  t.deepEqual(run, [], 'nothing taken, nothing told');
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'CANCELLED', transactionId: null });

  t.is((await create('agr_1', monthly({ orderId: 'shop1-order-1002', due: day(7) }), 'key-2')).status, 201);
  await fake.advanceTo(at(day(7), 8));
  t.like(fake.charge('agr_1', 'shop1-order-1002'), { status: 'CHARGED' });
  isProblem(t, await call('DELETE', '/recurring/v3/agreements/agr_1/charges/shop1-order-1002', { key: 'cancel-2' }), 400, 'cancel-charge-failed');
  isProblem(t, await call('DELETE', '/recurring/v3/agreements/agr_1/charges/nope', { key: 'cancel-3' }), 404, 'charge-not-found');
});

/** A loopback receiver standing in for the service's public webhook URL. */
async function webhookReceiver(t: ExecutionContext): Promise<{ url: string; received: { headers: http.IncomingHttpHeaders; body: Buffer }[] }> {
  const received: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

test('wallet: a DUE charge is taken on its due date at the 07:00 UTC attempt, and the signed capture webhook is delivered', async (t) => {
  const receiver = await webhookReceiver(t);
  const registeredUrl = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
  const { fake, call, create } = await startWallet(t, { webhookTarget: () => receiver.url });
  fake.setAgreement('agr_1');
  const registration = await call('POST', '/webhooks/v1/webhooks', { body: { url: registeredUrl, events: ['recurring.charge-captured.v1', 'recurring.charge-failed.v1'] } });
  t.is(registration.status, 201);
  t.is((await create('agr_1', monthly({ retryDays: 0 }), 'key-1')).status, 201);

  t.deepEqual(await fake.advanceTo(at(day(2), 6, 59)), [], 'not before the first attempt of the day');
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'DUE' });
  const [captured] = await fake.advanceTo(at(day(2), 7, 30));
  t.like(captured!.event, { eventType: 'recurring.charge-captured.v1', agreementId: 'agr_1', chargeId: 'shop1-order-1001', amount: 9900, occurred: `${day(2)}T07:00:00Z`, msn: fake.merchantSerialNumber });
  t.like(captured!.deliveries, [{ registrationId: registration.json.id, url: registeredUrl, status: 200 }]);
  const charged = (await call('GET', '/recurring/v3/agreements/agr_1/charges/shop1-order-1001')).json;
  t.like(charged, { status: 'CHARGED', summary: { captured: 9900 }, failureReason: null });
  t.regex(charged.transactionId, /^\d{10,}$/);
  t.is(captured!.event.transactionId, charged.transactionId);
  t.deepEqual(charged.history.map((entry: { event: string }) => entry.event), ['CREATE', 'CAPTURE']);

  t.is(receiver.received.length, 1);
  const delivery = receiver.received[0]!;
  t.is(delivery.headers.host, 'sidecar.example.dk');
  t.deepEqual(verifyMobileWalletWebhook({ method: 'POST', registeredUrl, headers: delivery.headers, body: delivery.body }, { secrets: [registration.json.secret] }), { ok: true });
  t.like(JSON.parse(delivery.body.toString('utf8')), { eventType: 'recurring.charge-captured.v1', chargeId: 'shop1-order-1001' });
});

test('wallet: with retryDays the wallet keeps the charge DUE and retries at 07:00 and 15:00 UTC; the customer fixing it in the app gets it charged', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  fake.setAgreementCard('agr_1', 'no_funds');
  t.is((await create('agr_1', monthly({ retryDays: 3 }), 'key-1')).status, 201);
  t.deepEqual(await fake.advanceTo(at(day(3), 16)), [], 'four failed attempts tell the merchant nothing');
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'DUE', failureReason: null, transactionId: null });

  fake.setAgreementCard('agr_1', 'good');
  const [captured] = await fake.advanceTo(at(day(4), 8));
  t.like(captured!.event, { eventType: 'recurring.charge-captured.v1', occurred: `${day(4)}T07:00:00Z` });
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'CHARGED' });
});

test('wallet: when every retry fails the charge ends FAILED with user_action_required after the last day\'s 15:00 attempt', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  fake.setAgreementCard('agr_1', 'no_funds');
  t.is((await create('agr_1', monthly({ retryDays: 2 }), 'key-1')).status, 201);
  t.deepEqual(await fake.advanceTo(at(day(4), 14)), []);
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'DUE' });
  const [failed] = await fake.advanceTo(at(day(4), 15, 30));
  t.like(failed!.event, { eventType: 'recurring.charge-failed.v1', chargeId: 'shop1-order-1001', failureReason: 'user_action_required', occurred: `${day(4)}T15:00:00Z` });
  t.like(fake.charge('agr_1', 'shop1-order-1001'), { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
  t.is(fake.emitted.length, 1);
});

test('wallet: SINGLE_ATTEMPT is tried once, at 07:00 on its due date', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  fake.setAgreementCard('agr_1', 'no_funds');
  t.is((await create('agr_1', monthly({ retryDays: 0, processingMode: 'SINGLE_ATTEMPT' }), 'key-1')).status, 201);
  const [failed] = await fake.advanceTo(at(day(2), 7, 1));
  t.like(failed!.event, { eventType: 'recurring.charge-failed.v1', failureReason: 'user_action_required' });
  fake.setAgreementCard('agr_1', 'good');
  t.deepEqual(await fake.advanceTo(at(day(9), 0)), [], 'no second attempt');
});

test('wallet: a charge above the user\'s maxAmount waits DUE and fails charge_amount_too_high unless the user raises it', async (t) => {
  const { fake, create } = await startWallet(t);
  fake.setAgreement('agr_var', { pricing: { type: 'VARIABLE', currency: 'DKK', suggestedMaxAmount: 20000, maxAmount: 5000 } });
  t.is((await create('agr_var', monthly({ amount: 15000, retryDays: 1 }), 'key-1')).status, 201);
  t.is((await create('agr_var', monthly({ amount: 15000, retryDays: 1, orderId: 'shop1-order-1002' }), 'key-2')).status, 201);
  await fake.advanceTo(at(day(2), 16));
  fake.setMaxAmount('agr_var', 15000);
  t.deepEqual((await fake.advanceTo(at(day(3), 8))).map((e) => [e.event.chargeId, e.event.eventType]), [['shop1-order-1001', 'recurring.charge-captured.v1'], ['shop1-order-1002', 'recurring.charge-captured.v1']]);

  t.is((await create('agr_var', monthly({ amount: 16000, retryDays: 0, orderId: 'shop1-order-1003', due: day(12) }), 'key-3')).status, 201);
  const [failed] = await fake.advanceTo(at(day(12), 16));
  t.like(failed!.event, { eventType: 'recurring.charge-failed.v1', failureReason: 'charge_amount_too_high' });
});

test('wallet: FetchCharge is limited to 10 a minute per agreement and charge (429 with Retry-After), on the wallet\'s clock', async (t) => {
  const { fake, call, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  t.is((await create('agr_1', monthly(), 'key-1')).status, 201);
  t.is((await create('agr_1', monthly({ orderId: 'shop1-order-1002' }), 'key-2')).status, 201);
  const path = '/recurring/v3/agreements/agr_1/charges/shop1-order-1001';
  const statuses = [];
  for (let i = 0; i < 11; i += 1) statuses.push((await call('GET', path)).status);
  t.deepEqual(statuses, [...Array(10).fill(200), 429]);
  const limited = await call('GET', path);
  t.is(limited.status, 429);
  t.like(limited.json, { status: 429, title: 'Too Many Requests' });
  t.truthy(limited.headers['retry-after']);
  t.is((await call('GET', '/recurring/v3/agreements/agr_1/charges/shop1-order-1002')).status, 200, 'another charge has its own count');
  await fake.advanceTo(at(TODAY, 9, 1));
  t.is((await call('GET', path)).status, 200, 'a minute later');
});

test('wallet: charges of an agreement are listed, filtered by status', async (t) => {
  const { fake, call, create } = await startWallet(t);
  fake.setAgreement('agr_1');
  t.is((await create('agr_1', monthly(), 'key-1')).status, 201);
  t.is((await create('agr_1', monthly({ orderId: 'shop1-order-1002', due: day(60) }), 'key-2')).status, 201);
  const all = await call('GET', '/recurring/v3/agreements/agr_1/charges');
  t.deepEqual(all.json.map((c: { id: string; status: string }) => [c.id, c.status]), [['shop1-order-1001', 'DUE'], ['shop1-order-1002', 'PENDING']]);
  const pending = await call('GET', '/recurring/v3/agreements/agr_1/charges?status=PENDING');
  t.deepEqual(pending.json.map((c: { id: string }) => c.id), ['shop1-order-1002']);
  isProblem(t, await call('GET', '/recurring/v3/agreements/agr_1/charges?status=LATE'), 400, 'validation-error');
});
