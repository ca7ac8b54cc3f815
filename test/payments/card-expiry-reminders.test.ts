import test from 'ava';
import sinon from 'sinon';
import type { DataSource } from 'typeorm';
import { createShopDataSource } from '../../src/data-access/data-source';
import { CardExpiryReminderRepository } from '../../src/data-access/card-expiry-reminder-repository';
import { ShopSettingsRepository } from '../../src/data-access/shop-settings-repository';
import { setOption } from '../../src/demo/woocommerce-schema';
import { CardExpiryReminders, cardValidUntil } from '../../src/dunning/card-expiry-reminders.use-case';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { Logger } from '../../src/logger';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { eventually, openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createTestShop, type TestShop } from '../support/test-shop';

// Reminders before the card fails, through the use case against a real MariaDB and the loopback card gateway,
// with a fake clock (sinon's, kept off the process's own Date: the database pool and the settings read real
// time); last, through the real `npm run worker`.

const INTERVAL_SECONDS = 60;
const HUB_ENV = { CARD_EXPIRY_REMINDER_INTERVAL_SECONDS: String(INTERVAL_SECONDS), CARD_EXPIRY_REMINDER_MAX_PER_SECOND: '100' };

let shop: TestShop;
let card: FakeCardGateway;
let hub: PaymentHub & { close(): Promise<void> };
let dataSource: DataSource;
// Installed on an object of its own (`global`, which sinon passes to its fake timers but does not declare in its types).
const fakeTime = sinon.useFakeTimers({ now: new Date('2027-03-10T08:00:00Z'), toFake: ['Date'], global: { Date } } as Parameters<typeof sinon.useFakeTimers>[0]);
const clock = () => new Date(fakeTime.now);
const setTime = (iso: string) => fakeTime.setSystemTime(new Date(iso));
const later = (seconds: number) => fakeTime.tick(seconds * 1000);

const q = async (sql: string, values: unknown[] = [], db = shop.db) => (await db.query(sql, values))[0] as any[];
/** The companion as it states itself; version 3 sends the payment method e-mail. */
const companion = (seen = Math.floor(Date.now() / 1000), db = shop, version = 3) =>
  setOption(db.db, db.prefix, 'shop_sidecar_companion', JSON.stringify({ version, seen }), 'no');

function configOf(target: TestShop, env: Record<string, string> = {}) {
  return target.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret, ...HUB_ENV, ...env });
}

/**
 * An active subscription paid by the card gateway (`reepay_checkout`) whose card is set up only as the real flow
 * does it: the card at the gateway, the gateway's `customer_payment_method_added` webhook handled by the service,
 * and the subscription's `_reepay_token` as the gateway's WooCommerce plugin writes it. No row of the service's
 * own is written here. The card is left out of the gateway (and so no webhook comes) when `expDate` is null.
 */
async function subscriptionWithCard(spec: {
  nextPayment: string | null; expDate: string | null; pm: string; end?: string; status?: string; state?: string; target?: TestShop; paymentMethod?: string;
}): Promise<number> {
  const target = spec.target ?? shop;
  const subscriptionId = await target.seeder.createSubscription({
    status: spec.status ?? 'active', total: '149.00', billingPeriod: 'month', paymentMethod: spec.paymentMethod ?? 'reepay_checkout', paymentMethodTitle: 'Card',
    startGmt: new Date('2026-10-10T08:00:00Z'), nextPaymentGmt: spec.nextPayment ? new Date(spec.nextPayment) : null, endGmt: spec.end ? new Date(spec.end) : null,
    meta: { _reepay_token: spec.pm },
  });
  if (spec.expDate !== null) await addCard(subscriptionId, spec.pm, { state: spec.state ?? 'active', card: { exp_date: spec.expDate, masked_card: '457199XXXXXX1234', card_type: 'visa' } }, target);
  return subscriptionId;
}

/** A card the customer saves at the gateway: the gateway holds it and tells the service by its webhook, as it does. */
async function addCard(subscriptionId: number, pm: string, method: Record<string, unknown>, target = shop): Promise<void> {
  card.setPaymentMethod(pm, { customer: `cust-${subscriptionId}`, ...method });
  const handler = target === shop ? hub : targetHubs.get(target);
  if (!handler) throw new Error('no hub for that shop');
  // The webhook's own reads of the card are the handler's, not the pass's: left out of what the tests count.
  const before = card.requests.length;
  await processCardGatewayEvent(handler, { event_type: 'customer_payment_method_added', customer: `cust-${subscriptionId}`, payment_method: pm }, card.webhookSecret);
  card.requests.splice(before);
}

