import path from 'node:path';
import mysql from 'mysql2/promise';
import test, { type ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { request, type TestResponse } from '../support/http-client';
import { openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { WP_SECRETS_ENV } from '../support/wordpress-fixtures';
import { comparable, DUNNING_EMAIL } from './service-matches-woocommerce';
import { shopManagerSession } from './support/shop-manager-session';
import { createWooCommerceShop, type OrderSnapshot, type RecordedEvent, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * Staff's three actions on a failed renewal (Charge now, Send payment link, Stop dunning), made through the staff
 * routes with a shop manager's logged-in cookie and nonce, judged by a twin: an identical renewal moved by
 * WooCommerce's and Subscriptions' own calls, as a gateway plugin and a shop manager make them, the staff note
 * added as `WC_Order::add_order_note($note, 0, true)` adds it in WP admin. After Action Scheduler has run, both
 * must agree on data, meta, notes (their authors too), items, stock, Analytics rows, scheduled actions, the
 * e-mails WordPress would send and the hooks other plugins hear. Real WordPress + WooCommerce + Subscriptions
 * with the companion, the service's staff routes and payment hub in this process, the loopback card gateway.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const MANAGER = { login: 'petra.panel', displayName: 'Petra Panel', password: 'petra-panel-test-password' };
const CUSTOMER_EMAIL = 'kunde@example.dk';

/** One order (or subscription) of the service's and its twin. */
interface Pair { service: number; twin: number }

function staffDunningTwins(mode: StorageMode): void {
  const title = (what: string) => `current ${mode}: ${what}`;
  // One shop's scenarios one after another, the two shops' side by side: each shop's recorder log and Action
  // Scheduler queue are its own, and the file's time is about one shop's.
  let previous: Promise<unknown> = Promise.resolve();
  const inTurn = (what: string, body: (t: ExecutionContext) => Promise<void>) => test(title(what), (t) => {
    const mine = previous.then(() => body(t));
    previous = mine.catch(() => undefined);
    return mine;
  });
  let shop: WooCommerceShop;
  let card: FakeCardGateway;
  let config: Config;
  let db: mysql.Pool;
  let hub: PaymentHub & { close(): Promise<void> };
  let api: RunningStaffApi;
  let managerId: number;
  let headers: Record<string, string>;
  /** The objects around the pairs (parent orders), whose IDs appear in the pairs' data. */
  const related: Pair[] = [];
  const q = async <T = Record<string, any>>(sql: string, values: unknown[] = []) => (await db.query(sql, values))[0] as T[];

  test.before(async () => {
    shop = await createWooCommerceShop(`staff_dunning_${mode}`, 'current', mode, { companion: COMPANION });
    card = new FakeCardGateway();
    await card.start();
    db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: shop.dbName, connectionLimit: 2, dateStrings: true });
    const [{ option_value: siteUrl }] = await q<{ option_value: string }>(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'siteurl'`);
    config = loadConfig({
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: '0', SHOP_URL: siteUrl, ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV,
      CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
      RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
    });
    const migrations = createShopDataSource(config.db, 1);
    await migrations.initialize();
    await migrations.runMigrations();
    await migrations.destroy();

    // A shop manager as the users screen makes one, with a display name of their own, logged in as wp_signon does.
    const session = await shopManagerSession(shop, MANAGER, siteUrl);
    managerId = session.id;
    headers = session.headers;
    hub = await openHub(config, () => new Date());
    api = await startStaffApi(config);
  });

  test.after.always(async () => {
    await api?.stop();
    await hub?.close().catch(() => undefined);
    await db?.end();
    await card?.stop();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  });

  const asManager = (action: string, orderId: number): Promise<TestResponse> =>
    request(api.url, 'POST', `/payment-hub/v1/orders/${orderId}/${action}`, { headers, body: {} });

  /** The payload the service handed over with its latest change `op` of `id`: the twin is given the same. */
  async function lastPayload<T>(id: number, op: string): Promise<T> {
    const [row] = await q<{ payload: string }>(
      `SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = ? ORDER BY id DESC LIMIT 1`, [id, op]);
    if (!row) throw new Error(`the service handed over no ${op} for ${id}`);
    return JSON.parse(row.payload) as T;
  }

  /** The notes the service handed over for `id` in the staff member's name; the twin's staff member writes the same. */
  const staffNotes = async (id: number) => (await q<{ payload: string }>(
    `SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'order_note' ORDER BY id`, [id]))
    .map((row) => JSON.parse(row.payload) as { note: string; user_id: number })
    .map((asked) => (asked.user_id === managerId ? asked.note : `(user ${asked.user_id}) ${asked.note}`));
  /** The note as WooCommerce shows it: the staff member's, once. */
  const shownOnce = (t: ExecutionContext, snapshot: OrderSnapshot, note: string) => t.deepEqual(
    snapshot.notes.filter((n) => n.content === note).map((n) => ({ added_by: n.added_by, customer_note: n.customer_note })),
    [{ added_by: MANAGER.displayName, customer_note: false }], 'the staff member\'s note, once');

  /** The staff member's note on the twin, as WP admin adds it: `add_order_note($note, 0, true)` by that user. */
  const twinStaffNote = (id: number, note: string) => shop.call('order_add_note', id, { note, added_by_user: true, user_id: managerId });

  /**
   * Two identical renewals whose card charge just failed (a soft decline): the service's through the gateway's
   * signed `invoice_failed`, the twin's as a gateway plugin fails it. Action Scheduler has run and the recorder's
   * log is cleared, so what follows is the staff action's alone. The customer's saved card is at the gateway.
   */
  async function failedRenewals(customer: string) {
    const a = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const b = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    related.push({ service: a.order_id, twin: b.order_id });
    const order = { service: a.renewal_order_id!, twin: b.renewal_order_id! };
    const subscription = { service: a.subscription_id!, twin: b.subscription_id! };
    const handle = `order-${order.service}`;
    card.setCharge(handle, { state: 'failed', amount: 14900, customer, error: 'insufficient_funds', error_state: 'soft_declined' });
    card.setPaymentMethod(`ca-${customer}`, { customer });
    const processed = await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: handle }, card.webhookSecret);
    if (processed !== 'PROCESSED') throw new Error(`the failure was not processed: ${processed}`);
    const failed = await lastPayload<{ note: string }>(order.service, 'order_payment_failed');
    await shop.call('order_update_status', order.twin, { status: 'failed', note: failed.note.split(handle).join(`order-${order.twin}`) });
    const ran = await shop.runActions();
    if (ran.failures.length) throw new Error(JSON.stringify(ran.failures));
    await shop.logReset();
    return { order, subscription, handle };
  }

  /** Runs WooCommerce's queue (the companion's changes among it), then compares every pair; the snapshots. */
  async function assertSame(t: ExecutionContext, pairs: Pair[]): Promise<Record<string, OrderSnapshot>> {
    const ran = await shop.runActions();
    t.deepEqual(ran.failures, [], 'every scheduled action ran without error');
    t.deepEqual(await q(`SELECT id, op, status, result FROM ${shop.prefix}sidecar_woocommerce_changes WHERE status <> 'applied'`), [],
      'every change the service handed over was applied');
    const { by_id: snapshots } = await shop.snapshot(pairs.flatMap((pair) => [pair.service, pair.twin]));
    const placeholders = new Map<number, string>();
    pairs.forEach((pair, index) => { placeholders.set(pair.service, `#${index}`); placeholders.set(pair.twin, `#${index}`); });
    related.forEach((pair, index) => { placeholders.set(pair.service, `#r${index}`); placeholders.set(pair.twin, `#r${index}`); });
    for (const [index, pair] of pairs.entries()) {
      t.deepEqual(comparable(snapshots[pair.service], placeholders), comparable(snapshots[pair.twin], placeholders),
        `object #${index} (${pair.service} moved by the service, ${pair.twin} by WooCommerce)`);
    }
    return snapshots;
  }

  const hooks = (snapshot: OrderSnapshot, name: string) => snapshot.recorded.filter((event: RecordedEvent) => event.kind === 'hook' && event.name === name).length;
  const dunningMails = (snapshot: OrderSnapshot) => snapshot.recorded.filter((event) => event.kind === 'mail' && event.name === DUNNING_EMAIL);
  const pending = async (orderId: number) => q(`SELECT attempt, status FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? AND status IN ('PENDING', 'PROCESSING')`, [orderId]);

  inTurn('Charge now recovers the renewal as payment_complete() does, once on a double click, with the staff member\'s note', async (t) => {
    const { order, subscription, handle } = await failedRenewals(`cust-charge-${mode}`);
    const charges = card.requestsTo('POST', '/v1/charge').length;
    card.queueChargeOutcome({ kind: 'settled' });
    const answers = (await Promise.all([0, 1].map(() => asManager('charge-now', order.service)))).sort((x, y) => x.status - y.status);
    t.is(answers[0].status, 200, answers[0].text);
    t.deepEqual(answers[0].json.result, { outcome: 'paid' });
    t.is(answers[1].status, 409, answers[1].text);
    t.is(card.requestsTo('POST', '/v1/charge').length, charges + 1, 'the card charged once');

    // The twin: a gateway plugin's capture (its note, then payment_complete()), and the staff member's note.
    const paid = await lastPayload<{ note: string; transaction_id: string; paid_at?: number; meta?: { set: Record<string, string>; delete: string[] } }>(order.service, 'order_payment_complete');
    const twinRef = (text: string) => text.split(handle).join(`order-${order.twin}`);
    await shop.call('order_add_note', order.twin, { note: twinRef(paid.note) });
    // The card plugin's metas of the money (its handle, the gateway's settle transaction, settled), which the service's charge carries too.
    t.deepEqual(paid.meta, { set: { _reepay_order: paid.transaction_id, _reepay_capture_transaction: String(card.charge(paid.transaction_id)?.transaction), _reepay_state_settled: '1' }, delete: [] });
    const meta = { set: Object.fromEntries(Object.entries(paid.meta!.set).map(([key, value]) => [key, twinRef(value)])), delete: paid.meta!.delete };
    await shop.call('order_payment_complete', order.twin, { transaction_id: twinRef(paid.transaction_id), ...(paid.paid_at === undefined ? {} : { paid_at: paid.paid_at }), meta });
    const notes = await staffNotes(order.service);
    t.is(notes.length, 1, `one note in the staff member's name: ${JSON.stringify(notes)}`);
    await twinStaffNote(order.twin, notes[0]);

    const snapshots = await assertSame(t, [order, subscription]);
    t.is(snapshots[order.service].status, 'processing');
    t.is(snapshots[subscription.service].status, 'active', 'Subscriptions reactivated the subscription');
    t.is(hooks(snapshots[order.service], 'woocommerce_payment_complete'), 1, 'WooCommerce completed the payment once');
    shownOnce(t, snapshots[order.service], notes[0]);
    t.is(snapshots[order.service].notes.at(-1)?.content, notes[0], 'noted after the payment');
    t.deepEqual(await pending(order.service), [], 'no attempt left');
    t.like((await q(`SELECT status, recovered_by FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [order.service]))[0], { status: 'RECOVERED' });
  });

  inTurn('Send payment link: WooCommerce e-mails the customer once, as the dunning engine has it sent, and the staff member\'s note; nothing else changes', async (t) => {
    const { order, subscription } = await failedRenewals(`cust-link-${mode}`);
    const planned = await pending(order.service);
    const answers = (await Promise.all([0, 1].map(() => asManager('payment-link', order.service)))).sort((x, y) => x.status - y.status);
    t.is(answers[0].status, 200, answers[0].text);
    t.is(answers[1].status, 409, answers[1].text);
    t.like(answers[1].json.data, { reason: 'link_just_sent' });

    // The twin: the companion's e-mail triggered as the dunning engine triggers it, and the staff member's note.
    const asked = await lastPayload<Record<string, unknown>>(subscription.service, 'customer_payment_method_needed');
    t.is(asked.order_id, order.service);
    await shop.call('subscription_payment_method_needed', subscription.twin, { ...asked, order_id: order.twin });
    const notes = await staffNotes(order.service);
    t.is(notes.length, 1, `one note in the staff member's name: ${JSON.stringify(notes)}`);
    await twinStaffNote(order.twin, notes[0]);

    const snapshots = await assertSame(t, [order, subscription]);
    // The comparison sets the dunning e-mail aside (the service's dunning sends it alone): here both sides send it, once.
    for (const side of [subscription.service, subscription.twin]) {
      const mails = dunningMails(snapshots[side]);
      t.is(mails.length, 1, `one "Payment method needed" e-mail for ${side}`);
      t.like(mails[0].detail, { to: [CUSTOMER_EMAIL], customer: true, object_class: 'WC_Subscription' });
    }
    t.is(dunningMails(snapshots[subscription.service])[0].detail.subject, dunningMails(snapshots[subscription.twin])[0].detail.subject);
    const mailNotes = (id: number) => snapshots[id].notes.filter((n) => n.content.startsWith('The "Payment method needed" e-mail'))
      .map((n) => n.content.split(String(order.service)).join('#order').split(String(order.twin)).join('#order'));
    t.deepEqual(mailNotes(subscription.service), mailNotes(subscription.twin));
    t.is(mailNotes(subscription.service).length, 1);
    shownOnce(t, snapshots[order.service], notes[0]);
    t.is(snapshots[order.service].status, 'failed', 'the renewal still awaits payment');
    t.is(snapshots[subscription.service].status, 'on-hold');
    t.deepEqual(await pending(order.service), planned, 'the planned attempts stay');
  });

  inTurn('Stop dunning: no attempt left, the subscription as it was, the staff member\'s note', async (t) => {
    const { order, subscription } = await failedRenewals(`cust-stop-${mode}`);
    t.not((await pending(order.service)).length, 0, 'an attempt was planned');
    const answers = (await Promise.all([0, 1].map(() => asManager('stop-dunning', order.service)))).sort((x, y) => x.status - y.status);
    t.is(answers[0].status, 200, answers[0].text);
    t.like(answers[0].json.result, { outcome: 'stopped', attempts_cancelled: 1 });
    t.is(answers[1].status, 409, answers[1].text);
    t.like(answers[1].json.data, { reason: 'case_closed' });

    // The twin: staff only add their note.
    const notes = await staffNotes(order.service);
    t.is(notes.length, 1, `one note in the staff member's name: ${JSON.stringify(notes)}`);
    await twinStaffNote(order.twin, notes[0]);

    const snapshots = await assertSame(t, [order, subscription]);
    shownOnce(t, snapshots[order.service], notes[0]);
    t.is(snapshots[order.service].status, 'failed');
    t.is(snapshots[subscription.service].status, 'on-hold', 'the subscription left as it is');
    t.deepEqual(await pending(order.service), [], 'no attempt left');
    t.like((await q(`SELECT status FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [order.service]))[0], { status: 'LOST' });
    const scheduled = (snapshot: OrderSnapshot) => snapshot.actions.filter((action) => action.status === 'pending').map((action) => action.hook);
    t.deepEqual(scheduled(snapshots[order.service]), [], 'nothing scheduled for the renewal');
  });
}

staffDunningTwins('hpos');
staffDunningTwins('posts');
