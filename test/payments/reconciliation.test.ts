import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { ConfigError, loadConfig } from '../../src/config';
import { ReconcileSchedule } from '../../src/reconciliation';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type TestShop } from '../support/test-shop';
import { request } from '../support/http-client';
import { parsePrometheusText, series, total } from '../support/prometheus-text';

// The providers hold the truth and change it without sending the webhook that would tell of it. The worker's
// reconcile step (its tick, with the clock pinned) must make the shop agree with them exactly as the webhook
// would have, once, asking only (no charge created), and a webhook arriving afterwards must add nothing.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-reconcile';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;
const advance = (ms: number) => { now = new Date(now.getTime() + ms); };

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const statusOf = async (id: number) => (await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]))[0].post_status as string;
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const changesOf = async (id: number) => (await q(`SELECT op, payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [id]))
  .map((row) => ({ op: String(row.op), payload: JSON.parse(row.payload) }));
const paymentsOf = async (orderId: number) => (await q(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]));
const itemOf = async (kind: string, refId: number) => (await q(`SELECT * FROM ${shop.prefix}sidecar_reconcile_items WHERE kind = ? AND ref_id = ?`, [kind, refId]))[0];

function env(extra: Record<string, string> = {}) {
  return shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    // Only the tick drives it here; the pace is the documented bound's shape, faster so the tests are quick.
    RECONCILE_INTERVAL_SECONDS: '86400', RECONCILE_MAX_PER_SECOND: '50',
    ...extra,
  });
}

/** The worker as main.ts starts it, its own loops slowed down so that only `tick()` (with the pinned clock) acts. */
const startQuietWorker = () => startPacedWorker(env(), clock);

/** A card-gateway webhook stored and processed as the worker does it; its outcome. */
const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);

/** A signed wallet delivery handled inside the request, as the API does it; its outcome. */
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });

const companion = (present: boolean) => announceCompanion(shop, present, 1);

/**
 * What an order shows, with what differs between two orders by nature (their handles and charge ids, and
 * times) replaced, so the webhook path and the reconciliation path can be compared.
 */
async function shape(orderId: number, names: string[], subscriptionId?: number) {
  const longestFirst = [...names].sort((a, b) => b.length - a.length);
  const normal = (text: string) => longestFirst.reduce((out, name) => out.split(name).join('<ref>'),
    text.replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})?/g, '<time>'));
  return {
    order: await statusOf(orderId),
    subscription: subscriptionId ? await statusOf(subscriptionId) : null,
    notes: (await notesOf(orderId)).map(normal),
    subscriptionNotes: subscriptionId ? (await notesOf(subscriptionId)).map(normal) : [],
    changes: (await changesOf(orderId)).map((change) => JSON.parse(normal(JSON.stringify(change)))),
    payments: (await paymentsOf(orderId)).map((row) => ({ external_id: normal(String(row.external_id)), status: row.status })),
  };
}

/** The tick of the worker one minute later (the first check of an item opened now), and what it left. */
async function tickAfter(ms: number) {
  advance(ms);
  await worker.tick();
}

const chargesCreated = () => card.requestsTo('POST', '/v1/charge').length + wallet.requests.filter((r) => r.method === 'POST' && /\/charges$/.test(r.path)).length;

test.before(async () => {
  shop = await createTestShop('reconciliation', { hpos: false });
  card = new FakeCardGateway();
  // The wallet's today is the test's: its charges' due dates are counted from it.
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(env(), clock);
  worker = await startQuietWorker();
});

test.after.always(async () => {
  await worker?.stop(1000).catch(() => undefined);
  await hub?.close().catch(() => undefined);
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

/** A renewal order and its subscription, due now; the renewal's card payment failed (the webhook came). */
async function failedCardRenewal() {
  const subscriptionId = await shop.seeder.createSubscription({
    status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date(now.getTime() - 30 * DAY), nextPaymentGmt: now, createdGmt: new Date(now.getTime() - 30 * DAY),
  });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', createdGmt: now, meta: { _subscription_renewal: String(subscriptionId) } });
  const handle = `order-${orderId}`;
  card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-rec', error: 'insufficient_funds', error_state: 'soft_declined' });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: handle })) !== 'PROCESSED') throw new Error('failure not processed');
  return { orderId, subscriptionId, handle };
}

test.serial('A renewal whose failure came by webhook and which then settled at the gateway with no webhook: the worker records the capture as the webhook would, charges nothing, and the late webhook adds nothing', async (t) => {
  // The webhook path, for comparison.
  const twin = await failedCardRenewal();
  card.setInvoice(twin.handle, { state: 'settled', amount: 14900, customer: 'cust-rec', settled: '2026-11-23T08:00:30.000Z' });
  t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: twin.handle }), 'PROCESSED');
  const expected = await shape(twin.orderId, [twin.handle], twin.subscriptionId);
  t.is(expected.order, 'wc-processing');

  const { orderId, subscriptionId, handle } = await failedCardRenewal();
  t.is(await statusOf(orderId), 'wc-failed');
  card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-rec', settled: '2026-11-23T08:00:30.000Z' });
  const charges = chargesCreated();
  await tickAfter(MINUTE);

  const names = [handle];
  t.deepEqual(await shape(orderId, names, subscriptionId), expected, 'the same order, notes and subscription as the webhook path');
  t.deepEqual(await paymentsOf(orderId), [{ external_id: handle, status: 'CAPTURED' }]);
  t.is(await statusOf(subscriptionId), 'wc-active');
  t.is(chargesCreated(), charges, 'nothing charged: reconciliation only asks');
  t.true(card.requestsTo('GET', `/v1/invoice/${handle}`).length >= 1);

  const before = await shape(orderId, names, subscriptionId);
  t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: handle }), 'SKIPPED', 'the late webhook finds nothing to do');
  t.deepEqual(await shape(orderId, names, subscriptionId), before, 'no second note, no status move');
});

test.serial('A plain order authorized and settled 45 s later at the gateway with no webhook at all: the worker finds it by its handle and hands WooCommerce the payment as the webhook would', async (t) => {
  await companion(true);
  try {
    const order = () => shop.seeder.createOrder({ status: 'pending', total: '99.00', paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Betalingskort', createdGmt: now });
    const twinId = await order();
    card.setInvoice(`order-${twinId}`, { state: 'settled', amount: 9900, customer: 'cust-plain', authorized: '2026-11-23T08:05:00.000Z', settled: '2026-11-23T08:05:45.000Z' });
    t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: `order-${twinId}` }), 'PROCESSED');
    const expected = await shape(twinId, [`order-${twinId}`]);
    t.deepEqual(expected.changes.map((change: { op: string }) => change.op), ['order_payment_complete']);

    const orderId = await order();
    const handle = `order-${orderId}`;
    card.setInvoice(handle, { state: 'authorized', amount: 9900, customer: 'cust-plain', authorized: '2026-11-23T08:05:00.000Z' });
    advance(45_000);
    card.setInvoice(handle, { state: 'settled', amount: 9900, customer: 'cust-plain', authorized: '2026-11-23T08:05:00.000Z', settled: '2026-11-23T08:05:45.000Z' });
    const charges = chargesCreated();
    await tickAfter(MINUTE);

    const names = [handle];
    t.deepEqual(await shape(orderId, names), expected, 'the same payment and WooCommerce change as the webhook path');
    t.is(chargesCreated(), charges);
    const changes = await changesOf(orderId);
    t.like(changes[0], { op: 'order_payment_complete', payload: { transaction_id: handle, paid_at: Date.parse('2026-11-23T08:05:45.000Z') / 1000 } });

    const before = await shape(orderId, names);
    t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: handle }), 'SKIPPED');
    t.deepEqual(await shape(orderId, names), before, 'no second change row');
    await tickAfter(2 * MINUTE);
    t.deepEqual(await shape(orderId, names), before, 'and the order is asked about no more');
    t.like(await itemOf('order', orderId), { status: 'CLOSED' });
  } finally {
    await companion(false);
  }
});

/** A wallet renewal order with its subscription and agreement; the charge is the order's `_charge_id`. */
async function walletOrder(tag: string) {
  const agreementId = `agr-${tag}`;
  const chargeId = `chr-${tag}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId }, createdGmt: now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', createdGmt: now, meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
  wallet.setAgreement(agreementId);
  return { agreementId, chargeId, orderId, subscriptionId };
}

