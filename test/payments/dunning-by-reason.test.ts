import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';

// Dunning by the decline's reason, through the worker as main.ts starts it (its dunning loop driven by
// tick() under a pinned clock) against the loopback card gateway and wallet: which attempts are made, when,
// none after a hard decline, none stacked on a wallet charge the wallet still retries, the customer asked
// once and charged once after a new payment method, the caps, the deadline, and how each case ends.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-dunning-reason';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;
const advance = (ms: number) => { now = new Date(now.getTime() + ms); };
const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
// The test shop is Danish (WPLANG da_DK), so the service's notes are in Danish.
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status, scheduled_at, result FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT * FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const changesOf = async (objectId: number, op: string) => (await q(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = ? ORDER BY id`, [objectId, op]))
  .map((row) => JSON.parse(row.payload));
const cardCharges = () => card.requestsTo('POST', '/v1/charge');
const walletCharges = () => wallet.requests.filter((r) => r.method === 'POST' && /\/charges$/.test(r.path));

function env(extra: Record<string, string> = {}) {
  return shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
    ...extra,
  });
}

/** One card-gateway webhook, stored and processed as the worker does it. */
const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);

/** A signed wallet delivery handled inside the request, as the API does it; its outcome. */
/**
 * The pinned clock moved on to the 10th of next month, 08:00 UTC: the wallet's `user_action_required` counts as lack of
 * funds, so near a payday its next attempt is the payday attempt (test/payments/dunning-payday.test.ts), not the plan's.
 * From the 10th the plan (7 days) ends before the wallet's payday lead begins.
 */
function awayFromPayday(): void {
  now = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 10, 8));
}

const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });

let serial = 0;
/** A renewal of its own customer whose card charge just failed with `error` / `errorState`. */
async function failedCardRenewal(error: string, errorState: 'soft_declined' | 'hard_declined' | 'processing_error') {
  serial += 1;
  const customer = `cust-reason-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date('2026-10-23T08:00:00Z'), nextPaymentGmt: now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  const handle = `order-${orderId}`;
  card.setCharge(handle, { state: 'failed', amount: 14900, customer, error, error_state: errorState });
  // The customer's saved card, which the renewal was charged on and a retry charges again (`source: auto`).
  card.setPaymentMethod(`ca-reason-${serial}`, { customer });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: handle })) !== 'PROCESSED') throw new Error('failure not processed');
  return { orderId, subscriptionId, handle, customer };
}

/** The worker's dunning pass after `ms`. */
async function tickAfter(ms: number) {
  advance(ms);
  await worker.tick();
}

