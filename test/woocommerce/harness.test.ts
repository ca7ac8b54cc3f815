import test, { type ExecutionContext } from 'ava';
import { differences, VOLATILE_PATHS } from './support/compare';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop, type WooCommerceStack, type RecordedEvent } from './support/woocommerce-shop';

/**
 * Proves the harness on each stack and storage mode: a real shop installs, its fixtures behave as WooCommerce
 * Subscriptions does, the recorder sees hooks and e-mails, Action Scheduler work runs, and two twins made
 * the same way compare equal. One test per shop (steps share the shop's recorder and queue); the shops run in
 * parallel.
 */
const CASES: Array<[WooCommerceStack, StorageMode]> = [
  ['current', 'hpos'],
  ['current', 'hpos-sync'],
  ['current', 'posts'],
  ['older', 'posts'],
];

const shops: WooCommerceShop[] = [];

test.after.always(async () => {
  if (process.env.SIDECAR_WC_KEEP === '1') return; // keep the databases to look at a failure
  await Promise.all(shops.map((shop) => shop.drop()));
});

const names = (events: RecordedEvent[], kind: 'hook' | 'mail') => events.filter((e) => e.kind === kind).map((e) => e.name);
/** What the recorder saw for an id since seq `after`. */
const since = (events: RecordedEvent[], after: number) => events.filter((e) => e.seq > after);
const lastSeq = async (shop: WooCommerceShop) => (await shop.log()).reduce((max, e) => Math.max(max, e.seq), 0);

async function failedRenewalTwin(t: ExecutionContext, shop: WooCommerceShop): Promise<void> {
  const fx = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', meta: { _sidecar_marker: 'twin' } });
  const renewalId = fx.renewal_order_id!;
  const subscriptionId = fx.subscription_id!;
  await shop.runActions(); // the fixture's own queued work, so what follows is the twin's
  const before = await shop.snapshot([renewalId, subscriptionId]);
  // As Subscriptions leaves them while the gateway charges: the subscription held, the renewal pending.
  t.is(before.by_id[subscriptionId].status, 'on-hold');
  t.is(before.by_id[subscriptionId].subscription!.suspension_count, 1);
  t.false(before.by_id[subscriptionId].subscription!.is_manual, 'Subscriptions takes the test gateway as automatic');
  t.truthy(before.by_id[subscriptionId].actions.find((a) => a.hook === 'woocommerce_scheduled_subscription_payment' && a.status === 'complete'));
  t.is(before.by_id[renewalId].status, 'pending');
  t.is(before.by_id[renewalId].data.payment_method, 'reepay_checkout');
  t.deepEqual(before.by_id[renewalId].meta._sidecar_marker, ['twin']);
  t.deepEqual(before.by_id[renewalId].meta._subscription_renewal, [String(subscriptionId)]);

  const mark = await lastSeq(shop);
  await shop.call('order_update_status', renewalId, { status: 'failed', note: 'Betaling afvist.' });
  const after = await shop.snapshot([renewalId, subscriptionId]);
  const renewal = after.by_id[renewalId];
  const subscription = after.by_id[subscriptionId];
  t.is(renewal.status, 'failed');
  t.is(subscription.status, 'on-hold', 'Subscriptions keeps the subscription on hold');
  t.log(`failed renewal twin, suspension count ${before.by_id[subscriptionId].subscription!.suspension_count} -> ${subscription.subscription!.suspension_count}`);
  t.falsy(subscription.actions.find((a) => a.hook === 'woocommerce_scheduled_subscription_payment' && a.status === 'pending'),
    'no next payment is scheduled while on hold');

  const renewalEvents = since(renewal.recorded, mark);
  const subscriptionEvents = since(subscription.recorded, mark);
  t.true(names(renewalEvents, 'hook').includes('woocommerce_order_status_failed'));
  t.true(names(subscriptionEvents, 'hook').includes('woocommerce_subscription_renewal_payment_failed'));
  t.deepEqual(names(renewalEvents, 'mail').sort(), ['customer_renewal_invoice', 'failed_order']);
  t.log(`failed renewal twin, renewal hooks: ${names(renewalEvents, 'hook').join(', ')}`);
  t.log(`failed renewal twin, subscription hooks: ${names(subscriptionEvents, 'hook').join(', ')}`);
  t.log(`failed renewal twin, e-mails: ${renewalEvents.filter((e) => e.kind === 'mail').map((e) => `${e.name} -> ${e.detail.to}`).join(', ')}`);
  t.log(`failed renewal twin, renewal meta keys: ${Object.keys(renewal.meta).join(', ')}`);

  t.not(renewal.analytics.order_stats?.status, 'wc-failed', 'Analytics imports later, through Action Scheduler');
  t.truthy(renewal.actions.find((a) => a.hook === 'wc-admin_import_orders' && a.status === 'pending'));
  const ran = await shop.runActions();
  t.deepEqual(ran.failures, []);
  const imported = (await shop.snapshot([renewalId])).by_id[renewalId];
  t.is(imported.analytics.order_stats?.status, 'wc-failed');
}

