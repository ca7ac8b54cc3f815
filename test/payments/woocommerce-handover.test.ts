import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { setOption } from '../../src/demo/woocommerce-schema';
import { hposIsAuthoritative, settingsFromOptions } from '../../src/data-access/shop-settings-repository';
import { cardGatewayDelivery, FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { handleWalletEvent, openHub, startTestWorker } from '../support/payment-hub-fixture';
import { basic, request } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type TestShop } from '../support/test-shop';
import { OPEN_PAYMENT_OF } from '../../entities/woocommerce-changes';

// With the companion plugin in WordPress, the service decides and WooCommerce writes: these check the
// hand-over through the service's own surface, with no PHP. test/woocommerce runs the real plugins.

const HOUR = 3600_000;
let shop: TestShop;
let card: FakeCardGateway;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const changesOf = (objectId: number) => q(`SELECT * FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [objectId]);
const statusOf = async (id: number) => (await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]))[0].post_status;
const notesOf = (id: number) => q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ?`, [id]);

async function companionSeen(at: Date) {
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(at.getTime() / 1000) }), 'no');
}

async function processCardGatewayEvent(hub: PaymentHub, event: CardGatewayDeliveryEvent) {
  const delivery = cardGatewayDelivery(event, card.webhookSecret);
  const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
  if (stored.kind !== 'stored') throw new Error('not stored');
  return hub.processCardGatewayWebhook.execute(stored.id);
}

test.before(async () => {
  shop = await createTestShop('handover', { hpos: false });
  card = new FakeCardGateway();
  await card.start();
  await companionSeen(new Date());
});

test.after.always(async () => {
  await card?.stop();
  await shop?.drop();
});

async function renewalOrder() {
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date('2026-10-23T08:00:00Z'), nextPaymentGmt: now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  return { subscriptionId, orderId, handle: `order-${orderId}` };
}