test.before(async () => {
  shop = await createTestShop('dunning_reason', { hpos: false });
  card = new FakeCardGateway();
  // The wallet's today is the test's: its charges' due dates are counted from it.
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(env(), clock);
  await hub.registrations.add({ registrationId: 'reg-reason', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.agreement-activated.v1'], secret: WALLET_SECRET });
  worker = await startPacedWorker(env(), clock);
});

/**
 * With the companion, WooCommerce fails the order and holds the subscription when it applies the hand-over,
 * which no WordPress runs here; the e-mails' test has it, the others write the shop's rows directly.
 */
const companion = (present: boolean) => announceCompanion(shop, present);

test.after.always(async () => {
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('A processing error is retried on the short plan: 1 h, 6 h, 1 d after each failure (within 3 charges a day), then the customer is asked', async (t) => {
  const { orderId, subscriptionId } = await failedCardRenewal('acquirer_communication_error', 'processing_error');
  const failedAt = now;
  t.deepEqual((await retriesOf(orderId)).map((r) => [r.plan, r.status, r.scheduled_at.slice(0, 19)]), [['processing', 'PENDING', gmt(new Date(failedAt.getTime() + HOUR))]]);
  t.true((await notesOf(orderId)).some((n) => /^Betalingen mislykkedes: forbindelsen mellem Frisbii og banken svigtede \(acquirer_communication_error\)\. Vi prøver igen .* \(forsøg 1 af 3\)\.$/.test(n)));

  const before = cardCharges().length;
  await tickAfter(59 * MINUTE);
  t.is(cardCharges().length, before, 'not before its time');
  for (const [wait, next] of [[MINUTE, 6 * HOUR], [6 * HOUR, DAY]] as const) {
    card.queueChargeOutcome({ kind: 'failed', error: 'acquirer_error', errorState: 'processing_error' });
    await tickAfter(wait);
    const retries = await retriesOf(orderId);
    t.is(retries.at(-1).scheduled_at.slice(0, 19), gmt(new Date(now.getTime() + next)), `the next one ${next / HOUR} h later`);
  }
  card.queueChargeOutcome({ kind: 'failed', error: 'acquirer_error', errorState: 'processing_error' });
  await tickAfter(DAY);
  t.is(cardCharges().length, before + 3, 'three attempts, no more');
  t.deepEqual((await retriesOf(orderId)).map((r) => r.status), ['FAILED', 'FAILED', 'FAILED']);
  const ended = await caseOf(orderId);
  t.like(ended, { status: 'OPEN', first_reason: 'processing_error', policy: 'ask_customer', attempts: 4 });
  t.is(ended.deadline_at.slice(0, 19), gmt(new Date(now.getTime() + 14 * DAY)));
  t.true((await notesOf(orderId)).some((n) => n.startsWith('Betalingen mislykkedes: banken meldte en teknisk fejl (acquirer_error). Alle 3 planlagte forsøg er brugt. Kunden kunne ikke få en e-mail')));
  t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), [], 'without the companion nobody can e-mail the customer; the note says so');
});

test.serial('A hard decline is never retried on that card: the customer is e-mailed once, reminded before the deadline, and the subscription is cancelled at it', async (t) => {
  await companion(true);
  t.teardown(() => companion(false));
  const { orderId, subscriptionId, handle } = await failedCardRenewal('credit_card_expired', 'hard_declined');
  const askedAt = now;
  t.deepEqual(await retriesOf(orderId), [], 'no attempt planned');
  const notes = await notesOf(orderId);
  t.true(notes.some((n) => n.startsWith('Betalingen mislykkedes: kortet er udløbet (credit_card_expired). Der trækkes ikke igen på denne betalingsmetode. Kunden får en e-mail med et link')), notes.join(' | '));
  const asked = await changesOf(subscriptionId, 'customer_payment_method_needed');
  t.is(asked.length, 1);
  t.like(asked[0], { kind: 'failed_renewal', order_id: orderId, reason: 'card_expired', deadline: new Date(askedAt.getTime() + 14 * DAY).toISOString() });

  // The same failure told again changes nothing.
  t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: handle }), 'SKIPPED');
  t.is((await changesOf(subscriptionId, 'customer_payment_method_needed')).length, 1, 'asked once per failed renewal');

  const before = cardCharges().length;
  await tickAfter(10 * DAY);
  t.is((await changesOf(subscriptionId, 'customer_payment_method_needed')).length, 1, 'no reminder yet (3 days before)');
  await tickAfter(1 * DAY + MINUTE);
  const reminders = (await changesOf(subscriptionId, 'customer_payment_method_needed')).filter((c) => c.kind === 'final_reminder');
  t.is(reminders.length, 1);
  await tickAfter(HOUR);
  t.is((await changesOf(subscriptionId, 'customer_payment_method_needed')).length, 2, 'one reminder');
  t.deepEqual(await changesOf(subscriptionId, 'subscription_cancel_after_dunning'), []);

  await tickAfter(3 * DAY);
  const cancelled = await changesOf(subscriptionId, 'subscription_cancel_after_dunning');
  t.is(cancelled.length, 1);
  t.is(cancelled[0].order_id, orderId);
  t.like(await caseOf(orderId), { status: 'LOST', first_reason: 'hard_declined' });
  await tickAfter(DAY);
  t.is((await changesOf(subscriptionId, 'subscription_cancel_after_dunning')).length, 1, 'cancelled once');
  t.is(cardCharges().length, before, 'the card was never charged again');
});

test.serial('A new card saved by the customer after a hard decline charges the renewal with it once, at once, and the case is recovered by the new payment method', async (t) => {
  const { orderId, customer } = await failedCardRenewal('declined_by_acquirer', 'hard_declined');
  card.setPaymentMethod('ca-new-card', { customer, state: 'active', card: { exp_date: '12-29', masked_card: '457199XXXXXX9999' } });
  t.is(await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: 'ca-new-card' }), 'PROCESSED');
  t.deepEqual((await retriesOf(orderId)).map((r) => [r.plan, r.status, r.scheduled_at.slice(0, 19)]), [['new_method', 'PENDING', gmt(now)]]);
  // Told twice: one attempt.
  t.is(await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: 'ca-new-card' }), 'SKIPPED');

  const before = cardCharges().length;
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(5000);
  const charges = cardCharges().slice(before);
  t.is(charges.length, 1);
  t.like(charges[0].json, { source: 'ca-new-card', customer_handle: customer, settle: true });
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'new_payment_method', recovered_amount_minor: 14900, attempts: 2 });
  await tickAfter(DAY);
  t.is(cardCharges().length, before + 1, 'charged once');
});

test.serial('A soft decline follows DUNNING_PLAN, and a success by the service is recovered by a service retry', async (t) => {
  const { orderId } = await failedCardRenewal('insufficient_funds', 'soft_declined');
  t.deepEqual((await retriesOf(orderId)).map((r) => [r.plan, r.scheduled_at.slice(0, 19)]), [['soft', gmt(new Date(now.getTime() + 12 * HOUR))]]);
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(12 * HOUR);
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'service_retry', first_reason: 'soft_declined', attempts: 2 });
});

