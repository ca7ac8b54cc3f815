import test from 'ava';
import { request } from '../support/http-client';
import { FakeMobileWallet, mobileWalletDelivery } from '../support/fake-mobile-wallet';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Legacy storage: the wallet's writes land in the posts tables.
const REGISTERED_URL = 'https://sidecar.shop.example.dk/payment-hub/v1/webhook/mobile_wallet';
const SECRET = 'A0+AeKBRG2KRGvnNwJpQlb6IJFk48CKXCIcrLoHncVJKDILsQSxS6NWCccwWm6r6FhGKhiHTBsG2wo/xU6FY/A==';

let shop: TestShop;
let fake: FakeMobileWallet;
let api: RunningApi;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const payment = async (chargeId: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_payments WHERE provider = 'mobile_wallet' AND external_id = ?`, [chargeId]))[0];
const agreement = async (id: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_agreements WHERE provider = 'mobile_wallet' AND external_id = ?`, [id]))[0];

function deliver(event: Record<string, unknown> & { eventType: string }, options: { secret?: string; url?: string } = {}) {
  const delivery = mobileWalletDelivery(event, { secret: options.secret ?? SECRET, url: options.url ?? REGISTERED_URL });
  return request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body });
}

test.before(async () => {
  shop = await createTestShop('pay_mw', { hpos: false });
  fake = new FakeMobileWallet();
  await fake.start();
  // The secret is the one `payment-hub mobile_wallet webhooks register` stored.
  await q(`INSERT INTO ${shop.prefix}sidecar_mobile_wallet_webhooks (registration_id, url, events, secret, created_at) VALUES ('reg-1', ?, '[]', ?, NOW(3))`, [REGISTERED_URL, SECRET]);
  api = await startApi(shop.config({
    MOBILE_WALLET_API_URL: fake.url, MOBILE_WALLET_CLIENT_ID: fake.clientId, MOBILE_WALLET_CLIENT_SECRET: fake.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: fake.subscriptionKey, MOBILE_WALLET_MSN: fake.merchantSerialNumber,
  }));
});

test.after.always(async () => {
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test('When the signature is wrong or the body was altered, Then it is 401 and nothing changes', async (t) => {
  fake.setAgreement('agr-bad', { status: 'ACTIVE' });
  const wrongSecret = await deliver({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-bad' }, { secret: 'other' });
  t.is(wrongSecret.status, 401);
  t.is(wrongSecret.json.code, 'invalid_signature');
  const otherUrl = await deliver({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-bad' }, { url: 'https://elsewhere.example/hook' });
  t.is(otherUrl.status, 401);
  const signed = mobileWalletDelivery({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-bad' }, { secret: SECRET, url: REGISTERED_URL });
  const altered = Buffer.from(signed.body.toString().replace('agr-bad', 'agr-bax'));
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: signed.headers, body: altered });
  t.is(res.status, 401);
  t.is(await agreement('agr-bad'), undefined);
});

test('When an agreement is activated, Then it is stored active and linked to its subscription', async (t) => {
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: 'agr-1' } });
  fake.setAgreement('agr-1', { status: 'ACTIVE' });
  const res = await deliver({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-1' });
  t.is(res.status, 200, res.text);
  t.like(await agreement('agr-1'), { status: 'ACTIVE', subscription_id: subscriptionId });
});

for (const [eventType, status, reason] of [
  ['recurring.agreement-stopped.v1', 'STOPPED', 'CANCELED'],
  ['recurring.agreement-expired.v1', 'EXPIRED', 'EXPIRED'],
  ['recurring.agreement-rejected.v1', 'STOPPED', 'REJECTED'],
] as const) {
  test(`When ${eventType} arrives, Then the agreement is disabled (${reason})`, async (t) => {
    const id = `agr-${reason}`;
    fake.setAgreement(id, { status: 'ACTIVE' });
    await deliver({ eventType: 'recurring.agreement-activated.v1', agreementId: id });
    fake.setAgreement(id, { status });
    t.is((await deliver({ eventType, agreementId: id })).status, 200);
    t.like(await agreement(id), { status: 'DISABLED', disable_reason: reason });
    // A late activation does not bring a disabled agreement back.
    fake.setAgreement(id, { status: 'ACTIVE' });
    t.is((await deliver({ eventType: 'recurring.agreement-activated.v1', agreementId: id })).status, 200);
    t.like(await agreement(id), { status: 'DISABLED', disable_reason: reason });
  });
}

test('When a charge is reserved, captured and refunded, and events repeat or come late, Then the payment only moves forward', async (t) => {
  const orderId = await shop.seeder.createOrder({ status: 'processing', total: '99.00', meta: { _charge_id: 'chr-1' } });
  fake.setAgreement('agr-2');
  fake.setCharge('agr-2', 'chr-1', { status: 'RESERVED' });
  t.is((await deliver({ eventType: 'recurring.charge-reserved.v1', agreementId: 'agr-2', chargeId: 'chr-1' })).status, 200);
  t.like(await payment('chr-1'), { status: 'AUTHORIZED', order_id: orderId, amount_minor: 9900 });
  fake.setCharge('agr-2', 'chr-1', { status: 'CHARGED' });
  t.is((await deliver({ eventType: 'recurring.charge-captured.v1', agreementId: 'agr-2', chargeId: 'chr-1' })).status, 200);
  t.is((await payment('chr-1')).status, 'CAPTURED');
  const late = await deliver({ eventType: 'recurring.charge-reserved.v1', agreementId: 'agr-2', chargeId: 'chr-1' });
  t.is(late.status, 200);
  t.is(late.json.status, 'SKIPPED');
  t.is((await payment('chr-1')).status, 'CAPTURED');
  const repeated = await deliver({ eventType: 'recurring.charge-captured.v1', agreementId: 'agr-2', chargeId: 'chr-1' });
  t.is(repeated.json.status, 'SKIPPED');
  fake.setCharge('agr-2', 'chr-1', { status: 'REFUNDED' });
  t.is((await deliver({ eventType: 'recurring.charge-refunded.v1', agreementId: 'agr-2', chargeId: 'chr-1' })).status, 200);
  t.is((await payment('chr-1')).status, 'REFUNDED');
});

test('When a charge is canceled, Then the payment is CANCELED', async (t) => {
  fake.setAgreement('agr-3');
  fake.setCharge('agr-3', 'chr-3', { status: 'CANCELLED' });
  t.is((await deliver({ eventType: 'recurring.charge-canceled.v1', agreementId: 'agr-3', chargeId: 'chr-3' })).status, 200);
  t.is((await payment('chr-3')).status, 'CANCELED');
});

test('When a renewal charge fails, Then the payment, order and subscription fail and one retry is scheduled', async (t) => {
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: 'agr-4' } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-4' } });
  fake.setAgreement('agr-4');
  fake.setCharge('agr-4', 'chr-4', { status: 'FAILED', failureReason: 'technical_error', failureDescription: 'Payment was declined' });
  const res = await deliver({ eventType: 'recurring.charge-failed.v1', agreementId: 'agr-4', chargeId: 'chr-4' });
  t.is(res.status, 200, res.text);
  t.is(res.json.status, 'PROCESSED');
  const p = await payment('chr-4');
  t.is(p.status, 'FAILED');
  const meta = Object.fromEntries((await q(`SELECT meta_key, meta_value FROM ${shop.prefix}sidecar_payment_meta WHERE payment_id = ?`, [p.id])).map((r) => [r.meta_key, r.meta_value]));
  // The wallet's reason as it gave it; what it means is dunning's to decide (no card-gateway state is made up for it).
  t.like(meta, { failure_code: 'technical_error', failure_description: 'Payment was declined', failure_state: '', agreement_id: 'agr-4' });
  t.is((await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [orderId]))[0].post_status, 'wc-failed');
  t.is((await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [subscriptionId]))[0].post_status, 'wc-on-hold');
  // Repeated delivery: still one retry.
  t.is((await deliver({ eventType: 'recurring.charge-failed.v1', agreementId: 'agr-4', chargeId: 'chr-4' })).json.status, 'SKIPPED');
  t.is((await q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId])).length, 1);
});

