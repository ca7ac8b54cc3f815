import test from 'ava';
import { eventually, openHub } from '../support/payment-hub-fixture';
import { paymentsStage } from '../support/payments-stage';
import { failedWalletRenewal as failedWalletRenewalOf, hardDeclinedCardRenewal, softDeclinedCardRenewal } from '../support/failed-renewals';
import { logIn } from '../support/wordpress-fixtures';

// The charge ledger's scenarios, each as a user met it, through the worker (as main.ts starts it, ticked under a
// pinned clock) and staff's HTTP routes, against the loopback card gateway and wallet: Charge now as the planned
// attempt falls due, a charge whose answer was lost (then Charge now, or Stop dunning), a wallet cancel answered
// 202, and a renewal paid in the shop while the service's wallet charge is due.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const stage = paymentsStage('charge_ledger', { start: new Date('2026-11-23T08:00:00Z'), manager: { login: 'lea.ledger', displayName: 'Lea Ledger' } });
const { clock, advance, tickAfter, q, walletWebhook, cardWebhook, asManager } = stage;
const chargesOf = async (orderId: number) => q(`SELECT external_id, requested_by, state, sends, unanswered, cancel_reason, result FROM ${stage.shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
const paymentsOf = async (orderId: number) => q(`SELECT id, provider, external_id, status FROM ${stage.shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);
/** The card charges asked for one renewal order, by handle (`order-<id>-retry<n>`). */
const cardChargesOf = (orderId: number) => stage.card.requestsTo('POST', '/v1/charge').filter((r) => String((r.json as { handle?: string }).handle).startsWith(`order-${orderId}-`));
const walletCreates = () => stage.wallet.requests.filter((r) => r.method === 'POST' && /\/charges$/.test(r.path));
const walletCancels = () => stage.wallet.requests.filter((r) => r.method === 'DELETE' && /\/charges\//.test(r.path));

/** A card renewal that failed with a soft decline: attempt 1 is planned 12 h later. */
const failedCardRenewal = () => softDeclinedCardRenewal({ ...stage, now: stage.now }, 'ledger');

/** A wallet renewal whose charge failed: the service's attempt is planned 12 h later, on the same agreement. */
const failedWalletRenewal = () => failedWalletRenewalOf({ shop: stage.shop, wallet: stage.wallet, deliver: walletWebhook }, 'ledger');

test.serial('Charge now clicked as the planned attempt falls due: one charge, whoever asks second finds the renewal\'s charge open and charges nothing', async (t) => {
  const { orderId } = await failedCardRenewal();
  advance(12 * HOUR - 1500);
  // Staff's charge is on its way to the gateway (held there) when the planned attempt falls due and the worker runs.
  stage.card.holdRequests((path) => path === '/v1/charge');
  const click = asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`);
  await eventually(async () => stage.card.heldInFlight === 1, 10_000, 'staff charge at the gateway');
  await tickAfter(2000);
  stage.card.releaseHeld();
  const answer = await click;
  t.is(answer.status, 200, answer.text);
  t.is(answer.json.result.outcome, 'paid');
  await tickAfter(10 * MINUTE);
  t.is(cardChargesOf(orderId).length, 1, 'one charge asked of the gateway');
  t.deepEqual((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED').length, 1);
  const charges = await chargesOf(orderId);
  t.is(charges.length, 1);
  t.like(charges[0], { requested_by: 'staff', state: 'TAKEN' });
});

test.serial('A card charge whose answer was lost stays open: Charge now is refused as charge_under_way, and the plan asks again with the same handle and key', async (t) => {
  const { orderId } = await failedCardRenewal();
  stage.card.loseAnswers((method, path) => method === 'POST' && path === '/v1/charge');
  await tickAfter(12 * HOUR);
  t.is(cardChargesOf(orderId).length, 1);
  t.like((await chargesOf(orderId))[0], { state: 'OPEN', sends: 1, unanswered: 1 });

  const refused = await asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`);
  t.is(refused.status, 409, refused.text);
  t.like(refused.json, { code: 'action_not_allowed', data: { reason: 'charge_under_way' } });
  t.is(cardChargesOf(orderId).length, 1, 'staff charged nothing on top');

  await tickAfter(6 * MINUTE);
  const sent = cardChargesOf(orderId).map((r) => r.json as { handle: string; key: string });
  t.is(sent.length, 2);
  t.is(sent[1].handle, sent[0].handle);
  t.is(sent[1].key, sent[0].key);
  t.like((await chargesOf(orderId))[0], { state: 'TAKEN' });
  t.is((await paymentsOf(orderId)).filter((p) => p.status === 'CAPTURED').length, 1);
});

test.serial('A wallet charge whose answer was lost is cancelled when staff stop dunning: the wallet never takes it', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  stage.wallet.loseAnswers((method, path) => method === 'POST' && /\/charges$/.test(path));
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { state: 'OPEN', unanswered: 1 });
  t.true(['PENDING', 'DUE'].includes(String(stage.wallet.charge(agreementId, charge.external_id)?.status)), 'the wallet made the charge');

  const stopped = await asManager('POST', `/payment-hub/v1/orders/${orderId}/stop-dunning`);
  t.is(stopped.status, 200, stopped.text);
  t.is(stopped.json.result.charges_cancelled, 1);
  t.is(walletCancels().filter((r) => r.path.includes(charge.external_id)).length, 1);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'dunning_stopped' });
  stage.now = new Date(stage.now.getTime() + 4 * 86_400_000);
  await stage.wallet.advanceTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
});