test.serial('A wallet charge reserved (webhook) and then captured with no webhook: the worker records the capture and WooCommerce is handed it, as the webhook would', async (t) => {
  await companion(true);
  try {
    const twin = await walletOrder('twin-cap');
    wallet.setCharge(twin.agreementId, twin.chargeId, { status: 'RESERVED' });
    t.is(await walletWebhook({ eventType: 'recurring.charge-reserved.v1', agreementId: twin.agreementId, chargeId: twin.chargeId }), 'PROCESSED');
    wallet.setCharge(twin.agreementId, twin.chargeId, { status: 'CHARGED', transactionId: 'tx-twin' });
    t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId: twin.agreementId, chargeId: twin.chargeId }), 'PROCESSED');
    const twinNames = [twin.chargeId];
    const expected = await shape(twin.orderId, twinNames, twin.subscriptionId);
    t.deepEqual(expected.changes.map((change: { op: string }) => change.op), ['order_payment_authorized', 'order_payment_complete']);

    const { agreementId, chargeId, orderId, subscriptionId } = await walletOrder('cap');
    wallet.setCharge(agreementId, chargeId, { status: 'RESERVED' });
    t.is(await walletWebhook({ eventType: 'recurring.charge-reserved.v1', agreementId, chargeId }), 'PROCESSED');
    t.deepEqual(await paymentsOf(orderId), [{ external_id: chargeId, status: 'AUTHORIZED' }]);
    wallet.setCharge(agreementId, chargeId, { status: 'CHARGED', transactionId: 'tx-cap' });
    const charges = chargesCreated();
    await tickAfter(MINUTE);

    const names = [chargeId];
    t.deepEqual(await shape(orderId, names, subscriptionId), expected);
    t.deepEqual(await paymentsOf(orderId), [{ external_id: chargeId, status: 'CAPTURED' }]);
    t.is(chargesCreated(), charges);

    const before = await shape(orderId, names, subscriptionId);
    t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId, chargeId, transactionId: 'tx-cap' }), 'SKIPPED');
    t.deepEqual(await shape(orderId, names, subscriptionId), before);
  } finally {
    await companion(false);
  }
});

