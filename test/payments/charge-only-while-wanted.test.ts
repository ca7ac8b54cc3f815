import test from 'ava';
import { request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { paymentsStage } from '../support/payments-stage';
import { startStaffApi } from '../support/staff-api';
import { failedWalletRenewal as failedWalletRenewalOf, hardDeclinedCardRenewal, softDeclinedCardRenewal } from '../support/failed-renewals';
import { secondCaptureUnresolved } from '../../src/payments/second-captures';
import { logIn } from '../support/wordpress-fixtures';

// A charge only while its renewal wants one (src/payments/renewal-wants-money.ts), as users met the gaps: the
// customer cancels the subscription (or the renewal order is trashed) while the service's wallet charge is DUE; the
// deadline comes while the customer's new method's charge is open; staff's Charge now waits in the provider-limit
// queue past the read-back window while the planned attempt runs. Through the worker (ticked under a pinned clock)
// and staff's routes, against the strict loopback card gateway and wallet, on real MariaDB.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const stage = paymentsStage('charge_only_while_wanted', { start: new Date('2026-11-23T08:00:00Z'), manager: { login: 'wanda.wanted', displayName: 'Wanda Wanted' } });
const { clock, advance, tickAfter, q, walletWebhook, cardWebhook } = stage;
const chargesOf = async (orderId: number) => q(`SELECT external_id, provider, requested_by, state, sends, cancel_reason, result FROM ${stage.shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
const paymentsOf = async (orderId: number) => q(`SELECT id, provider, external_id, status FROM ${stage.shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT status, recovered_by, deadline_at FROM ${stage.shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${stage.shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const cancellationsOf = async (subscriptionId: number) => q(`SELECT id FROM ${stage.shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'subscription_cancel_after_dunning'`, [subscriptionId]);
const walletCreates = (agreementId: string) => stage.wallet.requests.filter((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`);
const walletCancels = (agreementId: string) => stage.wallet.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith(`/recurring/v3/agreements/${agreementId}/charges/`));
const cardChargesOf = (orderId: number) => stage.card.requestsTo('POST', '/v1/charge').filter((r) => String((r.json as { handle?: string }).handle).startsWith(`order-${orderId}-`));

const failedWalletRenewal = () => failedWalletRenewalOf({ shop: stage.shop, wallet: stage.wallet, deliver: walletWebhook }, 'wanted');

/** What the wallet did on its own up to `at` (its due charges taken or failed), told to the service as its webhooks. */
async function walletRunsTo(at: Date) {
  for (const { event } of await stage.wallet.advanceTo(at)) await walletWebhook(event);
}

const hardDeclined = () => hardDeclinedCardRenewal({ ...stage, now: stage.now }, 'wanted');
const softDeclined = () => softDeclinedCardRenewal({ ...stage, now: stage.now }, 'wanted');

/** WooCommerce's change of a subscription's payment method to the wallet plugin's gateway, with the agreement it made. */
async function switchedToWallet(subscriptionId: number, agreementId: string) {
  stage.wallet.setAgreement(agreementId);
  for (const [key, value] of Object.entries({ _payment_method: 'vipps_recurring', _payment_method_title: 'MobilePay', _agreement_id: agreementId })) {
    await q(`DELETE FROM ${stage.shop.prefix}postmeta WHERE post_id = ? AND meta_key = ?`, [subscriptionId, key]);
    await q(`INSERT INTO ${stage.shop.prefix}postmeta (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, [subscriptionId, key, value]);
  }
}

test.serial('The customer cancels the subscription in My Account while the service\'s wallet charge is DUE: the worker\'s next pass cancels it at the wallet, and it is never taken', async (t) => {
  const { orderId, subscriptionId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { provider: 'mobile_wallet', state: 'OPEN' });
  t.is(walletCreates(agreementId).length, 1);

  // WooCommerce Subscriptions cancels the subscription; the renewal order stays failed.
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'wc-cancelled' WHERE ID = ?`, [subscriptionId]);
  await tickAfter(MINUTE);
  t.is(walletCancels(agreementId).length, 1, 'cancelled at the wallet');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'subscription_cancelled' });
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
  const notes = await notesOf(orderId);
  t.true(notes.some((note) => note.includes(charge.external_id) && /the subscription is cancelled|abonnementet er annulleret/.test(note)), `the order note says why: ${notes.join(' / ')}`);

  // Its due date and the wallet's retry days pass: nothing is taken.
  advance(20 * DAY);
  await walletRunsTo(stage.now);
  await stage.worker.tick();
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
  t.deepEqual((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED'), []);
  t.is((await caseOf(orderId)).status, 'LOST');
  t.is(walletCreates(agreementId).length, 1, 'nothing charged again');
});

test.serial('The renewal order trashed while the service\'s wallet charge is DUE: cancelled at the wallet, never taken', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { state: 'OPEN' });

  // WordPress's trash: the post's status, with the one it had kept for a restore.
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'trash' WHERE ID = ?`, [orderId]);
  await q(`INSERT INTO ${stage.shop.prefix}postmeta (post_id, meta_key, meta_value) VALUES (?, '_wp_trash_meta_status', 'wc-failed')`, [orderId]);
  await tickAfter(MINUTE);
  t.is(walletCancels(agreementId).length, 1);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'order_trash' });
  const notes = await notesOf(orderId);
  t.true(notes.some((note) => note.includes(charge.external_id) && /moved to the bin|lagt i papirkurven/.test(note)), `the order note says why: ${notes.join(' / ')}`);
  advance(20 * DAY);
  await walletRunsTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
  t.deepEqual((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED'), []);
});

test.serial('Money the wallet takes all the same after the customer cancelled (its cancel refused while it was being taken) is recorded, flagged on the order and in the Payments panel, and counted for the operator\'s alert', async (t) => {
  const { orderId, subscriptionId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  // The wallet takes the charge before the service hears of the cancellation; its webhook is lost.
  advance(3 * DAY);
  await stage.wallet.advanceTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CHARGED');
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'wc-cancelled' WHERE ID = ?`, [subscriptionId]);
  await tickAfter(MINUTE);
  const taken = (await paymentsOf(orderId)).find((p) => p.external_id === charge.external_id);
  t.is(taken?.status, 'CAPTURED', 'the money taken is recorded as the payment it is');
  t.like((await chargesOf(orderId))[0], { state: 'TAKEN', cancel_reason: 'subscription_cancelled' });
  await tickAfter(2 * MINUTE);
  const flag = await q(`SELECT meta_value FROM ${stage.shop.prefix}sidecar_payment_meta WHERE payment_id = ? AND meta_key = 'second_capture_of'`, [taken.id]);
  t.deepEqual(flag.map((row) => row.meta_value), ['0'], 'flagged for a refund');
  t.true((await notesOf(orderId)).some((note) => /^(Taken for a subscription that had ended|Trukket for et abonnement, der var afsluttet)/.test(note) && note.includes(charge.external_id)), 'the order note tells staff to refund it');
  stage.session = await logIn(stage.shop, stage.manager, { nowSeconds: Math.floor(stage.now.getTime() / 1000) });
  const view = await request(stage.api.url, 'GET', `/payment-hub/v1/orders/${orderId}/payments`, { headers: stage.session.headers });
  t.is(view.status, 200, view.text);
  t.like(view.json.warnings[0], { code: 'captured_twice', refund: { external_id: charge.external_id } });
  t.regex(view.json.warnings[0].message, /subscription that had ended/);
  // What /metrics serves as sidecar_payments_captured_twice_unresolved, which SidecarSecondCapture alerts on.
  const flagged = (await stage.hub.secondCaptureRecords.flagged()).filter((capture) => capture.provider === 'mobile_wallet');
  t.true(flagged.some((capture) => secondCaptureUnresolved(capture.status, capture.keptStatus, capture.paidOutside)), 'the alert\'s gauge counts it');
});

test.serial('The deadline while the customer\'s new method\'s charge is open: the case waits for its outcome, and the wallet\'s money recovers the renewal instead of the subscription being cancelled', async (t) => {
  const { orderId, subscriptionId } = await hardDeclined();
  const deadline = new Date(`${String((await caseOf(orderId)).deadline_at).replace(' ', 'T')}Z`);
  // One day before the deadline the customer moves the subscription to MobilePay: its charge falls due two days later.
  stage.now = new Date(deadline.getTime() - DAY);
  const agreementId = `agr-wanted-new-${orderId}`;
  await switchedToWallet(subscriptionId, agreementId);
  await tickAfter(MINUTE);
  await tickAfter(MINUTE);
  const [walletCharge] = (await chargesOf(orderId)).filter((charge) => charge.provider === 'mobile_wallet');
  t.like(walletCharge, { requested_by: 'new_method', state: 'OPEN' });

  // The deadline passes while the charge is due: the case stays open, the subscription is not cancelled.
  stage.now = new Date(deadline.getTime() + MINUTE);
  for (let i = 0; i < 3; i += 1) await tickAfter(2 * MINUTE);
  t.is((await caseOf(orderId)).status, 'OPEN');
  t.is((await cancellationsOf(subscriptionId)).length, 0);
  t.is(walletCancels(agreementId).length, 0, 'the charge the customer made possible is left to be taken');

  // The wallet takes it on its due date.
  advance(2 * DAY);
  await walletRunsTo(stage.now);
  await tickAfter(MINUTE);
  t.is(stage.wallet.charge(agreementId, walletCharge.external_id)?.status, 'CHARGED');
  t.like(await caseOf(orderId), { status: 'RECOVERED' });
  t.is((await cancellationsOf(subscriptionId)).length, 0, 'never cancelled');
  t.is((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED').length, 1);
});

test.serial('The deadline while a planned wallet charge is still open: withdrawn and cancelled at the wallet first, then the case ends and the subscription is cancelled; nothing is taken after', async (t) => {
  const { orderId, subscriptionId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { requested_by: 'plan', state: 'OPEN' });
  // The case's deadline comes while the wallet still holds the charge (a deadline the operator shortened, say).
  const gmt = (at: Date) => at.toISOString().replace('T', ' ').replace('Z', '');
  await q(`UPDATE ${stage.shop.prefix}sidecar_dunning_cases SET deadline_at = ?, customer_asked_at = ? WHERE order_id = ?`, [gmt(new Date(stage.now.getTime() + HOUR)), gmt(stage.now), orderId]);
  advance(HOUR + 30_000);
  await stage.hub.dunningDeadlines.execute();
  t.is(walletCancels(agreementId).length, 1, 'its cancel asked before the case ends');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'deadline' });
  t.is((await cancellationsOf(subscriptionId)).length, 0, 'not cancelled in the same pass');
  advance(2 * MINUTE);
  await stage.hub.dunningDeadlines.execute();
  t.is((await caseOf(orderId)).status, 'LOST');
  t.is((await cancellationsOf(subscriptionId)).length, 1);
  advance(20 * DAY);
  await walletRunsTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
  t.deepEqual((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED'), []);
});

test.serial('Staff\'s Charge now waits in the provider-limit queue past the read-back window while the planned attempt runs: the attempt does not close it as never made, and one charge settles', async (t) => {
  // An API process allowed one gateway call in flight, already taken by another renewal's charge held at the gateway.
  const narrow = await startStaffApi(stage.env({ CARD_GATEWAY_MAX_CONCURRENT_REQUESTS: '1' }), { clock });
  try {
    const other = await softDeclined();
    const { orderId } = await softDeclined();
    advance(12 * HOUR - 5 * MINUTE);
    stage.session = await logIn(stage.shop, stage.manager, { nowSeconds: Math.floor(stage.now.getTime() / 1000) });
    stage.card.holdRequests((path) => path === '/v1/charge');
    const ahead = request(narrow.url, 'POST', `/payment-hub/v1/orders/${other.orderId}/charge-now`, { headers: stage.session.headers, body: {} });
    await eventually(async () => stage.card.heldInFlight === 1, 10_000, 'the other renewal\'s charge at the gateway');
    const click = request(narrow.url, 'POST', `/payment-hub/v1/orders/${orderId}/charge-now`, { headers: stage.session.headers, body: {} });
    // Staff's charge is written and counted sent, and its request waits for its place.
    await eventually(async () => (await chargesOf(orderId)).some((charge) => charge.requested_by === 'staff' && charge.sends === 1), 10_000, 'staff\'s charge counted sent');
    // Minutes later by the service's clock (past the two-minute read-back window), the planned attempt falls due.
    await tickAfter(5 * MINUTE + 3 * MINUTE);
    t.deepEqual(cardChargesOf(orderId), [], 'the worker charged nothing while staff\'s request waits');
    t.false((await chargesOf(orderId)).some((charge) => charge.result === 'never made at the provider'), 'not closed as never made');
    stage.card.releaseHeld();
    const answer = await click;
    t.is(answer.status, 200, answer.text);
    await ahead;
    await tickAfter(10 * MINUTE);
    await tickAfter(10 * MINUTE);
    const settled = cardChargesOf(orderId).map((r) => (r.json as { handle: string }).handle).filter((handle) => stage.card.charge(handle)?.state === 'settled');
    t.is(settled.length, 1, `one settled charge: ${settled.join(', ')}`);
    t.is((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED').length, 1);
    t.false((await chargesOf(orderId)).some((charge) => charge.result === 'never made at the provider'), 'nothing closed as never made');
  } finally {
    stage.card.releaseHeld();
    await narrow.stop();
  }
});

test.serial('A wallet charge the wallet takes on the tenth of its retry days, its webhook lost: the worker reads it back within hours and records the payment, after reconciliation\'s schedule for it ended', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewalOf({ shop: stage.shop, wallet: stage.wallet, deliver: walletWebhook }, 'wanted-late', { noFunds: true });
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { provider: 'mobile_wallet', state: 'OPEN' });
  // Its due date and nine retry days pass with no money on the customer's card; the wallet's webhooks are lost.
  // (The worker's pass runs twice here: its reads of the charge count against the wallet's limit a minute of real
  // time, which a test that jumps days in seconds would otherwise spend.)
  for (let day = 1; day <= 11; day += 1) {
    advance(DAY);
    await stage.wallet.advanceTo(stage.now);
    if (day === 3) await stage.worker.tick();
  }
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'DUE', 'the wallet still retries it');
  t.like((await chargesOf(orderId))[0], { state: 'OPEN' });
  // The customer tops up the card; the wallet takes the charge at its next attempt, and its webhook is lost too.
  stage.wallet.setAgreementCard(agreementId, 'good');
  advance(DAY);
  await stage.wallet.advanceTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CHARGED');
  await tickAfter(6 * HOUR);
  t.like((await chargesOf(orderId))[0], { state: 'TAKEN' });
  t.deepEqual((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED').map((p) => p.external_id), [charge.external_id]);
  t.like(await caseOf(orderId), { status: 'RECOVERED' });
});