/** The gateway's WooCommerce plugin switches the subscription to another card (its `_reepay_token`). */
async function switchCard(subscriptionId: number, pm: string, target = shop): Promise<void> {
  await target.db.query(`UPDATE ${target.prefix}postmeta SET meta_value = ? WHERE post_id = ? AND meta_key = '_reepay_token'`, [pm, subscriptionId]);
}

/** The hubs of the other shops (their webhooks handled there). */
const targetHubs = new Map<TestShop, PaymentHub>();

const changesOf = (subscriptionId: number, target = shop) =>
  q(`SELECT id, op, payload, status, action_id FROM ${target.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [subscriptionId], target.db);
const remindersOf = (subscriptionId: number, target = shop) =>
  q(`SELECT payment_method, exp_date, sent_at FROM ${target.prefix}sidecar_card_expiry_reminders WHERE subscription_id = ?`, [subscriptionId], target.db);
const methodReads = (pm?: string) => card.requestsTo('GET', '/v1/payment_method/').filter((request) => pm === undefined || request.path === `/v1/payment_method/${pm}`);
const expected = (expires: string) => ({ kind: 'card_expiring', order_id: null, reason: 'card_expired', deadline: null, card_expires: expires, masked_card: '457199XXXXXX1234' });

/** Each test starts from no cards, no reminders, no hand-overs and no pass. */
async function reset(target = shop): Promise<void> {
  // The subscriptions of earlier tests name no card any more: each test's pass sees its own.
  await target.db.query(`DELETE FROM ${target.prefix}postmeta WHERE meta_key = '_reepay_token'`);
  for (const table of ['sidecar_agreements', 'sidecar_card_expiry_reminders', 'sidecar_card_expiry_reminder_pass', 'sidecar_woocommerce_changes']) {
    await target.db.query(`DELETE FROM ${target.prefix}${table}`);
  }
  card.requests.length = 0;
}

const pass = () => hub.cardExpiryReminders.execute();

/** The use case with parts of its own: another gateway client, a logger that keeps its lines. */
function remindersWith(deps: { cardGateway?: PaymentHub['cardGateway']; changes?: PaymentHub['changes']; log?: Logger } = {}) {
  return new CardExpiryReminders({
    reminders: new CardExpiryReminderRepository(dataSource), orderWrites: hub.orderWrites, changes: deps.changes ?? hub.changes,
    settings: new ShopSettingsRepository(dataSource), cardGateway: deps.cardGateway ?? hub.cardGateway, cardGatewayConfigured: true,
    config: { days: 30, intervalSeconds: INTERVAL_SECONDS, maxPerSecond: 100 }, log: deps.log ?? { info() {}, warn() {}, error() {} }, clock,
  });
}

test.before(async () => {
  shop = await createTestShop('card_expiry_reminders', { hpos: false });
  card = new FakeCardGateway();
  await card.start();
  await companion();
  hub = await openHub(configOf(shop), clock);
  dataSource = createShopDataSource(configOf(shop).db, 2);
  await dataSource.initialize();
});

test.after.always(async () => {
  fakeTime.restore();
  await hub?.close();
  await dataSource?.destroy();
  await card?.stop();
  await shop?.drop();
});

test.beforeEach(() => reset());

test('A card is valid through the end of the month its exp_date names; anything but MM-YY is no date', (t) => {
  t.is(cardValidUntil('12-26')?.toISOString(), '2027-01-01T00:00:00.000Z');
  t.is(cardValidUntil('04-27')?.toISOString(), '2027-05-01T00:00:00.000Z');
  for (const malformed of ['13-27', '00-27', '4-27', '04/27', '2027-04', '', null, undefined, 427]) t.is(cardValidUntil(malformed), null, String(malformed));
});

test.serial('When the card expires before the next renewal and its time has come, Then WooCommerce is handed one e-mail, recorded with it; a second pass sends nothing', async (t) => {
  setTime('2027-04-02T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_once' });

  t.like(await pass(), { pass: 'finished', subscriptions: 1, asked: 1, sent: 1 });
  const [change, ...more] = await changesOf(subscriptionId);
  t.deepEqual(more, []);
  t.like(change, { op: 'customer_payment_method_needed', status: 'pending' });
  t.deepEqual(JSON.parse(change.payload), expected('04-27'));
  const [action] = await q(`SELECT hook, status, args FROM ${shop.prefix}actionscheduler_actions WHERE action_id = ?`, [change.action_id]);
  t.deepEqual(action, { hook: 'shop_sidecar_apply_change', status: 'pending', args: JSON.stringify([Number(change.id)]) });
  t.deepEqual(await remindersOf(subscriptionId), [{ payment_method: 'ca_once', exp_date: '04-27', sent_at: '2027-04-02 08:00:00.000' }]);

  t.like(await pass(), { pass: 'not_due', asked: 0 }, 'a pass starts at most once per interval');
  later(INTERVAL_SECONDS);
  t.like(await pass(), { pass: 'finished', subscriptions: 1, asked: 0, sent: 0, notSent: { already_sent: 1 } }, 'a card reminded of costs no gateway call');
  t.is((await changesOf(subscriptionId)).length, 1);
  t.is(methodReads().length, 1);
});

test.serial('When the gateway plugin writes `_reepay_token` on an order too, Then only the subscription is walked and reminded', async (t) => {
  setTime('2027-04-02T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_on_order_too' });
  // The renewal order of the subscription, carrying the same card as the gateway plugin records it on orders.
  await shop.seeder.createOrder({ status: 'completed', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _reepay_token: 'ca_on_order_too' } });
  t.like(await pass(), { pass: 'finished', subscriptions: 1, asked: 1, sent: 1 });
  t.is((await changesOf(subscriptionId)).length, 1);
});

test.serial('When the reminder time has not come, Then nothing is sent or recorded; it goes the moment it comes', async (t) => {
  // 30 days before the end of April 2027 is 2027-04-01 00:00 UTC.
  setTime('2027-03-31T23:59:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_soon' });
  t.like(await pass(), { pass: 'finished', asked: 1, sent: 0, notSent: { not_yet: 1 } });
  t.deepEqual(await changesOf(subscriptionId), []);
  t.deepEqual(await remindersOf(subscriptionId), []);

  setTime('2027-04-01T00:00:00Z');
  t.like(await pass(), { pass: 'finished', sent: 1 });
  t.deepEqual(JSON.parse((await changesOf(subscriptionId))[0].payload), expected('04-27'));
});

test.serial('When the subscription is cancelled, expired or pending cancellation, Then no reminder and no gateway call', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const ids = [];
  for (const status of ['cancelled', 'expired', 'pending-cancel', 'on-hold']) {
    ids.push(await subscriptionWithCard({ status, nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: `ca_${status}` }));
  }
  t.like(await pass(), { pass: 'finished', subscriptions: 4, asked: 0, sent: 0, notSent: { not_active: 4 } });
  for (const id of ids) t.deepEqual(await changesOf(id), []);
});

test.serial('When the subscription ends before its next payment, Then no reminder; one that renews after the expiry gets it', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const atNextPayment = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', end: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_end_at_next' });
  const beforeExpiry = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', end: '2027-04-20T08:00:00Z', expDate: '04-27', pm: 'ca_end_before' });
  const renews = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', end: '2027-08-10T08:00:00Z', expDate: '04-27', pm: 'ca_end_later' });
  const manual = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_wallet', paymentMethod: 'vipps_mobilepay_recurring' });
  t.like(await pass(), { pass: 'finished', subscriptions: 4, asked: 1, sent: 1, notSent: { ends_first: 2, not_card_gateway: 1 } });
  t.deepEqual(await changesOf(atNextPayment), []);
  t.deepEqual(await changesOf(beforeExpiry), []);
  t.deepEqual(await changesOf(manual), []);
  t.is((await changesOf(renews)).length, 1);
});

test.serial('When the card was replaced (the subscription now names another card, or the card is not active at the gateway), Then no reminder', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  // The agreement now names a new card, which outlives the renewal: the old card is never asked about.
  const changedMethod = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_old' });
  await addCard(changedMethod, 'ca_new', { card: { exp_date: '12-29', masked_card: '457199XXXXXX9999' } });
  await switchCard(changedMethod, 'ca_new');
  // A newer active agreement for the subscription: it is the current card.
  const newerAgreement = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_older' });
  await addCard(newerAgreement, 'ca_newer', { card: { exp_date: '11-29', masked_card: '457199XXXXXX8888' } });
  await switchCard(newerAgreement, 'ca_newer');
  // Replaced at the gateway without the webhook having told the service yet.
  const inactivated = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_inactivated', state: 'inactivated' });
  const deleted = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_deleted', state: 'deleted' });

  t.like(await pass(), { pass: 'finished', subscriptions: 4, asked: 4, sent: 0, notSent: { card_outlives_renewal: 2, card_not_active: 2 } });
  t.deepEqual(methodReads('ca_old'), []);
  t.deepEqual(methodReads('ca_older'), []);
  for (const id of [changedMethod, newerAgreement, inactivated, deleted]) {
    t.deepEqual(await changesOf(id), []);
    t.deepEqual(await remindersOf(id), []);
  }
});

test.serial('When the card is replaced while the gateway is asked, Then the transaction sees it and nothing is sent or recorded', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_race' });
  // The customer's new card arrives (its webhook handled) between the gateway's answer and the reminder.
  const racing = {
    getPaymentMethod: async (id: string) => {
      const answer = await hub.cardGateway.getPaymentMethod(id);
      await addCard(subscriptionId, 'ca_race_new', { card: { exp_date: '12-29', masked_card: '457199XXXXXX7777' } });
      await switchCard(subscriptionId, 'ca_race_new');
      return answer;
    },
  } as unknown as PaymentHub['cardGateway'];
  t.like(await remindersWith({ cardGateway: racing }).execute(), { pass: 'finished', asked: 1, sent: 0, notSent: { replaced: 1 } });
  t.deepEqual(await changesOf(subscriptionId), []);
  t.deepEqual(await remindersOf(subscriptionId), []);
});

test.serial('When the payment method is no card (MobilePay Subscriptions, or no card at the gateway), Then no reminder and no question about an expiry', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const mobilePay = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: null, pm: 'ms_0123' });
  const noCard = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: null, pm: 'ca_sepa_like' });
  card.setPaymentMethod('ca_sepa_like', { customer: 'c', payment_type: 'sepa' });
  t.like(await pass(), { pass: 'finished', asked: 1, sent: 0, notSent: { not_a_card: 2 }, notChecked: {} });
  t.deepEqual(methodReads('ms_0123'), []);
  for (const id of [mobilePay, noCard]) t.deepEqual(await changesOf(id), []);
});

test.serial('When storing one reminder fails, Then nothing of it is kept, the others go, and the next pass sends it', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const failing = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_fails_once' });
  const fine = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_fine' });
  let failed = false;
  const changes = {
    enqueue: (...args: Parameters<PaymentHub['changes']['enqueue']>) => {
      if (args[1].objectId === failing && !failed) {
        failed = true;
        return Promise.reject(new Error('the hand-over row could not be written'));
      }
      return hub.changes.enqueue(...args);
    },
  } as unknown as PaymentHub['changes'];
  const reminders = remindersWith({ changes });
  t.like(await reminders.execute(), { pass: 'finished', asked: 2, sent: 1, notChecked: { error: 1 } });
  t.deepEqual(await remindersOf(failing), [], 'rolled back with its hand-over');
  t.deepEqual(await changesOf(failing), []);
  t.is((await changesOf(fine)).length, 1);
  later(INTERVAL_SECONDS);
  t.like(await reminders.execute(), { pass: 'finished', sent: 1, notSent: { already_sent: 1 } });
  t.is((await changesOf(failing)).length, 1);
});

test.serial('When the card outlives the next renewal, Then no reminder, even past 30 days before its expiry', async (t) => {
  setTime('2027-06-15T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-06-20T08:00:00Z', expDate: '06-27', pm: 'ca_outlives' });
  t.like(await pass(), { pass: 'finished', asked: 1, sent: 0, notSent: { card_outlives_renewal: 1 } });
  t.deepEqual(await changesOf(subscriptionId), []);
  t.deepEqual(await remindersOf(subscriptionId), []);
});

test.serial('When the gateway cannot be reached, Then nothing is recorded and the next pass sends the reminder', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_down' });
  card.failNextReads(500, 1, 0, '/v1/payment_method/');
  t.like(await pass(), { pass: 'finished', asked: 1, sent: 0, notChecked: { unreachable: 1 } });
  t.deepEqual(await changesOf(subscriptionId), []);
  t.deepEqual(await remindersOf(subscriptionId), []);
  t.like(await pass(), { pass: 'not_due' });

  later(INTERVAL_SECONDS);
  t.like(await pass(), { pass: 'finished', asked: 1, sent: 1 });
  t.deepEqual(JSON.parse((await changesOf(subscriptionId))[0].payload), expected('04-27'));
});

test.serial('When the gateway does not know the card or gives a malformed exp_date, Then nothing is recorded; once it answers properly, the next pass sends', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const unknown = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: null, pm: 'ca_unknown' });
  const malformed = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '2027-04', pm: 'ca_malformed' });
  t.like(await pass(), { pass: 'finished', asked: 2, sent: 0, notChecked: { not_found: 1, malformed_expiry: 1 } });
  for (const id of [unknown, malformed]) {
    t.deepEqual(await changesOf(id), []);
    t.deepEqual(await remindersOf(id), []);
  }
  card.setPaymentMethod('ca_unknown', { customer: 'c', card: { exp_date: '04-27', masked_card: '457199XXXXXX1234' } });
  card.setPaymentMethod('ca_malformed', { customer: 'c', card: { exp_date: '04-27', masked_card: '457199XXXXXX1234' } });
  later(INTERVAL_SECONDS);
  t.like(await pass(), { pass: 'finished', sent: 2 });
});

test.serial('When the gateway stays away, Then the pass stops after three unanswered reads and a later run goes on from where it stood', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const ids = [];
  for (let i = 0; i < 4; i += 1) ids.push(await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: `ca_away_${i}` }));
  card.failNextReads(503, 3, 0, '/v1/payment_method/');
  t.like(await pass(), { pass: 'paused', asked: 3, sent: 0, notChecked: { unreachable: 3 } });
  for (const id of ids) t.deepEqual(await remindersOf(id), []);
  const [state] = await q(`SELECT started_at, finished_at, holder FROM ${shop.prefix}sidecar_card_expiry_reminder_pass`);
  t.like(state, { started_at: '2027-04-10 08:00:00.000', finished_at: null, holder: null }, 'the pass is under way and free for the next run');

  t.like(await pass(), { pass: 'finished', asked: 4, sent: 4 }, 'the same pass, resumed');
  for (const id of ids) t.is((await changesOf(id)).length, 1);
});

test.serial('When another worker holds the pass, Then this one leaves it alone until its hold runs out', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_held' });
  await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_card_expiry_reminder_pass (id, started_at, finished_at, cursor_id, holder, held_until, updated_at)
    VALUES (1, '2027-04-10 07:59:00.000', NULL, 0, 'another-worker', '2027-04-10 08:05:00.000', '2027-04-10 07:59:00.000')`);
  t.like(await pass(), { pass: 'held_elsewhere', asked: 0 });
  t.deepEqual(await changesOf(subscriptionId), []);
  setTime('2027-04-10T08:06:00Z');
  t.like(await pass(), { pass: 'finished', sent: 1 }, 'a hold that ran out is taken over');
});