/** A wallet renewal whose charge failed (webhook), then the service's own dunning attempt made a new charge. */
async function walletDunningCharge(tag: string) {
  const { agreementId, chargeId, orderId, subscriptionId } = await walletOrder(tag);
  wallet.setCharge(agreementId, chargeId, { status: 'FAILED', failureReason: 'technical_error' });
  if ((await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId })) !== 'PROCESSED') throw new Error('failure not processed');
  await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET scheduled_at = ? WHERE order_id = ?`, [now.toISOString().slice(0, 19).replace('T', ' '), orderId]);
  const summary = await hub.runDueRetries.execute();
  if (summary.succeeded !== 1) throw new Error(`no attempt: ${JSON.stringify(summary)}`);
  const [, attempt] = await paymentsOf(orderId);
  return { agreementId, orderId, subscriptionId, dunningCharge: String(attempt.external_id) };
}

test.serial('The service\'s own dunning charge captured at the wallet with no webhook: the worker completes the renewal as the webhook would, and creates no charge', async (t) => {
  const twin = await walletDunningCharge('twin-dun');
  wallet.setCharge(twin.agreementId, twin.dunningCharge, { status: 'CHARGED', transactionId: 'tx-twin-dun' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId: twin.agreementId, chargeId: twin.dunningCharge }), 'PROCESSED');
  const twinNames = [twin.dunningCharge, 'chr-twin-dun'];
  const expected = await shape(twin.orderId, twinNames, twin.subscriptionId);
  t.is(expected.order, 'wc-processing');

  const { agreementId, orderId, subscriptionId, dunningCharge } = await walletDunningCharge('dun');
  t.is(await statusOf(orderId), 'wc-failed');
  t.deepEqual((await paymentsOf(orderId)).map((row) => row.status), ['FAILED', null], 'the attempt\'s charge awaits the wallet');
  wallet.setCharge(agreementId, dunningCharge, { status: 'CHARGED', transactionId: 'tx-dun' });
  const charges = chargesCreated();
  await tickAfter(MINUTE);

  const names = [dunningCharge, 'chr-dun'];
  t.deepEqual(await shape(orderId, names, subscriptionId), expected);
  t.is(await statusOf(orderId), 'wc-processing');
  t.is(await statusOf(subscriptionId), 'wc-active');
  t.is(chargesCreated(), charges, 'no charge created');

  const before = await shape(orderId, names, subscriptionId);
  t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId, chargeId: dunningCharge }), 'SKIPPED');
  t.deepEqual(await shape(orderId, names, subscriptionId), before);
});

test.serial('An agreement stopped at the wallet with no webhook: the worker disables it as the webhook would, so it is not charged at the next renewal', async (t) => {
  const activate = async (agreementId: string) => {
    wallet.setAgreement(agreementId, { status: 'ACTIVE' });
    if ((await walletWebhook({ eventType: 'recurring.agreement-activated.v1', agreementId })) !== 'PROCESSED') throw new Error('not activated');
  };
  const agreementRow = async (agreementId: string) => (await q(`SELECT status, disable_reason FROM ${shop.prefix}sidecar_agreements WHERE external_id = ?`, [agreementId]))[0];

  await activate('agr-twin-stop');
  wallet.setAgreement('agr-twin-stop', { status: 'STOPPED' });
  t.is(await walletWebhook({ eventType: 'recurring.agreement-stopped.v1', agreementId: 'agr-twin-stop', actor: 'USER' }), 'PROCESSED');
  const expected = await agreementRow('agr-twin-stop');
  t.deepEqual(expected, { status: 'DISABLED', disable_reason: 'CANCELED' });

  await activate('agr-stop');
  wallet.setAgreement('agr-stop', { status: 'STOPPED' });
  const charges = chargesCreated();
  await tickAfter(MINUTE);
  t.deepEqual(await agreementRow('agr-stop'), expected);
  t.is(chargesCreated(), charges);

  const [{ updated_at: updatedAt }] = await q(`SELECT updated_at FROM ${shop.prefix}sidecar_agreements WHERE external_id = 'agr-stop'`);
  t.is(await walletWebhook({ eventType: 'recurring.agreement-stopped.v1', agreementId: 'agr-stop', actor: 'USER' }), 'SKIPPED');
  const [after] = await q(`SELECT status, disable_reason, updated_at FROM ${shop.prefix}sidecar_agreements WHERE external_id = 'agr-stop'`);
  t.deepEqual(after, { ...expected, updated_at: updatedAt }, 'the late webhook changes nothing');
});

test.serial('When the provider answers 5xx, rate-limits or times out during a pass, Then the item stays open and is due again later with a growing wait, and the worker goes on', async (t) => {
  const { orderId, handle } = await failedCardRenewal();
  const [payment] = await q(`SELECT id FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [handle]);
  const asked = () => card.requestsTo('GET', `/v1/invoice/${handle}`).length;

  card.failNextReads(503, 1, 0, `/v1/invoice/${handle}`);
  await tickAfter(MINUTE);
  t.like(await itemOf('payment', payment.id), { status: 'OPEN', failures: 1, checks: 0 });
  t.regex(String((await itemOf('payment', payment.id)).last_error), /503/);
  const firstAsk = asked();

  await tickAfter(30_000);
  t.is(asked(), firstAsk, 'not asked again before its wait is over (no busy loop)');

  // A rate limit is asked again after 1, 2 and 4 s within the pass; only one that lasts counts as a failure.
  card.failNextReads(429, 4, 122, `/v1/invoice/${handle}`);
  await tickAfter(31_000);
  t.is(asked(), firstAsk + 4);
  t.like(await itemOf('payment', payment.id), { status: 'OPEN', failures: 2 });
  const secondDue = Date.parse(`${(await itemOf('payment', payment.id)).next_at.replace(' ', 'T')}Z`);
  t.is(secondDue - now.getTime(), 2 * MINUTE, 'the wait doubles');

  // A timeout: the client gives up after its deadline, the pass still ends.
  card.holdRequests((path) => path === `/v1/invoice/${handle}`);
  advance(2 * MINUTE);
  const started = Date.now();
  await worker.tick();
  card.releaseHeld();
  t.true(Date.now() - started < 20_000);
  t.like(await itemOf('payment', payment.id), { status: 'OPEN', failures: 3 });
  t.regex(String((await itemOf('payment', payment.id)).last_error), /timed out/);

  // The gateway answers again: the item is asked and, nothing having changed there, stays on its schedule.
  card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-rec' });
  await tickAfter(4 * MINUTE + 1000);
  t.deepEqual(await paymentsOf(orderId), [{ external_id: handle, status: 'CAPTURED' }]);
  t.like(await itemOf('payment', payment.id), { status: 'CLOSED' });
});

