import test from 'ava';
import { walletRetryOrderId } from '../../src/dunning/charge-rules/mobile-wallet-charges';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { cardGatewayDelivery, FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { openHub } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';
import { metaInStores, renewalActions } from '../support/wordpress-fixtures';

const HOUR = 3600_000;
let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;
const advance = (ms: number) => { now = new Date(now.getTime() + ms); };

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const retriesOf = (orderId: number) => q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const statusOf = async (id: number) => (await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]))[0].post_status;

async function hubWith(env: Record<string, string> = {}) {
  return openHub(shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber, ...env,
  }), clock);
}

/** One card-gateway event, stored and processed as the worker does it. */
async function processCardGatewayEvent(hub: PaymentHub, event: CardGatewayDeliveryEvent) {
  const delivery = cardGatewayDelivery(event, card.webhookSecret);
  const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
  if (stored.kind !== 'stored') throw new Error('not stored');
  const outcome = await hub.processCardGatewayWebhook.execute(stored.id);
  if (outcome.kind !== 'done' || outcome.status !== 'PROCESSED') throw new Error(`not processed: ${JSON.stringify(outcome)}`);
}

const retryChargesOf = (orderId: number) => card.requestsTo('POST', '/v1/charge').filter((request) => String((request.json as { handle?: string }).handle).startsWith(`order-${orderId}-retry`));
/** Longer than the service waits for a provider's answer. */
const PAST_PROVIDER_TIMEOUT_MS = 9000;

const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));

/** A renewal order whose card payment just failed (soft), through the same webhook processing as production. */
async function failedCardRenewal(hub: PaymentHub, errorState: 'soft_declined' | 'hard_declined' = 'soft_declined', subscriptionStatus: 'active' | 'pending-cancel' = 'active') {
  // Due now: WooCommerce Subscriptions took the renewal at its next payment date, and that date stays
  // until the renewal is paid.
  const subscriptionId = await shop.seeder.createSubscription({
    status: subscriptionStatus, total: '149.00', billingPeriod: 'month', startGmt: new Date('2026-10-23T08:00:00Z'), nextPaymentGmt: now,
    endGmt: subscriptionStatus === 'pending-cancel' ? new Date('2026-12-23T08:00:00Z') : null,
  });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  const handle = `order-${orderId}`;
  // A customer of its own: the charge caps count each customer's charges, and these tests are not about them.
  card.setCharge(handle, { state: 'failed', amount: 14900, customer: `cust-dun-${orderId}`, error: 'insufficient_funds', error_state: errorState });
  // The customer's saved card, which the renewal was charged on and a retry charges again (`source: auto`).
  card.setPaymentMethod(`ca_dun_${orderId}`, { customer: `cust-dun-${orderId}` });
  await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: handle });
  return { orderId, subscriptionId, handle };
}

const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';

/** One signed mobile-wallet delivery, handled inside the request as the API does it. */
async function deliverWalletEvent(hub: PaymentHub, event: MobileWalletDeliveryEvent) {
  const delivery = mobileWalletDelivery(event, { secret: 'wallet-secret', url: WALLET_WEBHOOK_URL });
  return hub.receiveMobileWalletWebhook.execute({ method: 'POST', headers: delivery.headers, body: delivery.body });
}