for (const [what, stated] of [['no companion plugin (not heard from for 10 days)', { seenDaysAgo: 10, version: 3 }], ['a companion too old for the e-mail (version 2)', { seenDaysAgo: 0, version: 2 }]] as const) {
  test.serial(`When the shop has ${what}, Then nothing is sent or recorded and the pass says so once`, async (t) => {
    setTime('2027-04-10T08:00:00Z');
    const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: `ca_companion_${stated.version}` });
    await companion(Math.floor(Date.now() / 1000) - stated.seenDaysAgo * 86400, shop, stated.version);
    try {
      const lines: { level: string; event: string }[] = [];
      const keep = (level: string) => (event: string) => { lines.push({ level, event }); };
      const reminders = remindersWith({ log: { info: keep('info'), warn: keep('warn'), error: keep('error') } });
      t.like(await reminders.execute(), { pass: 'finished', asked: 0, sent: 0 });
      t.like(await reminders.execute(), { pass: 'not_due' });
      t.deepEqual(lines.filter((line) => line.level !== 'info'), [{ level: 'warn', event: 'card_expiry_reminders_need_companion' }]);
      t.deepEqual(await changesOf(subscriptionId), []);
      t.deepEqual(await remindersOf(subscriptionId), []);
      t.deepEqual(methodReads(), []);
    } finally {
      await companion();
    }
  });
}

