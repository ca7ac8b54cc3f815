import test from 'ava';
import { paymentsStage } from '../support/payments-stage';
import { heldByWooCommerce } from '../support/failed-renewals';

// The wallet's refusal to create a charge above the agreement's maximum (problem `charge-amount-too-high`), through the
// worker (as main.ts starts it, ticked under a pinned clock) and the Payments panel's route, against the strict fake
// wallet. No charge exists, so the wallet tells the customer nothing and retries nothing: the customer is e-mailed
// once through WooCommerce, staff see the reason, and the same agreement is not charged that amount again until
// something changed; the case keeps its deadline.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// The 10th: far from payday, so no payday attempt comes into it (test/payments/dunning-payday.test.ts).
const stage = paymentsStage('wallet_amount', {
  start: new Date('2026-12-10T08:00:00Z'), manager: { login: 'ane.amount', displayName: 'Ane Amount' },
  walletEvents: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1'],
});
const { tickAfter, q, walletWebhook, asManager } = stage;
// The test shop is Danish (WPLANG da_DK), so the service's notes are in Danish.
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${stage.shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status, scheduled_at FROM ${stage.shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT * FROM ${stage.shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const emailsOf = async (subscriptionId: number) => (await q(`SELECT payload FROM ${stage.shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'customer_payment_method_needed' ORDER BY id`, [subscriptionId]))
  .map((row) => JSON.parse(row.payload));
const createsOn = (agreementId: string) => stage.wallet.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/agreements/${agreementId}/charges`));

let serial = 0;
/**
 * A MobilePay subscription whose price went up to 149.00 DKK after the customer accepted a variable agreement with a
 * maximum of 99.00: its renewal's own charge failed (the shop's plugin made it), and the service's attempt is planned
 * 12 h later on the same agreement, where the wallet will refuse to create it.
 */
async function renewalAboveTheMaximum() {
  serial += 1;
  const agreementId = `agr-amount-${serial}`;
  const chargeId = `chr-amount-${serial}`;
  const subscriptionId = await stage.shop.seeder.createSubscription({ status: 'active', total: '149.00', meta: { _agreement_id: agreementId } });
  const orderId = await stage.shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
  stage.wallet.setAgreement(agreementId, { pricing: { type: 'VARIABLE', currency: 'DKK', suggestedMaxAmount: 9900, maxAmount: 9900 } });
  stage.wallet.setCharge(agreementId, chargeId, { status: 'FAILED', amount: 9900 });
  if ((await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId })) !== 'PROCESSED') throw new Error('failure not processed');
  await heldByWooCommerce(stage.shop, orderId, subscriptionId);
  return { orderId, subscriptionId, agreementId };
}

test.serial('charge-amount-too-high at creation: one e-mail to the customer, the reason on the panel, no second try before something changed', async (t) => {
  const { orderId, subscriptionId, agreementId } = await renewalAboveTheMaximum();
  t.like((await retriesOf(orderId))[0], { plan: 'soft', status: 'PENDING' });
  t.deepEqual(await emailsOf(subscriptionId), [], 'nobody is asked yet: the first failure was told in the app');

  // The planned attempt: the wallet refuses to create the charge (14900 above the agreement's 9900).
  await tickAfter(12 * HOUR);
  const refusedAt = stage.now;
  t.is(createsOn(agreementId).length, 1);
  t.like(createsOn(agreementId)[0].json, { amount: 14900 });
  t.is(stage.wallet.charge(agreementId, String((createsOn(agreementId)[0].json as { orderId: string }).orderId)), undefined, 'no charge exists at the wallet');

  // The customer is e-mailed at once through WooCommerce, saying what to change; the case has its deadline.
  const emails = await emailsOf(subscriptionId);
  t.is(emails.length, 1);
  const deadline = new Date(refusedAt.getTime() + 14 * DAY);
  t.like(emails[0], { kind: 'failed_renewal', order_id: orderId, reason: 'wallet_amount_too_high', deadline: deadline.toISOString() });
  const found = await caseOf(orderId);
  t.like(found, { status: 'OPEN', policy: 'ask_customer' });
  t.is(found.deadline_at.slice(0, 19), deadline.toISOString().slice(0, 19).replace('T', ' '));
  t.deepEqual((await retriesOf(orderId)).filter((r) => r.status === 'PENDING'), [], 'no attempt planned');
  const notes = await notesOf(orderId);
  t.true(notes.some((n) => n.startsWith('Betalingen mislykkedes: beløbet er højere end det maksimum, kunden har sat for aftalen i MobilePay (charge_amount_too_high')
    && n.includes('MobilePay afviste at oprette trækket, så kunden har ikke fået besked i appen. Der trækkes ikke dette beløb igen på samme aftale, før')
    && n.includes('Kunden får en e-mail')), notes.join(' | '));

  // Staff see the reason on the Payments panel, and that the case waits for its deadline.
  const view = await asManager('GET', `/payment-hub/v1/orders/${orderId}/payments`);
  t.is(view.status, 200, view.text);
  const story = view.json.dunning;
  t.like(story.timeline.find((entry: { event: string }) => entry.event === 'attempt_failed'), { attempt: 1, reason: 'charge_amount_too_high', state: 'creation_refused' });
  t.truthy(story.timeline.find((entry: { event: string }) => entry.event === 'customer_emailed'));
  t.is(story.next.event, 'deadline');
  t.is(Date.parse(story.next.at), deadline.getTime() - (deadline.getTime() % 1000));

  // Nothing changed: days of worker passes make no second request, and no second e-mail.
  for (let i = 0; i < 6; i += 1) await tickAfter(12 * HOUR);
  await tickAfter(10 * MINUTE);
  t.is(createsOn(agreementId).length, 1, 'no second try on the same agreement with the same amount');
  t.is((await emailsOf(subscriptionId)).length, 1, 'one e-mail');

  // The customer raises the maximum in the app: the same agreement is charged once more, and the wallet creates it.
  stage.wallet.setMaxAmount(agreementId, 20000);
  await tickAfter(6 * MINUTE);
  await tickAfter(5000);
  t.is(createsOn(agreementId).length, 2, 'charged again once the maximum changed');
  const second = createsOn(agreementId)[1].json as { orderId: string; amount: number };
  t.is(second.amount, 14900);
  t.like(stage.wallet.charge(agreementId, second.orderId), { status: 'DUE', amount: 14900 }, 'made, and shown to the customer in the app');
  t.true((await notesOf(orderId)).some((n) => n.startsWith('MobilePay-aftalens maksimum eller pris er ændret, siden MobilePay afviste beløbet: fornyelsen trækkes igen på aftalen')));
  const after = await caseOf(orderId);
  t.is(after.deadline_at, found.deadline_at, 'the case keeps its deadline');
  for (let i = 0; i < 3; i += 1) await tickAfter(10 * MINUTE);
  t.is(createsOn(agreementId).length, 2, 'once');
  t.deepEqual((await retriesOf(orderId)).filter((r) => r.status === 'PENDING'), [], 'nothing more planned: the wallet now holds the charge and retries it itself');
  t.is((await emailsOf(subscriptionId)).length, 1);
});