test('When a charge could not be created, Then it is FAILED with the reason from the event', async (t) => {
  fake.setAgreement('agr-5');
  const res = await deliver({ eventType: 'recurring.charge-creation-failed.v1', agreementId: 'agr-5', chargeId: 'chr-never', failureReason: 'charge_amount_too_high', amount: 5000 });
  t.is(res.status, 200, res.text);
  const p = await payment('chr-never');
  t.is(p.status, 'FAILED');
  const meta = Object.fromEntries((await q(`SELECT meta_key, meta_value FROM ${shop.prefix}sidecar_payment_meta WHERE payment_id = ?`, [p.id])).map((r) => [r.meta_key, r.meta_value]));
  t.like(meta, { failure_code: 'charge_amount_too_high', failure_state: '' });
  // The customer raises the agreement's maximum in the app, on the same agreement: dunning's decline policy says so
  // from this reason (test/unit/decline-policy.test.ts).
});

test('When an unknown event arrives, Then it is answered 200 and nothing changes', async (t) => {
  const res = await deliver({ eventType: 'recurring.something-new.v1', agreementId: 'agr-x' });
  t.is(res.status, 200);
  t.is(res.json.status, 'SKIPPED');
});

test('When the wallet cannot be reached to read the charge back, Then it is 503 so the wallet sends it again', async (t) => {
  const down = await startApi(shop.config({ MOBILE_WALLET_API_URL: 'http://127.0.0.1:1', MOBILE_WALLET_CLIENT_ID: 'x', MOBILE_WALLET_CLIENT_SECRET: 'x', MOBILE_WALLET_SUBSCRIPTION_KEY: 'x', MOBILE_WALLET_MSN: '1' }));
  try {
    const delivery = mobileWalletDelivery({ eventType: 'recurring.charge-captured.v1', agreementId: 'agr-6', chargeId: 'chr-6' }, { secret: SECRET, url: REGISTERED_URL });
    const res = await request(down.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body });
    t.is(res.status, 503);
    t.is(await payment('chr-6'), undefined);
  } finally {
    await down.stop();
  }
});
