import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { setOption } from '../../src/demo/woocommerce-schema';
import { FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';

// Attempts timed to payday, through the worker as main.ts starts it (its dunning loop driven by tick() under a
// pinned clock) against the loopback card gateway: a renewal declined for lack of funds on the 20th gets an attempt
// at 00:15 Copenhagen time on the month's last bank day, within the caps, and the order note and the story say why;
// a payday morning sooner than the plan's next wait comes instead of it; a hard decline gets none.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
// Friday 20 November 2026, 09:00 in Copenhagen. The month's last bank day is Monday 30 November.
let now = new Date('2026-11-20T08:00:00Z');
const clock = () => now;
const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
/** 00:15 on Monday 30 November 2026 in Copenhagen (CET, UTC+1). */
const PAYDAY_MORNING = new Date('2026-11-29T23:15:00Z');

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status, scheduled_at, result FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
const cardCharges = () => card.requestsTo('POST', '/v1/charge');

function env(extra: Record<string, string> = {}) {
  return shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
    ...extra,
  });
}

const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);

let serial = 0;
async function failedCardRenewal(error: string, errorState: 'soft_declined' | 'hard_declined', customer = `cust-payday-${serial + 1}`) {
  serial += 1;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date('2026-10-20T08:00:00Z'), nextPaymentGmt: now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error, error_state: errorState });
  card.setPaymentMethod(`ca-payday-${serial}`, { customer });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` })) !== 'PROCESSED') throw new Error('failure not processed');
  return { orderId, customer };
}

/** The worker's dunning pass at `at`. */
async function tickAt(at: Date) {
  now = at;
  await worker.tick();
}

test.before(async () => {
  shop = await createTestShop('dunning_payday', { hpos: false });
  // The shop's zone, as WordPress keeps it (Settings → General → Timezone).
  await setOption(shop.db, shop.prefix, 'timezone_string', 'Europe/Copenhagen');
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  // The default plan (12h,12h,1d,2d,3d) and paydays (last-bank-day).
  hub = await openHub(env(), clock);
  worker = await startPacedWorker(env(), clock);
});

test.after.always(async () => {
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('Declined for lack of funds on the 20th: after the plan\'s attempts, one at 00:15 on the last bank day, within the deadline', async (t) => {
  const startedAt = now;
  const { orderId } = await failedCardRenewal('insufficient_funds', 'soft_declined');
  // The plan's waits (12h, 12h, 1d, 2d, 3d) each come before payday: the plan's attempts, each declined for lack of funds.
  let at = startedAt.getTime();
  for (const wait of [12 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR, 72 * HOUR]) {
    at += wait;
    const waiting = (await retriesOf(orderId)).filter((r) => r.status === 'PENDING');
    t.deepEqual(waiting.map((r) => [r.plan, r.scheduled_at.slice(0, 19)]), [['soft', gmt(new Date(at))]], 'the plan\'s attempt, and only it');
    card.queueChargeOutcome({ kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' });
    await tickAt(new Date(at));
  }
  // The plan is used up on the 27th; Monday 30 November is the month's last bank day, within the customer's 14 days.
  const retries = await retriesOf(orderId);
  t.deepEqual(retries.map((r) => [r.plan, r.status]), [...Array(5).fill(['soft', 'FAILED']), ['payday', 'PENDING']], 'one attempt waiting, no more');
  t.is(retries[5].scheduled_at.slice(0, 19), gmt(PAYDAY_MORNING), 'Monday 30 November, 00:15 in Copenhagen');
  // The test shop is Danish (WPLANG da_DK): the note says why, in Danish, and that the plan's attempts are used.
  t.true((await notesOf(orderId)).some((n) => /Vi prøver igen .*, tidligt på den første bankdag fra lønningsdagen, fordi afvisningen skyldtes manglende dækning\. Alle 5 planlagte forsøg er brugt; dette kommer ud over dem\./.test(n)));
  const found = (await q(`SELECT deadline_at FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
  t.true(Date.parse(`${String(found.deadline_at).replace(' ', 'T')}Z`) > PAYDAY_MORNING.getTime(), 'before the deadline');

  // The story tells why.
  const shown = await hub.showOrderPayments.execute(orderId);
  const story = shown.kind === 'found' ? shown.view.dunning : null;
  t.like(story?.timeline.at(-1), { event: 'attempt_planned', attempt: 6, why: 'payday' });
  t.like(story?.next, { event: 'attempt', attempt: 6, at: '2026-11-30T00:15:00+01:00' });

  // Not before its time; then made at 00:15, and the case is recovered.
  const before = cardCharges().length;
  await tickAt(new Date(PAYDAY_MORNING.getTime() - MINUTE));
  t.is(cardCharges().length, before);
  card.queueChargeOutcome({ kind: 'settled' });
  await tickAt(PAYDAY_MORNING);
  t.is(cardCharges().length, before + 1);
  t.like((await retriesOf(orderId))[5], { plan: 'payday', status: 'SUCCEEDED' });
  t.like((await q(`SELECT status, recovered_by FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0], { status: 'RECOVERED', recovered_by: 'service_retry' });
});

test.serial('A hard decline gets no payday attempt', async (t) => {
  now = new Date('2026-12-20T08:00:00Z');
  const { orderId } = await failedCardRenewal('credit_card_expired', 'hard_declined');
  t.deepEqual(await retriesOf(orderId), []);
});

test.serial('Within the caps: a card at its three charges a day has its payday attempt wait until the first is a day old', async (t) => {
  // Tuesday 29 December 2026, 23:00 in Copenhagen: the month's last bank day is Wednesday 30 December (31 December is
  // a bank holiday), so the payday morning (00:15 on the 30th, 23:15 UTC) comes before DUNNING_PLAN's first wait (12 h).
  const customer = 'cust-payday-capped';
  now = new Date('2026-12-29T22:00:00Z');
  const first = await failedCardRenewal('insufficient_funds', 'soft_declined', customer);
  t.deepEqual((await retriesOf(first.orderId)).map((r) => [r.plan, r.status, r.scheduled_at.slice(0, 19)]), [['payday', 'PENDING', '2026-12-29 23:15:00']]);
  // Two more of the customer's renewals fail on the same card: three charges within the day.
  for (const minutes of [10, 20]) {
    now = new Date(Date.parse('2026-12-29T22:00:00Z') + minutes * MINUTE);
    await failedCardRenewal('insufficient_funds', 'soft_declined', customer);
  }
  const before = cardCharges().length;
  await tickAt(new Date('2026-12-29T23:15:00Z'));
  t.is(cardCharges().length, before, 'no fourth charge within the day, payday or not');
  const postponed = (await retriesOf(first.orderId))[0];
  t.like(postponed, { plan: 'payday', status: 'PENDING' });
  t.is(postponed.scheduled_at.slice(0, 19), '2026-12-30 22:00:00', 'when the first charge is a day old');
  t.regex(postponed.result, /charge caps/);
});