/** A wallet renewal whose charge just failed, through the same webhook handling as production; `tag` keeps each test's agreement apart. */
async function failedWalletRenewal(hub: PaymentHub, tag: string) {
  const agreementId = `agr-${tag}`;
  const failedCharge = `chr-${tag}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: failedCharge } });
  wallet.setAgreement(agreementId);
  // No failureReason: a decline the customer need not act on, so the dunning plan retries it.
  wallet.setCharge(agreementId, failedCharge, { status: 'FAILED' });
  await hub.registrations.add({ registrationId: `reg-${tag}`, url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1'], secret: 'wallet-secret' });
  const outcome = await deliverWalletEvent(hub, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: failedCharge });
  if (outcome.kind !== 'handled' || outcome.outcome.status !== 'PROCESSED') throw new Error(`not processed: ${JSON.stringify(outcome)}`);
  return { orderId, subscriptionId };
}

test.before(async () => {
  shop = await createTestShop('dunning', { hpos: false });
  card = new FakeCardGateway();
  // The wallet's today is the test's: its charges' due dates are counted from it.
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
});

test.after.always(async () => {
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

// The clock is shared, so these run one after another.
test.serial('When a renewal keeps failing, Then attempts follow the plan, each with its own idempotency key, and a success completes the renewal', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedCardRenewal(hub);
    const [first] = await retriesOf(orderId);
    t.like(first, { attempt: 1, status: 'PENDING', scheduled_at: '2026-11-23 20:00:00.000' });

    advance(11 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 0 }, 'nothing is due before the planned time');

    advance(HOUR);
    card.queueChargeOutcome({ kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, failed: 1 });
    const charges = card.requestsTo('POST', '/v1/charge');
    t.like(charges.at(-1)!.json, { handle: `order-${orderId}-retry1`, key: `retry-${orderId}-1`, amount: 14900, currency: 'DKK', customer_handle: `cust-dun-${orderId}`, settle: true });
    let retries = await retriesOf(orderId);
    t.like(retries[0], { attempt: 1, status: 'FAILED' });
    t.like(retries[1], { attempt: 2, status: 'PENDING', scheduled_at: '2026-11-24 08:00:00.000' }, 'the second wait of the plan is 12h');
    t.is(await statusOf(orderId), 'wc-failed');

    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'settled' });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, succeeded: 1 });
    retries = await retriesOf(orderId);
    t.is(retries.length, 2);
    t.like(retries[1], { status: 'SUCCEEDED' });
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    const [paid] = await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [`order-${orderId}-retry2`]);
    t.is(paid.status, 'CAPTURED');
    t.deepEqual(await q(`SELECT * FROM ${shop.prefix}postmeta WHERE post_id = ? AND meta_key = '_failed_renewal_order'`, [orderId]), []);
    const [datePaid] = await q(`SELECT meta_value FROM ${shop.prefix}postmeta WHERE post_id = ? AND meta_key = '_date_paid'`, [orderId]);
    t.is(Number(datePaid.meta_value), Math.floor(now.getTime() / 1000));

    // Active again the way WooCommerce Subscriptions activates: the passed next payment moves on a
    // billing period and its renewal is scheduled, so the subscription renews next month.
    t.is((await metaInStores(shop, subscriptionId, '_schedule_next_payment')).legacy, '2026-12-23 08:00:00');
    const pending = (await renewalActions(shop, subscriptionId)).filter((action) => action.status === 'pending');
    t.deepEqual(pending.map((action) => action.scheduled_date_gmt), ['2026-12-23 08:00:00']);
    t.is((await metaInStores(shop, subscriptionId, '_suspension_count')).legacy, '0');
    const [note] = await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID DESC LIMIT 1`, [subscriptionId]);
    t.is(note.comment_content, 'Payment status marked complete. Status changed from On hold to Active.');
  } finally {
    await hub.close();
  }
});

test.serial('When the provider cannot be reached, Then the attempt is postponed and repeated with the same idempotency key', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId } = await failedCardRenewal(hub);
    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'http', status: 503 });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, postponed: 1 });
    t.like((await retriesOf(orderId))[0], { status: 'PENDING', attempt: 1 });
    advance(6 * 60_000);
    card.queueChargeOutcome({ kind: 'settled' });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, succeeded: 1 });
    const keys = card.requestsTo('POST', '/v1/charge').filter((r) => (r.json as any).key === `retry-${orderId}-1`);
    t.is(keys.length, 2, 'the same attempt, the same key');
  } finally {
    await hub.close();
  }
});

