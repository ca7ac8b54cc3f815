import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { heldByWooCommerce } from '../support/failed-renewals';
import { handleWalletEvent, openHub, startPacedWorker } from '../support/payment-hub-fixture';
import { providerEnvironment } from '../support/provider-environment';
import { createTestShop, type TestShop } from '../support/test-shop';
import { WP_SECRETS_ENV } from '../support/wordpress-fixtures';

// A customer whose wallet renewal failed moves the subscription to a card (WooCommerce's change of payment method:
// the subscription's `_payment_method` becomes the card plugin's gateway, and the plugin writes `_reepay_token`).
// Subscriptions' own retries copy the subscription's payment method to the renewal before each
// (wcs_copy_payment_method_to_order), so they would charge that card; the service does the same: the wallet's charge
// still open for the renewal is cancelled, the card is charged once, and the renewal is paid, not cancelled at the
// deadline. Through the worker (as main.ts starts it, ticked under a pinned clock) against both strict fakes.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-switched-provider';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let now = new Date('2026-11-10T08:00:00Z');
const clock = () => now;
async function tickAfter(ms: number) {
  now = new Date(now.getTime() + ms);
  await worker.tick();
}

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const chargesOf = async (orderId: number) => q(`SELECT provider, external_id, state, cancel_reason FROM ${shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT status, recovered_by, customer_asked_at FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
const notesOf = async (id: number) => (await q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id])).map((row) => String(row.comment_content));
const walletCreates = (agreementId: string) => wallet.requests.filter((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`);
const walletCancels = (agreementId: string) => wallet.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith(`/recurring/v3/agreements/${agreementId}/charges/`));
const cardCharges = () => card.requestsTo('POST', '/v1/charge');

function env() {
  return shop.config({ ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }) });
}
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });

/**
 * A wallet renewal that failed, as the wallet's plugin writes it (the subscription and its renewal on its gateway,
 * `_agreement_id`, `_charge_id`), the wallet's webhook handled and WooCommerce's consequences; the customer's
 * MobilePay card has no money, so the wallet's own retries fail too.
 */
async function failedWalletRenewal(agreementId: string) {
  const chargeId = agreementId.replace(/^agr-/, 'chr-');
  const onWallet = { paymentMethod: 'vipps_recurring', paymentMethodTitle: 'MobilePay' };
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', ...onWallet, meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({
    status: 'pending', total: '99.00', createdVia: 'subscription', ...onWallet, meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId },
  });
  wallet.setAgreement(agreementId);
  wallet.setAgreementCard(agreementId, 'no_funds');
  wallet.setCharge(agreementId, chargeId, { status: 'FAILED', amount: 9900, failureReason: 'user_action_required' });
  if ((await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId })) !== 'PROCESSED') throw new Error('failure not processed');
  await heldByWooCommerce(shop, orderId, subscriptionId);
  return { orderId, subscriptionId };
}

/** WooCommerce's change of the subscription's payment method to the card plugin's gateway, and the card the plugin saved. */
async function switchedToCard(subscriptionId: number, token: string) {
  await q(`UPDATE ${shop.prefix}postmeta SET meta_value = 'reepay_checkout' WHERE post_id = ? AND meta_key = '_payment_method'`, [subscriptionId]);
  await q(`UPDATE ${shop.prefix}postmeta SET meta_value = 'Kort' WHERE post_id = ? AND meta_key = '_payment_method_title'`, [subscriptionId]);
  await q(`INSERT INTO ${shop.prefix}postmeta (post_id, meta_key, meta_value) VALUES (?, '_reepay_token', ?)`, [subscriptionId, token]);
}

test.before(async () => {
  shop = await createTestShop('switched_provider', { hpos: false });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(env(), clock);
  worker = await startPacedWorker(env(), clock);
});

test.after.always(async () => {
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('A wallet renewal whose customer moves the subscription to a card while the wallet retries: the wallet charge is cancelled, the card charged once, the renewal paid', async (t) => {
  const agreementId = 'agr-switch';
  const { orderId, subscriptionId } = await failedWalletRenewal(agreementId);

  // The service's attempt: one wallet charge, which the wallet retries itself.
  await tickAfter(12 * HOUR);
  t.is(walletCreates(agreementId).length, 1);
  const [walletCharge] = await chargesOf(orderId);
  t.like(walletCharge, { provider: 'mobile_wallet', state: 'OPEN' });

  // A day later the customer moves the subscription to a card.
  await tickAfter(DAY);
  card.setPaymentMethod('ca-switch', { customer: 'cust-switch', state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
  await switchedToCard(subscriptionId, 'ca-switch');
  for (let i = 0; i < 8 && cardCharges().length === 0; i += 1) await tickAfter(2 * MINUTE);

  // The wallet's charge cancelled (once), the card charged once with the card the subscription names.
  t.is(walletCancels(agreementId).length, 1, 'the wallet asked once to cancel its charge');
  t.is(wallet.charge(agreementId, walletCharge.external_id)?.status, 'CANCELLED');
  t.is(cardCharges().length, 1, 'one card charge');
  t.like(cardCharges()[0]!.json, { source: 'ca-switch', amount: 9900 });
  const charges = await chargesOf(orderId);
  t.deepEqual(charges.map((c) => [c.provider, c.state, c.cancel_reason]), [['mobile_wallet', 'CANCELED', 'method_switched'], ['card_gateway', 'TAKEN', null]]);
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'new_payment_method' });
  t.true((await notesOf(orderId)).some((note) => /was cancelled before it was taken: the subscription now pays with .+, and the renewal is charged there instead\.|abonnementet betales nu med .+, og fornyelsen trækkes dér i stedet\./.test(note)), 'the wallet charge\'s note says why');

  // Nothing more: no wallet charge again, no second card charge, however long the worker goes on.
  for (let i = 0; i < 6; i += 1) await tickAfter(DAY);
  t.is(walletCreates(agreementId).length, 1);
  t.is(cardCharges().length, 1);
  t.like(await caseOf(orderId), { status: 'RECOVERED', customer_asked_at: null });
});

test.serial('Only a gateway of the other provider moves the renewal: a subscription switched to a gateway the service does not charge keeps its wallet charge', async (t) => {
  const agreementId = 'agr-bank';
  const { orderId, subscriptionId } = await failedWalletRenewal(agreementId);
  await tickAfter(12 * HOUR);
  t.is(walletCreates(agreementId).length, 1);
  const before = cardCharges().length;
  await q(`UPDATE ${shop.prefix}postmeta SET meta_value = 'bacs' WHERE post_id = ? AND meta_key = '_payment_method'`, [subscriptionId]);
  for (let i = 0; i < 4; i += 1) await tickAfter(2 * MINUTE);
  t.is(walletCancels(agreementId).length, 0, 'the wallet charge stays');
  t.like((await chargesOf(orderId))[0], { provider: 'mobile_wallet', state: 'OPEN', cancel_reason: null });
  t.is(cardCharges().length, before);
});

