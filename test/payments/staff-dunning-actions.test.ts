import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { request, type TestResponse } from '../support/http-client';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop } from '../support/test-shop';
import { createStaffUser, logIn, WP_SECRETS_ENV, type StaffSession, type StaffUser } from '../support/wordpress-fixtures';
import { ApiDescription } from '../support/api-description';
import { openApiDocument } from '../../src/entry-points/http/openapi/document';

// Staff's actions on a failed renewal from the order screen, through the staff routes as a browser calls them
// (the logged-in cookie and nonce): the failed renewal's story in the order's payments, Charge now (the dunning
// engine's own attempt, once per double click, within the caps), the payment link (WooCommerce's e-mail, handed
// over once) and Stop dunning (nothing left planned, the wallet's due charge cancelled). Real MariaDB and Redis,
// the loopback card gateway and wallet.

const HOUR = 3_600_000;
/** ISO 8601 with an offset (`Z` or `±hh:mm`), as every time of the routes carries it. */
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-staff-actions';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let api: RunningStaffApi;
let manager: StaffUser;
let session: StaffSession;
let customerSession: StaffSession;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const notesOf = async (id: number) => q(`SELECT comment_author, comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id]);
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT * FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const changesOf = async (objectId: number, op: string) => (await q(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = ? ORDER BY id`, [objectId, op]))
  .map((row) => JSON.parse(row.payload));
const cardCharges = () => card.requestsTo('POST', '/v1/charge');

/** The API's own description: each answer below is checked against the schema it documents. */
const described = new ApiDescription(openApiDocument('test'));
let checkAnswer: (res: TestResponse, method: string, path: string) => void = () => undefined;
const asManager = async (method: string, path: string, body?: unknown): Promise<TestResponse> => {
  const res = await request(api.url, method, path, { headers: session.headers, ...(body === undefined ? {} : { body }) });
  checkAnswer(res, method, path.replace(/\/orders\/\d+\//, '/orders/{orderId}/'));
  return res;
};
const story = async (orderId: number) => {
  const res = await asManager('GET', `/payment-hub/v1/orders/${orderId}/payments`);
  if (res.status !== 200) throw new Error(res.text);
  return res.json.dunning;
};
const events = (dunning: { timeline: { event: string }[] }) => dunning.timeline.map((entry) => entry.event);

function env() {
  return shop.config({
    ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV,
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
}

const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });

let serial = 0;
/**
 * A renewal of its own customer whose card charge just failed (a soft decline: an attempt is planned on the dunning plan).
 * `settle_blocked`, not `insufficient_funds`: a decline for lack of funds may instead get an attempt on payday
 * (DUNNING_PAYDAYS), and whether payday falls within the case's window depends on today's date, which these tests
 * do not pin (the payday attempt has its own tests: test/woocommerce/panels-dunning-timing.test.ts and the dunning ones).
 */
async function failedCardRenewal() {
  serial += 1;
  const customer = `cust-staff-${serial}`;
  const billing = { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: `mette${serial}@example.dk` };
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', billing, nextPaymentGmt: new Date() });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', billing, createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  const handle = `order-${orderId}`;
  card.setCharge(handle, { state: 'failed', amount: 14900, customer, error: 'settle_blocked', error_state: 'soft_declined' });
  card.setPaymentMethod(`ca-staff-${serial}`, { customer });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: handle })) !== 'PROCESSED') throw new Error('failure not processed');
  return { orderId, subscriptionId, handle, customer };
}