test.serial('When a retry is hard declined, Then no further attempt is planned', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId } = await failedCardRenewal(hub);
    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'failed', error: 'credit_card_expired', errorState: 'hard_declined' });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, failed: 1 });
    const retries = await retriesOf(orderId);
    t.is(retries.length, 1);
    t.like(retries[0], { status: 'FAILED' });
  } finally {
    await hub.close();
  }
});

test.serial('When the plan is used up, Then no further attempt is planned', async (t) => {
  const hub = await hubWith({ DUNNING_PLAN: '1h,2h' });
  try {
    const { orderId } = await failedCardRenewal(hub);
    // Declines not for lack of funds, which would also get an attempt on payday (test/payments/dunning-payday.test.ts).
    for (const wait of [1, 2]) {
      advance(wait * HOUR);
      card.queueChargeOutcome({ kind: 'failed', error: 'settle_blocked', errorState: 'soft_declined' });
      t.like(await hub.runDueRetries.execute(), { attempted: 1, failed: 1 });
    }
    const retries = await retriesOf(orderId);
    t.deepEqual(retries.map((r) => r.status), ['FAILED', 'FAILED']);
    const notes = (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ?`, [orderId])).map((r) => r.comment_content);
    t.true(notes.some((n) => /^Betalingen mislykkedes: banken holder betalingen tilbage indtil videre \(settle_blocked\)\. Alle 2 planlagte forsøg er brugt\. /.test(n)), notes.join(' | '));
  } finally {
    await hub.close();
  }
});

test.serial('When a retried card charge is confirmed later by webhook, Then that webhook completes the renewal, once', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedCardRenewal(hub);
    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'pending' });
    t.like(await hub.runDueRetries.execute(), { attempted: 1, succeeded: 1 });
    t.is(await statusOf(orderId), 'wc-failed', 'not paid yet');
    t.is(await statusOf(subscriptionId), 'wc-on-hold');

    const handle = `order-${orderId}-retry1`;
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-dun' });
    // The gateway's time of the settlement, which the order's date_paid and note carry.
    await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle, timestamp: '2026-11-23T20:00:05.000Z' });
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    t.true((await metaInStores(shop, subscriptionId, '_schedule_next_payment')).legacy! > '2026-12-01', 'the next payment moved on');

    // The same confirmation again (a repeat from the provider under a new event id) changes nothing.
    const notes = await notesOf(orderId);
    await t.throwsAsync(processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle }), { message: /not processed.*SKIPPED/ });
    t.deepEqual(await notesOf(orderId), notes);
    t.is(notes.filter((note) => note === `Betalingen ${handle} gik igennem 23. november 2026 kl. 21:00.`).length, 1, 'in the shop\'s language and time');
  } finally {
    await hub.close();
  }
});

test.serial('When the failed renewal payment itself is settled later, Then that completes the renewal and cancels the planned attempt at once, so nothing is charged', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId, handle } = await failedCardRenewal(hub);
    t.like((await retriesOf(orderId))[0], { status: 'PENDING' });
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-dun' });
    await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle });
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    // As Subscriptions drops its retries when the order is paid: staff see no attempt waiting on a paid order.
    t.like((await retriesOf(orderId))[0], { status: 'CANCELED', result: `order paid: payment ${handle} is CAPTURED` });
    advance(12 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 0 });
    t.is(retryChargesOf(orderId).length, 0);
  } finally {
    await hub.close();
  }
});

test.serial('When the failed renewal payment is settled at the gateway and no webhook tells of it, Then the attempt asks first, records the capture, charges nothing, and the late webhook adds nothing', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId, handle } = await failedCardRenewal(hub);
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-dun' });
    advance(12 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, canceled: 1 });
    t.is(retryChargesOf(orderId).length, 0, 'no second charge');
    t.true(card.requestsTo('GET', `/v1/invoice/${handle}`).length >= 1, 'the gateway was asked first');
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    t.regex(String((await retriesOf(orderId))[0].result), /is CAPTURED at the provider; nothing charged/);

    await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle }).catch(() => undefined);
    const payments = await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE order_id = ?`, [orderId]);
    t.deepEqual(payments.map((row) => row.status), ['CAPTURED'], 'one captured payment for the renewal');
  } finally {
    await hub.close();
  }
});

