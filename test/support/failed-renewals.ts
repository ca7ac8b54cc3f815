import type { CardGatewayDeliveryEvent, FakeCardGateway } from './fake-card-gateway';
import type { FakeMobileWallet } from './fake-mobile-wallet';
import type { MobileWalletDeliveryEvent } from './fake-mobile-wallet';
import type { TestShop } from './test-shop';

/** What WooCommerce does with a failure the companion hands it (no WordPress applies it in these tests): the order failed, the subscription on hold. */
export async function heldByWooCommerce(shop: TestShop, orderId: number, subscriptionId: number): Promise<void> {
  await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'wc-failed' WHERE ID = ?`, [orderId]);
  await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'wc-on-hold' WHERE ID = ?`, [subscriptionId]);
}

let serial = 0;

/**
 * A wallet renewal whose charge failed, as the real flow makes it: the subscription and its renewal order as the
 * wallet's plugin writes them (`_agreement_id`, `_charge_id`), the charge FAILED at the wallet, its webhook handled
 * by the service (`deliver`), and WooCommerce's consequences. The service's first attempt is then planned on the
 * same agreement. `noFunds`: the customer's card in the app has no money, so the wallet's own retries fail too.
 */
export async function failedWalletRenewal(
  stage: { shop: TestShop; wallet: FakeMobileWallet; deliver: (event: MobileWalletDeliveryEvent) => Promise<string> },
  tag: string,
  options: { noFunds?: boolean } = {},
): Promise<{ orderId: number; subscriptionId: number; agreementId: string; chargeId: string }> {
  serial += 1;
  const { shop, wallet, deliver } = stage;
  const agreementId = `agr-${tag}-${serial}`;
  const chargeId = `chr-${tag}-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
  wallet.setAgreement(agreementId);
  if (options.noFunds) wallet.setAgreementCard(agreementId, 'no_funds');
  wallet.setCharge(agreementId, chargeId, { status: 'FAILED' });
  if ((await deliver({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId })) !== 'PROCESSED') throw new Error('failure not processed');
  await heldByWooCommerce(shop, orderId, subscriptionId);
  return { orderId, subscriptionId, agreementId, chargeId };
}

/** What the card renewals below need: the shop, the card gateway, the service's handling of its webhooks, the time. */
interface CardStage { shop: TestShop; card: FakeCardGateway; cardWebhook: (event: CardGatewayDeliveryEvent) => Promise<string>; now: Date }

/**
 * A card renewal whose invoice `order-N` the gateway declined softly (insufficient funds) on the subscription's
 * active card, its webhook handled by the service and WooCommerce's consequences: the service's attempt 1 is planned
 * 12 h later.
 */
export async function softDeclinedCardRenewal(stage: CardStage, tag: string): Promise<{ orderId: number; subscriptionId: number; customer: string }> {
  serial += 1;
  const { shop, card } = stage;
  const customer = `cust-${tag}-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date(stage.now.getTime() - 31 * 86_400_000), nextPaymentGmt: stage.now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, currency: 'DKK', customer, error: 'insufficient_funds', error_state: 'soft_declined' });
  card.setPaymentMethod(`ca-${tag}-${serial}`, { customer, state: 'active' });
  if ((await stage.cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` })) !== 'PROCESSED') throw new Error('failure not processed');
  await heldByWooCommerce(shop, orderId, subscriptionId);
  return { orderId, subscriptionId, customer };
}

/** A card renewal declined hard on the subscription's own card (expired): the customer is asked, and the case has a deadline. */
export async function hardDeclinedCardRenewal(stage: CardStage, tag: string): Promise<{ orderId: number; subscriptionId: number; customer: string }> {
  serial += 1;
  const { shop, card } = stage;
  const customer = `cust-${tag}-${serial}`;
  const oldCard = `ca-${tag}-old-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', nextPaymentGmt: stage.now, meta: { _reepay_token: oldCard } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setPaymentMethod(oldCard, { customer, state: 'failed' });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, currency: 'DKK', customer, error: 'credit_card_expired', error_state: 'hard_declined' });
  if ((await stage.cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` })) !== 'PROCESSED') throw new Error('failure not processed');
  await heldByWooCommerce(shop, orderId, subscriptionId);
  return { orderId, subscriptionId, customer };
}
