import test from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { paymentHub } from '../support/cli-process';
import { FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';

// One renewal, one payment, through the worker as main.ts starts it (its loops driven by tick() under a
// pinned clock) against the loopback card gateway and wallet: a refusal of the service's own request holds
// the attempt (no e-mail, no cap, the case open, doctor failing) until it is fixed; amounts in ISK and in a
// two-decimal currency; the subscription's own card; a card the gateway reactivates; handles the gateway
// accepts whatever the shop's order numbers look like; and a renewal paid by card while a wallet charge was
// due, whose wallet charge is cancelled.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-one-payment';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;
const advance = (ms: number) => { now = new Date(now.getTime() + ms); };

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
// The test shop is Danish (WPLANG da_DK), so the service's notes are in Danish.
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status, scheduled_at, result FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT * FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const chargesLogged = async (orderId: number) => Number((await q(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_charge_attempts WHERE order_id = ?`, [orderId]))[0].n);
const changesOf = async (objectId: number, op: string) => (await q(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = ? ORDER BY id`, [objectId, op]))
  .map((row) => JSON.parse(row.payload));
const cardCharges = () => card.requestsTo('POST', '/v1/charge');
/** The card charges made for one renewal order (its attempts' handles). */
const cardChargesOf = (orderId: number) => cardCharges().filter((request) => String((request.json as { handle?: string }).handle).startsWith(`order-${orderId}-`));
const walletCharges = () => wallet.requests.filter((r) => r.method === 'POST' && /\/charges$/.test(r.path));

function environment(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix,
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
    ...extra,
  };
}
const env = (extra: Record<string, string> = {}) => shop.config(environment(extra));

const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });

async function tickAfter(ms: number) {
  advance(ms);
  await worker.tick();
}

/** `payment-hub doctor --json`'s check of held attempts, as the operator runs it. */
async function doctorRefusals() {
  const run = await paymentHub(['doctor', '--json'], environment());
  const report = JSON.parse(run.stdout) as { checks: { check: string; status: string; detail: string; fix: string | null }[] };
  return { code: run.code, check: report.checks.find((check) => check.check === 'provider_refusals')! };
}

let serial = 0;
/** A renewal of its own customer whose card charge failed with a soft decline; its retry is planned 12 h later. */
async function softDeclinedCardRenewal(options: { total?: string; currency?: string; subscriptionMeta?: Record<string, string>; orderMeta?: Record<string, string> } = {}) {
  serial += 1;
  const customer = `cust-one-${serial}`;
  const total = options.total ?? '149.00';
  const currency = options.currency ?? 'DKK';
  const subscriptionId = await shop.seeder.createSubscription({
    status: 'active', total, currency, billingPeriod: 'month', startGmt: new Date('2026-10-23T08:00:00Z'), nextPaymentGmt: now, meta: options.subscriptionMeta,
  });
  const orderId = await shop.seeder.createOrder({
    status: 'pending', total, currency, createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), ...options.orderMeta },
  });
  const handle = `order-${orderId}`;
  card.setCharge(handle, { state: 'failed', amount: 14900, currency, customer, error: 'insufficient_funds', error_state: 'soft_declined' });
  // The customer's saved card at the gateway, which a retry without a card of the subscription's charges (`source: auto`).
  card.setPaymentMethod(`ca-one-saved-${serial}`, { customer, state: 'active' });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: handle })) !== 'PROCESSED') throw new Error('failure not processed');
  return { orderId, subscriptionId, handle, customer };
}