test.serial('When the failed wallet charge is captured and no webhook tells of it, Then the attempt asks first, records the capture and creates no charge', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedWalletRenewal(hub, 'meanwhile');
    wallet.setCharge('agr-meanwhile', 'chr-meanwhile', { status: 'CHARGED', transactionId: 'tx-m', summary: { captured: 9900, refunded: 0, cancelled: 0 } });
    advance(12 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, canceled: 1 });
    t.is(wallet.requestsTo('POST', '/recurring/v3/agreements/agr-meanwhile/charges').length, 0, 'no charge created');
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
  } finally {
    await hub.close();
  }
});

test.serial('When an attempt\'s answer is lost and its settled webhook comes first, Then the webhook completes the renewal and the repeat changes nothing', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedCardRenewal(hub);
    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'slow', delayMs: PAST_PROVIDER_TIMEOUT_MS, then: { kind: 'settled' } });
    t.like(await hub.runDueRetries.execute(), { postponed: 1 });
    await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: `order-${orderId}-retry1` });
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    t.like((await retriesOf(orderId))[0], { status: 'CANCELED', result: `order paid: payment order-${orderId}-retry1 is CAPTURED` }, 'the order is paid, so the attempt ends');
    advance(6 * 60_000);
    t.like(await hub.runDueRetries.execute(), { attempted: 0 });
    t.deepEqual(new Set(retryChargesOf(orderId).map((request) => (request.json as { key: string }).key)), new Set([`retry-${orderId}-1`]));
  } finally {
    await hub.close();
  }
});

test.serial('When an attempt\'s answer is lost and its failed webhook comes first, Then the attempt still fails and the next one is planned', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId } = await failedCardRenewal(hub);
    advance(12 * HOUR);
    card.queueChargeOutcome({ kind: 'slow', delayMs: PAST_PROVIDER_TIMEOUT_MS, then: { kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' } });
    t.like(await hub.runDueRetries.execute(), { postponed: 1 });
    await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: `order-${orderId}-retry1` });
    advance(6 * 60_000);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, failed: 1 });
    t.deepEqual((await retriesOf(orderId)).map((retry) => [retry.attempt, retry.status]), [[1, 'FAILED'], [2, 'PENDING']]);
  } finally {
    await hub.close();
  }
});

test.serial('When the on-hold subscription is cancelled during dunning, Then the planned attempt is canceled and nothing is charged', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedCardRenewal(hub);
    await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-cancelled' WHERE ID = ?`, [subscriptionId]);
    advance(12 * HOUR);
    await hub.runDueRetries.execute();
    t.like((await retriesOf(orderId))[0], { status: 'CANCELED', result: 'subscription is cancelled' });
    t.is(retryChargesOf(orderId).length, 0);
  } finally {
    await hub.close();
  }
});

test.serial('When the renewal of a subscription pending cancellation fails, Then the subscription is cancelled and no attempt is planned', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedCardRenewal(hub, 'soft_declined', 'pending-cancel');
    t.is(await statusOf(subscriptionId), 'wc-cancelled');
    t.deepEqual(await retriesOf(orderId), []);
    t.true((await notesOf(orderId)).includes('Der er ikke planlagt et nyt betalingsforsøg: abonnementet er annulleret.'));
  } finally {
    await hub.close();
  }
});

