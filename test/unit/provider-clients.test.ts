import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { CardGatewayClient } from '../../src/payments/providers/card-gateway/client.js';
import { MobileWalletClient, type MobileWalletClientOptions } from '../../src/payments/providers/mobile-wallet/client.js';
import { FakeCardGateway } from '../support/fake-card-gateway.js';
import { FakeMobileWallet } from '../support/fake-mobile-wallet.js';

async function cardGateway(timeoutMs = 2000): Promise<{ fake: FakeCardGateway; client: CardGatewayClient }> {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  // The saved card the charges below name as their source: the gateway charges only a customer's existing method.
  fake.setPaymentMethod('ca_abc', { customer: 'customer-1' });
  return { fake, client: new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs }) };
}

async function mobileWallet(
  options: Partial<MobileWalletClientOptions> = {},
  fakeOptions: ConstructorParameters<typeof FakeMobileWallet>[0] = {},
): Promise<{ fake: FakeMobileWallet; client: MobileWalletClient }> {
  // The wallet's today: the charges below are due 2030-01-10, which must lie 2 days to 2 years ahead of it.
  const fake = new FakeMobileWallet({ now: () => new Date('2029-12-01T12:00:00Z'), ...fakeOptions });
  const { url } = await fake.start();
  const client = new MobileWalletClient({
    apiUrl: url,
    clientId: fake.clientId,
    clientSecret: fake.clientSecret,
    subscriptionKey: fake.subscriptionKey,
    merchantSerialNumber: fake.merchantSerialNumber,
    timeoutMs: 2000,
    ...options,
  });
  return { fake, client };
}