test.serial('A renewal paid in the shop while the service\'s wallet charge is due: the worker\'s next pass cancels it; a cancel answered 202 is read back until the wallet enacts it', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { state: 'OPEN' });
  t.is(walletCreates().filter((r) => r.path.includes(agreementId)).length, 1);

  // Paid by bank transfer: staff set the order to processing in WooCommerce; no payment of the service's.
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'wc-processing' WHERE ID = ?`, [orderId]);
  stage.wallet.acceptNextCancels(1);
  await tickAfter(MINUTE);
  t.is(walletCancels().filter((r) => r.path.includes(charge.external_id)).length, 1);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELING', cancel_reason: 'order_processing' }, 'a 202 is not a cancellation');
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELING' }, 'still not enacted at the wallet');
  t.is(stage.wallet.enactAcceptedCancels(), 1);
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED' });
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
});

test.serial('Two notices of the same shop payment at once (two API processes): one withdraws the open charge and asks the wallet to cancel it; the other finds it withdrawn', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  t.like(charge, { state: 'OPEN' });
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'wc-processing' WHERE ID = ?`, [orderId]);
  const other = await openHub(stage.env(), clock);
  try {
    const answers = await Promise.all([stage.hub.settleOpenCharges.settleOrder(orderId), other.settleOpenCharges.settleOrder(orderId)]);
    t.deepEqual(answers.map((answer) => answer.kind).sort(), ['already_withdrawn', 'withdrawn']);
    for (const answer of answers) if (answer.kind === 'withdrawn') await answer.cancelled;
  } finally {
    await other.close();
  }
  t.is(walletCancels().filter((r) => r.path.includes(charge.external_id)).length, 1, 'one cancel asked of the wallet');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'order_processing' });
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CANCELLED');
});

test.serial('A cancel answered 202 that the wallet never enacts: the wallet takes the charge on its due date, and the service records it as a payment taken after its cancel', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  await q(`UPDATE ${stage.shop.prefix}posts SET post_status = 'wc-completed' WHERE ID = ?`, [orderId]);
  stage.wallet.acceptNextCancels(1);
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELING' });
  stage.now = new Date(stage.now.getTime() + 3 * 86_400_000);
  await stage.wallet.advanceTo(stage.now);
  t.is(stage.wallet.charge(agreementId, charge.external_id)?.status, 'CHARGED');
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'TAKEN' });
  const taken = (await paymentsOf(orderId)).find((p) => p.external_id === charge.external_id);
  t.is(taken?.status, 'CAPTURED');
  const meta = await q(`SELECT meta_value FROM ${stage.shop.prefix}sidecar_payment_meta WHERE payment_id = ? AND meta_key = 'taken_after_cancel'`, [taken.id]);
  t.is(meta.length, 1);

  // What had paid the order is the shop's own, not a payment of the service's: the sweep flags it all the same.
  await tickAfter(2 * MINUTE);
  const flag = await q(`SELECT meta_value FROM ${stage.shop.prefix}sidecar_payment_meta WHERE payment_id = ? AND meta_key = 'second_capture_of'`, [taken.id]);
  t.deepEqual(flag.map((row) => row.meta_value), ['0'], 'flagged as a second capture of a payment outside the service');
  stage.session = await logIn(stage.shop, stage.manager, { nowSeconds: Math.floor(stage.now.getTime() / 1000) });
  const view = await asManager('GET', `/payment-hub/v1/orders/${orderId}/payments`);
  t.is(view.status, 200, view.text);
  t.is(view.json.warnings.length, 1);
  t.like(view.json.warnings[0], { code: 'captured_twice', payment_ids: [taken.id], kept: null, refund: { id: taken.id, external_id: charge.external_id } });
  const paidTwiceNotes = () => q(`SELECT comment_content FROM ${stage.shop.prefix}comments WHERE comment_post_ID = ? AND (comment_content LIKE 'Paid twice%' OR comment_content LIKE 'Betalt to gange%')`, [orderId]);
  t.is((await paidTwiceNotes()).length, 1, 'one note for staff');
  await tickAfter(2 * MINUTE);
  t.is((await paidTwiceNotes()).length, 1, 'flagged once');
});