test.serial('When the order was paid another way before the attempt, Then the attempt is canceled and nothing is charged', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId } = await failedCardRenewal(hub);
    await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-processing' WHERE ID = ?`, [orderId]);
    const before = card.requestsTo('POST', '/v1/charge').length;
    advance(12 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, canceled: 1 });
    t.is(card.requestsTo('POST', '/v1/charge').length, before);
    t.like((await retriesOf(orderId))[0], { status: 'CANCELED' });
  } finally {
    await hub.close();
  }
});

test.serial('When a wallet renewal failed, Then the retry creates a new recurring charge on its agreement with an Idempotency-Key, and its capture completes the renewal once', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedWalletRenewal(hub, 'd');
    advance(12 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, succeeded: 1 });
    const [create] = wallet.requestsTo('POST', '/recurring/v3/agreements/agr-d/charges');
    // The attempt's key, tagged with the shop so it is unique across the merchant's shops (the wallet's orderId rule).
    t.is(create.headers['idempotency-key'], walletRetryOrderId(await hub.settings.current(), `retry-${orderId}-1`));
    t.regex(create.headers['idempotency-key'] as string, new RegExp(`^[0-9a-f]{8}-retry-${orderId}-1$`));
    t.like(create.json, { amount: 9900, transactionType: 'DIRECT_CAPTURE', type: 'RECURRING' });
    const payments = await q(`SELECT * FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);
    t.is(payments.length, 2);
    t.is(payments[1].status, null, 'the wallet confirms the new charge by webhook');
    t.is(await statusOf(orderId), 'wc-failed');

    // The wallet takes the money on the due date and says so; that completes the renewal.
    const chargeId = String(payments[1].external_id);
    wallet.setCharge('agr-d', chargeId, { status: 'CHARGED', transactionId: 'tx-d', summary: { captured: 9900, refunded: 0, cancelled: 0 } });
    for (let delivery = 0; delivery < 2; delivery += 1) {
      t.like(await deliverWalletEvent(hub, { eventType: 'recurring.charge-captured.v1', agreementId: 'agr-d', chargeId, transactionId: 'tx-d' }), { kind: 'handled' });
    }
    t.is((await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE id = ?`, [payments[1].id]))[0].status, 'CAPTURED');
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');
    t.is((await notesOf(orderId)).filter((note) => note === `Betalingen ${chargeId} gik igennem.`).length, 1, 'completed once, though told twice');
  } finally {
    await hub.close();
  }
});

test.serial('When a wallet attempt\'s answer is lost and the wallet reports the capture first, Then the capture finds its order and completes the renewal', async (t) => {
  const hub = await hubWith();
  try {
    const { orderId, subscriptionId } = await failedWalletRenewal(hub, 'l');
    await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET scheduled_at = ? WHERE order_id = ?`, [now.toISOString().slice(0, 19).replace('T', ' '), orderId]);

    wallet.queueChargeOutcome({ kind: 'slow', delayMs: PAST_PROVIDER_TIMEOUT_MS });
    t.like(await hub.runDueRetries.execute(), { postponed: 1 });
    const chargeId = `retry-${orderId}-1`;
    wallet.setCharge('agr-l', chargeId, { status: 'CHARGED', transactionId: 'tx-l', summary: { captured: 9900, refunded: 0, cancelled: 0 } });
    t.like(await deliverWalletEvent(hub, { eventType: 'recurring.charge-captured.v1', agreementId: 'agr-l', chargeId, transactionId: 'tx-l' }), { kind: 'handled', outcome: { status: 'PROCESSED' } });
    const [payment] = await q(`SELECT order_id, status FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [chargeId]);
    t.like(payment, { order_id: orderId, status: 'CAPTURED' });
    t.is(await statusOf(orderId), 'wc-processing');
    t.is(await statusOf(subscriptionId), 'wc-active');

    advance(6 * 60_000);
    await hub.runDueRetries.execute();
    t.like((await retriesOf(orderId))[0], { status: 'CANCELED' }, 'the paid order ends the attempt');
    t.is(wallet.requestsTo('POST', '/recurring/v3/agreements/agr-l/charges').length, 1, 'no second charge');
  } finally {
    await hub.close();
  }
});