test.serial('When nothing changes at the provider, Then the item is asked after 1, 5, 15 and 60 minutes, daily for a week, and then no more', async (t) => {
  const handle = `inv-pending-${Date.now()}`;
  card.setInvoice(handle, { state: 'pending', amount: 5000, customer: 'cust-slow' });
  const opened = now.getTime();
  t.is(await cardWebhook({ event_type: 'invoice_created', invoice: handle }), 'PROCESSED');
  const [payment] = await q(`SELECT id, status FROM ${shop.prefix}sidecar_payments WHERE external_id = ?`, [handle]);
  t.is(payment.status, null);
  const asked = () => card.requestsTo('GET', `/v1/invoice/${handle}`).length;

  const at = (ms: number) => { now = new Date(opened + ms); };
  const seen: number[] = [];
  const moments = [30_000, MINUTE, 3 * MINUTE, 5 * MINUTE, 15 * MINUTE, 59 * MINUTE, HOUR, 12 * HOUR, DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 6 * DAY, 7 * DAY, 7 * DAY + HOUR, 8 * DAY, 10 * DAY];
  for (const moment of moments) {
    at(moment + 1000);
    const before = asked();
    await worker.tick();
    if (asked() > before) seen.push(moment);
  }
  t.deepEqual(seen, [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 6 * DAY, 7 * DAY]);
  t.like(await itemOf('payment', payment.id), { status: 'EXPIRED', next_at: null, checks: 11 });
});

