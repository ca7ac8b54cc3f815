import test from 'ava';
import { request } from '../support/http-client';
import { cardGatewayDelivery, FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { eventually, openHub, startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// HPOS authoritative with sync on: every write must land in both stores.
let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const webhookRows = (eventId: string) => q(`SELECT * FROM ${shop.prefix}sidecar_webhooks WHERE external_id = ?`, [eventId]);
const payment = async (handle: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id = ?`, [handle]))[0];
const paymentMeta = async (id: number) => Object.fromEntries((await q(`SELECT meta_key, meta_value FROM ${shop.prefix}sidecar_payment_meta WHERE payment_id = ?`, [id])).map((r) => [r.meta_key, r.meta_value]));
const finalStatus = (eventId: string) => eventually(async () => {
  const [row] = await webhookRows(eventId);
  return row && row.status !== 'PENDING' ? row : null;
}, 10_000, `webhook ${eventId} to be processed`);

const deliver = (event: Parameters<typeof cardGatewayDelivery>[0], secret = fake.webhookSecret) => sendCardGatewayEvent(api.url, event, secret);

async function orderStatusInBothStores(id: number) {
  const [hpos] = await q(`SELECT status FROM ${shop.prefix}wc_orders WHERE id = ?`, [id]);
  const [post] = await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]);
  return { hpos: hpos?.status, posts: post?.post_status };
}

async function renewal(handle: string) {
  const subscriptionId = await shop.seeder.createSubscription({
    status: 'active', total: '99.00', billing: { email: 'sub@example.dk', country: 'DK' }, billingPeriod: 'month', billingInterval: 1,
  });
  const orderId = await shop.seeder.createOrder({
    status: 'pending', total: '99.00', billing: { email: 'sub@example.dk', country: 'DK' }, createdVia: 'subscription',
    meta: { _subscription_renewal: String(subscriptionId), _reepay_order: handle },
  });
  return { subscriptionId, orderId };
}

test.before(async () => {
  shop = await createTestShop('pay_cg', { hpos: true, sync: true });
  fake = new FakeCardGateway();
  await fake.start();
  const config = shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey });
  api = await startApi(config);
  worker = await startTestWorker(config);
});

test.after.always(async () => {
  await worker?.stop();
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test('When the signature is wrong, Then it is 401 invalid_signature and nothing is stored', async (t) => {
  const { res, eventId } = await deliver({ event_type: 'invoice_settled', invoice: 'inv-bad' }, 'not-the-secret');
  t.is(res.status, 401);
  t.deepEqual(res.json, { code: 'invalid_signature', message: res.json.message, data: { status: 401 } });
  t.deepEqual(await webhookRows(eventId), []);
  const garbage = await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: { 'content-type': 'application/json' }, body: '{"event_id":' });
  t.is(garbage.status, 401);
});

test('When the provider is unknown, Then it is 404 unknown_provider', async (t) => {
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/paypal', { body: {} });
  t.is(res.status, 404);
  t.is(res.json.code, 'unknown_provider');
});

test('When an invoice is settled, Then the webhook is stored, processed once and the payment is captured on its order', async (t) => {
  const orderId = await shop.seeder.createOrder({ status: 'processing', total: '250.00', meta: { _reepay_order: 'inv-settle-1' } });
  fake.setInvoice('inv-settle-1', { state: 'settled', amount: 25000, customer: 'cust-1' });
  const { res, eventId } = await deliver({ event_type: 'invoice_settled', invoice: 'inv-settle-1', customer: 'cust-1' });
  t.is(res.status, 200);
  t.is(res.json.status, 'accepted');
  const row = await finalStatus(eventId);
  t.is(row.status, 'PROCESSED');
  t.is(row.provider, 'card_gateway');
  const p = await payment('inv-settle-1');
  t.is(p.status, 'CAPTURED');
  t.is(Number(p.order_id), orderId);
  t.is(Number(p.amount_minor), 25000);
  t.true(fake.requestsTo('GET', '/v1/invoice/inv-settle-1').length >= 1, 'the invoice was read back before acting');
});

test('When the same event arrives again (another delivery id), Then it is answered 200 and changes nothing', async (t) => {
  fake.setInvoice('inv-dup', { state: 'settled', amount: 1000 });
  const first = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-dup' }, fake.webhookSecret);
  const eventId = String(first.payload.event_id);
  await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: first.headers, body: first.body });
  await finalStatus(eventId);
  const before = await webhookRows(eventId);
  const again = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-dup', event_id: eventId }, fake.webhookSecret);
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: again.headers, body: again.body });
  t.is(res.status, 200);
  t.is(res.json.status, 'duplicate');
  const after = await webhookRows(eventId);
  t.is(after.length, 1);
  t.is(after[0].updated_at, before[0].updated_at);
  t.is(after[0].attempts, before[0].attempts);
});

test('When an event type is not supported, Then it is stored as SKIPPED and still answered 200', async (t) => {
  const { res, eventId } = await deliver({ event_type: 'customer_changed', customer: 'cust-9' });
  t.is(res.status, 200);
  const row = await finalStatus(eventId);
  t.is(row.status, 'SKIPPED');
  t.is(row.event_type, 'customer_changed');
});

test('When invoice_created then invoice_authorized arrive, Then the payment is recorded, then authorized', async (t) => {
  fake.setInvoice('inv-auth', { state: 'created', amount: 5000 });
  const created = await deliver({ event_type: 'invoice_created', invoice: 'inv-auth' });
  t.is((await finalStatus(created.eventId)).status, 'PROCESSED');
  t.is((await payment('inv-auth')).status, null);
  fake.setInvoice('inv-auth', { state: 'authorized', amount: 5000 });
  const authorized = await deliver({ event_type: 'invoice_authorized', invoice: 'inv-auth' });
  t.is((await finalStatus(authorized.eventId)).status, 'PROCESSED');
  t.is((await payment('inv-auth')).status, 'AUTHORIZED');
});

test('When invoice_authorized arrives late, after the settle, Then the payment stays CAPTURED and the late event is SKIPPED', async (t) => {
  fake.setInvoice('inv-late', { state: 'settled', amount: 700 });
  const settled = await deliver({ event_type: 'invoice_settled', invoice: 'inv-late' });
  t.is((await finalStatus(settled.eventId)).status, 'PROCESSED');
  const late = await deliver({ event_type: 'invoice_authorized', invoice: 'inv-late' });
  t.is((await finalStatus(late.eventId)).status, 'SKIPPED');
  t.is((await payment('inv-late')).status, 'CAPTURED');
});

test('When an event claims a state the provider does not show, Then it is SKIPPED and nothing moves', async (t) => {
  fake.setInvoice('inv-claim', { state: 'created', amount: 700 });
  const settled = await deliver({ event_type: 'invoice_settled', invoice: 'inv-claim' });
  const row = await finalStatus(settled.eventId);
  t.is(row.status, 'SKIPPED');
  t.regex(row.outcome, /created/);
  t.not((await payment('inv-claim'))?.status, 'CAPTURED');
});

test('When a renewal invoice fails with a soft decline, Then the order and subscription fail as WooCommerce would, and exactly one retry is scheduled', async (t) => {
  const { orderId, subscriptionId } = await renewal('inv-renewal-soft');
  fake.setCharge('inv-renewal-soft', { state: 'failed', amount: 9900, customer: 'cust-2', error: 'insufficient_funds', error_state: 'soft_declined', source: { acquirer_message: 'Insufficient funds' } });
  const first = await deliver({ event_type: 'invoice_failed', invoice: 'inv-renewal-soft' });
  t.is((await finalStatus(first.eventId)).status, 'PROCESSED');
  // A second delivery of the failure (another event id) must not plan a second attempt.
  const second = await deliver({ event_type: 'invoice_failed', invoice: 'inv-renewal-soft' });
  t.is((await finalStatus(second.eventId)).status, 'SKIPPED');

  const p = await payment('inv-renewal-soft');
  t.is(p.status, 'FAILED');
  t.deepEqual(await paymentMeta(p.id), { customer_handle: 'cust-2', failure_code: 'insufficient_funds', failure_description: 'Insufficient funds', failure_state: 'soft_declined' });
  t.deepEqual(await orderStatusInBothStores(orderId), { hpos: 'wc-failed', posts: 'wc-failed' });
  t.deepEqual(await orderStatusInBothStores(subscriptionId), { hpos: 'wc-on-hold', posts: 'wc-on-hold' });
  const [failedMark] = await q(`SELECT meta_value FROM ${shop.prefix}wc_orders_meta WHERE order_id = ? AND meta_key = '_failed_renewal_order'`, [orderId]);
  t.is(failedMark.meta_value, 'yes');
  const [suspensions] = await q(`SELECT meta_value FROM ${shop.prefix}postmeta WHERE post_id = ? AND meta_key = '_suspension_count'`, [subscriptionId]);
  t.is(suspensions.meta_value, '1');
  const notes = (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? AND comment_type = 'order_note' ORDER BY comment_ID`, [orderId])).map((r) => r.comment_content);
  t.true(notes.includes('Order status changed from Pending payment to Failed.'), notes.join(' | '));
  // The shop is Danish (WPLANG da_DK): the service's own notes are in Danish; WooCommerce's own stay as it writes them.
  // The attempt is the plan's first, or, when a payday falls before the case's deadline (DUNNING_PAYDAYS: the last bank
  // day by default; today's date decides, which this test does not pin), one early on payday: either way one attempt.
  t.true(notes.some((n) => /^Betalingen mislykkedes: ikke penge nok på kortet \(insufficient_funds\)\. Vi prøver igen .* (\(forsøg 1 af 5\)|tidligt på den første bankdag fra lønningsdagen, .*)\.$/.test(n)), notes.join(' | '));
  const subscriptionNotes = (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ?`, [subscriptionId])).map((r) => r.comment_content);
  t.deepEqual(subscriptionNotes, ['Payment failed.', 'Status changed from Active to On hold.']);
  const retries = await q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId]);
  t.is(retries.length, 1);
  t.is(retries[0].status, 'PENDING');
  t.is(retries[0].attempt, 1);
});

test('When a renewal invoice fails with a hard decline, Then the order fails and no retry is scheduled', async (t) => {
  const { orderId } = await renewal('inv-renewal-hard');
  fake.setCharge('inv-renewal-hard', { state: 'failed', amount: 9900, error: 'credit_card_lost_or_stolen', error_state: 'hard_declined' });
  const { eventId } = await deliver({ event_type: 'invoice_failed', invoice: 'inv-renewal-hard' });
  t.is((await finalStatus(eventId)).status, 'PROCESSED');
  t.is((await payment('inv-renewal-hard')).status, 'FAILED');
  t.deepEqual(await orderStatusInBothStores(orderId), { hpos: 'wc-failed', posts: 'wc-failed' });
  t.deepEqual(await q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId]), []);
});

test('When a one-off order fails, Then the order fails but no retry is scheduled (only renewals are retried)', async (t) => {
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '10.00' });
  const handle = `order-${orderId}`;
  fake.setCharge(handle, { state: 'failed', amount: 1000, error: 'declined_by_acquirer', error_state: 'soft_declined' });
  const { eventId } = await deliver({ event_type: 'invoice_failed', invoice: handle });
  t.is((await finalStatus(eventId)).status, 'PROCESSED');
  t.is(Number((await payment(handle)).order_id), orderId, 'the handle order-<n> names the order');
  t.deepEqual(await orderStatusInBothStores(orderId), { hpos: 'wc-failed', posts: 'wc-failed' });
  t.deepEqual(await q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId]), []);
});

test('When a settled invoice is refunded, Then the payment is REFUNDED; a failed refund is noted on the order', async (t) => {
  const orderId = await shop.seeder.createOrder({ status: 'completed', total: '40.00', meta: { _reepay_order: 'inv-refund' } });
  fake.setInvoice('inv-refund', { state: 'settled', amount: 4000 });
  t.is((await finalStatus((await deliver({ event_type: 'invoice_settled', invoice: 'inv-refund' })).eventId)).status, 'PROCESSED');
  fake.setInvoice('inv-refund', { state: 'settled', amount: 4000, refunded_amount: 4000, credit_notes: [{ id: 'cn-1', amount: 4000 }] });
  t.is((await finalStatus((await deliver({ event_type: 'invoice_refund', invoice: 'inv-refund' })).eventId)).status, 'PROCESSED');
  t.is((await payment('inv-refund')).status, 'REFUNDED');
  const failed = await deliver({ event_type: 'invoice_refund_failed', invoice: 'inv-refund', transaction: 'tr-77' });
  t.is((await finalStatus(failed.eventId)).status, 'PROCESSED');
  const notes = (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ?`, [orderId])).map((r) => r.comment_content);
  t.true(notes.includes('Refunderingen tr-77 af betalingen inv-refund mislykkedes hos Frisbii: pengene blev ikke betalt tilbage.'), notes.join(' | '));
  t.is((await payment('inv-refund')).status, 'REFUNDED', 'a failed refund does not move the payment back');
});