test.serial('A wallet agreement active all along but never announced, heard of after its renewal failed on it, is the subscription\'s own method: charged on the plan, not at once as a new one', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  const before = await q(`SELECT attempt, plan, status, scheduled_at FROM ${stage.shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY id`, [orderId]);
  t.is((await walletWebhook({ eventType: 'recurring.agreement-activated.v1', agreementId })), 'PROCESSED');
  await tickAfter(2 * MINUTE);
  t.is(walletCreates().filter((r) => r.path.includes(agreementId)).length, 0, 'not charged off the plan');
  t.deepEqual(await q(`SELECT attempt, plan, status, scheduled_at FROM ${stage.shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY id`, [orderId]), before, 'the plan is as it was');
  await tickAfter(12 * HOUR);
  t.is(walletCreates().filter((r) => r.path.includes(agreementId)).length, 1, 'charged by the plan\'s attempt');
});

/** A card renewal declined hard on the subscription's own card (`_reepay_token`): the customer is asked for a new one. */
const hardDeclined = () => hardDeclinedCardRenewal({ ...stage, now: stage.now }, 'ledger');
const switchCard = (subscriptionId: number, token: string) => q(`UPDATE ${stage.shop.prefix}postmeta SET meta_value = ? WHERE post_id = ? AND meta_key = '_reepay_token'`, [token, subscriptionId]);
const caseOf = async (orderId: number) => (await q(`SELECT status, recovered_by, deadline_at FROM ${stage.shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const cancellationsOf = async (subscriptionId: number) => q(`SELECT id FROM ${stage.shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'subscription_cancel_after_dunning'`, [subscriptionId]);

test.serial('A new card whose webhook comes before WooCommerce switches the subscription to it: charged once when the switch is seen, and the case recovered', async (t) => {
  const { orderId, subscriptionId, customer } = await hardDeclined();
  const newCard = `ca-new-${orderId}`;
  stage.card.setPaymentMethod(newCard, { customer, state: 'active' });
  t.is(await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: newCard }), 'PROCESSED');
  await tickAfter(MINUTE);
  t.is(cardChargesOf(orderId).length, 0, 'the subscription still names the failed card');

  // The customer's browser comes back: the gateway's plugin switches the subscription's card.
  advance(30_000);
  await switchCard(subscriptionId, newCard);
  await tickAfter(MINUTE);
  const charges = cardChargesOf(orderId);
  t.is(charges.length, 1);
  t.like(charges[0].json, { source: newCard, settle: true });
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'new_payment_method' });
  await tickAfter(HOUR);
  t.is(cardChargesOf(orderId).length, 1, 'charged once');
});

test.serial('A card already saved, chosen by the customer without any event from the gateway, is charged once', async (t) => {
  const { orderId, subscriptionId, customer } = await hardDeclined();
  const saved = `ca-saved-${orderId}`;
  stage.card.setPaymentMethod(saved, { customer, state: 'active' });
  await switchCard(subscriptionId, saved);
  await tickAfter(MINUTE);
  t.is(cardChargesOf(orderId).length, 1);
  t.like(cardChargesOf(orderId)[0].json, { source: saved });
  t.like(await caseOf(orderId), { status: 'RECOVERED' });
});

test.serial('At the deadline, a card switched to since the failure is charged instead of the subscription being cancelled; its decline then ends the case', async (t) => {
  const { orderId, subscriptionId, customer } = await hardDeclined();
  const deadline = new Date(`${String((await caseOf(orderId)).deadline_at).replace(' ', 'T')}Z`);
  const newCard = `ca-late-${orderId}`;
  stage.card.setPaymentMethod(newCard, { customer, state: 'active' });
  // Switched in the last minute before the deadline, found by the deadline's own look.
  stage.now = new Date(deadline.getTime() - 1000);
  await switchCard(subscriptionId, newCard);
  stage.card.queueChargeOutcome({ kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' });
  stage.now = new Date(deadline.getTime() + 1000);
  await stage.hub.dunningDeadlines.execute();
  t.is((await cancellationsOf(subscriptionId)).length, 0, 'not cancelled while the new card is charged');
  await stage.worker.tick();
  t.is(cardChargesOf(orderId).length, 1);
  t.like(cardChargesOf(orderId)[0].json, { source: newCard });
  await tickAfter(2 * MINUTE);
  t.like(await caseOf(orderId), { status: 'LOST' });
  t.is((await cancellationsOf(subscriptionId)).length, 1);
});

test.serial('A card charge cancelled at the gateway: its invoice_cancelled is read back, the payment and the ledger\'s charge close as cancelled, and the plan may charge again', async (t) => {
  const { orderId } = await failedCardRenewal();
  // An asynchronous method: the gateway holds the charge pending.
  stage.card.queueChargeOutcome({ kind: 'pending' });
  await tickAfter(12 * HOUR);
  const [open] = await chargesOf(orderId);
  t.like(open, { state: 'OPEN' });
  stage.card.setCharge(open.external_id, { state: 'cancelled', amount: 14900, currency: 'DKK' });
  stage.card.setInvoice(open.external_id, { state: 'cancelled', amount: 14900, currency: 'DKK' });
  t.is(await cardWebhook({ event_type: 'invoice_cancelled', invoice: open.external_id }), 'PROCESSED');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED' });
  t.is((await paymentsOf(orderId)).find((p) => p.external_id === open.external_id)?.status, 'CANCELED');
});

test.serial('A charge withdrawn between its opening and its request (dunning stopped at that moment) is never sent: whoever withdraws first wins, by the charge\'s row', async (t) => {
  const { orderId, subscriptionId } = await failedCardRenewal();
  const settings = await stage.hub.settings.current();
  // The attempt's first step, as the worker takes it: the charge written, and the slot claimed.
  const opened = await stage.hub.ledger.open({
    orderId, subscriptionId, provider: 'card_gateway', externalId: `order-${orderId}-retry7`, idempotencyKey: `retry-${orderId}-7`, amountMinor: 14900,
    currency: 'DKK', paymentMethod: 'auto', customerHandle: null, due: null, description: `Renewal order ${orderId}`, requestedBy: 'plan', retryId: null,
  }, settings, async () => null);
  if (opened.kind !== 'opened') throw new Error(`not opened: ${opened.kind}`);
  // Staff stop dunning before the worker's request leaves.
  await stage.hub.orderWrites.transaction((db) => stage.hub.ledger.withdraw(db, orderId, 'dunning_stopped', stage.now));
  const answer = await stage.hub.ledger.send(opened.charge);
  t.is(answer.kind, 'withdrawn');
  t.is(cardChargesOf(orderId).length, 0, 'nothing asked of the gateway');
  t.like((await chargesOf(orderId))[0], { sends: 0, cancel_reason: 'dunning_stopped' });
  // The settle pass finds it never made, and closes it.
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED' });
});

test.serial('A charge another caller withdrew is left to that caller for two minutes: the pass does not ask the wallet to cancel it again meanwhile, and after it one pass of two at once cancels it, should that caller have stopped', async (t) => {
  const { orderId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [sent] = await chargesOf(orderId);
  t.like(sent, { state: 'OPEN', sends: 1 });
  // A caller withdraws it (as Stop dunning or a shop notice does) and stops before its cancel leaves.
  const withdrawn = await stage.hub.orderWrites.transaction((db) => stage.hub.ledger.withdraw(db, orderId, 'dunning_stopped', stage.now));
  t.true(withdrawn?.first);
  const before = walletCancels().length;
  await tickAfter(MINUTE);
  t.is(walletCancels().length, before, 'within the grace: no second cancel on top of the one the caller may be sending');
  t.like((await chargesOf(orderId))[0], { state: 'OPEN', cancel_reason: 'dunning_stopped' });
  // After it, two passes at once (two worker processes): the database's claim lets one of them cancel it.
  advance(2 * MINUTE);
  await Promise.all([stage.worker.tick(), stage.hub.settleOpenCharges.pass()]);
  t.is(walletCancels().length, before + 1, 'after it: the pass cancels it, once');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED' });
});

test.serial('A cancellation two cancellers confirm at once is recorded once: one move, one note on the order', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  await tickAfter(12 * HOUR);
  const [charge] = await chargesOf(orderId);
  const payment = (await paymentsOf(orderId)).find((p) => p.external_id === charge.external_id);
  const record = await stage.hub.payments.findById(payment.id);
  stage.wallet.charge(agreementId, charge.external_id)!.status = 'CANCELLED';
  const settings = await stage.hub.settings.current();
  const notesBefore = (await q(`SELECT comment_ID FROM ${stage.shop.prefix}comments WHERE comment_post_ID = ?`, [orderId])).length;
  await Promise.all([1, 2].map(() => stage.hub.unwantedCharges.recordCancelled(record!, { kind: 'dunning_stopped', by: 'Lea Ledger' }, settings)));
  t.is((await q(`SELECT comment_ID FROM ${stage.shop.prefix}comments WHERE comment_post_ID = ?`, [orderId])).length, notesBefore + 1);
  t.is((await paymentsOf(orderId)).find((p) => p.external_id === charge.external_id)?.status, 'CANCELED');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED' });
});