test.before(async () => {
  shop = await createTestShop('one_payment', { hpos: false });
  card = new FakeCardGateway();
  // The wallet's today is the test's: due dates are judged, and charges taken, on the test's clock.
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(env(), clock);
  await hub.registrations.add({ registrationId: 'reg-one', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.charge-canceled.v1'], secret: WALLET_SECRET });
  worker = await startPacedWorker(env(), clock);
  await announceCompanion(shop, true);
});

// Each test's attempts are its own: whatever a test left planned is dropped before the next one.
test.afterEach.always(async () => {
  await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET status = 'CANCELED' WHERE status IN ('PENDING', 'PROCESSING')`);
  await q(`UPDATE ${shop.prefix}sidecar_provider_refusals SET resolved_at = NOW(3) WHERE resolved_at IS NULL`);
});

test.after.always(async () => {
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial("A revoked key, then a 400 for a field: the attempt is held, the customer hears nothing, no cap is used, the case stays open and doctor fails naming the provider's answer; once fixed, the attempt captures", async (t) => {
  const { orderId, subscriptionId } = await softDeclinedCardRenewal();
  // WooCommerce (the companion's hand-over, which no WordPress applies here) holds the subscription.
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  const logged = await chargesLogged(orderId);

  // The account's private key is revoked at the gateway (a rotation the operator has not yet carried over).
  card.revokeApiKey();
  t.teardown(() => card.addApiKey(card.apiKey));
  await tickAfter(12 * HOUR);
  let [held] = await retriesOf(orderId);
  t.is(held.status, 'PENDING', 'held, not failed');
  t.regex(held.result, /^held: card_gateway refused the request \(401 /);
  t.is(held.scheduled_at.slice(0, 19), new Date(now.getTime() + 10 * MINUTE).toISOString().slice(0, 19).replace('T', ' '), 'asked again in 10 minutes');
  t.like(await caseOf(orderId), { status: 'OPEN', policy: 'retry', attempts: 1 });
  t.is(await chargesLogged(orderId), logged, 'no cap used');
  t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), [], 'the customer is not e-mailed');
  t.false((await notesOf(orderId)).some((note) => /forsøg 2 |afvist|mislykkedes/i.test(note) && !note.includes('insufficient_funds')), 'no decline noted');
  const doctor = await doctorRefusals();
  t.is(doctor.code, 1);
  t.like(doctor.check, { status: 'fail' });
  t.regex(doctor.check.detail, new RegExp(`1 dunning attempt\\(s\\) held: the card gateway refused the service's request \\(401 .*\\) for renewal order ${orderId}`));
  // Restarted with npm run reload, which checks the new key before PM2 replaces anything.
  t.regex(doctor.check.fix!, /^set CARD_GATEWAY_API_KEY to .* and restart \(npm run reload\);/);

  // The key is put right; then the gateway refuses a field of the request: still held, still no decline.
  card.addApiKey(card.apiKey);
  card.queueChargeOutcome({ kind: 'http', status: 400, code: 2, error: 'Invalid request' });
  await tickAfter(10 * MINUTE);
  [held] = await retriesOf(orderId);
  t.is(held.status, 'PENDING');
  t.regex(held.result, /^held: card_gateway refused the request \(400 code 2 .*Invalid request/);
  t.is(await chargesLogged(orderId), logged);
  t.like(await caseOf(orderId), { status: 'OPEN', attempts: 1 });
  t.regex((await doctorRefusals()).check.detail, /400 code 2 .*Invalid request/);
  // What `/metrics` serves as sidecar_provider_refusals_total{provider,status}: each refusal, by its HTTP status.
  t.deepEqual((await hub.refusals.countsByProvider()).sort((a, b) => Number(a.status) - Number(b.status)),
    [{ provider: 'card_gateway', status: 400, count: 1 }, { provider: 'card_gateway', status: 401, count: 1 }]);

  // Fixed: the next ask captures, the case is recovered by the service's retry, doctor passes.
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(10 * MINUTE);
  const [done] = await retriesOf(orderId);
  t.is(done.status, 'SUCCEEDED');
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'service_retry' });
  t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), []);
  t.like((await doctorRefusals()).check, { status: 'ok' });
});