test.serial('When a renewal payment fails, Then WooCommerce is asked to fail the order in the same transaction, the shop rows are left to it, and the retry is planned', async (t) => {
  const hub = await openHub(shop.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey }), clock);
  try {
    const { subscriptionId, orderId, handle } = await renewalOrder();
    card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-h', error: 'insufficient_funds', error_state: 'soft_declined' });
    t.like(await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: handle }), { kind: 'done', status: 'PROCESSED' });

    const [change] = await changesOf(orderId);
    t.like(change, { op: 'order_payment_failed', status: 'pending' });
    // The shop is Danish (WPLANG da_DK): the note WooCommerce is handed is in Danish, the code only as a detail.
    t.deepEqual(JSON.parse(change.payload), { note: `Betalingen ${handle} mislykkedes: ikke penge nok på kortet (insufficient_funds).` });
    const [action] = await q(
      `SELECT a.hook, a.status, a.args, a.priority, a.scheduled_date_gmt, g.slug FROM ${shop.prefix}actionscheduler_actions a
       JOIN ${shop.prefix}actionscheduler_groups g ON g.group_id = a.group_id WHERE a.action_id = ?`, [change.action_id]);
    t.deepEqual(action, { hook: 'shop_sidecar_apply_change', status: 'pending', args: `[${change.id}]`, priority: 5, scheduled_date_gmt: '2026-11-23 08:00:00', slug: 'shop-sidecar' });

    t.is(await statusOf(orderId), 'wc-pending', 'WooCommerce changes the order, not the service');
    t.is(await statusOf(subscriptionId), 'wc-active');
    // Dunning's own notes are the service's, written directly (a deliberate difference, docs/companion.md).
    t.deepEqual(await notesOf(orderId), [{ comment_content: 'Betalingen mislykkedes: ikke penge nok på kortet (insufficient_funds). Vi prøver igen 23. november 2026 kl. 21:00 (forsøg 1 af 5).' }]);
    const retries = await q(`SELECT attempt, status FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId]);
    t.deepEqual(retries, [{ attempt: 1, status: 'PENDING' }], 'the subscription is about to be on hold, so dunning goes on');

    // Settled later: WooCommerce completes the order, after the failure it was handed first.
    card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-h' });
    t.like(await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle, timestamp: '2026-11-23T08:00:07.250Z' }), { kind: 'done', status: 'PROCESSED' });
    const changes = await changesOf(orderId);
    t.deepEqual(changes.map((row) => row.op), ['order_payment_failed', 'order_payment_complete']);
    // The gateway's time of the settlement becomes the order's date_paid and is in its note, in the shop's time.
    t.deepEqual(JSON.parse(changes[1].payload), { transaction_id: handle, note: `Betalingen ${handle} blev trukket 23. november 2026 kl. 09:00.`, paid_at: 1795420807 });

    // A repeat of the event changes nothing and asks nothing more.
    t.like(await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: handle }), { kind: 'done', status: 'SKIPPED' });
    t.is((await changesOf(orderId)).length, 2);
  } finally {
    await hub.close();
  }
});

test.serial('When a renewal of a subscription pending cancellation fails, Then no retry is planned', async (t) => {
  const hub = await openHub(shop.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey }), clock);
  try {
    const subscriptionId = await shop.seeder.createSubscription({ status: 'pending-cancel', total: '99.00', endGmt: new Date(now.getTime() + 240 * HOUR) });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 9900, customer: 'cust-h', error: 'insufficient_funds', error_state: 'soft_declined' });
    await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: `order-${orderId}` });
    t.deepEqual((await changesOf(orderId)).map((row) => row.op), ['order_payment_failed']);
    t.deepEqual(await q(`SELECT * FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ?`, [orderId]), []);
  } finally {
    await hub.close();
  }
});

test.serial('When the invoice is refunded in two parts, Then each event asks WooCommerce for the refunded total so far', async (t) => {
  const hub = await openHub(shop.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey }), clock);
  try {
    const orderId = await shop.seeder.createOrder({ status: 'processing', total: '300.00', currency: 'DKK' });
    const handle = `order-${orderId}`;
    card.setInvoice(handle, { state: 'settled', amount: 30000, customer: 'cust-r', refunded_amount: 10000 });
    await processCardGatewayEvent(hub, { event_type: 'invoice_refund', invoice: handle });
    card.setInvoice(handle, { state: 'settled', amount: 30000, customer: 'cust-r', refunded_amount: 25000 });
    await processCardGatewayEvent(hub, { event_type: 'invoice_refund', invoice: handle });
    const changes = await changesOf(orderId);
    t.deepEqual(changes.map((row) => [row.op, JSON.parse(row.payload).refunded_total]), [['order_refunded', '100.00'], ['order_refunded', '250.00']]);
    t.is(await statusOf(orderId), 'wc-processing');
  } finally {
    await hub.close();
  }
});

test.serial('When a wallet charge is refunded in two parts (from the order screen, whose answer was lost, or in the wallet\'s portal), Then each refund event asks WooCommerce for the charge\'s refunded total so far', async (t) => {
  const wallet = new FakeMobileWallet();
  await wallet.start();
  const signing = { secret: 'wallet-secret-handover', url: 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet' };
  const hub = await openHub(shop.config({
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: signing.url, MOBILE_WALLET_WEBHOOK_SECRET: signing.secret,
  }), clock);
  try {
    await hub.registrations.add({ registrationId: 'reg-handover', url: signing.url, events: ['recurring.charge-refunded.v1'], secret: signing.secret });
    const orderId = await shop.seeder.createOrder({ status: 'processing', total: '300.00', currency: 'DKK', meta: { _charge_id: 'chr-refunded', _agreement_id: 'agr-refunded' } });
    wallet.setAgreement('agr-refunded');
    wallet.setCharge('agr-refunded', 'chr-refunded', { status: 'PARTIALLY_REFUNDED', amount: 30000, currency: 'DKK', summary: { captured: 30000, refunded: 10000, cancelled: 0 } });
    t.is(await handleWalletEvent(hub, { eventType: 'recurring.charge-refunded.v1', agreementId: 'agr-refunded', chargeId: 'chr-refunded' }, signing), 'PROCESSED');
    wallet.setCharge('agr-refunded', 'chr-refunded', { status: 'REFUNDED', amount: 30000, currency: 'DKK', summary: { captured: 30000, refunded: 30000, cancelled: 0 } });
    t.is(await handleWalletEvent(hub, { eventType: 'recurring.charge-refunded.v1', agreementId: 'agr-refunded', chargeId: 'chr-refunded' }, signing), 'PROCESSED');
    const changes = await changesOf(orderId);
    t.deepEqual(changes.map((row) => [row.op, JSON.parse(row.payload).refunded_total, JSON.parse(row.payload).reason]), [
      ['order_refunded', '100.00', 'Refunded at the mobile wallet (charge chr-refunded).'],
      ['order_refunded', '300.00', 'Refunded at the mobile wallet (charge chr-refunded).'],
    ]);
    t.is((await q(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'mobile_wallet' AND external_id = 'chr-refunded'`))[0].status, 'REFUNDED');
  } finally {
    await hub.close();
    await wallet.stop();
  }
});

test('WooCommerce\'s own rule for which store is authoritative, by version', (t) => {
  const options = (entries: Record<string, string>) => new Map(Object.entries(entries));
  t.false(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'no' })));
  t.true(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'yes' })), 'an unknown version is a current one');
  t.true(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'yes', woocommerce_version: '10.0.2', woocommerce_feature_custom_order_tables_enabled: 'no' })));
  t.false(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'yes', woocommerce_version: '7.9.0' })), 'before 8.1 the feature had to be on too');
  t.false(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'yes', woocommerce_version: '8.0.3', woocommerce_feature_custom_order_tables_enabled: 'no' })));
  t.true(hposIsAuthoritative(options({ woocommerce_custom_orders_table_enabled: 'yes', woocommerce_version: '7.9.0', woocommerce_feature_custom_order_tables_enabled: 'yes' })));
});

