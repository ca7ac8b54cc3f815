import path from 'node:path';
import test from 'ava';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { serveOverHttp, type ServedShop } from './support/serve-over-http';
import { startServiceBeside, statusOf, type ServiceBesideShop } from './support/service-beside-shop';
import { createWooCommerceShop, type RecordedEvent, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * A failed renewal only the customer can fix, recovered, on real WordPress + WooCommerce + Subscriptions served
 * over HTTP with the companion: the real API takes the card gateway's signed `invoice_failed` (a hard decline),
 * the worker decides, WooCommerce fails the renewal, holds the subscription and e-mails the customer once for a
 * new payment method; then the gateway's `customer_payment_method_added` for that customer makes the worker
 * charge the renewal with the new card, once, and WooCommerce completes it and reactivates the subscription.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const DUNNING_EMAIL = 'shop_sidecar_payment_method_needed';

let shop: WooCommerceShop;
let served: ServedShop;
let card: FakeCardGateway;
let service: ServiceBesideShop;

test.before(async () => {
  shop = await createWooCommerceShop('dunning_recovery', 'current', 'posts', { companion: COMPANION });
  served = await serveOverHttp(shop);
  card = new FakeCardGateway();
  await card.start();
  service = await startServiceBeside(shop, served, {
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
});

test.after.always(async () => {
  await service?.stop();
  await card?.stop();
  await served?.stop();
  if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
});

/** WooCommerce applies the hand-over within seconds; half a minute is the outer bound. */
const SHOWN_WITHIN_MS = 30_000;

const dunningMails = async (subscriptionId: number) => (await shop.log(subscriptionId)).filter((event: RecordedEvent) => event.kind === 'mail' && event.name === DUNNING_EMAIL);

test.serial('A hard-declined renewal: WooCommerce e-mails the customer once; their new card charges the renewal once, and WooCommerce shows it paid', async (t) => {
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
  const orderId = fixture.renewal_order_id!;
  const subscriptionId = fixture.subscription_id!;
  const handle = `order-${orderId}`;
  const [{ meta_value: email }] = await shop.sql<{ meta_value: string }>(`SELECT meta_value FROM ${shop.prefix}postmeta WHERE post_id = ? AND meta_key = '_billing_email'`, [subscriptionId]);

  card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-recovery', error: 'credit_card_expired', error_state: 'hard_declined' });
  t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_failed', invoice: handle }, card.webhookSecret)).res.status, 200);
  await eventually(async () =>
    (await statusOf(shop, orderId)) === 'wc-failed' && (await statusOf(shop, subscriptionId)) === 'wc-on-hold', SHOWN_WITHIN_MS, 'the renewal failed and the subscription on hold in WooCommerce');
  await eventually(async () => (await dunningMails(subscriptionId)).length > 0, SHOWN_WITHIN_MS, 'the customer e-mailed');
  const [mail] = await dunningMails(subscriptionId);
  t.deepEqual(mail.detail.to, [email]);
  t.true(mail.detail.customer === true, 'a customer e-mail');
  const notes = await shop.sql<{ comment_content: string }>(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [subscriptionId]);
  t.true(notes.some((note) => note.comment_content.startsWith('The "Payment method needed" e-mail')), notes.map((n) => n.comment_content).join(' | '));
  const chargesBefore = card.requestsTo('POST', '/v1/charge').length;

  // The customer adds a new card at the gateway; the gateway tells the service.
  card.setPaymentMethod('ca-recovery-new', { customer: 'cust-recovery', state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
  card.queueChargeOutcome({ kind: 'settled' });
  t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'customer_payment_method_added', customer: 'cust-recovery', payment_method: 'ca-recovery-new' }, card.webhookSecret)).res.status, 200);
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', SHOWN_WITHIN_MS, 'the renewal paid in WooCommerce');
  await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');

  const charges = card.requestsTo('POST', '/v1/charge').slice(chargesBefore);
  t.is(charges.length, 1, 'charged once');
  t.like(charges[0].json, { source: 'ca-recovery-new', customer_handle: 'cust-recovery', amount: 14900, settle: true });
  // The same event again, and a while for anything else to happen: nothing more.
  t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'customer_payment_method_added', customer: 'cust-recovery', payment_method: 'ca-recovery-new' }, card.webhookSecret)).res.status, 200);
  await new Promise((resolve) => setTimeout(resolve, 6000));
  t.is(card.requestsTo('POST', '/v1/charge').length, chargesBefore + 1, 'still once');
  t.is((await dunningMails(subscriptionId)).length, 1, 'one e-mail for the failed renewal');
  const completed = (await shop.log(orderId)).filter((event) => event.kind === 'hook' && event.name === 'woocommerce_payment_complete');
  t.is(completed.length, 1, 'WooCommerce completed the payment once');
  const [recovered] = await shop.sql<{ status: string; recovered_by: string; attempts: string }>(
    `SELECT status, recovered_by, attempts FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]);
  t.like(recovered, { status: 'RECOVERED', recovered_by: 'new_payment_method' });
});