test.serial('GET /metrics shows what reconciliation checked, found and fixed by provider and kind, and the age of the oldest open item', async (t) => {
  const api = await startApi(env());
  try {
    const res = await request(api.url, 'GET', '/metrics');
    t.is(res.status, 200);
    const samples = parsePrometheusText(res.text);
    t.true(total(samples, 'sidecar_reconcile_fixed_total', { provider: 'card_gateway', kind: 'payment' }) >= 1);
    t.true(total(samples, 'sidecar_reconcile_fixed_total', { provider: 'card_gateway', kind: 'order' }) >= 1);
    t.true(total(samples, 'sidecar_reconcile_fixed_total', { provider: 'mobile_wallet', kind: 'payment' }) >= 2);
    t.true(total(samples, 'sidecar_reconcile_fixed_total', { provider: 'mobile_wallet', kind: 'agreement' }) >= 1);
    t.true(total(samples, 'sidecar_reconcile_unreachable_total', { provider: 'card_gateway', kind: 'payment' }) >= 3);
    t.true(total(samples, 'sidecar_reconcile_checks_total') >= total(samples, 'sidecar_reconcile_found_total'));
    t.true(total(samples, 'sidecar_reconcile_found_total') >= total(samples, 'sidecar_reconcile_fixed_total'));
    t.is(series(samples, 'sidecar_reconcile_oldest_open_age_seconds').length, 1);
    t.true(total(samples, 'sidecar_reconcile_oldest_open_age_seconds') >= 0);
    t.is(series(samples, 'sidecar_reconcile_open_items').length, 6);
  } finally {
    await api.stop();
  }
});

test('RECONCILE_* settings: the default schedule, and a malformed one stops the start naming it', (t) => {
  const config = loadConfig({ DB_NAME: 'x' });
  t.like(config.reconcile, { enabled: true, batch: 100, maxPerSecond: 5, intervalSeconds: 30 });
  t.deepEqual(new ReconcileSchedule(config.reconcile.scheduleSeconds).offsets.map((s) => s / 60),
    [1, 5, 15, 60, 1440, 2880, 4320, 5760, 7200, 8640, 10080], '1, 5, 15, 60 minutes, then daily for a week');
  for (const [name, value] of [['RECONCILE_SCHEDULE', 'soon'], ['RECONCILE_BATCH', '0'], ['RECONCILE_MAX_PER_SECOND', 'fast'], ['RECONCILE_ENABLED', 'maybe'], ['RECONCILE_INTERVAL_SECONDS', '-1']]) {
    t.throws(() => loadConfig({ DB_NAME: 'x', [name]: value }), { instanceOf: ConfigError, message: new RegExp(`^${name} `) });
  }
  t.false(loadConfig({ DB_NAME: 'x', RECONCILE_ENABLED: 'false' }).reconcile.enabled);
});
