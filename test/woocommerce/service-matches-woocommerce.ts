import path from 'node:path';
import mysql from 'mysql2/promise';
import test, { type ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../src/config';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { createShopDataSource } from '../../src/data-access/data-source';
import { silentLogger } from '../../src/logger';
import { buildStaffServices } from '../../src/entry-points/composition/staff-services';
import { cardGatewayDelivery, FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { openHub } from '../support/payment-hub-fixture';
import { createWooCommerceShop, type OrderSnapshot, type RecordedEvent, type StorageMode, type WooCommerceShop, type WooCommerceStack } from './support/woocommerce-shop';

/**
 * Every write path of the service against a twin: the same change made to an identical order by
 * WooCommerce's and Subscriptions' own calls, as a payment gateway plugin or a shop manager makes it. The
 * service runs against the real shop with the companion plugin installed; after Action Scheduler has run
 * (the companion's changes and WooCommerce's own async work, Analytics included), both orders must agree
 * on data, meta, notes, items, stock, sales, download permissions, Analytics rows, scheduled actions, the
 * e-mails WordPress would send and the hooks other plugins hear.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const DAY = 86400_000;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-for-the-woocommerce-suite';

/** One order (or subscription) of the service's and its twin. */
interface Pair { service: number; twin: number }

/** The objects around a pair (parent and renewal orders), whose IDs appear in the pair's data. */
const related: Pair[] = [];

export function serviceMatchesWooCommerce(stack: WooCommerceStack, mode: StorageMode): void {
  let shop: WooCommerceShop;
  let card: FakeCardGateway;
  let wallet: FakeMobileWallet;
  let config: Config;
  let db: mysql.Pool;
  /** The service's own tables and plain inserts, read and written over SQL as the service does. */
  const q = async <T = Record<string, any>>(sql: string, values: unknown[] = []) => (await db.query(sql, values))[0] as T[];

  test.before(async () => {
    shop = await createWooCommerceShop(`${stack}_${mode}`.replace('-', '_'), stack, mode, { companion: COMPANION });
    card = new FakeCardGateway();
    wallet = new FakeMobileWallet();
    await Promise.all([card.start(), wallet.start()]);
    config = loadConfig({
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: '0', SHOP_URL: 'https://shop.example.dk',
      CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
      MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
      MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
      MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    });
    const migrations = createShopDataSource(config.db, 1);
    await migrations.initialize();
    await migrations.runMigrations();
    await migrations.destroy();
    db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: shop.dbName, connectionLimit: 2, dateStrings: true });
  });

  test.after.always(async () => {
    await db?.end();
    await Promise.allSettled([card?.stop(), wallet?.stop()]);
    await shop?.drop();
  });

  const withHub = async <T>(work: (hub: PaymentHub) => Promise<T>, clock: () => Date = () => new Date()): Promise<T> => {
    const hub = await openHub(config, clock);
    try {
      return await work(hub);
    } finally {
      await hub.close();
    }
  };

  async function deliver(hub: PaymentHub, event: CardGatewayDeliveryEvent) {
    const delivery = cardGatewayDelivery(event, card.webhookSecret);
    const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
    if (stored.kind !== 'stored') throw new Error('not stored');
    const outcome = await hub.processCardGatewayWebhook.execute(stored.id);
    if (outcome.kind !== 'done') throw new Error(`not processed: ${JSON.stringify(outcome)}`);
    return outcome.status;
  }

  /** A signed wallet delivery, handled inside the request as the API does it. */
  async function deliverWallet(hub: PaymentHub, event: MobileWalletDeliveryEvent) {
    const delivery = mobileWalletDelivery(event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
    const outcome = await hub.receiveMobileWalletWebhook.execute({ method: 'POST', headers: delivery.headers, body: delivery.body });
    if (outcome.kind !== 'handled') throw new Error(`not handled: ${JSON.stringify(outcome)}`);
    return outcome.outcome.status;
  }

  /** The payload the service handed over with its latest change of `id` (of `op` when given): the twin is given the same. */
  async function lastPayload<T extends { note: string } = { note: string; paid_at?: number; meta?: { set: Record<string, string>; delete: string[] } }>(id: number, op?: string): Promise<T> {
    const [row] = await q<{ payload: string }>(
      `SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ?${op ? ' AND op = ?' : ''} ORDER BY id DESC LIMIT 1`, op ? [id, op] : [id]);
    if (!row) throw new Error(`the service handed over no ${op ?? 'change'} for ${id}`);
    return JSON.parse(row.payload) as T;
  }

  /** The note the service handed over with its latest change of `id`: the twin says the same. */
  async function lastNote(id: number): Promise<string> {
    return (await lastPayload(id)).note;
  }

  /** Two identical renewals (the subscription, its paid parent order, a pending renewal order each). */
  async function renewals(fixture: { gateway: 'reepay_checkout' | 'vipps_recurring'; meta?: (side: 'a' | 'b') => Record<string, string>; subscriptionMeta?: (side: 'a' | 'b') => Record<string, string> } = { gateway: 'reepay_checkout' }) {
    const side = (which: 'a' | 'b') => ({ kind: 'subscription' as const, gateway: fixture.gateway, meta: fixture.meta?.(which), subscription_meta: fixture.subscriptionMeta?.(which) });
    const a = await shop.fixture(side('a'));
    const b = await shop.fixture(side('b'));
    related.push({ service: a.order_id, twin: b.order_id }, { service: a.renewal_order_id!, twin: b.renewal_order_id! });
    // Only what follows the fixtures is compared: their own hooks interleave by the second they ran in.
    await shop.logReset();
    return { order: { service: a.renewal_order_id!, twin: b.renewal_order_id! }, subscription: { service: a.subscription_id!, twin: b.subscription_id! } };
  }

  async function orders(): Promise<Pair> {
    const a = await shop.fixture({ kind: 'order', gateway: 'reepay_checkout' });
    const b = await shop.fixture({ kind: 'order', gateway: 'reepay_checkout' });
    await shop.logReset();
    return { service: a.order_id, twin: b.order_id };
  }

  /** Runs what WooCommerce's queue holds (the companion's changes among it), then compares every pair. */
  async function assertSame(t: ExecutionContext, pairs: Pair[], horizonSeconds?: number, aliases: [string, string][] = []) {
    const ran = await shop.runActions(horizonSeconds);
    t.deepEqual(ran.failures, [], 'every scheduled action ran without error');
    const waiting = await q(`SELECT id, op, status, result FROM ${shop.prefix}sidecar_woocommerce_changes WHERE status <> 'applied'`);
    t.deepEqual(waiting, [], 'every change the service handed over was applied');
    const ids = pairs.flatMap((pair) => [pair.service, pair.twin]);
    const { by_id: snapshots } = await shop.snapshot(ids);
    const placeholders = new Map<number, string>();
    pairs.forEach((pair, index) => { placeholders.set(pair.service, `#${index}`); placeholders.set(pair.twin, `#${index}`); });
    related.forEach((pair, index) => {
      if (!placeholders.has(pair.service)) { placeholders.set(pair.service, `#r${index}`); placeholders.set(pair.twin, `#r${index}`); }
    });
    for (const [index, pair] of pairs.entries()) {
      const service = comparable(snapshots[pair.service], placeholders, aliases);
      const twin = comparable(snapshots[pair.twin], placeholders, aliases);
      t.deepEqual(service, twin, `object #${index} (${pair.service} moved by the service, ${pair.twin} by WooCommerce)`);
    }
    return snapshots;
  }

  /**
   * What a gateway plugin does when money is taken: a note, then WooCommerce's payment_complete(), with date_paid
   * set first to when the provider took the money. Note and time are the ones the service handed over for
   * `pair.service` (its reference `serviceRef` read as the twin's `twinRef`).
   */
  const twinCaptured = async (pair: Pair, serviceRef: string, twinRef: string) => {
    const asked = await lastPayload(pair.service, 'order_payment_complete');
    await shop.call('order_add_note', pair.twin, { note: asked.note.split(serviceRef).join(twinRef) });
    // A charge of the service's own carries the metas the gateway's plugin keeps of the money (its handle or charge):
    // the twin's plugin names its own.
    const meta = asked.meta === undefined ? {} : {
      meta: {
        set: Object.fromEntries(Object.entries(asked.meta.set).map(([key, value]) => [key, value.split(serviceRef).join(twinRef)])),
        delete: asked.meta.delete,
      },
    };
    await shop.call('order_payment_complete', pair.twin, { transaction_id: twinRef, ...(asked.paid_at === undefined ? {} : { paid_at: asked.paid_at }), ...meta });
  };

  /** Money reserved: the twin as a gateway plugin does it, with the note the service handed over. */
  const twinAuthorized = async (pair: Pair, serviceRef: string, twinRef: string) => {
    const asked = await lastPayload(pair.service, 'order_payment_authorized');
    await shop.call('order_authorized', pair.twin, { transaction_id: twinRef, note: asked.note.split(serviceRef).join(twinRef) });
  };

  const failedCharge = (handle: string, errorState = 'soft_declined') =>
    card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-wc', error: 'insufficient_funds', error_state: errorState });
  /** The note the service handed WooCommerce with the order's move to failed, naming the twin's handle: the twin is failed with the same. */
  const failureNote = async (pair: Pair) => (await lastPayload(pair.service, 'order_payment_failed')).note.split(`order-${pair.service}`).join(`order-${pair.twin}`);

  test.serial('payment failed: plain order', async (t) => {
    const pair = await orders();
    failedCharge(`order-${pair.service}`);
    t.is(await withHub((hub) => deliver(hub, { event_type: 'invoice_failed', invoice: `order-${pair.service}` })), 'PROCESSED');
    const note = await failureNote(pair);
    t.is(note, `Payment order-${pair.twin} failed: not enough money on the card (insufficient_funds).`, 'the failure in words, its code only as a detail');
    await shop.call('order_update_status', pair.twin, { status: 'failed', note });
    const snapshots = await assertSame(t, [pair]);
    t.is(snapshots[pair.service].status, 'failed');
  });

  for (const state of ['soft_declined', 'hard_declined']) {
    test.serial(`payment failed: renewal (${state})`, async (t) => {
      const { order, subscription } = await renewals();
      failedCharge(`order-${order.service}`, state);
      await withHub((hub) => deliver(hub, { event_type: 'invoice_failed', invoice: `order-${order.service}` }));
      await shop.call('order_update_status', order.twin, { status: 'failed', note: await failureNote(order) });
      const snapshots = await assertSame(t, [order, subscription]);
      t.is(snapshots[subscription.service].status, 'on-hold', 'Subscriptions put the subscription on hold');
      // The one deliberate difference: the dunning is the service's, and so are its notes on the order.
      const dunningNotes = (id: number) => snapshots[id].notes.filter((note) => DUNNING_NOTE.test(note.content))
        .map((note) => note.content.replace(/\d{1,2} [A-Z][a-z]+ \d{4} at \d{2}:\d{2}/g, '<time>'));
      if (state === 'hard_declined') {
        t.deepEqual(dunningNotes(order.service), ['Payment failed: not enough money on the card (insufficient_funds). This payment method is not charged again. The customer is e-mailed a link to add a new payment method. The subscription is cancelled on <time> unless the renewal is paid.']);
      } else {
        // The plan's first attempt, or, when a payday falls before the case's deadline (DUNNING_PAYDAYS; today's date
        // decides, which this test does not pin), one early on payday: either way one attempt, said in one note.
        const notes = dunningNotes(order.service);
        const onPayday = /^Payment failed: not enough money on the card \(insufficient_funds\)\. We try again on <time>, early on the first bank day from payday, as the decline was for lack of funds\./;
        t.true(notes.length === 1 && (notes[0] === 'Payment failed: not enough money on the card (insufficient_funds). We try again on <time> (attempt 1 of 5).' || onPayday.test(notes[0]!)), JSON.stringify(notes));
      }
      t.deepEqual(dunningNotes(order.twin), []);
      const retries = await q(`SELECT attempt FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [order.service]);
      t.is(retries.length, state === 'hard_declined' ? 0 : 1, 'the service plans the dunning, except after a hard decline');
      // After a hard decline WooCommerce e-mailed the customer for a new payment method, once: the service's dunning.
      const asked = snapshots[subscription.service].recorded.filter((event) => event.kind === 'mail' && event.name === DUNNING_EMAIL);
      t.is(asked.length, state === 'hard_declined' ? 1 : 0);
    });
  }

  test.serial('payment captured: plain order', async (t) => {
    const pair = await orders();
    card.setInvoice(`order-${pair.service}`, { state: 'settled', amount: 30000, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_settled', invoice: `order-${pair.service}` }));
    const { paid_at: paidAt } = await lastPayload(pair.service, 'order_payment_complete');
    await twinCaptured(pair, `order-${pair.service}`, `order-${pair.twin}`);
    const snapshots = await assertSame(t, [pair]);
    t.is(snapshots[pair.service].status, 'processing');
    t.is(typeof paidAt, 'number', 'the service hands over when the provider took the money');
    const iso = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    t.is(snapshots[pair.service].data.date_paid, iso(paidAt!), 'date_paid is the provider\'s time of the payment, to the second');
    t.is(snapshots[pair.twin].data.date_paid, iso(paidAt!));
  });

  test.serial('payment authorized, then captured: plain order', async (t) => {
    const pair = await orders();
    const handle = `order-${pair.service}`;
    card.setInvoice(handle, { state: 'authorized', amount: 30000, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_authorized', invoice: handle }));
    await twinAuthorized(pair, handle, `order-${pair.twin}`);
    await assertSame(t, [pair]);
    card.setInvoice(handle, { state: 'settled', amount: 30000, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_settled', invoice: handle }));
    await twinCaptured(pair, handle, `order-${pair.twin}`);
    const snapshots = await assertSame(t, [pair]);
    t.is(snapshots[pair.service].status, 'processing');
  });

  test.serial('payment authorized, then captured: renewal', async (t) => {
    const { order, subscription } = await renewals();
    const handle = `order-${order.service}`;
    card.setInvoice(handle, { state: 'authorized', amount: 14900, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_authorized', invoice: handle }));
    await twinAuthorized(order, handle, `order-${order.twin}`);
    await assertSame(t, [order, subscription]);
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_settled', invoice: handle }));
    await twinCaptured(order, handle, `order-${order.twin}`);
    const snapshots = await assertSame(t, [order, subscription]);
    t.is(snapshots[order.service].status, 'processing');
    t.is(snapshots[subscription.service].status, 'active');
  });

  test.serial('paid after failure: card webhook settles the failed renewal', async (t) => {
    const { order, subscription } = await renewals();
    const handle = `order-${order.service}`;
    failedCharge(handle);
    await withHub((hub) => deliver(hub, { event_type: 'invoice_failed', invoice: handle }));
    await shop.call('order_update_status', order.twin, { status: 'failed', note: await failureNote(order) });
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_settled', invoice: handle }));
    await twinCaptured(order, handle, `order-${order.twin}`);
    const snapshots = await assertSame(t, [order, subscription]);
    t.is(snapshots[order.service].status, 'processing');
    t.is(snapshots[subscription.service].status, 'active', 'Subscriptions reactivated the subscription');
  });

  test.serial('paid after failure: the mobile wallet captures the failed renewal', async (t) => {
    const tag = `${stack}-${mode}`;
    const { order, subscription } = await renewals({
      gateway: 'vipps_recurring',
      meta: (which) => ({ _charge_id: `chr-${tag}-${which}` }),
      subscriptionMeta: (which) => ({ _agreement_id: `agr-${tag}-${which}` }),
    });
    const agreementId = `agr-${tag}-a`;
    const chargeId = `chr-${tag}-a`;
    wallet.setAgreement(agreementId);
    wallet.setCharge(agreementId, chargeId, { status: 'FAILED', failureReason: 'insufficient_funds', amount: 14900 });
    t.is(await withHub((hub) => deliverWallet(hub, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId })), 'PROCESSED');
    const failed = await lastNote(order.service);
    await shop.call('order_update_status', order.twin, { status: 'failed', note: failed.replace(chargeId, `chr-${tag}-b`) });
    wallet.setCharge(agreementId, chargeId, { status: 'CHARGED', amount: 14900 });
    t.is(await withHub((hub) => deliverWallet(hub, { eventType: 'recurring.charge-captured.v1', agreementId, chargeId })), 'PROCESSED');
    await twinCaptured(order, chargeId, `chr-${tag}-b`);
    const aliases: [string, string][] = [[`chr-${tag}-a`, 'chr-X'], [`chr-${tag}-b`, 'chr-X'], [`agr-${tag}-a`, 'agr-X'], [`agr-${tag}-b`, 'agr-X']];
    const snapshots = await assertSame(t, [order, subscription], undefined, aliases);
    t.is(snapshots[order.service].status, 'processing');
    t.is(snapshots[subscription.service].status, 'active');
  });

  test.serial('paid after failure: a dunning retry goes through', async (t) => {
    const { order, subscription } = await renewals();
    const handle = `order-${order.service}`;
    failedCharge(handle);
    // The customer's saved card, which the renewal was charged on and the retry charges again (`source: auto`).
    card.setPaymentMethod('ca_wc_renewal', { customer: 'cust-wc' });
    let now = new Date();
    const clock = () => now;
    await withHub((hub) => deliver(hub, { event_type: 'invoice_failed', invoice: handle }), clock);
    await shop.call('order_update_status', order.twin, { status: 'failed', note: await failureNote(order) });
    await shop.runActions();
    now = new Date(now.getTime() + DAY);
    // Earlier scenarios' planned attempts are not this scenario's business.
    await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET status = 'CANCELED' WHERE status = 'PENDING' AND order_id <> ?`, [order.service]);
    card.queueChargeOutcome({ kind: 'settled' });
    const attempts = await withHub((hub) => hub.runDueRetries.execute(), clock);
    t.like(attempts, { attempted: 1, succeeded: 1 });
    await twinCaptured(order, `${handle}-retry1`, `order-${order.twin}-retry1`);
    // The service's clock is a day ahead, so its hand-over action is due a day from now.
    const snapshots = await assertSame(t, [order, subscription], 2 * 86400);
    t.is(snapshots[subscription.service].status, 'active');
  });

  test.serial('refund events: two partial refunds at the gateway', async (t) => {
    const pair = await orders();
    const handle = `order-${pair.service}`;
    card.setInvoice(handle, { state: 'settled', amount: 30000, customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'invoice_settled', invoice: handle }));
    await twinCaptured(pair, handle, `order-${pair.twin}`);
    // The gateway reports the invoice's refunded total so far: 50.00, then 125.00.
    let before = 0;
    for (const refunded of [5000, 12500]) {
      card.setInvoice(handle, { state: 'settled', amount: 30000, customer: 'cust-wc', refunded_amount: refunded });
      await withHub((hub) => deliver(hub, { event_type: 'invoice_refund', invoice: handle }));
      await shop.call('order_refund', pair.twin, { amount: ((refunded - before) / 100).toFixed(2), reason: `Refunded at the card gateway (invoice order-${pair.twin}).` });
      before = refunded;
    }
    const snapshots = await assertSame(t, [pair]);
    t.is(snapshots[pair.service].status, 'processing', 'a partial refund keeps the order processing');
  });

  test.serial('agreement changes: WooCommerce hears nothing and nothing changes', async (t) => {
    const { subscription } = await renewals();
    const before = await shop.snapshot([subscription.service]);
    await shop.logReset();
    card.setPaymentMethod('ca_wc_1', { state: 'active', customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'customer_payment_method_added', payment_method: 'ca_wc_1', customer: 'cust-wc' }));
    card.setPaymentMethod('ca_wc_1', { state: 'deleted', customer: 'cust-wc' });
    await withHub((hub) => deliver(hub, { event_type: 'customer_payment_method_deleted', payment_method: 'ca_wc_1', customer: 'cust-wc' }));
    await shop.runActions();
    const after = await shop.snapshot([subscription.service]);
    t.deepEqual(withoutLog(after), withoutLog(before));
    t.deepEqual(await shop.log(), []);
  });

  const staff = async <T>(work: (services: ReturnType<typeof buildStaffServices>) => Promise<T>, clock: () => Date = () => new Date()) => {
    const dataSource = createShopDataSource(config.db, 2);
    await dataSource.initialize();
    try {
      return await work(buildStaffServices(config, dataSource, silentLogger, clock));
    } finally {
      await dataSource.destroy();
    }
  };
  const admin = { userId: 1, login: 'admin', displayName: 'admin', email: 'admin@example.dk' };

  test.serial('pause, then the end of the pause', async (t) => {
    const { subscription } = await renewals();
    const end = new Date(Date.now() + 10 * DAY).toISOString().slice(0, 10);
    const paused = await staff((services) => services.pauseSubscription.execute({ subscriptionId: subscription.service, endDate: end, actor: admin }));
    if (paused.kind !== 'paused') throw new Error(JSON.stringify(paused));
    const change = (await q<{ payload: string }>(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id DESC LIMIT 1`, [subscription.service]))[0];
    const asked = JSON.parse(change.payload) as { next_payment: string; auto_reactivation: string; note: string };
    await shop.call('subscription_pause', subscription.twin, { ...asked, note: asked.note, user_id: 1 });
    const snapshots = await assertSame(t, [subscription]);
    t.is(snapshots[subscription.service].status, 'on-hold');

    // The twin first: the service's pass ends every due pause in the shop, and the twin's is its own.
    await shop.call('subscription_activate', subscription.twin, { note: 'The pause has ended.', user_id: 0 });
    // Just past the pause's end, and before the next payment the day after, which Action Scheduler must not run yet.
    const later = new Date(Date.parse(`${asked.auto_reactivation.replace(' ', 'T')}Z`) + 60_000);
    t.is(await staff((services) => services.reactivatePausedSubscriptions.execute(later), () => later), 1);
    const ended = await assertSame(t, [subscription], Math.ceil((later.getTime() - Date.now()) / 1000) + 60);
    t.is(ended[subscription.service].status, 'active');
  });

  test.serial('pause of an active subscription: saved once, as by Subscriptions\' own update_status(\'on-hold\')', async (t) => {
    const { order, subscription } = await renewals();
    const own = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    // The due renewals paid: Subscriptions reactivates each subscription, so the pause moves it to on-hold.
    for (const id of [order.service, order.twin, own.renewal_order_id!]) await shop.call('order_payment_complete', id, { transaction_id: `paid-${id}` });
    await shop.runActions();
    const before = await shop.snapshot([subscription.service, subscription.twin, own.subscription_id!]);
    t.deepEqual(Object.values(before.by_id).map((object) => object.status), ['active', 'active', 'active']);
    await shop.logReset();

    const end = new Date(Date.now() + 10 * DAY).toISOString().slice(0, 10);
    const paused = await staff((services) => services.pauseSubscription.execute({ subscriptionId: subscription.service, endDate: end, actor: admin }));
    if (paused.kind !== 'paused') throw new Error(JSON.stringify(paused));
    const asked = await lastPayload<{ next_payment: string; auto_reactivation: string; note: string }>(subscription.service, 'subscription_pause');
    await shop.call('subscription_pause', subscription.twin, { ...asked, user_id: 1 });
    // How Subscriptions itself puts a subscription on hold (the customer's "Suspend", WCS_User_Change_Status_Handler).
    await shop.call('subscription_update_status', own.subscription_id!, { status: 'on-hold' });
    const snapshots = await assertSame(t, [subscription]);
    t.is(snapshots[subscription.service].status, 'on-hold');
    t.is(snapshots[subscription.service].subscription!.dates.next_payment?.slice(0, 16), asked.next_payment.slice(0, 16).replace(' ', 'T'));
    t.deepEqual(snapshots[subscription.service].meta._schedule_auto_reactivation, [asked.auto_reactivation]);

    const saves = (events: RecordedEvent[]) => ({
      woocommerce_update_order: events.filter((event) => event.kind === 'hook' && event.name === 'woocommerce_update_order').length,
      woocommerce_update_subscription: events.filter((event) => event.kind === 'hook' && event.name === 'woocommerce_update_subscription').length,
    });
    const ownSnapshot = (await shop.snapshot([own.subscription_id!])).by_id[own.subscription_id!];
    t.is(ownSnapshot.status, 'on-hold');
    t.deepEqual(saves(ownSnapshot.recorded), { woocommerce_update_order: 1, woocommerce_update_subscription: 1 }, 'Subscriptions\' own move to on-hold saves once');
    t.deepEqual(saves(snapshots[subscription.service].recorded), saves(ownSnapshot.recorded), 'the companion\'s pause fires each update hook once, as Subscriptions does');
    t.deepEqual(saves(snapshots[subscription.twin].recorded), saves(ownSnapshot.recorded), 'and so does the twin');
  });

  test.serial('force-activate', async (t) => {
    const { subscription } = await renewals();
    for (const id of [subscription.service, subscription.twin]) await shop.call('subscription_update_status', id, { status: 'on-hold' });
    const activated = await staff((services) => services.forceActivateSubscription.execute({ subscriptionId: subscription.service, actor: admin }));
    t.is(activated.kind, 'activated');
    await shop.call('subscription_activate', subscription.twin, { note: 'Force-activated by admin.', user_id: 1 });
    const snapshots = await assertSame(t, [subscription]);
    t.is(snapshots[subscription.service].status, 'active');
  });

  test.serial('cancellation reasons: recorded by the service alone; WooCommerce hears nothing', async (t) => {
    const { subscription } = await renewals();
    const reasonId = Number((await q<{ id: string }>(
      `INSERT INTO ${shop.prefix}posts (post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_type)
       VALUES (1, NOW(), UTC_TIMESTAMP(), '', 'Too expensive', '', 'publish', 'too-expensive', '', '', NOW(), UTC_TIMESTAMP(), '', 'cancellation_reason') RETURNING ID AS id`))[0].id);
    const before = await shop.snapshot([subscription.service]);
    await shop.logReset();
    const recorded = await staff((services) => services.recordCancellationReasons.execute({ subscriptionId: subscription.service, reasonPostIds: [reasonId], actor: admin }));
    t.is(recorded.kind, 'reasons');
    await shop.runActions();
    t.deepEqual(withoutLog(await shop.snapshot([subscription.service])), withoutLog(before));
    t.deepEqual(await shop.log(), []);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Renewal discounts reach the renewal (issue: a pending discount lowers the next renewal Subscriptions creates).

  interface Renewed { orderId: number; charged: number | null }

  /**
   * Makes the subscription's next payment due now and lets Action Scheduler run it, as on a renewal day:
   * Subscriptions creates the renewal order and asks the gateway to charge its total. A renewal still
   * awaiting payment is paid first, so the subscription is active.
   */
  async function renewNow(subscriptionId: number): Promise<Renewed> {
    const before = (await shop.snapshot([subscriptionId])).by_id[subscriptionId];
    for (const id of before.subscription!.related_orders) {
      const order = (await shop.snapshot([id])).by_id[id];
      if (order.status === 'pending' || order.status === 'failed') await shop.call('order_payment_complete', id, { transaction_id: `paid-${id}` });
    }
    // Far enough ahead that it is still in the future when PHP sets it on a loaded machine: Subscriptions schedules
    // no payment for a next payment date already past (the renewal would then never be made).
    const due = new Date(Date.now() + 8000).toISOString().slice(0, 19).replace('T', ' ');
    await shop.call('subscription_update_dates', subscriptionId, { dates: { next_payment: due } });
    await shop.logReset();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // A loaded machine may take longer than the wait to get here: whatever is due within the next half minute runs.
    await shop.runActions(30);
    const after = (await shop.snapshot([subscriptionId])).by_id[subscriptionId];
    const orderId = Math.max(...after.subscription!.related_orders.map(Number));
    if (before.subscription!.related_orders.map(Number).includes(orderId)) {
      throw new Error(`no renewal was created: ${JSON.stringify({ status: after.status, dates: after.subscription!.dates, notes: after.notes.slice(-4), actions: after.actions.slice(-4) })}`);
    }
    const charge = (await shop.log()).find((event) => event.name.startsWith('woocommerce_scheduled_subscription_payment_'));
    return { orderId, charged: charge ? Number(charge.detail.args?.[0]) : null };
  }

  const createDiscount = (subscription: number, type: number, amount: number | string) =>
    staff((services) => services.createDiscount.execute({ subscriptionId: subscription, typeId: type, amount, createdVia: null, orderId: null, createdBy: 1 }));
  const discountRow = async (id: number) => {
    const [row] = await q<{ status: string; order_id: string | null; applied_amount: string | null }>(`SELECT status, order_id, applied_amount FROM ${shop.prefix}sidecar_renewal_discounts WHERE id = ?`, [id]);
    return { ...row, order_id: row.order_id === null ? null : Number(row.order_id) };
  };
  const orderOf = async (id: number) => (await shop.snapshot([id])).by_id[id];
  const feesOf = (order: OrderSnapshot) => order.items.filter((item) => item.type === 'fee');
  const PERCENTAGE = 1;
  const FIXED = 2;

  async function subscriptionForDiscounts() {
    const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    return fixture.subscription_id!;
  }

  test.serial('renewal discount: a percentage lowers the next renewal, taxed as WooCommerce taxes it, then renewals are full price again', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const created = await createDiscount(subscription, PERCENTAGE, 15);
    if (created.kind !== 'created') throw new Error(JSON.stringify(created));
    t.is(created.discount.status, 'pending');
    const renewal = await renewNow(subscription);
    const order = await orderOf(renewal.orderId);
    t.is(order.data.total, '126.65', '149.00 less 15 % (22.35)');
    t.is(renewal.charged, 126.65, 'the gateway is asked for the lowered total');
    const [fee] = feesOf(order);
    t.like(fee.data, { total: '-17.88', total_tax: '-4.47' }, 'the discount split into net and 25 % VAT, as WooCommerce taxes a negative fee');
    t.is(order.data.total_tax, '25.33');
    t.like(await discountRow(created.discount.id), { status: 'applied', order_id: renewal.orderId, applied_amount: '22.35000000' });
    const view = await staff((services) => services.getDiscount.execute(created.discount.id));
    t.like(view, { status: 'applied', order: renewal.orderId, applied_amount: '22.35' });
    t.true(view!.order_edit_url.includes(String(renewal.orderId)));
    t.true(order.notes.some((note) => note.content.startsWith(`Renewal discount #${created.discount.id} (`)));

    t.deepEqual(await shop.call('order_calculate_totals', renewal.orderId), {
      op: 'order_calculate_totals', id: renewal.orderId,
      result: { total: '126.65', total_tax: '25.33', fees: [{ name: fee.data.name, total: '-17.88', total_tax: '-4.47' }] },
    }, 'WooCommerce\'s own calculate_totals() keeps the totals and taxes');

    const subscriptionAfter = await orderOf(subscription);
    t.is(subscriptionAfter.data.total, '149.00', 'the subscription itself is never changed');
    t.deepEqual(feesOf(subscriptionAfter), []);
    const next = await renewNow(subscription);
    t.is((await orderOf(next.orderId)).data.total, '149.00');
    t.is(next.charged, 149);
  });

  test.serial('renewal discount: several pending discounts all lower the one renewal, never below zero', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const ids: number[] = [];
    for (const [type, amount] of [[FIXED, 100], [PERCENTAGE, 10], [FIXED, 100]] as const) {
      const created = await createDiscount(subscription, type, amount);
      if (created.kind !== 'created') throw new Error(JSON.stringify(created));
      ids.push(created.discount.id);
    }
    const renewal = await renewNow(subscription);
    t.is((await orderOf(renewal.orderId)).data.total, '0.00');
    t.is(renewal.charged, null, 'Subscriptions asks no gateway to charge nothing');
    t.deepEqual((await Promise.all(ids.map(discountRow))).map((row) => [row.status, row.applied_amount]),
      [['applied', '100.00000000'], ['applied', '14.90000000'], ['applied', '34.10000000']], 'the last one takes only what was left');
  });

  test.serial('renewal discount: cancelled by staff, or its subscription cancelled, it lowers nothing', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const created = await createDiscount(subscription, FIXED, 20);
    if (created.kind !== 'created') throw new Error(JSON.stringify(created));
    t.is((await staff((services) => services.cancelDiscount.execute(created.discount.id))).kind, 'cancelled');
    const renewal = await renewNow(subscription);
    t.is((await orderOf(renewal.orderId)).data.total, '149.00');
    t.is((await discountRow(created.discount.id)).status, 'cancelled');

    const ending = await subscriptionForDiscounts();
    const pending = await createDiscount(ending, FIXED, 20);
    if (pending.kind !== 'created') throw new Error(JSON.stringify(pending));
    await shop.call('subscription_update_status', ending, { status: 'cancelled' });
    t.is((await discountRow(pending.discount.id)).status, 'cancelled', 'a subscription that ends takes its pending discounts with it');
  });

  test.serial('renewal discount: kept through a pause and a change of payment method, applied to the renewal after', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const created = await createDiscount(subscription, FIXED, 20);
    if (created.kind !== 'created') throw new Error(JSON.stringify(created));
    // On hold (the fixture's renewal is due and unpaid): no renewal is created, the discount waits.
    await shop.runActions();
    t.is((await discountRow(created.discount.id)).status, 'pending');
    await shop.call('subscription_set_payment_method', subscription, { gateway: 'vipps_recurring' });
    const renewal = await renewNow(subscription);
    t.is((await orderOf(renewal.orderId)).data.total, '129.00');
    t.is((await orderOf(renewal.orderId)).data.payment_method, 'vipps_recurring');
    t.like(await discountRow(created.discount.id), { status: 'applied', order_id: renewal.orderId });
  });

  test.serial('renewal discount: created after a renewal, it waits for the next one; edited before it, the edit counts; removed, nothing', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const first = await renewNow(subscription);
    const created = await createDiscount(subscription, FIXED, 20);
    if (created.kind !== 'created') throw new Error(JSON.stringify(created));
    t.is((await orderOf(first.orderId)).data.total, '149.00', 'the renewal made before the discount keeps its price');
    t.is((await discountRow(created.discount.id)).status, 'pending');
    // Edited where it is kept (the service's table is the plugin's store), before the renewal reads it.
    await q(`UPDATE ${shop.prefix}sidecar_renewal_discounts SET amount = 30 WHERE id = ?`, [created.discount.id]);
    const second = await renewNow(subscription);
    t.is((await orderOf(second.orderId)).data.total, '119.00');
    const removed = await createDiscount(subscription, FIXED, 20);
    if (removed.kind !== 'created') throw new Error(JSON.stringify(removed));
    await q(`DELETE FROM ${shop.prefix}sidecar_renewal_discounts WHERE id = ?`, [removed.discount.id]);
    const third = await renewNow(subscription);
    t.is((await orderOf(third.orderId)).data.total, '149.00');
  });

  test.serial('renewal discount: a lowered renewal that fails is retried for the lowered total, and the discount is not applied again', async (t) => {
    const subscription = await subscriptionForDiscounts();
    const created = await createDiscount(subscription, PERCENTAGE, 15);
    if (created.kind !== 'created') throw new Error(JSON.stringify(created));
    const renewal = await renewNow(subscription);
    const handle = `order-${renewal.orderId}`;
    failedCharge(handle);
    let now = new Date();
    const clock = () => now;
    await withHub((hub) => deliver(hub, { event_type: 'invoice_failed', invoice: handle }), clock);
    await shop.runActions();
    await q(`UPDATE ${shop.prefix}sidecar_payment_retries SET status = 'CANCELED' WHERE status = 'PENDING' AND order_id <> ?`, [renewal.orderId]);
    now = new Date(now.getTime() + DAY);
    card.queueChargeOutcome({ kind: 'settled' });
    t.like(await withHub((hub) => hub.runDueRetries.execute(), clock), { attempted: 1, succeeded: 1 });
    const charge = card.requestsTo('POST', '/v1/charge').at(-1)!.json as { handle: string; amount: number };
    t.deepEqual([charge.handle, charge.amount], [`${handle}-retry1`, 12665], 'charged the discounted total');
    await shop.runActions(2 * 86400);
    t.is((await orderOf(renewal.orderId)).status, 'processing');
    t.is(feesOf(await orderOf(renewal.orderId)).length, 1, 'the discount is on the order once');
    t.like(await discountRow(created.discount.id), { status: 'applied', order_id: renewal.orderId });
  });

}