async function paymentCompleteTwins(t: ExecutionContext, shop: WooCommerceShop): Promise<void> {
  const a = await shop.fixture({ kind: 'order', gateway: 'vipps_recurring' });
  const b = await shop.fixture({ kind: 'order', gateway: 'vipps_recurring' });
  await shop.runActions();
  const stockBefore = (await shop.snapshot([a.order_id])).by_id[a.order_id].products[a.physical_product_id].stock_quantity!;

  const mark = await lastSeq(shop);
  await shop.call('order_payment_complete', a.order_id, { transaction_id: 'txn-a' });
  await shop.call('order_payment_complete', b.order_id, { transaction_id: 'txn-b' });
  await shop.runActions();
  const snap = await shop.snapshot([a.order_id, b.order_id]);
  const order = snap.by_id[a.order_id];
  t.is(order.status, 'processing', 'a physical item needs processing');
  t.is(order.data.transaction_id, 'txn-a');
  t.truthy(order.data.date_paid);
  const physical = order.items.find((i) => i.type === 'line_item' && i.data.product_id === a.physical_product_id)!;
  t.deepEqual(physical.meta._reduced_stock, ['1']);
  t.is(order.products[a.physical_product_id].stock_quantity, stockBefore - 2, 'both twins reduced stock');
  t.is(order.download_permissions.length, 1);
  t.is(Number(order.download_permissions[0].product_id), a.download_product_id);
  t.is(order.analytics.order_stats?.status, 'wc-processing');
  const events = since(order.recorded, mark);
  t.log(`payment_complete twin, hooks: ${names(events, 'hook').join(', ')}`);
  t.log(`payment_complete twin, e-mails: ${events.filter((e) => e.kind === 'mail').map((e) => `${e.name} -> ${e.detail.to}`).join(', ')}`);
  t.log(`payment_complete twin, notes: ${order.notes.map((n) => n.content).join(' | ')}`);

  // Two orders made and paid the same way are the same, once their own ids, generated keys and transaction ids
  // are set aside (and the stock levels in the note, as the twins share the product: 100→99, then 99→98).
  const options = {
    ids: [[a.order_id, b.order_id, 'ORDER']] as Array<[number, number, string]>,
    ignore: VOLATILE_PATHS,
    timeToleranceSeconds: 120,
    normalise: (path: string, value: unknown) =>
      (typeof value === 'string' && /^notes\.\d+\.content$/.test(path) ? value.replace(/\d+&rarr;\d+/, 'N&rarr;N') : value),
  };
  t.deepEqual(differences(order, snap.by_id[b.order_id], options), []);
  // ...and the comparison does see what differs.
  const withTransactionIds = differences(order, snap.by_id[b.order_id], { ...options, transactionIds: true });
  t.true(withTransactionIds.includes('data.transaction_id: "txn-a" vs "txn-b"'), withTransactionIds.join('\n'));
  t.true(withTransactionIds.every((line) => line.includes('"txn-a" vs "txn-b"')), withTransactionIds.join('\n'));
}

for (const [stack, mode] of CASES) {
  test(`${stack} stack, ${mode}: a real shop installs, and its twins behave as WooCommerce and Subscriptions do`, async (t) => {
    const started = Date.now();
    const shop = await createWooCommerceShop(`h_${stack}_${mode}`, stack, mode);
    shops.push(shop);
    const setupMs = Date.now() - started;
    const { install } = shop;
    t.log(`setup ${setupMs} ms (${JSON.stringify(install.timings)}); ${JSON.stringify(install.versions)}`);
    t.log(`storage: ${JSON.stringify(install.storage)}`);
    t.is(install.storage.hpos_authoritative, mode !== 'posts');
    t.is(install.storage.sync_enabled, mode === 'hpos-sync');
    t.false(install.is_duplicate_site, 'Subscriptions knows this is the live site');
    t.is(install.versions.woocommerce, stack === 'current' ? '10.0.2' : '7.9.0');

    await failedRenewalTwin(t, shop);
    await paymentCompleteTwins(t, shop);
  });
}