test('The companion counts as present while it has been heard from within three days', (t) => {
  const at = new Date('2026-11-23T08:00:00Z');
  const seen = (daysAgo: number, version = 1) => new Map([['shop_sidecar_companion', JSON.stringify({ version, seen: at.getTime() / 1000 - daysAgo * 86400 })]]);
  t.true(settingsFromOptions(seen(0), at).companion);
  t.true(settingsFromOptions(seen(2.9), at).companion);
  t.false(settingsFromOptions(seen(3.1), at).companion, 'a removed companion is noticed');
  t.false(settingsFromOptions(seen(0, 6), at).companion, 'a version the service does not know is not used');
  t.false(settingsFromOptions(new Map([['shop_sidecar_companion', 'not json']]), at).companion);
  t.false(settingsFromOptions(new Map(), at).companion);
});

test.serial('When changes were applied more than 31 days ago, Then the worker deletes them; newer ones, and pending or failed ones of any age, stay', async (t) => {
  const table = `${shop.prefix}sidecar_woocommerce_changes`;
  const day = 24 * HOUR;
  const base = now.getTime();
  const at = (ms: number) => new Date(base - ms).toISOString().replace('T', ' ').replace('Z', '');
  const rows: [string, string, string | null][] = [
    ['applied', at(40 * day), at(40 * day)],
    ['applied', at(32 * day), at(32 * day - HOUR)],
    ['applied', at(30 * day), at(30 * day)],
    ['pending', at(60 * day), null],
    ['failed', at(60 * day), at(60 * day)],
  ];
  const objectId = 987_654;
  for (const [status, created, applied] of rows) {
    await q(`INSERT INTO ${table} (op, object_id, payload, status, attempts, created_at, applied_at) VALUES ('order_payment_failed', ?, '{}', ?, 1, ?, ?)`, [objectId, status, created, applied]);
  }
  const worker = await startTestWorker(shop.config(), { clock: () => new Date(base) });
  try {
    await worker.tick();
  } finally {
    await worker.stop();
  }
  const left = await changesOf(objectId);
  t.deepEqual(left.map((row) => [row.status, row.created_at.slice(0, 10)]), [['applied', at(30 * day).slice(0, 10)], ['pending', at(60 * day).slice(0, 10)], ['failed', at(60 * day).slice(0, 10)]]);
});

test('The migrated open_payment_of column is the entity\'s expression, as MariaDB keeps it', async (t) => {
  const [column] = await q(
    'SELECT generation_expression AS expression, is_generated AS generated FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?',
    [`${shop.prefix}sidecar_woocommerce_changes`, 'open_payment_of']);
  // MariaDB writes it back with backticks, lower-case keywords and no spaces after commas.
  const plain = (sql: string) => sql.replace(/[`\s]/g, '').toLowerCase();
  t.is(column.generated, 'ALWAYS');
  t.is(plain(column.expression), plain(OPEN_PAYMENT_OF));
});

test.serial('When a settled payment waits for WooCommerce to apply it, Then the order status route already reports the order paid, from the moment the provider took the money', async (t) => {
  const hub = await openHub(shop.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey }), () => new Date());
  const api = await startApi(shop.config({ CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey }));
  try {
    const orderId = await shop.seeder.createOrder({ status: 'failed', total: '149.00', currency: 'DKK', billing: { email: 'paid.meanwhile@example.dk', phone: '', country: 'DK' } });
    const lookup = () => request(api.url, 'POST', '/helpdesk/v1/order-status', {
      headers: { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' },
      body: { order_number: String(orderId), email: 'paid.meanwhile@example.dk' },
    });
    t.like((await lookup()).json, { status: 'failed', needs_payment: true, date_paid: null });

    card.setInvoice(`order-${orderId}`, { state: 'settled', amount: 14900 });
    // The gateway took the money half a minute before its webhook was processed.
    const settledAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 30_000);
    t.like(await processCardGatewayEvent(hub, { event_type: 'invoice_settled', invoice: `order-${orderId}`, timestamp: settledAt.toISOString() }), { kind: 'done', status: 'PROCESSED' });
    t.is(await statusOf(orderId), 'wc-failed', 'WooCommerce has not applied it yet');
    const answer = (await lookup()).json;
    t.like(answer, { status: 'processing', needs_payment: false });
    t.is(Date.parse(answer.date_paid), settledAt.getTime(), `paid when the gateway took the money: ${answer.date_paid}`);
  } finally {
    await api.stop();
    await hub.close();
  }
});