/** A snapshot without the recorder's log (compared on its own, after a reset). */
function withoutLog(snapshot: { by_id: Record<string, OrderSnapshot> }): unknown {
  return Object.fromEntries(Object.entries(snapshot.by_id).map(([id, object]) => [id, { ...object, recorded: undefined }]));
}

/**
 * The service's dunning notes (the plan, and why there is none): the service runs the dunning, so it
 * writes them itself, straight to the order. A deliberate difference from the twin (docs/companion.md, "Where the service deliberately differs").
 */
export const DUNNING_NOTE = /^(Payment failed: |No new payment attempt is planned|The "Payment method needed" e-mail )/;

/** The companion's e-mail asking the customer for a new payment method: sent for the service's dunning only. */
export const DUNNING_EMAIL = 'shop_sidecar_payment_method_needed';
const DUNNING_EMAIL_NOTE = /^The "Payment method needed" e-mail /;

/**
 * What WooCommerce recorded, without the dunning e-mail and the note_added hook of the note the companion
 * adds after it (the note itself is one of the DUNNING_NOTE notes left out). Every note_added hook looks the
 * same once compared, so the last ones go.
 */
function withoutDunningMail(snapshot: OrderSnapshot): OrderSnapshot['recorded'] {
  let notes = snapshot.notes.filter((note) => DUNNING_EMAIL_NOTE.test(note.content)).length;
  const kept: OrderSnapshot['recorded'] = [];
  for (const event of [...snapshot.recorded].reverse()) {
    if (event.kind === 'mail' && event.name === DUNNING_EMAIL) continue;
    if (notes > 0 && event.kind === 'hook' && event.name === 'woocommerce_order_note_added') { notes -= 1; continue; }
    kept.unshift(event);
  }
  return kept;
}