test.serial('Caps: with three charges on the card today, the next attempt waits until the first is a day old, at planning and again at charging', async (t) => {
  const renewal = await failedCardRenewal('insufficient_funds', 'soft_declined');
  // Two more of the customer's renewals failed on the same card within the hour (the shop charged them).
  for (const minutes of [10, 20]) {
    advance(10 * MINUTE);
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '49.00', billingPeriod: 'month', startGmt: new Date('2026-10-23T08:00:00Z'), nextPaymentGmt: now });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '49.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 4900, customer: renewal.customer, error: 'insufficient_funds', error_state: 'soft_declined' });
    t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` }), 'PROCESSED', `renewal ${minutes}`);
  }
  // The first renewal's attempt was planned 12 h after its failure, when its card had one charge that day.
  const retries = await retriesOf(renewal.orderId);
  const firstCharge = new Date(now.getTime() - 20 * MINUTE);
  t.is(retries[0].scheduled_at.slice(0, 19), gmt(new Date(firstCharge.getTime() + 12 * HOUR)), 'planned when only one charge had been made');

  // When it is due the card has had three charges within the day (the three failed renewals), so a fourth
  // waits until the first of them is a day old.
  const before = cardCharges().length;
  await tickAfter(12 * HOUR - 20 * MINUTE);
  t.is(cardCharges().length, before, 'no fourth charge within the day');
  const postponed = (await retriesOf(renewal.orderId))[0];
  t.is(postponed.status, 'PENDING');
  t.is(postponed.scheduled_at.slice(0, 19), gmt(new Date(firstCharge.getTime() + DAY)));
  t.regex(postponed.result, /charge caps: at most 3 charges a day and 20 in 30 days/);
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(12 * HOUR);
  t.is(cardCharges().length, before + 1, 'charged once the oldest charge left the day');
});

test.serial("A wallet charge the wallet still retries (DUE) is never charged on top: a new agreement's attempt waits for the wallet's window to end", async (t) => {
  const agreementId = 'agr-reason-due';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-reason-due' } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, 'chr-reason-due', { status: 'FAILED' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-reason-due' }), 'PROCESSED');
  t.like(await caseOf(orderId), { status: 'OPEN', provider: 'mobile_wallet', first_reason: 'unknown', method_key: `mobile_wallet:subscription:${subscriptionId}` });

  // The service's attempt 12 h later creates one charge that the wallet retries itself for its retryDays (issue 45).
  await tickAfter(12 * HOUR);
  const created = walletCharges();
  t.is(created.length, 1);
  t.like(created[0].json, { processingMode: 'MULTIPLE_ATTEMPTS' });
  const retryDays = (created[0].json as { retryDays: number }).retryDays;
  t.true(retryDays >= 2 && retryDays <= 14);
  const [, attempt] = await q(`SELECT external_id FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);
  const due = (created[0].json as { due: string }).due;
  wallet.setCharge(agreementId, String(attempt.external_id), { status: 'DUE', due, retryDays });

  // The customer activates a new agreement: an attempt is planned at once, but the charge is still DUE.
  wallet.setAgreement('agr-reason-new', { status: 'ACTIVE' });
  await q(`UPDATE ${shop.prefix}postmeta SET meta_value = 'agr-reason-new' WHERE post_id = ? AND meta_key = '_agreement_id'`, [subscriptionId]);
  t.is(await walletWebhook({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-reason-new' }), 'PROCESSED');
  const planned = (await retriesOf(orderId)).at(-1);
  t.like(planned, { plan: 'new_method', status: 'PENDING' });
  await tickAfter(5000);
  t.is(walletCharges().length, 1, 'nothing charged on top of the DUE charge');
  const waiting = (await retriesOf(orderId)).at(-1);
  t.is(waiting.status, 'PENDING');
  t.is(waiting.scheduled_at.slice(0, 19), `${new Date(Date.parse(`${due}T00:00:00Z`) + (retryDays + 1) * DAY).toISOString().slice(0, 10)} 00:00:00`);
  t.regex(waiting.result, /is DUE at the wallet, which retries it itself until/);

  // The wallet's window ends FAILED: the new agreement is charged, once.
  wallet.setCharge(agreementId, String(attempt.external_id), { status: 'FAILED', due, retryDays });
  now = new Date(Date.parse(`${due}T00:00:00Z`) + (retryDays + 1) * DAY + MINUTE);
  await worker.tick();
  const after = walletCharges();
  t.is(after.length, 2);
  t.regex(after[1].path, /agr-reason-new/);
});

test.serial('The failed payment itself paid later: by webhook the case is recovered by the provider\'s retry; found by reconciliation, by reconciliation', async (t) => {
  const byWebhook = await failedCardRenewal('insufficient_funds', 'soft_declined');
  card.setInvoice(byWebhook.handle, { state: 'settled', amount: 14900, customer: byWebhook.customer });
  t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: byWebhook.handle }), 'PROCESSED');
  t.like(await caseOf(byWebhook.orderId), { status: 'RECOVERED', recovered_by: 'provider_retry', attempts: 1, recovered_amount_minor: 14900 });

  const found = await failedCardRenewal('insufficient_funds', 'soft_declined');
  card.setInvoice(found.handle, { state: 'settled', amount: 14900, customer: found.customer });
  const outcome = await hub.reconcileNow.execute({ orderId: found.orderId }, { dryRun: false });
  t.is(outcome.kind, 'done');
  t.like(await caseOf(found.orderId), { status: 'RECOVERED', recovered_by: 'reconciliation' });
  t.deepEqual((await retriesOf(found.orderId)).map((r) => r.status), ['CANCELED'], 'its planned attempt dropped');
});