test('When payment methods are added, fail and are deleted, Then the agreement follows, checked against the provider', async (t) => {
  const agreement = async (id: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_agreements WHERE provider = 'card_gateway' AND external_id = ?`, [id]))[0];
  fake.setPaymentMethod('ca_111', { state: 'active', customer: 'cust-5' });
  t.is((await finalStatus((await deliver({ event_type: 'customer_payment_method_added', payment_method: 'ca_111', customer: 'cust-5' })).eventId)).status, 'PROCESSED');
  t.like(await agreement('ca_111'), { status: 'ACTIVE', disable_reason: null, customer_handle: 'cust-5', payment_method: 'ca_111' });

  // The event says "failed" but the provider still shows it active: nothing is done.
  const premature = await deliver({ event_type: 'customer_payment_method_failed', payment_method: 'ca_111', customer: 'cust-5' });
  t.is((await finalStatus(premature.eventId)).status, 'SKIPPED');
  fake.setPaymentMethod('ca_111', { state: 'failed', customer: 'cust-5' });
  t.is((await finalStatus((await deliver({ event_type: 'customer_payment_method_failed', payment_method: 'ca_111', customer: 'cust-5' })).eventId)).status, 'PROCESSED');
  t.like(await agreement('ca_111'), { status: 'DISABLED', disable_reason: 'FAILED' });

  fake.setPaymentMethod('ca_222', { state: 'deleted', customer: 'cust-5' });
  t.is((await finalStatus((await deliver({ event_type: 'customer_payment_method_deleted', payment_method: 'ca_222', customer: 'cust-5' })).eventId)).status, 'PROCESSED');
  t.like(await agreement('ca_222'), { status: 'DISABLED', disable_reason: 'CANCELED' });
});

test('When the provider cannot be reached while processing, Then the webhook is FAILED with a retry planned, and an operator retry finishes it', async (t) => {
  const orderId = await shop.seeder.createOrder({ status: 'processing', total: '5.00', meta: { _reepay_order: 'inv-flaky' } });
  fake.setInvoice('inv-flaky', { state: 'settled', amount: 500 });
  const unreachable = await openHub(shop.config({ CARD_GATEWAY_API_URL: 'http://127.0.0.1:1', CARD_GATEWAY_API_KEY: fake.apiKey }), () => new Date());
  const reachable = await openHub(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey }), () => new Date());
  try {
    const delivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-flaky' }, fake.webhookSecret);
    const stored = await unreachable.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), 'invoice_settled', delivery.body);
    if (stored.kind !== 'stored') return t.fail('not stored');
    const attempt = await unreachable.processCardGatewayWebhook.execute(stored.id);
    t.like(attempt, { kind: 'failed', willRetry: true });
    const [row] = await webhookRows(String(delivery.payload.event_id));
    t.is(row.status, 'FAILED');
    t.regex(row.last_error, /network|timeout/);
    t.truthy(row.next_attempt_at, 'an automatic retry is planned');

    t.true(await reachable.webhooks.requeue(stored.id));
    const retried = await reachable.processCardGatewayWebhook.execute(stored.id);
    t.like(retried, { kind: 'done', status: 'PROCESSED' });
    t.is((await payment('inv-flaky')).status, 'CAPTURED');
    t.is(Number((await payment('inv-flaky')).order_id), orderId);
  } finally {
    await unreachable.close();
    await reachable.close();
  }
});

test.serial('When the webhook secret was rotated at the provider, Then the service reads it again once and accepts the delivery', async (t) => {
  fake.setInvoice('inv-before', { state: 'settled', amount: 100 });
  t.is((await deliver({ event_type: 'invoice_settled', invoice: 'inv-before' })).res.status, 200);
  // Serial tests run first; the rotated secret stays for the rest of the file.
  fake.webhookSecret = 'rotated-secret';
  fake.setInvoice('inv-rotated', { state: 'settled', amount: 100 });
  const { res, eventId } = await deliver({ event_type: 'invoice_settled', invoice: 'inv-rotated' }, 'rotated-secret');
  t.is(res.status, 200);
  t.is((await finalStatus(eventId)).status, 'PROCESSED');
  t.is(fake.requestsTo('GET', '/v1/account/webhook_settings').length, 2, 'read once at first, once after the rotation');
});

test.serial('When the database cannot store the webhook, Then the answer is 503 so the provider sends it again', async (t) => {
  await shop.db.query(`RENAME TABLE ${shop.prefix}sidecar_webhooks TO ${shop.prefix}sidecar_webhooks_away`);
  try {
    const { res } = await deliver({ event_type: 'invoice_settled', invoice: 'inv-db-down' });
    t.is(res.status, 503);
    t.is(res.json.code, 'service_unavailable');
  } finally {
    await shop.db.query(`RENAME TABLE ${shop.prefix}sidecar_webhooks_away TO ${shop.prefix}sidecar_webhooks`);
  }
});