const REFUND_HOOKS = ['woocommerce_order_refunded', 'woocommerce_refund_created'];

/** Unix times (Subscriptions keeps some dates so): compared to the day, as the other times. */
const UNIX_TIME = /^1[6-9]\d{8}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/;

/**
 * A snapshot with what must differ between two objects made seconds apart taken out: their IDs (as
 * placeholders, also inside notes, handles and hook arguments; provider references by `aliases`), row IDs of notes, items and actions,
 * order keys, and times (kept to the day, where the day is what Subscriptions decides). The companion's
 * own hand-over action is left out: it is how the change reached WooCommerce, not a consequence of it.
 */
export function comparable(snapshot: OrderSnapshot, placeholders: Map<number, string>, aliases: [string, string][] = []): unknown {
  const replaceIds = (text: string) => aliases.reduce((out, [from, to]) => out.split(from).join(to), text).replace(/(^|[^\d.])(\d+)(?![\d.])/g, (all, lead: string, digits: string) => {
    const placeholder = placeholders.get(Number(digits));
    return placeholder ? `${lead}${placeholder}` : all;
  });
  const dropped = new Set(['refunds', 'note_id', 'id', 'action_id', 'order_key', 'cart_hash', 'date_modified', 'seq', 'date_created', 'customer_ip_address', 'permission_id', 'download_id', 'order_item_id', 'refund_id', 'parent_id']);
  const walk = (value: unknown, key = ''): unknown => {
    if (UNIX_TIME.test(String(value))) return new Date(Number(value) * 1000).toISOString().slice(0, 10);
    if (typeof value === 'number') return placeholders.get(value) ?? value;
    // Both orders take from one product's stock, one after the other: the step is what must agree.
    if (typeof value === 'string') return DATE_TIME.test(value) ? value.slice(0, 10) : replaceIds(value).replace(/(\d+)&rarr;(\d+)/g, (_all, from: string, to: string) => `-${Number(from) - Number(to)}`);
    if (Array.isArray(value)) return value.map((item) => walk(item, key));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (dropped.has(k)) continue;
        out[replaceIds(k)] = walk(v, k);
      }
      return out;
    }
    return value;
  };
  const normalised = walk({
    ...snapshot,
    // A refund is a row of its own, numbered as it comes; which refund it was is what the hook says. The
    // e-mail asking for a new payment method is the service's dunning, which the twin does not run.
    recorded: withoutDunningMail(snapshot).map((event) => (REFUND_HOOKS.includes(event.name)
      ? { ...event, detail: { ...event.detail, args: event.detail.args?.map((arg, index) => (index === (event.name === 'woocommerce_refund_created' ? 0 : 1) ? 'refund' : arg)) } }
      : event)),
    notes: snapshot.notes.filter((note) => !DUNNING_NOTE.test(note.content)),
    actions: snapshot.actions.filter((action) => action.hook !== 'shop_sidecar_apply_change'),
  }) as OrderSnapshot;
  // Analytics imports are debounced per order: how many ran depends on timing, not on what was done.
  const seen = new Set<string>();
  normalised.actions = normalised.actions.filter((action) => {
    const key = JSON.stringify(action);
    return !seen.has(key) && Boolean(seen.add(key));
  });
  return normalised;
}
