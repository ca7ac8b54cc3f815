import path from 'node:path';
import test from 'ava';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { serveOverHttp } from './support/serve-over-http';
import { startServiceBeside, statusOf } from './support/service-beside-shop';
import { providersEnv, stopStagesAfterAll, walletWebhook, type ProvidersStage } from './support/providers-beside-shop';
import { createWooCommerceShop, type StorageMode } from './support/woocommerce-shop';

/**
 * One renewal, one payment, beside real WordPress + WooCommerce + Subscriptions (the current stack, in HPOS and in
 * posts storage) served over HTTP with the companion:
 * - a wallet renewal the service is charging again is paid in WooCommerce through another gateway
 *   (payment_complete(), as any gateway plugin calls it): the companion tells the service at once, and the service's
 *   due wallet charge is cancelled at the wallet before its due date, with no worker running;
 * - after a hard decline, the customer's new card is announced by the gateway before the gateway's WooCommerce
 *   plugin switches the subscription to it (WooCommerce's own update of `_reepay_token`): the renewal is charged
 *   once with it, and WooCommerce shows the renewal paid and the subscription active again.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const WALLET_SECRET = 'wallet-secret-for-the-ledger-test';
const SHOWN_WITHIN_MS = 30_000;

type Stage = ProvidersStage;
const stages = new Map<StorageMode, Stage>();

async function stage(storage: StorageMode): Promise<Stage> {
  const shop = await createWooCommerceShop(`ledger_${storage.replace('-', '_')}`, 'current', storage, { companion: COMPANION });
  const served = await serveOverHttp(shop);
  const card = new FakeCardGateway();
  const wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  const service = await startServiceBeside(shop, served, {
    ...providersEnv(card, wallet, WALLET_SECRET),
    // The dunning plan in seconds, so that the real worker's first attempt comes within the test.
    DUNNING_PLAN: '2s,2s,2s,2s,2s', RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
  // The companion's notices go to this service, as SHOP_SIDECAR_SERVICE_URL in wp-config.php sends them (the shop's
  // CLI calls below read it; the server serving the shop started before the service and sends none).
  shop.env.SIDECAR_SERVICE_URL = `${service.api.url}/`;
  const made = { shop, served, service, card, wallet };
  stages.set(storage, made);
  return made;
}

stopStagesAfterAll(stages);


for (const storage of ['hpos', 'posts'] as StorageMode[]) {
  test.serial(`${storage}: a renewal paid in WooCommerce through another gateway while the service's wallet charge is due: the companion tells the service, which cancels the charge at once, before its due date`, async (t) => {
    const { shop, service, wallet } = stages.get(storage) ?? await stage(storage);
    const agreementId = `agr-wc-ledger-${storage}`;
    const fixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: `chr-wc-ledger-${storage}` } });
    const orderId = fixture.renewal_order_id!;
    wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
    wallet.setCharge(agreementId, `chr-wc-ledger-${storage}`, { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
    t.is(await walletWebhook(service, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: `chr-wc-ledger-${storage}` }), 200);
    await eventually(async () => (await statusOf(shop, orderId)) === 'wc-failed', SHOWN_WITHIN_MS, 'the renewal failed in WooCommerce');

    // The worker charges the agreement again: the wallet holds the charge until its due date.
    const created = await eventually(async () => wallet.requests.find((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`), SHOWN_WITHIN_MS, 'the service\'s wallet charge');
    const chargeId = String((created!.json as { orderId: string }).orderId);
    const due = String((created!.json as { due: string }).due);
    t.true(['PENDING', 'DUE'].includes(String(wallet.charge(agreementId, chargeId)?.status)));

    // The worker stops, as when it is down: its pass over the database cannot cancel anything now, only the notice can.
    await service.worker.stop();
    try {
      // The customer pays another way: another gateway's plugin completes the payment in WooCommerce.
      await shop.call('order_payment_complete', orderId, { transaction_id: `bank-${storage}` });
      t.is(await statusOf(shop, orderId), 'wc-processing');
      // The companion's notice went at the end of that request, which ended once the service had withdrawn the charge.
      const ofOrder = () => shop.sql<{ state: string; cancel_reason: string | null }>(`SELECT state, cancel_reason FROM ${shop.prefix}sidecar_charges WHERE order_id = ?`, [orderId]);
      t.is((await ofOrder())[0].cancel_reason, 'order_processing', 'withdrawn by the notice');
      await eventually(async () => wallet.charge(agreementId, chargeId)?.status === 'CANCELLED', SHOWN_WITHIN_MS, 'the service\'s wallet charge cancelled');
      t.true(wallet.today() < due, 'cancelled before its due date');
      await eventually(async () => (await ofOrder())[0].state === 'CANCELED', SHOWN_WITHIN_MS, 'the ledger\'s charge closed');
      t.like((await ofOrder())[0], { state: 'CANCELED', cancel_reason: 'order_processing' });
    } finally {
      service.worker = await startTestWorker(service.config);
    }
    await wallet.advanceTo(new Date(Date.parse(`${due}T23:00:00Z`)));
    t.is(wallet.charge(agreementId, chargeId)?.status, 'CANCELLED', 'the wallet never takes it');
  });

  test.serial(`${storage}: a new card announced before WooCommerce switches the subscription to it: one charge with it, the renewal paid and the subscription active again`, async (t) => {
    const { shop, service, card } = stages.get(storage) ?? await stage(storage);
    const customer = `cust-wc-ledger-${storage}`;
    const oldCard = `ca-wc-old-${storage}`;
    const newCard = `ca-wc-new-${storage}`;
    const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', subscription_meta: { _reepay_token: oldCard } });
    const orderId = fixture.renewal_order_id!;
    const subscriptionId = fixture.subscription_id!;
    card.setPaymentMethod(oldCard, { customer, state: 'failed' });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error: 'credit_card_expired', error_state: 'hard_declined' });
    t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_failed', invoice: `order-${orderId}` }, card.webhookSecret)).res.status, 200);
    await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-on-hold', SHOWN_WITHIN_MS, 'the subscription on hold in WooCommerce');

    // The gateway announces the customer's new card first; the subscription still names the failed one.
    card.setPaymentMethod(newCard, { customer, state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
    card.queueChargeOutcome({ kind: 'settled' });
    t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'customer_payment_method_added', customer, payment_method: newCard }, card.webhookSecret)).res.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const ofOrder = () => card.requestsTo('POST', '/v1/charge').filter((r) => String((r.json as { handle?: string } | null)?.handle).startsWith(`order-${orderId}-`));
    t.is(ofOrder().length, 0);

    // The customer's browser comes back: the gateway's plugin switches the subscription's card, through WooCommerce.
    await shop.call('order_update_meta', subscriptionId, { key: '_reepay_token', value: newCard });
    await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', 90_000, 'the renewal paid in WooCommerce');
    await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    t.is(ofOrder().length, 1, 'charged once');
    t.like(ofOrder()[0].json, { source: newCard, settle: true });
  });
}