test.before(async () => {
  shop = await createTestShop('staff_dunning_actions', { hpos: false });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  manager = await createStaffUser(shop, { login: 'petra.panel', displayName: 'Petra Panel', roles: ['shop_manager'] });
  const customer = await createStaffUser(shop, { login: 'carl.customer', roles: ['customer'] });
  session = await logIn(shop, manager);
  customerSession = await logIn(shop, customer);
  hub = await openHub(env(), () => new Date());
  await hub.registrations.add({ registrationId: 'reg-staff', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1'], secret: WALLET_SECRET });
  api = await startStaffApi(env());
});

test.beforeEach((t) => {
  checkAnswer = (res, method, path) => {
    if (res.status === 404 || !/^\/payment-hub\/v1\/orders\/\{orderId\}\//.test(path)) return;
    // The staff routes are served here without server.ts's request ID (it adds X-Request-Id to every answer): the body is what is checked.
    described.checkResponse(t, method, path, { ...res, headers: { 'x-request-id': 'test', ...res.headers } });
  };
});

test.after.always(async () => {
  await api?.stop();
  await hub?.close().catch(() => undefined);
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('The story of a failed renewal: the first decline, the planned attempt, what happens next and what staff may do, every time with its offset', async (t) => {
  const { orderId } = await failedCardRenewal();
  const res = await asManager('GET', `/payment-hub/v1/orders/${orderId}/payments`);
  t.is(res.status, 200, res.text);
  t.deepEqual(Object.keys(res.json), ['order_id', 'payments', 'retries', 'webhooks', 'warnings', 'dunning']);
  const { dunning } = res.json;
  t.deepEqual(Object.keys(dunning), ['status', 'provider', 'amount', 'currency', 'failure', 'timeline', 'deadline', 'next', 'actions']);
  t.like(dunning, { status: 'open', provider: 'card_gateway', amount: 14900, currency: 'DKK', deadline: null });
  t.like(dunning.failure, { reason: 'settle_blocked', state: 'soft_declined' });
  t.deepEqual(dunning.timeline.map((entry: Record<string, unknown>) => ({ ...entry, at: undefined })), [
    { at: undefined, event: 'renewal_failed', reason: 'settle_blocked', state: 'soft_declined' },
    { at: undefined, event: 'attempt_planned', attempt: 1 },
  ]);
  const planned = res.json.retries[0];
  t.is(Date.parse(dunning.next.at), Date.parse(planned.scheduled_at), 'next is the planned attempt');
  t.like(dunning.next, { event: 'attempt', attempt: 1 });
  t.true(Date.parse(dunning.next.at) > Date.now() + 11 * HOUR, 'on the dunning plan, 12 h after the failure');
  t.deepEqual(dunning.actions, { charge_now: { allowed: true }, payment_link: { allowed: false, reason: 'companion_required' }, stop_dunning: { allowed: true } });

  // Every time of the answer carries its offset; the story's are in the shop's zone (Copenhagen).
  const times = [dunning.failure.at, dunning.next.at, ...dunning.timeline.map((entry: { at: string }) => entry.at),
    ...res.json.payments.flatMap((p: { created_at: string; updated_at: string }) => [p.created_at, p.updated_at]),
    ...res.json.retries.map((r: { scheduled_at: string }) => r.scheduled_at), ...res.json.webhooks.map((w: { created_at: string }) => w.created_at)];
  for (const time of times) t.regex(time, WITH_OFFSET);
  t.regex(dunning.failure.at, /\+0[12]:00$/, 'in the shop\'s zone');
  t.true(Math.abs(Date.parse(dunning.failure.at) - Date.parse(res.json.payments[0].updated_at)) < 5000, 'the failure is when the payment failed');

  const plain = await asManager('GET', `/payment-hub/v1/orders/${await shop.seeder.createOrder({ status: 'processing', total: '10.00' })}/payments`);
  t.is(plain.json.dunning, null, 'an order without a failed renewal has no story');
});

test.serial('Charge now recovers a renewal once: a double click charges the card once, the case is recovered by the staff member\'s charge, and the story and a note name the staff member', async (t) => {
  const { orderId, customer } = await failedCardRenewal();
  const before = cardCharges().length;
  card.queueChargeOutcome({ kind: 'settled' });
  const [first, second] = await Promise.all([0, 1].map(() => asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`, {})));
  const answers = [first, second].sort((a, b) => a.status - b.status);
  t.is(answers[0].status, 200, answers[0].text);
  t.is(answers[1].status, 409, answers[1].text);
  t.is(answers[1].json.code, 'action_not_allowed');
  t.true(['case_closed', 'charge_under_way', 'charge_just_made'].includes(answers[1].json.data.reason), answers[1].text);
  t.is(cardCharges().length, before + 1, 'charged once');
  t.like(cardCharges().at(-1)!.json, { customer_handle: customer, settle: true });

  const done = answers[0].json;
  t.deepEqual(done.result, { outcome: 'paid' });
  t.like(done.dunning, { status: 'recovered', next: null });
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'staff_charge' });
  t.deepEqual(done.dunning.actions, {
    charge_now: { allowed: false, reason: 'case_closed' }, payment_link: { allowed: false, reason: 'case_closed' }, stop_dunning: { allowed: false, reason: 'case_closed' },
  });
  const timeline = done.dunning.timeline as { event: string; attempt?: number; by?: string; means?: string }[];
  t.like(timeline.find((e) => e.event === 'staff_charged'), { attempt: 2, by: 'Petra Panel' });
  t.like(timeline.find((e) => e.event === 'attempt_succeeded'), { attempt: 2 });
  t.like(timeline.at(-1), { event: 'recovered', means: 'staff_charge' });
  t.like(timeline.find((e) => e.event === 'attempt_cancelled'), { attempt: 1 }, 'the planned attempt is dropped once the order is paid');
  t.deepEqual((await retriesOf(orderId)).map((r) => [r.attempt, r.plan, r.status]), [[1, 'soft', 'CANCELED'], [2, 'staff', 'SUCCEEDED']]);
  const notes = await notesOf(orderId);
  t.true(notes.some((n) => n.comment_author === 'Petra Panel' && n.comment_content === 'Petra Panel trak betalingen for fornyelsen nu (forsøg 2): betalingen gik igennem.'), JSON.stringify(notes));
  t.deepEqual(await story(orderId), done.dunning, 'the order\'s payments show the same story');
});

test.serial('Charge now refused by the day\'s cap: 409 daily_cap with when it is possible, and nothing charged', async (t) => {
  const { orderId, customer } = await failedCardRenewal();
  // Two more charges on the customer's cards within the hour (the shop's other renewals): three today with the failed one.
  for (const minutes of [20, 10]) {
    await hub.dunningCases.recordCharge(hub.dunningCases.pool, { methodKey: `card_gateway:customer:${customer}`, orderId: null, paymentId: null, at: new Date(Date.now() - minutes * 60_000) });
  }
  const firstCharge = new Date(Date.parse((await q(`SELECT MIN(attempted_at) AS at FROM ${shop.prefix}sidecar_charge_attempts WHERE method_key = ?`, [`card_gateway:customer:${customer}`]))[0].at.replace(' ', 'T') + 'Z'));
  const shown = (await story(orderId)).actions.charge_now;
  t.like(shown, { allowed: false, reason: 'daily_cap' });
  t.regex(shown.not_before, WITH_OFFSET);
  // The planned attempt (12 h after the failure) cannot be made before the cap allows: the story says when it can.
  const next = (await story(orderId)).next;
  t.like(next, { event: 'attempt', attempt: 1 });
  t.is(Date.parse(next.at), Date.parse(shown.not_before), 'the next attempt is when the caps allow it, not its plan\'s time');
  const planned = (await story(orderId)).timeline.find((entry: { event: string }) => entry.event === 'attempt_planned');
  t.is(Date.parse(planned.at), Date.parse(shown.not_before), 'and the timeline says the same');

  const before = cardCharges().length;
  const res = await asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`);
  t.is(res.status, 409, res.text);
  t.deepEqual(Object.keys(res.json), ['code', 'message', 'data']);
  t.like(res.json, { code: 'action_not_allowed', data: { status: 409, reason: 'daily_cap', not_before: shown.not_before } });
  t.is(Date.parse(res.json.data.not_before), Math.floor((firstCharge.getTime() + 24 * HOUR) / 1000) * 1000, 'when the oldest of the three is a day old');
  t.regex(res.json.message, /^The renewal cannot be charged now: .*today.* It is possible from \d{4}-\d{2}-\d{2} \d{2}:\d{2} \(UTC\+0[12]:00\)\.$/);
  t.is(cardCharges().length, before, 'nothing charged');
  t.deepEqual((await retriesOf(orderId)).map((r) => [r.plan, r.status]), [['soft', 'PENDING']], 'no attempt made or planned by it');
  t.false(events(await story(orderId)).includes('staff_charged'));
});

test.serial('Send payment link hands WooCommerce the "payment method needed" e-mail once, as the dunning engine does; a second click is refused', async (t) => {
  await announceCompanion(shop, true);
  t.teardown(() => announceCompanion(shop, false));
  const { orderId, subscriptionId } = await failedCardRenewal();
  const [first, second] = await Promise.all([0, 1].map(() => asManager('POST', `/payment-hub/v1/orders/${orderId}/payment-link`)));
  const answers = [first, second].sort((a, b) => a.status - b.status);
  t.is(answers[0].status, 200, answers[0].text);
  t.is(answers[1].status, 409, answers[1].text);
  t.like(answers[1].json.data, { reason: 'link_just_sent' });
  t.regex(answers[1].json.data.not_before, WITH_OFFSET);

  const sent = await changesOf(subscriptionId, 'customer_payment_method_needed');
  t.deepEqual(sent, [{ kind: 'failed_renewal', order_id: orderId, reason: null, deadline: null, card_expires: null, masked_card: null }], 'handed over once');
  const [change] = await q(`SELECT id, status, action_id FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'customer_payment_method_needed'`, [subscriptionId]);
  t.is(answers[0].json.result.change_id, Number(change.id));
  t.deepEqual(answers[0].json.result, { outcome: 'sent', change_id: Number(change.id) });
  const [action] = await q(`SELECT hook, args FROM ${shop.prefix}actionscheduler_actions WHERE action_id = ?`, [change.action_id]);
  t.is(action.hook, 'shop_sidecar_apply_change', 'with the Action Scheduler action that applies it');

  const dunning = answers[0].json.dunning;
  t.like(dunning.timeline.find((e: { event: string }) => e.event === 'staff_sent_payment_link'), { by: 'Petra Panel' });
  t.like(dunning.actions.payment_link, { allowed: false, reason: 'link_just_sent' });
  t.like(dunning, { status: 'open', deadline: null }, 'no deadline set by it');
  t.deepEqual((await retriesOf(orderId)).map((r) => r.status), ['PENDING'], 'the planned attempt stays');
  const notes = await notesOf(orderId);
  t.is(notes.filter((n) => n.comment_content === 'Petra Panel fik sendt kunden en e-mail med linket til at tilføje en ny betalingsmetode.' && n.comment_author === 'Petra Panel').length, 1);
});

test.serial('Stop dunning leaves no attempt planned, cancels the wallet charge the service made that is still due, and closes the case as lost by staff; the subscription is left as it is', async (t) => {
  const agreementId = 'agr-staff-stop';
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: 'chr-staff-stop' } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, 'chr-staff-stop', { status: 'FAILED', failureReason: 'user_action_required' });
  t.is(await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-staff-stop' }), 'PROCESSED');
  const [{ post_status: held }] = await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [subscriptionId]);
  t.is(held, 'wc-on-hold');

  // Charge now creates the service's own wallet charge, which the wallet takes on its due date.
  const charged = await asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`);
  t.is(charged.status, 200, charged.text);
  t.deepEqual(charged.json.result, { outcome: 'pending' });
  const [ours] = await q(`SELECT id, external_id, status FROM ${shop.prefix}sidecar_payments WHERE order_id = ? AND external_id <> 'chr-staff-stop'`, [orderId]);
  t.is(ours.status, null);
  t.is(wallet.charge(agreementId, ours.external_id)?.status, 'DUE');
  t.like(charged.json.dunning.actions.charge_now, { allowed: false }, 'nothing charged on top of it');

  // The order screen loaded again and again: the wallet is asked about the charge once, not at every load (its
  // "Rate limiting" guide allows 10 reads of a charge a minute, which the worker's own attempts need).
  const walletReads = () => wallet.requests.filter((r) => r.method === 'GET' && r.path.includes('/charges')).length;
  const readsBefore = walletReads();
  for (let i = 0; i < 5; i++) t.like((await story(orderId)).actions.charge_now, { allowed: false });
  t.true(walletReads() - readsBefore <= 2, `the wallet asked ${walletReads() - readsBefore} times for 5 views`);

  const stopped = await asManager('POST', `/payment-hub/v1/orders/${orderId}/stop-dunning`, {});
  t.is(stopped.status, 200, stopped.text);
  t.deepEqual(stopped.json.result, { outcome: 'stopped', attempts_cancelled: 1, charges_cancelled: 1, charges_not_cancelled_yet: 0 });
  t.is(wallet.charge(agreementId, ours.external_id)?.status, 'CANCELLED', 'cancelled at the wallet');
  t.is((await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE id = ?`, [ours.id]))[0].status, 'CANCELED');
  t.deepEqual((await retriesOf(orderId)).filter((r) => r.status === 'PENDING'), [], 'no attempt planned');
  t.like(await caseOf(orderId), { status: 'LOST' });

  const { dunning } = stopped.json;
  t.like(dunning, { status: 'lost', next: null, deadline: null });
  t.like(dunning.timeline.find((e: { event: string }) => e.event === 'lost'), { by: 'Petra Panel' });
  t.like(dunning.timeline.find((e: { event: string; attempt?: number }) => e.event === 'attempt_cancelled' && e.attempt === 1), { attempt: 1 }, 'the planned attempt cancelled');
  t.like(dunning.timeline.find((e: { event: string }) => e.event === 'staff_stopped_dunning'), { by: 'Petra Panel' });
  t.deepEqual(dunning.actions.stop_dunning, { allowed: false, reason: 'case_closed' });
  const again = await asManager('POST', `/payment-hub/v1/orders/${orderId}/stop-dunning`);
  t.is(again.status, 409);
  t.like(again.json.data, { reason: 'case_closed' });

  const [{ post_status: after }] = await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [subscriptionId]);
  t.is(after, 'wc-on-hold', 'the subscription is left as it is');
  t.deepEqual(await changesOf(subscriptionId, 'subscription_cancel_after_dunning'), []);
  const notes = (await notesOf(orderId)).map((n) => n.comment_content);
  t.true(notes.includes('Petra Panel stoppede rykkerforløbet for denne fornyelse: der gøres ikke flere betalingsforsøg, og abonnementet annulleres ikke på grund af den. Abonnementet forbliver, som det er.'));
  t.true(notes.includes(`Trækket ${ours.external_id} (MobilePay) blev annulleret, før det blev gennemført: Petra Panel stoppede rykkerforløbet for denne fornyelse.`), notes.join(' | '));
});