test.serial('Amounts in the provider\'s minor units of the currency: an ISK renewal is charged and refunded in whole krónur, a DKK one in øre', async (t) => {
  const isk = await softDeclinedCardRenewal({ total: '1990', currency: 'ISK' });
  const dkk = await softDeclinedCardRenewal({ total: '149.50', currency: 'DKK' });
  for (const { subscriptionId } of [isk, dkk]) await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  await tickAfter(12 * HOUR);
  const sent = [...cardChargesOf(isk.orderId), ...cardChargesOf(dkk.orderId)].map((request) => request.json as { amount: number; currency: string });
  t.deepEqual(sent.map(({ amount, currency }) => [currency, amount]).sort(), [['DKK', 14950], ['ISK', 1990]]);

  // The ISK charge refunded at the gateway: WooCommerce is told the refund in krónur.
  const [retried] = await q(`SELECT external_id FROM ${shop.prefix}sidecar_payments WHERE order_id = ? AND external_id <> ?`, [isk.orderId, isk.handle]);
  t.truthy(retried, JSON.stringify(await q(`SELECT external_id, status, order_id FROM ${shop.prefix}sidecar_payments WHERE order_id = ?`, [isk.orderId])));
  card.setInvoice(String(retried.external_id), { state: 'settled', amount: 1990, currency: 'ISK', customer: isk.customer, refunded_amount: 1990, credit_notes: [{ id: 'cn-isk', amount: 1990 }] });
  t.is(await cardWebhook({ event_type: 'invoice_refund', invoice: String(retried.external_id) }), 'PROCESSED');
  const [refund] = await changesOf(isk.orderId, 'order_refunded');
  t.regex(refund.refunded_total, /^1990(\.0+)?$/, 'not 19.90');

  // The wallet takes no ISK (NOK, DKK, EUR, SEK): the attempt is held as the operator's to fix, never charged.
  const agreementId = 'agr-one-isk';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'on-hold', total: '1990', currency: 'ISK', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '1990', currency: 'ISK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-one-isk' } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, 'chr-one-isk', { status: 'FAILED', currency: 'ISK', amount: 1990 });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-one-isk' }), 'PROCESSED');
  const walletBefore = walletCharges().length;
  await tickAfter(12 * HOUR);
  t.is(walletCharges().length, walletBefore, 'nothing sent');
  t.regex((await retriesOf(orderId))[0].result, /^held: mobile_wallet refused the request \(code unsupported_currency/);
  // A DKK wallet renewal is charged in øre.
  const dkkAgreement = 'agr-one-dkk';
  const dkkSubscription = await shop.seeder.createSubscription({ status: 'on-hold', total: '99.50', meta: { _agreement_id: dkkAgreement } });
  const dkkOrder = await shop.seeder.createOrder({ status: 'pending', total: '99.50', createdVia: 'subscription', meta: { _subscription_renewal: String(dkkSubscription), _charge_id: 'chr-one-dkk' } });
  wallet.setAgreement(dkkAgreement);
  wallet.setCharge(dkkAgreement, 'chr-one-dkk', { status: 'FAILED', amount: 9950 });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId: dkkAgreement, chargeId: 'chr-one-dkk' }), 'PROCESSED');
  await tickAfter(12 * HOUR);
  const [dkkCharge] = walletCharges().filter((request) => request.path.includes(dkkAgreement));
  t.like(dkkCharge?.json, { amount: 9950 });
  t.truthy(dkkOrder);
  // The held ISK attempt stays held; resolve it so later tests see a clean doctor.
  await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET status = 'CANCELED' WHERE order_id = ?`, [orderId]);
  await q(`UPDATE ${shop.prefix}sidecar_provider_refusals SET resolved_at = NOW(3) WHERE order_id = ?`, [orderId]);
});

test.serial("A retry charges the subscription's own card, not the customer's newest; a card the gateway reactivates is charged again on the next attempt", async (t) => {
  const own = await softDeclinedCardRenewal({ subscriptionMeta: { _reepay_token: 'ca-one-own' } });
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [own.subscriptionId]);
  card.setPaymentMethod('ca-one-own', { customer: own.customer, state: 'active', card: { exp_date: '12-29', masked_card: '457199XXXXXX1111' } });
  card.setPaymentMethod('ca-one-newer', { customer: own.customer, state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX2222' } });
  // The customer's newest card, saved for another of their subscriptions.
  await q(`INSERT INTO ${shop.prefix}sidecar_agreements (provider, external_id, status, customer_handle, payment_method, created_at, updated_at)
    VALUES ('card_gateway', 'ca-one-newer', 'ACTIVE', ?, 'ca-one-newer', NOW(3), NOW(3))`, [own.customer]);
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(12 * HOUR);
  const [charged] = cardChargesOf(own.orderId);
  t.like(charged?.json, { source: 'ca-one-own', customer_handle: own.customer });

  // A hard decline fails the card; the gateway later reports it active again: it is read back and used again.
  serial += 1;
  const customer = `cust-one-react-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'on-hold', total: '149.00', meta: { _reepay_token: 'ca-one-back' } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error: 'credit_card_suspected_fraud', error_state: 'hard_declined' });
  t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` }), 'PROCESSED');
  card.setPaymentMethod('ca-one-back', { customer, state: 'failed', card: { exp_date: '12-29', masked_card: '457199XXXXXX3333' } });
  t.is(await cardWebhook({ event_type: 'customer_payment_method_failed', customer, payment_method: 'ca-one-back' }), 'PROCESSED');
  t.deepEqual(await retriesOf(orderId), [], 'nothing planned on a failed card');

  card.setPaymentMethod('ca-one-back', { customer, state: 'active', card: { exp_date: '12-29', masked_card: '457199XXXXXX3333' } });
  t.is(await cardWebhook({ event_type: 'customer_payment_method_reactivated', customer, payment_method: 'ca-one-back' }), 'SKIPPED', 'outside SPEC 6.1: stored SKIPPED');
  t.like((await retriesOf(orderId))[0], { plan: 'new_method', status: 'PENDING' });
  const agreement = (await q(`SELECT status FROM ${shop.prefix}sidecar_agreements WHERE external_id = 'ca-one-back'`))[0];
  t.is(agreement.status, 'ACTIVE');
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(5000);
  const [again] = cardChargesOf(orderId);
  t.like(again?.json, { source: 'ca-one-back' });
  t.like(await caseOf(orderId), { status: 'RECOVERED' });
});

test.serial('Handles the gateway accepts whatever the shop\'s order numbers look like: a number with # / and spaces gives way to the order\'s ID', async (t) => {
  await setOption(shop.db, shop.prefix, 'active_plugins', 'a:1:{i:0;s:75:"woocommerce-sequential-order-numbers/woocommerce-sequential-order-numbers.php";}', 'yes');
  t.teardown(() => setOption(shop.db, shop.prefix, 'active_plugins', 'a:0:{}', 'yes'));
  const { orderId, subscriptionId } = await softDeclinedCardRenewal({ orderMeta: { _order_number: '#2026/ 15', _order_number_formatted: '#2026/ 15' } });
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(12 * HOUR);
  const [charged] = cardChargesOf(orderId);
  const handle = String((charged?.json as { handle: string }).handle);
  t.regex(handle, /^[a-zA-Z0-9_.@-]{1,255}$/);
  t.is(handle, `order-${orderId}-retry1`);
});

test.serial('A wallet charge due for a renewal that is paid by card meanwhile is cancelled at the wallet, at once; the case counts the card payment', async (t) => {
  const agreementId = 'agr-one-paid';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-one-paid' } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, 'chr-one-paid', { status: 'FAILED', failureReason: 'user_action_required' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-one-paid' }), 'PROCESSED');
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  const before = walletCharges().length;
  await tickAfter(12 * HOUR);
  const [created] = walletCharges().slice(before);
  const due = String((created.json as { orderId: string }).orderId);
  const dueDate = String((created.json as { due: string }).due);
  t.truthy(wallet.charge(agreementId, due), 'the wallet holds the service\'s charge');

  // The customer pays the failed order by card (the shop's gateway plugin charges it): the gateway tells us.
  card.setInvoice(`order-${orderId}-paid`, { state: 'settled', amount: 9900, currency: 'DKK', customer: 'cust-one-paid' });
  await q(`INSERT INTO ${shop.prefix}postmeta (post_id, meta_key, meta_value) VALUES (?, '_reepay_order', ?)`, [orderId, `order-${orderId}-paid`]);
  t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: `order-${orderId}-paid` }), 'PROCESSED');

  const deletes = () => wallet.requests.filter((request) => request.method === 'DELETE' && request.path === `/recurring/v3/agreements/${agreementId}/charges/${due}`);
  const deadline = Date.now() + 10_000;
  while (!deletes().length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(deletes().length, 1, 'the due wallet charge is cancelled right after the card payment is recorded');
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'shop_payment' });
  const waitForNote = Date.now() + 10_000;
  while (!(await notesOf(orderId)).some((note) => note.includes(`Trækket ${due} (MobilePay) blev annulleret`)) && Date.now() < waitForNote) await new Promise((resolve) => setTimeout(resolve, 50));
  t.true((await notesOf(orderId)).some((note) => note === `Trækket ${due} (MobilePay) blev annulleret, før det blev gennemført: fornyelsen var allerede betalt med betalingen order-${orderId}-paid.`));
  const [payment] = await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [due]);
  t.is(payment.status, 'CANCELED');
  t.is(wallet.charge(agreementId, due)?.status, 'CANCELLED');
  // Its due date comes and goes: the wallet takes nothing.
  now = new Date(Date.parse(`${dueDate}T23:00:00Z`));
  const emitted = await wallet.runDueCharges(now);
  t.deepEqual(emitted.filter((e) => e.event.chargeId === due && e.event.eventType === 'recurring.charge-captured.v1'), []);
  t.not(wallet.charge(agreementId, due)?.status, 'CHARGED');
});

test.serial('A new card saved for one subscription is charged for that subscription\'s failed renewal only, not for every failed renewal of the customer', async (t) => {
  serial += 1;
  const customer = `cust-one-two-${serial}`;
  const renewals: { orderId: number; subscriptionId: number }[] = [];
  for (const token of ['ca-one-old-a', 'ca-one-old-b']) {
    const subscriptionId = await shop.seeder.createSubscription({ status: 'on-hold', total: '149.00', meta: { _reepay_token: token } });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error: 'credit_card_expired', error_state: 'hard_declined' });
    t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` }), 'PROCESSED');
    renewals.push({ orderId, subscriptionId });
  }
  const [a, b] = renewals;
  // The customer saves a new card on subscription A's change-payment-method page: the gateway plugin sets it there.
  await q(`UPDATE ${shop.prefix}postmeta SET meta_value = 'ca-one-new-a' WHERE post_id = ? AND meta_key = '_reepay_token'`, [a.subscriptionId]);
  card.setPaymentMethod('ca-one-new-a', { customer, state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4444' } });
  t.is(await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: 'ca-one-new-a' }), 'PROCESSED');
  t.like((await retriesOf(a.orderId))[0], { plan: 'new_method', status: 'PENDING' });
  t.deepEqual(await retriesOf(b.orderId), [], "subscription B's renewal waits for its own new card");
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(5000);
  t.like(cardChargesOf(a.orderId)[0]?.json, { source: 'ca-one-new-a' });
  t.deepEqual(cardChargesOf(b.orderId), []);
});

