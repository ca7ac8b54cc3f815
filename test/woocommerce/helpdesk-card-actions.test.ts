import path from 'node:path';
import mysql from 'mysql2/promise';
import test, { type ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { request, type TestResponse } from '../support/http-client';
import { openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { openStaffServices } from '../support/staff-api';
import { startApi, type RunningApi } from '../support/test-shop';
import { WP_SECRETS_ENV } from '../support/wordpress-fixtures';
import { comparable } from './service-matches-woocommerce';
import { shopManagerSession } from './support/shop-manager-session';
import { createWooCommerceShop, type OrderSnapshot, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * Issue 50: an action taken from the helpdesk card (Dixa) leaves what the same action from WP admin leaves. Two
 * identical subscriptions (or failed renewals) of one customer: one acted on through the card's signed link and its
 * confirmation page, the other through the staff route WP admin's panels call, as the same shop manager. After
 * Action Scheduler has run, both agree on data, meta, notes (their authors too), scheduled actions, the e-mails
 * WordPress would send and the hooks other plugins hear; only the notes of the card's action add "via Dixa".
 * Real WordPress + WooCommerce + Subscriptions with the companion; the service's API and payment hub in this process.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const MANAGER = { login: 'dorte.dixa', displayName: 'Dorte Dixa', password: 'dorte-dixa-test-password' };
const CUSTOMER_EMAIL = 'kunde@example.dk';
const CARD_TOKEN = 'helpdesk-card-token-of-the-wordpress-suite';

interface Pair { service: number; twin: number }

function cardActionTwins(mode: StorageMode): void {
  const title = (what: string) => `current ${mode}: ${what}`;
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
  let api: RunningApi;
  let headers: Record<string, string>;
  let agentEmail = '';
  const related: Pair[] = [];
  const q = async <T = Record<string, any>>(sql: string, values: unknown[] = []) => (await db.query(sql, values))[0] as T[];

  test.before(async () => {
    shop = await createWooCommerceShop(`card_actions_${mode}`, 'current', mode, { companion: COMPANION });
    card = new FakeCardGateway();
    await card.start();
    db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: shop.dbName, connectionLimit: 2, dateStrings: true });
    const [{ option_value: siteUrl }] = await q<{ option_value: string }>(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'siteurl'`);
    config = loadConfig({
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: '0', SHOP_URL: siteUrl, ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV,
      CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
      RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0', HELPDESK_CARD_TOKEN: CARD_TOKEN,
    });
    const migrations = createShopDataSource(config.db, 1);
    await migrations.initialize();
    await migrations.runMigrations();
    await migrations.destroy();
    const session = await shopManagerSession(shop, MANAGER, siteUrl);
    headers = session.headers;
    agentEmail = (await q<{ user_email: string }>(`SELECT user_email FROM ${shop.prefix}users WHERE ID = ?`, [session.id]))[0]!.user_email;
    hub = await openHub(config, () => new Date());
    api = await startApi(config);
  });

  test.after.always(async () => {
    await api?.stop();
    await hub?.close().catch(() => undefined);
    await db?.end();
    await card?.stop();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  });

  /** WP admin's way: the staff route its panel calls, with the shop manager's cookie and nonce. */
  const fromWpAdmin = (path: string, body: Record<string, unknown> = {}): Promise<TestResponse> => request(api.url, 'POST', path, { headers, body });

  /** The card's way: Dixa asks for the card of the customer's conversation, the agent opens the link and confirms. */
  async function fromCard(t: ExecutionContext, subscriptionId: number, action: string, fields: Record<string, string> = {}): Promise<void> {
    // The customer index as the worker keeps it: the card matches the customer through it.
    const staff = await openStaffServices(config);
    try {
      await staff.refreshCustomerContacts.execute();
    } finally {
      await staff.close();
    }
    const answer = await request(api.url, 'GET', `/helpdesk/v1/card?email=${encodeURIComponent(CUSTOMER_EMAIL)}&agent=${encodeURIComponent(agentEmail)}`, {
      headers: { authorization: `Bearer ${CARD_TOKEN}`, 'x-forwarded-proto': 'https' },
    });
    t.is(answer.status, 200, answer.text);
    const subscription = (answer.json.subscriptions as any[]).find((s) => s.id === subscriptionId);
    t.truthy(subscription, `subscription ${subscriptionId} on the card`);
    const link = [...subscription.actions, ...(subscription.failed_renewal?.actions ?? [])].find((a: any) => a.action === action);
    t.truthy(link, `${action} offered on the card: ${JSON.stringify(subscription)}`);
    const path = new URL(link.url).pathname;
    t.is((await request(api.url, 'GET', path)).status, 200, 'the confirmation page');
    const done = await request(api.url, 'POST', path, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(new URLSearchParams(fields).toString()) });
    t.is(done.status, 200, done.text);
  }

  async function lastPayload<T>(id: number, op: string): Promise<T> {
    const [row] = await q<{ payload: string }>(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = ? ORDER BY id DESC LIMIT 1`, [id, op]);
    if (!row) throw new Error(`the service handed over no ${op} for ${id}`);
    return JSON.parse(row.payload) as T;
  }

  /** Two identical renewals of the customer whose card charge failed (a soft decline), handled by the service. */
  async function failedRenewals(customer: string) {
    const a = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const b = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    related.push({ service: a.order_id, twin: b.order_id });
    const order = { service: a.renewal_order_id!, twin: b.renewal_order_id! };
    const subscription = { service: a.subscription_id!, twin: b.subscription_id! };
    card.setPaymentMethod(`ca-${customer}`, { customer });
    for (const id of [order.service, order.twin]) {
      card.setCharge(`order-${id}`, { state: 'failed', amount: 14900, customer, error: 'insufficient_funds', error_state: 'soft_declined' });
      const processed = await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: `order-${id}` }, card.webhookSecret);
      if (processed !== 'PROCESSED') throw new Error(`the failure was not processed: ${processed}`);
    }
    await lastPayload(order.twin, 'order_payment_failed');
    const ran = await shop.runActions();
    if (ran.failures.length) throw new Error(JSON.stringify(ran.failures));
    await shop.logReset();
    return { order, subscription };
  }

  /** Runs WooCommerce's queue, then compares each pair with " via Dixa" taken out of the card's notes; the snapshots. */
  async function assertSame(t: ExecutionContext, pairs: Pair[]): Promise<Record<string, OrderSnapshot>> {
    const ran = await shop.runActions();
    t.deepEqual(ran.failures, [], 'every scheduled action ran without error');
    t.deepEqual(await q(`SELECT id, op, status, result FROM ${shop.prefix}sidecar_woocommerce_changes WHERE status <> 'applied'`), [], 'every change was applied');
    const { by_id: snapshots } = await shop.snapshot(pairs.flatMap((pair) => [pair.service, pair.twin]));
    const placeholders = new Map<number, string>();
    pairs.forEach((pair, index) => { placeholders.set(pair.service, `#${index}`); placeholders.set(pair.twin, `#${index}`); });
    related.forEach((pair, index) => { placeholders.set(pair.service, `#r${index}`); placeholders.set(pair.twin, `#r${index}`); });
    for (const [index, pair] of pairs.entries()) {
      t.deepEqual(comparable(snapshots[pair.service], placeholders, [[' via Dixa', '']]), comparable(snapshots[pair.twin], placeholders),
        `object #${index} (${pair.service} from the card, ${pair.twin} from WP admin)`);
    }
    return snapshots;
  }

  const dixaNotes = (snapshot: OrderSnapshot) => snapshot.notes.filter((note) => note.content.includes('via Dixa'));

  inTurn('Pause from the card leaves what the pause from WP admin leaves: the dates, the scheduled reactivation, the note (the card\'s "via Dixa")', async (t) => {
    const a = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const b = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    related.push({ service: a.order_id, twin: b.order_id });
    if (a.renewal_order_id && b.renewal_order_id) related.push({ service: a.renewal_order_id, twin: b.renewal_order_id });
    await shop.runActions();
    await shop.logReset();
    const endDate = new Date(Date.now() + 12 * 86_400_000).toISOString().slice(0, 10);
    await fromCard(t, a.subscription_id!, 'pause', { end_date: endDate });
    const admin = await fromWpAdmin(`/subscription-support/v1/subscription/${b.subscription_id}/pause`, { end_date: endDate });
    t.is(admin.status, 200, admin.text);
    const snapshots = await assertSame(t, [{ service: a.subscription_id!, twin: b.subscription_id! }]);
    t.is(snapshots[a.subscription_id!].status, 'on-hold');
    t.is(dixaNotes(snapshots[a.subscription_id!]).length, 1, 'one note, the agent\'s, via Dixa');
    t.is(dixaNotes(snapshots[b.subscription_id!]).length, 0);
  });

  inTurn('Send payment link from the card leaves what the Payments panel\'s leaves: the customer\'s e-mail once, the note (the card\'s "via Dixa")', async (t) => {
    const { order, subscription } = await failedRenewals(`cust-card-link-${mode}`);
    await fromCard(t, subscription.service, 'payment_link');
    const admin = await fromWpAdmin(`/payment-hub/v1/orders/${order.twin}/payment-link`);
    t.is(admin.status, 200, admin.text);
    const snapshots = await assertSame(t, [order, subscription]);
    t.is(dixaNotes(snapshots[order.service]).length, 1, 'the staff member\'s note, via Dixa');
    const mails = (id: number) => snapshots[id].recorded.filter((event) => event.kind === 'mail').length;
    t.is(mails(subscription.service), mails(subscription.twin));
  });

  inTurn('Force-activate from the card leaves what WP admin\'s leaves: the subscription active, its note', async (t) => {
    const { order, subscription } = await failedRenewals(`cust-card-activate-${mode}`);
    await fromCard(t, subscription.service, 'force_activate');
    const admin = await fromWpAdmin(`/subscription-support/v1/subscription/${subscription.twin}/force-activate`);
    t.is(admin.status, 200, admin.text);
    const snapshots = await assertSame(t, [order, subscription]);
    t.is(snapshots[subscription.service].status, 'active');
    t.is(dixaNotes(snapshots[subscription.service]).length, 1);
  });
}

cardActionTwins('hpos');
cardActionTwins('posts');
