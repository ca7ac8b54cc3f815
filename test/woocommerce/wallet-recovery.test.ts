import path from 'node:path';
import test from 'ava';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { eventually } from '../support/payment-hub-fixture';
import { serveOverHttp, type ServedShop } from './support/serve-over-http';
import { providersEnv, walletWebhook } from './support/providers-beside-shop';
import { startServiceBeside, statusOf, type ServiceBesideShop } from './support/service-beside-shop';
import { createWooCommerceShop, type RecordedEvent, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * A wallet renewal the customer fixes in the app, on real WordPress + WooCommerce + Subscriptions served over HTTP
 * with the companion: the wallet's signed `charge-failed` with `user_action_required` reaches the real API;
 * WooCommerce fails the renewal and holds the subscription; the worker charges the same agreement again on the
 * dunning plan (here a few seconds apart); the customer has acted in the app, so the wallet takes it, and its
 * `charge-captured` makes WooCommerce complete the renewal, once. No e-mail of the service's goes to the customer.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const DUNNING_EMAIL = 'shop_sidecar_payment_method_needed';
const WALLET_SECRET = 'wallet-secret-for-the-wallet-recovery-test';
const SHOWN_WITHIN_MS = 30_000;

let shop: WooCommerceShop;
let served: ServedShop;
let wallet: FakeMobileWallet;
let card: FakeCardGateway;
let service: ServiceBesideShop;

test.before(async () => {
  shop = await createWooCommerceShop('wallet_recovery', 'current', 'posts', { companion: COMPANION });
  served = await serveOverHttp(shop);
  wallet = new FakeMobileWallet();
  card = new FakeCardGateway();
  await Promise.all([wallet.start(), card.start()]);
  service = await startServiceBeside(shop, served, {
    ...providersEnv(card, wallet, WALLET_SECRET),
    // The dunning plan in seconds, so that the real worker's first attempt comes within the test.
    DUNNING_PLAN: '3s,3s,3s,3s,3s', RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
});

test.after.always(async () => {
  await service?.stop();
  await Promise.allSettled([wallet?.stop(), card?.stop()]);
  await served?.stop();
  if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
});

const dunningMails = async (id: number) => (await shop.log(id)).filter((event: RecordedEvent) => event.kind === 'mail' && event.name === DUNNING_EMAIL);
const walletCharges = (agreementId: string) => wallet.requests.filter((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`);

test.serial('user_action_required, then the customer fixes it in the app: the same agreement is charged on the plan, WooCommerce completes the renewal once, and no e-mail of the service\'s goes out', async (t) => {
  const agreementId = 'agr-wc-app';
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: 'chr-wc-app' } });
  const orderId = fixture.renewal_order_id!;
  const subscriptionId = fixture.subscription_id!;
  wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
  wallet.setCharge(agreementId, 'chr-wc-app', { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });

  t.is(await walletWebhook(service, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-wc-app' }), 200);
  await eventually(async () =>
    (await statusOf(shop, orderId)) === 'wc-failed' && (await statusOf(shop, subscriptionId)) === 'wc-on-hold', SHOWN_WITHIN_MS, 'the renewal failed and the subscription on hold in WooCommerce');

  // The worker charges the same agreement on the plan.
  await eventually(async () => walletCharges(agreementId).length > 0, SHOWN_WITHIN_MS, 'a charge on the same agreement');
  const [created] = walletCharges(agreementId);
  const chargeId = String((created.json as { orderId: string }).orderId);
  // One charge that the wallet retries itself for its retryDays (issue 45; docs/payments.md "The wallet's own retries").
  t.like(created.json, { processingMode: 'MULTIPLE_ATTEMPTS' });
  t.true((created.json as { retryDays: number }).retryDays >= 2 && (created.json as { retryDays: number }).retryDays <= 14);

  // The customer acted in the app; on its due date the wallet takes the charge and says so.
  wallet.setCharge(agreementId, chargeId, { status: 'CHARGED', amount: (created.json as { amount: number }).amount, summary: { captured: (created.json as { amount: number }).amount, refunded: 0, cancelled: 0 } });
  t.is(await walletWebhook(service, { eventType: 'recurring.charge-captured.v1', agreementId, chargeId }), 200);
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', SHOWN_WITHIN_MS, 'the renewal paid in WooCommerce');
  await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');

  // The same capture told again, and a while for anything else to happen: nothing more.
  t.is(await walletWebhook(service, { eventType: 'recurring.charge-captured.v1', agreementId, chargeId }), 200);
  await new Promise((resolve) => setTimeout(resolve, 6000));
  t.is(walletCharges(agreementId).length, 1, 'charged once');
  const completed = (await shop.log(orderId)).filter((event) => event.kind === 'hook' && event.name === 'woocommerce_payment_complete');
  t.is(completed.length, 1, 'WooCommerce completed the payment once');
  t.deepEqual(await dunningMails(subscriptionId), [], 'no "payment method needed" e-mail');
  const [recovered] = await shop.sql<{ status: string; recovered_by: string }>(`SELECT status, recovered_by FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]);
  t.like(recovered, { status: 'RECOVERED', recovered_by: 'service_retry' });
});

test.serial('A customer who moves the subscription from MobilePay to a card after the renewal failed: the wallet\'s charge is cancelled, the card charged once, and WooCommerce completes the renewal once', async (t) => {
  const agreementId = 'agr-wc-move';
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: 'chr-wc-move' } });
  const orderId = fixture.renewal_order_id!;
  const subscriptionId = fixture.subscription_id!;
  wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
  wallet.setAgreementCard(agreementId, 'no_funds');
  wallet.setCharge(agreementId, 'chr-wc-move', { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
  t.is(await walletWebhook(service, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-wc-move' }), 200);
  await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-on-hold', SHOWN_WITHIN_MS, 'the subscription on hold');
  // The service's attempt: one charge on the agreement, which the wallet retries itself.
  await eventually(async () => walletCharges(agreementId).length > 0, SHOWN_WITHIN_MS, 'a charge on the agreement');
  const walletChargeId = String((walletCharges(agreementId)[0]!.json as { orderId: string }).orderId);

  // The customer changes the subscription's payment method to a card: Subscriptions sets the gateway, and the card
  // plugin keeps the card it saved on the subscription.
  card.setPaymentMethod('ca-wc-move', { customer: 'cust-wc-move', state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
  t.like(await shop.call('subscription_set_payment_method', subscriptionId, { gateway: 'reepay_checkout' }), { result: 'reepay_checkout' });
  await shop.call('order_update_meta', subscriptionId, { key: '_reepay_token', value: 'ca-wc-move' });

  const cardCharges = () => card.requestsTo('POST', '/v1/charge');
  await eventually(async () => cardCharges().length > 0, 90_000, 'the card charged');
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', SHOWN_WITHIN_MS, 'the renewal paid in WooCommerce');
  await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');
  t.like(cardCharges()[0]!.json, { source: 'ca-wc-move' });
  t.is(wallet.charge(agreementId, walletChargeId)?.status, 'CANCELLED', 'the wallet\'s charge cancelled');

  await new Promise((resolve) => setTimeout(resolve, 6000));
  t.is(cardCharges().length, 1, 'the card charged once');
  t.is(walletCharges(agreementId).length, 1, 'the wallet asked once');
  const completed = (await shop.log(orderId)).filter((event) => event.kind === 'hook' && event.name === 'woocommerce_payment_complete');
  t.is(completed.length, 1, 'WooCommerce completed the payment once');
  const [recovered] = await shop.sql<{ status: string; recovered_by: string }>(`SELECT status, recovered_by FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]);
  t.like(recovered, { status: 'RECOVERED', recovered_by: 'new_payment_method' });
});