test.serial('When a wallet attempt\'s answer is lost and it runs again on another day, Then it finds its own charge instead of making a second one', async (t) => {
  now = new Date('2026-11-30T23:57:00Z');
  const hub = await hubWith();
  try {
    const { orderId } = await failedWalletRenewal(hub, 'm');
    // Due at once, so the first run is just before midnight UTC and the repeat just after it.
    await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET scheduled_at = '2026-11-30 23:57:00' WHERE order_id = ?`, [orderId]);

    wallet.queueChargeOutcome({ kind: 'slow', delayMs: PAST_PROVIDER_TIMEOUT_MS });
    t.like(await hub.runDueRetries.execute(), { postponed: 1 });
    advance(6 * 60_000);
    t.like(await hub.runDueRetries.execute(), { attempted: 1, succeeded: 1 });
    advance(13 * HOUR);
    t.like(await hub.runDueRetries.execute(), { attempted: 0 }, 'no further attempt');

    const creates = wallet.requestsTo('POST', '/recurring/v3/agreements/agr-m/charges');
    const key = walletRetryOrderId(await hub.settings.current(), `retry-${orderId}-1`);
    t.deepEqual(new Set(creates.map((request) => request.headers['idempotency-key'])), new Set([key]));
    const payments = await q(`SELECT external_id FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);
    t.deepEqual(payments.map((payment) => payment.external_id), ['chr-m', key], 'the attempt\'s payment is the charge the lost request made');
  } finally {
    await hub.close();
  }
});

test.serial('When the shop is Danish (WPLANG da_DK), Then its dunning notes are in Danish, in its time zone; an English shop gets them in English', async (t) => {
  // Later than every test before: the shared clock only moves forward. 09:00 UTC is 11:00 in Copenhagen in summer.
  now = new Date('2027-06-01T09:00:00Z');
  const wplang = async (value: string) => q(`UPDATE ${shop.prefix}options SET option_value = ? WHERE option_name = 'WPLANG'`, [value]);
  t.deepEqual((await q(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'WPLANG'`)).map((row) => row.option_value), ['da_DK']);
  const danish = await hubWith();
  try {
    const { orderId, handle } = await failedCardRenewal(danish);
    t.deepEqual((await notesOf(orderId)).filter((note) => !note.startsWith('Order status changed')), [
      `Betalingen ${handle} mislykkedes: ikke penge nok på kortet (insufficient_funds).`,
      'Betalingen mislykkedes: ikke penge nok på kortet (insufficient_funds). Vi prøver igen 1. juni 2027 kl. 23:00 (forsøg 1 af 5).',
    ]);
    t.true((await notesOf(orderId)).includes('Order status changed from Pending payment to Failed.'), "WooCommerce's own note stays as WooCommerce writes it");
    const hard = await failedCardRenewal(danish, 'hard_declined');
    t.deepEqual((await notesOf(hard.orderId)).at(-1),
      'Betalingen mislykkedes: ikke penge nok på kortet (insufficient_funds). Der trækkes ikke igen på denne betalingsmetode. Kunden kunne ikke få en e-mail om en ny '
      + 'betalingsmetode: det kræver shop-sidecar companion-pluginet, version 3 eller nyere. Rykkerforløbet slutter 15. juni 2027 kl. 11:00, medmindre fornyelsen bliver betalt.');
  } finally {
    await danish.close();
  }
  await wplang('');
  const english = await hubWith();
  try {
    const { orderId } = await failedCardRenewal(english);
    t.is((await notesOf(orderId)).at(-1), 'Payment failed: not enough money on the card (insufficient_funds). We try again on 1 June 2027 at 23:00 (attempt 1 of 5).');
  } finally {
    await english.close();
    await wplang('da_DK');
  }
});