test.serial('With a companion that adds staff notes (version 4), the note is handed to WooCommerce in the staff member\'s name, not written beside it', async (t) => {
  const { orderId } = await failedCardRenewal();
  await announceCompanion(shop, true, 4);
  t.teardown(() => announceCompanion(shop, false));
  const stopped = await asManager('POST', `/payment-hub/v1/orders/${orderId}/stop-dunning`);
  t.is(stopped.status, 200, stopped.text);
  t.deepEqual(await changesOf(orderId, 'order_note'), [{
    note: 'Petra Panel stoppede rykkerforløbet for denne fornyelse: der gøres ikke flere betalingsforsøg, og abonnementet annulleres ikke på grund af den. Abonnementet forbliver, som det er.',
    user_id: manager.id,
  }], 'handed over once, as add_order_note($note, 0, true) by the staff member');
  t.deepEqual((await notesOf(orderId)).filter((n) => n.comment_author === 'Petra Panel'), [], 'WooCommerce adds it; the service does not write it too');
});

test('Without the capability it is 403, without a cookie 401; an unknown order is 404; an order with no failed renewal is 409 no_dunning_case', async (t) => {
  for (const action of ['charge-now', 'payment-link', 'stop-dunning']) {
    const forbidden = await request(api.url, 'POST', `/payment-hub/v1/orders/1/${action}`, { headers: customerSession.headers });
    t.is(forbidden.status, 403, action);
    t.is(forbidden.json.code, 'forbidden');
    const anonymous = await request(api.url, 'POST', `/payment-hub/v1/orders/1/${action}`, { headers: { 'x-forwarded-proto': 'https', 'x-wp-nonce': session.nonce } });
    t.is(anonymous.status, 401, action);
    for (const id of ['99999999', 'abc']) {
      const missing = await asManager('POST', `/payment-hub/v1/orders/${id}/${action}`);
      t.is(missing.status, 404, `${action} ${id}`);
      t.deepEqual(missing.json, { code: 'order_not_found', message: missing.json.message, data: { status: 404 } });
    }
  }
  const paidOrder = await shop.seeder.createOrder({ status: 'processing', total: '10.00' });
  for (const action of ['charge-now', 'payment-link', 'stop-dunning']) {
    const res = await asManager('POST', `/payment-hub/v1/orders/${paidOrder}/${action}`);
    t.is(res.status, 409, action);
    t.like(res.json, { code: 'action_not_allowed', data: { status: 409, reason: 'no_dunning_case' } });
  }
});