/** A port nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Card gateway

test('card gateway: Basic auth with the private key and an empty password; reads invoice, charge, method', async (t) => {
  const { fake, client } = await cardGateway();
  t.teardown(() => fake.stop());
  fake.setInvoice('inv-12', { customer: 'customer-1', state: 'settled', amount: 9900 });
  fake.setCharge('inv-12', { customer: 'customer-1', state: 'failed', amount: 9900, error: 'insufficient_funds', error_state: 'soft_declined' });
  fake.setPaymentMethod('ca_abc', { customer: 'customer-1', state: 'failed' });

  const invoice = await client.getInvoice('inv-12');
  t.like(invoice, { ok: true, value: { handle: 'inv-12', state: 'settled', amount: 9900 } });
  const charge = await client.getCharge('inv-12');
  t.like(charge, { ok: true, value: { state: 'failed', error: 'insufficient_funds', error_state: 'soft_declined' } });
  const method = await client.getPaymentMethod('ca_abc');
  t.like(method, { ok: true, value: { id: 'ca_abc', state: 'failed' } });

  const [first] = fake.requests;
  t.is(first!.headers.authorization, `Basic ${Buffer.from(`${fake.apiKey}:`).toString('base64')}`);
  t.deepEqual(
    fake.requests.map((request) => `${request.method} ${request.path}`),
    ['GET /v1/invoice/inv-12', 'GET /v1/charge/inv-12', 'GET /v1/payment_method/ca_abc'],
  );
});

test('card gateway: 404 is not_found with the provider error code', async (t) => {
  const { fake, client } = await cardGateway();
  t.teardown(() => fake.stop());
  const result = await client.getCharge('order-404');
  t.like(result, { ok: false, kind: 'not_found', status: 404, code: 31 });
});

test('card gateway: a wrong key is an http failure (401)', async (t) => {
  const { fake } = await cardGateway();
  t.teardown(() => fake.stop());
  const client = new CardGatewayClient({ apiUrl: fake.url, apiKey: 'priv_wrong', timeoutMs: 2000 });
  t.like(await client.getInvoice('inv-1'), { ok: false, kind: 'http', status: 401 });
});

test('card gateway: createCharge sends the idempotency key in the body, and a repeat gets the first result', async (t) => {
  const { fake, client } = await cardGateway();
  t.teardown(() => fake.stop());
  fake.queueChargeOutcome({ kind: 'settled' }, { kind: 'failed', error: 'credit_card_expired', errorState: 'hard_declined' });
  const input = { handle: 'order-7-r1', key: 'order-7-r1-key', amount: 9900, currency: 'DKK', source: 'ca_abc', customerHandle: 'customer-1', settle: true };

  const first = await client.createCharge(input);
  const second = await client.createCharge(input);
  t.like(first, { ok: true, value: { handle: 'order-7-r1', state: 'settled', amount: 9900 } });
  t.deepEqual(second, first);

  const posts = fake.requestsTo('POST', '/v1/charge');
  t.is(posts.length, 2);
  t.like(posts[0]!.json, { handle: 'order-7-r1', key: 'order-7-r1-key', source: 'ca_abc', customer_handle: 'customer-1', settle: true, amount: 9900 });
  t.is(posts[0]!.headers['content-type'], 'application/json');
});

test('card gateway: a decline is ok with state failed; 400/147 keeps its code; 500 is http', async (t) => {
  const { fake, client } = await cardGateway();
  t.teardown(() => fake.stop());
  fake.queueChargeOutcome(
    { kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' },
    { kind: 'http', status: 400, code: 147, error: 'Payment method failed' },
    { kind: 'http', status: 500 },
  );
  const base = { amount: 100, source: 'ca_abc', settle: true };
  t.like(await client.createCharge({ ...base, handle: 'h1', key: 'k1' }), { ok: true, value: { state: 'failed', error: 'insufficient_funds', error_state: 'soft_declined' } });
  t.like(await client.createCharge({ ...base, handle: 'h2', key: 'k2' }), { ok: false, kind: 'http', status: 400, code: 147 });
  t.like(await client.createCharge({ ...base, handle: 'h3', key: 'k3' }), { ok: false, kind: 'http', status: 500 });
  // The 5xx was not remembered under its key: the documented retry with the same key now goes through.
  t.like(await client.createCharge({ ...base, handle: 'h3', key: 'k3' }), { ok: true, value: { state: 'settled' } });
});

test('card gateway: a slow answer is reported as timeout, and the retry with the same key returns the charge', async (t) => {
  const { fake, client } = await cardGateway(1000);
  t.teardown(() => fake.stop());
  fake.queueChargeOutcome({ kind: 'slow', delayMs: 3000, then: { kind: 'settled' } });
  const input = { handle: 'order-9', key: 'order-9-key', amount: 500, source: 'ca_abc', settle: true };
  const slow = await client.createCharge(input);
  t.like(slow, { ok: false, kind: 'timeout' });
  t.like(await client.createCharge(input), { ok: true, value: { handle: 'order-9', state: 'settled' } });

  fake.slowNextResponse(3000);
  t.like(await client.getInvoice('order-9'), { ok: false, kind: 'timeout' });
});

test('card gateway: webhook settings carry the secret', async (t) => {
  const { fake, client } = await cardGateway();
  t.teardown(() => fake.stop());
  fake.webhookSecret = 'whsec_rotated';
  t.like(await client.getWebhookSettings(), { ok: true, value: { secret: 'whsec_rotated' } });
  t.is(fake.requests[0]!.path, '/v1/account/webhook_settings');
});

test('card gateway: nothing listening is network', async (t) => {
  const client = new CardGatewayClient({ apiUrl: await closedPortUrl(), apiKey: 'k', timeoutMs: 2000 });
  t.like(await client.getInvoice('inv-1'), { ok: false, kind: 'network' });
});

test('card gateway: a /v1 suffix on the base URL is tolerated', async (t) => {
  const { fake } = await cardGateway();
  t.teardown(() => fake.stop());
  const client = new CardGatewayClient({ apiUrl: `${fake.url}/v1/`, apiKey: fake.apiKey, timeoutMs: 2000 });
  t.like(await client.getWebhookSettings(), { ok: true });
  t.is(fake.requests[0]!.path, '/v1/account/webhook_settings');
});

// ---------------------------------------------------------------------------------------------------------------
// Mobile wallet

test('mobile wallet: token request carries credentials in headers; API calls carry Bearer and system headers', async (t) => {
  const { fake, client } = await mobileWallet({ system: { name: 'acme', version: '1.2.3', pluginName: 'acme-hub', pluginVersion: '4.5.6' } });
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  t.like(await client.getAgreement('agr_1'), { ok: true, value: { id: 'agr_1', status: 'ACTIVE' } });

  const [tokenRequest, apiRequest] = fake.requests;
  t.is(tokenRequest!.method, 'POST');
  t.is(tokenRequest!.path, '/accesstoken/get');
  t.is(tokenRequest!.body, '');
  t.like(tokenRequest!.headers, {
    client_id: fake.clientId,
    client_secret: fake.clientSecret,
    'ocp-apim-subscription-key': fake.subscriptionKey,
    'merchant-serial-number': fake.merchantSerialNumber,
  });
  t.is(apiRequest!.path, '/recurring/v3/agreements/agr_1');
  t.regex(String(apiRequest!.headers.authorization), /^Bearer eyJ/);
  t.like(apiRequest!.headers, {
    'ocp-apim-subscription-key': fake.subscriptionKey,
    'merchant-serial-number': fake.merchantSerialNumber,
    'vipps-system-name': 'acme',
    'vipps-system-version': '1.2.3',
    'vipps-system-plugin-name': 'acme-hub',
    'vipps-system-plugin-version': '4.5.6',
  });
  t.is(apiRequest!.headers.client_secret, undefined, 'credentials go only to the token endpoint');
});

test('mobile wallet: the token is cached, shared by concurrent callers, and renewed shortly before expiry', async (t) => {
  let now = 1_000_000;
  const { fake, client } = await mobileWallet({ now: () => now }, { tokenTtlSeconds: 3600 });
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');

  const results = await Promise.all(Array.from({ length: 5 }, () => client.getAgreement('agr_1')));
  t.true(results.every((result) => result.ok));
  t.is(fake.tokensIssued, 1);

  await client.getAgreement('agr_1');
  now += 3000 * 1000; // 50 min: still within the cached lifetime
  await client.getAgreement('agr_1');
  t.is(fake.tokensIssued, 1);

  now += 300 * 1000 + 1; // inside the last 5 minutes: renew before the provider would refuse it
  await client.getAgreement('agr_1');
  t.is(fake.tokensIssued, 2);
});

test('mobile wallet: a refused token is dropped and the call retried once with a new one', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  await client.getAgreement('agr_1');
  fake.revokeTokens();
  t.like(await client.getAgreement('agr_1'), { ok: true });
  t.is(fake.tokensIssued, 2);
});

test('mobile wallet: bad credentials fail at the token step', async (t) => {
  const { fake, client } = await mobileWallet({ clientSecret: 'wrong' });
  t.teardown(() => fake.stop());
  t.like(await client.getAgreement('agr_1'), { ok: false, kind: 'http', status: 401 });
  t.is(fake.requests.length, 1);
});

test('mobile wallet: 404 is not_found with the problem type', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  const result = await client.getCharge('agr_1', 'chr-missing');
  t.like(result, { ok: false, kind: 'not_found', status: 404 });
  t.regex(String(!result.ok && result.code), /charge-not-found$/);
});

test('mobile wallet: createCharge sends Idempotency-Key; a repeat gets the first answer; a reuse for another request is 409', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  const charge = { amount: 9900, description: 'Monthly box', transactionType: 'DIRECT_CAPTURE' as const, due: '2030-01-10', retryDays: 3, orderId: 'order-77-r1' };

  const first = await client.createCharge('agr_1', charge, 'order-77-r1');
  t.deepEqual(first, { ok: true, value: { chargeId: 'order-77-r1' } });
  t.deepEqual(await client.createCharge('agr_1', charge, 'order-77-r1'), first);
  t.like(await client.createCharge('agr_1', { ...charge, amount: 1 }, 'order-77-r1'), { ok: false, kind: 'http', status: 409 });

  const posts = fake.requestsTo('POST', '/recurring/v3/agreements/agr_1/charges');
  t.is(posts.length, 3);
  t.is(posts[0]!.headers['idempotency-key'], 'order-77-r1');
  t.is(posts[0]!.headers['content-type'], 'application/json');
  t.like(posts[0]!.json, charge);
  t.like(await client.getCharge('agr_1', 'order-77-r1'), { ok: true, value: { id: 'order-77-r1', status: 'PENDING', amount: 9900 } });
});

test('mobile wallet: an invalid idempotency key is refused before any request', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  const charge = { amount: 1, description: 'x', transactionType: 'DIRECT_CAPTURE' as const };
  t.throws(() => client.createCharge('agr_1', charge, 'a/b'), { instanceOf: RangeError });
  t.throws(() => client.createCharge('agr_1', charge, 'x'.repeat(41)), { instanceOf: RangeError });
  t.is(fake.requests.length, 0);
});

test('mobile wallet: 4xx answers are kept under their key, 5xx are not', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  const charge = { amount: 100, description: 'x', transactionType: 'DIRECT_CAPTURE' as const, due: '2030-01-10', retryDays: 0 };
  fake.queueChargeOutcome({ kind: 'http', status: 500 });
  t.like(await client.createCharge('agr_1', charge, 'k-500'), { ok: false, kind: 'http', status: 500 });
  t.like(await client.createCharge('agr_1', charge, 'k-500'), { ok: true });
  fake.queueChargeOutcome({ kind: 'http', status: 400, problem: 'charge-due-too-soon' });
  t.like(await client.createCharge('agr_1', charge, 'k-400'), { ok: false, status: 400 });
  const repeated = await client.createCharge('agr_1', charge, 'k-400');
  t.like(repeated, { ok: false, status: 400 });
  t.regex(String(!repeated.ok && repeated.code), /charge-due-too-soon$/);
});

test('mobile wallet: a slow answer is timeout; nothing listening is network', async (t) => {
  const { fake, client } = await mobileWallet({ timeoutMs: 1000 });
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  await client.getAgreement('agr_1'); // token cached first, so the delay hits the API call
  fake.slowNextResponse(3000);
  t.like(await client.getAgreement('agr_1'), { ok: false, kind: 'timeout' });
  fake.queueChargeOutcome({ kind: 'slow', delayMs: 3000 });
  t.like(await client.createCharge('agr_1', { amount: 1, description: 'x', transactionType: 'DIRECT_CAPTURE' }, 'slow-1'), { ok: false, kind: 'timeout' });

  const offline = new MobileWalletClient({
    apiUrl: await closedPortUrl(),
    clientId: 'a',
    clientSecret: 'b',
    subscriptionKey: 'c',
    merchantSerialNumber: '1',
    timeoutMs: 2000,
  });
  t.like(await offline.getAgreement('agr_1'), { ok: false, kind: 'network' });
});

test('mobile wallet: a token request that times out is not cached', async (t) => {
  const { fake, client } = await mobileWallet({ timeoutMs: 1000 });
  t.teardown(() => fake.stop());
  fake.setAgreement('agr_1');
  fake.slowNextResponse(3000);
  t.like(await client.getAgreement('agr_1'), { ok: false, kind: 'timeout' });
  t.like(await client.getAgreement('agr_1'), { ok: true });
});

test('mobile wallet: register, list and delete webhooks', async (t) => {
  const { fake, client } = await mobileWallet();
  t.teardown(() => fake.stop());
  const events = ['recurring.charge-captured.v1', 'recurring.agreement-stopped.v1'];
  const registered = await client.registerWebhook({ url: 'https://shop.example/payment-hub/v1/webhook/mobile_wallet', events });
  t.true(registered.ok);
  if (!registered.ok) return;
  t.is(fake.webhookSecret(registered.value.id), registered.value.secret);
  t.like(fake.requestsTo('POST', '/webhooks/v1/webhooks')[0]!.json, { url: 'https://shop.example/payment-hub/v1/webhook/mobile_wallet', events });

  const listed = await client.listWebhooks();
  t.deepEqual(listed, { ok: true, value: { webhooks: [{ id: registered.value.id, url: 'https://shop.example/payment-hub/v1/webhook/mobile_wallet', events }] } });

  t.deepEqual(await client.deleteWebhook(registered.value.id), { ok: true, value: null });
  t.like(await client.deleteWebhook(registered.value.id), { ok: false, kind: 'not_found' });
});