test.serial('When CARD_EXPIRY_REMINDER_DAYS is 0, Then there are no reminders', async (t) => {
  setTime('2027-04-10T08:00:00Z');
  const subscriptionId = await subscriptionWithCard({ nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_off' });
  const off = await openHub(configOf(shop, { CARD_EXPIRY_REMINDER_DAYS: '0' }), clock);
  try {
    t.like(await off.cardExpiryReminders.execute(), { pass: 'off', asked: 0 });
    t.deepEqual(await changesOf(subscriptionId), []);
  } finally {
    await off.close();
  }
});

test.serial('When the shop keeps its orders in HPOS, Then the subscription is read from there and the reminder goes', async (t) => {
  const hposShop = await createTestShop('card_expiry_reminders_hpos', { hpos: true });
  const hposHub = await openHub(configOf(hposShop), clock);
  targetHubs.set(hposShop, hposHub);
  try {
    await companion(undefined, hposShop);
    setTime('2027-04-10T08:00:00Z');
    const active = await subscriptionWithCard({ target: hposShop, nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_hpos' });
    const cancelled = await subscriptionWithCard({ target: hposShop, status: 'cancelled', nextPayment: '2027-05-10T08:00:00Z', expDate: '04-27', pm: 'ca_hpos_cancelled' });
    const outlives = await subscriptionWithCard({ target: hposShop, nextPayment: '2027-05-10T08:00:00Z', expDate: '05-27', pm: 'ca_hpos_outlives' });
    t.like(await hposHub.cardExpiryReminders.execute(), { pass: 'finished', subscriptions: 3, asked: 2, sent: 1, notSent: { not_active: 1, card_outlives_renewal: 1 } });
    t.deepEqual(JSON.parse((await changesOf(active, hposShop))[0].payload), expected('04-27'));
    t.deepEqual(await changesOf(cancelled, hposShop), []);
    t.deepEqual(await changesOf(outlives, hposShop), []);
    t.deepEqual(await remindersOf(active, hposShop), [{ payment_method: 'ca_hpos', exp_date: '04-27', sent_at: '2027-04-10 08:00:00.000' }]);
  } finally {
    await hposHub.close();
    await hposShop.drop();
  }
});

test.serial('The real worker runs the card_expiry_reminders loop: the reminder is handed to WooCommerce once', async (t) => {
  // Real time here: a card expiring at the end of this month, a renewal in 60 days.
  const now = new Date();
  const expDate = `${String(now.getUTCMonth() + 1).padStart(2, '0')}-${String(now.getUTCFullYear() % 100).padStart(2, '0')}`;
  const subscriptionId = await subscriptionWithCard({ nextPayment: new Date(now.getTime() + 60 * 86_400_000).toISOString(), expDate, pm: 'ca_worker' });
  let worker: ServiceProcess | undefined;
  try {
    worker = startServiceProcess('worker', {
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
      CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret, CARD_EXPIRY_REMINDER_INTERVAL_SECONDS: '1',
    });
    const sent = await worker.logged('card_expiry_reminder_sent', 30_000);
    t.like(sent, { subscriptionId, paymentMethod: 'ca_worker', cardExpires: expDate });
    const changes = await eventually(async () => {
      const rows = await changesOf(subscriptionId);
      return rows.length ? rows : null;
    }, 10_000, 'the hand-over row') as any[];
    t.deepEqual(JSON.parse(changes[0].payload), expected(expDate));
    // Passes go on every second; the card is reminded of once.
    await eventually(async () => worker!.logs.filter((line) => line.event === 'card_expiry_reminder_pass').length >= 2, 20_000, 'a second pass');
    t.is((await changesOf(subscriptionId)).length, 1);
    t.is((await remindersOf(subscriptionId)).length, 1);
    worker.signal('SIGTERM');
    t.is(await worker.exited, 0);
  } finally {
    await worker?.kill();
  }
});