test.serial("The wallet's reasons the customer fixes in the app are charged again on the same agreement on the plan: after the customer acts, the next charge captures, recovered by a service retry, and no e-mail asks for a new payment method", async (t) => {
  awayFromPayday();
  await companion(true);
  t.teardown(() => companion(false));
  for (const reason of ['user_action_required', 'charge_amount_too_high']) {
    const agreementId = `agr-app-${reason}`.replace(/_/g, '-');
    const chargeId = `chr-app-${reason}`.replace(/_/g, '-');
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
    wallet.setAgreement(agreementId);
    wallet.setCharge(agreementId, chargeId, { status: 'FAILED', failureReason: reason });
    t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId }), 'PROCESSED', reason);
    // WooCommerce (the companion's hand-over, which no WordPress applies here) holds the subscription.
    await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
    t.like(await caseOf(orderId), { status: 'OPEN', first_reason: reason, policy: 'retry' }, reason);
    const [planned] = await retriesOf(orderId);
    t.like(planned, { plan: 'soft', status: 'PENDING' }, `${reason}: an attempt on the dunning plan`);
    t.true((await notesOf(orderId)).some((n) => n.startsWith('Betalingen mislykkedes: ') && n.includes(`(${reason}). Vi prøver igen `)), reason);
    t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), [], `${reason}: no e-mail guesses the reason`);

    // The customer acts in the app; the planned attempt charges the same agreement, and the wallet takes it.
    const before = walletCharges().length;
    await tickAfter(12 * HOUR);
    const created = walletCharges().slice(before);
    t.is(created.length, 1, `${reason}: one charge`);
    t.true(created[0].path.includes(`/agreements/${agreementId}/charges`), `${reason}: on the same agreement`);
    const newCharge = String((created[0].json as { orderId: string }).orderId);
    wallet.setCharge(agreementId, newCharge, { status: 'CHARGED', amount: 9900, summary: { captured: 9900, refunded: 0, cancelled: 0 } });
    t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId, chargeId: newCharge }), 'PROCESSED', reason);
    t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'service_retry' }, reason);
    t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), [], `${reason}: no "new payment method" e-mail went`);
  }
});

test.serial("A wallet case whose plan is used up asks the customer, sending them to the app: the e-mail's reason is the wallet's, not a guess", async (t) => {
  awayFromPayday();
  await companion(true);
  t.teardown(() => companion(false));
  const agreementId = 'agr-app-used-up';
  const chargeId = 'chr-app-used-up';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, chargeId, { status: 'FAILED', failureReason: 'user_action_required' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId }), 'PROCESSED');
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  // Each planned attempt's charge fails in the app too, until DUNNING_PLAN (5 attempts) is used up.
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    const [next] = (await retriesOf(orderId)).filter((r) => r.status === 'PENDING');
    t.truthy(next, `attempt ${attempt} planned`);
    now = new Date(Date.parse(`${next.scheduled_at.slice(0, 19).replace(' ', 'T')}Z`) + MINUTE);
    const before = walletCharges().length;
    await worker.tick();
    const [created] = walletCharges().slice(before);
    t.truthy(created, `attempt ${attempt} charged`);
    const id = String((created.json as { orderId: string }).orderId);
    wallet.setCharge(agreementId, id, { status: 'FAILED', failureReason: 'user_action_required' });
    t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: id }), 'PROCESSED', `attempt ${attempt}`);
  }
  const asked = await changesOf(subscriptionId, 'customer_payment_method_needed');
  t.is(asked.length, 1);
  t.like(asked[0], { kind: 'failed_renewal', order_id: orderId, reason: 'wallet_action_required' });
  t.like(await caseOf(orderId), { status: 'OPEN', policy: 'ask_customer' });
});