test.serial("user_action_required, then the customer fixes it in the app: the next planned charge on the same agreement is taken by the wallet on its due date, the case is recovered by the service's retry, and no e-mail asked for a new payment method", async (t) => {
  const agreementId = 'agr-one-app';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-one-app' } });
  wallet.setAgreement(agreementId);
  // The card in the customer's app has no funds: the wallet's own attempt at the renewal failed.
  wallet.setAgreementCard(agreementId, 'no_funds');
  wallet.setCharge(agreementId, 'chr-one-app', { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-one-app' }), 'PROCESSED');
  await q(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
  t.like(await caseOf(orderId), { status: 'OPEN', policy: 'retry', first_reason: 'user_action_required' });

  // The plan's attempt charges the same agreement; the customer tops up in the app before its due date.
  await tickAfter(12 * HOUR);
  const [created] = walletCharges().filter((request) => request.path === `/recurring/v3/agreements/${agreementId}/charges`);
  t.truthy(created, 'a charge on the same agreement');
  const chargeId = String((created.json as { orderId: string }).orderId);
  const dueDate = String((created.json as { due: string }).due);
  wallet.setAgreementCard(agreementId, 'good');
  now = new Date(Date.parse(`${dueDate}T08:00:00Z`));
  const emitted = await wallet.runDueCharges(now);
  const captured = emitted.filter((e) => e.event.chargeId === chargeId && e.event.eventType === 'recurring.charge-captured.v1');
  t.is(captured.length, 1, 'the wallet took it on its due date');
  t.is(await walletWebhook(captured[0].event), 'PROCESSED');
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'service_retry' });
  t.deepEqual(await changesOf(subscriptionId, 'customer_payment_method_needed'), [], 'no "new payment method" e-mail');
  t.is(wallet.charge(agreementId, chargeId)?.status, 'CHARGED');
});

test.serial('A failed card the gateway reports active again, its webhook lost, is found by reconciliation and charged again', async (t) => {
  serial += 1;
  const customer = `cust-one-found-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'on-hold', total: '149.00', meta: { _reepay_token: 'ca-one-found' } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setPaymentMethod('ca-one-found', { customer, state: 'active' });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error: 'credit_card_suspected_fraud', error_state: 'hard_declined' });
  t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` }), 'PROCESSED');
  t.is(await cardWebhook(card.failPaymentMethod('ca-one-found')), 'PROCESSED');
  // The gateway reactivates it; its customer_payment_method_reactivated never arrives.
  card.reactivatePaymentMethod('ca-one-found');
  const outcome = await hub.reconcileNow.execute('all', { dryRun: false });
  t.is(outcome.kind, 'done');
  const [agreement] = await q(`SELECT status FROM ${shop.prefix}sidecar_agreements WHERE external_id = 'ca-one-found'`);
  t.is(agreement.status, 'ACTIVE');
  t.like((await retriesOf(orderId))[0], { plan: 'new_method', status: 'PENDING' });
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAfter(5000);
  t.like(cardChargesOf(orderId)[0]?.json, { source: 'ca-one-found' });
  t.like(await caseOf(orderId), { status: 'RECOVERED' });
});
