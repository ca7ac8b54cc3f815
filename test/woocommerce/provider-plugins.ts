import path from 'node:path';
import test from 'ava';
import { cardGatewayDelivery, FakeCardGateway, sendCardGatewayEvent, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { serveOverHttp } from './support/serve-over-http';
import { startServiceBeside, statusOf } from './support/service-beside-shop';
import { shopManagerSession } from './support/shop-manager-session';
import { providersEnv, stopStagesAfterAll, walletWebhook, type ProvidersStage } from './support/providers-beside-shop';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * The providers' own WooCommerce plugins, as shops keep them active beside the service: the card gateway's (Frisbii
 * Pay / Reepay Checkout 1.8.15.2) and the wallet's (Pay with Vipps and MobilePay 6.0.5, its recurring gateway),
 * unpacked from ../shared/woocommerce by run.sh, active in their test modes on the current stack (HPOS and posts
 * storage) with the companion, their API calls answered by the loopback fakes
 * (php/mu-plugins/sidecar-test-provider-hosts.php). One shop per storage mode, each in a file of its own
 * (provider-plugins-hpos.test.ts, provider-plugins-posts.test.ts).
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const WALLET_SECRET = 'wallet-secret-for-the-provider-plugins-test';
const SHOWN_WITHIN_MS = 30_000;

interface Stage extends ProvidersStage { managerHeaders: Record<string, string> }
const stages = new Map<StorageMode, Stage>();

async function stage(storage: StorageMode): Promise<Stage> {
  const card = new FakeCardGateway();
  const wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  const shop = await createWooCommerceShop(`plugins_${storage}`, 'current', storage, { companion: COMPANION, providerPlugins: true });
  await shop.php('provider_plugins', {
    card: { url: card.url, private_key: card.apiKey },
    wallet: { url: wallet.url, client_id: wallet.clientId, secret_key: wallet.clientSecret, subscription_key: wallet.subscriptionKey, merchant_serial_number: wallet.merchantSerialNumber },
  });
  const served = await serveOverHttp(shop);
  const service = await startServiceBeside(shop, served, {
    ...providersEnv(card, wallet, WALLET_SECRET),
    DUNNING_PLAN: '2s,2s,2s,2s,2s', RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
  shop.env.SIDECAR_SERVICE_URL = `${service.api.url}/`;
  const [{ siteurl }] = await shop.sql<{ siteurl: string }>(`SELECT option_value AS siteurl FROM ${shop.prefix}options WHERE option_name = 'siteurl'`);
  const manager = await shopManagerSession(shop, { login: `mona.plugins.${storage}`, displayName: 'Mona Plugins', password: 'mona-plugins-test-password' }, siteurl);
  const made = { shop, served, service, card, wallet, managerHeaders: manager.headers };
  stages.set(storage, made);
  return made;
}

stopStagesAfterAll(stages);

function pluginsActive(storage: StorageMode): void {
  test.serial(`${storage}: both providers' plugins are active in their test modes, and their gateways, not the stand-ins, answer for reepay_checkout and vipps_recurring`, async (t) => {
    const { shop } = stages.get(storage) ?? await stage(storage);
    const gateways = await shop.php<Record<string, string>>('gateways');
    t.is(gateways.reepay_checkout, 'Reepay\\Checkout\\Gateways\\ReepayCheckout');
    t.is(gateways.vipps_recurring, 'WC_Gateway_Vipps_Recurring');
  });
}


/** The order screen's "Refund ... via <gateway>": wc_create_refund with the gateway's refund. */
async function refundFromOrderScreen(shop: WooCommerceShop, orderId: number, amount: string, reason: string): Promise<{ refund_id?: number; error?: string }> {
  return (await shop.call('order_refund', orderId, { amount, reason, refund_payment: true }) as { result: { refund_id?: number; error?: string } }).result;
}

/**
 * A card renewal that failed and that the service recovered with its own retry on the subscription's card (invoice
 * order-N-retry1): WooCommerce shows it paid. When it fell due, Subscriptions asked the card plugin to charge it; the
 * subscription holding no saved card of the plugin's own (only `_reepay_token`), the plugin failed the renewal itself
 * ("Payment token does not exist") and named invoice order-N in `_reepay_order`; the gateway holds order-N declined.
 */
async function cardRenewalRecoveredByRetry(stage: Stage, tag: string, options: { savedCard?: boolean; authorisedOnly?: boolean } = {}): Promise<{ orderId: number; subscriptionId: number; total: string; handle: string }> {
  const { shop, service, card } = stage;
  const customer = `cust-${tag}`;
  const token = `ca-${tag}`;
  card.setPaymentMethod(token, { customer, state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242', card_type: 'visa' } });
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', subscription_meta: { _reepay_token: token } });
  const orderId = fixture.renewal_order_id!;
  // The customer's card saved in WooCommerce as the card plugin saves it (a WC_Payment_Token of its gateway, named on
  // the subscription), after the plugin failed this renewal.
  if (options.savedCard) await shop.call('card_plugin_save_card', fixture.subscription_id!, { customer, token });
  const handle = `order-${orderId}`;
  const total = String((await shop.snapshot([orderId])).by_id[orderId]!.data.total);
  const minor = Math.round(Number(total) * 100);
  card.setCharge(handle, { state: 'failed', amount: minor, customer, error: 'insufficient_funds', error_state: 'soft_declined' });
  // `authorisedOnly`: the gateway answers the retry (asked to settle) with an authorisation only; the service settles it.
  card.queueChargeOutcome({ kind: options.authorisedOnly ? 'authorized' : 'settled' });
  const failed = await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_failed', invoice: handle }, card.webhookSecret);
  if (failed.res.status !== 200) throw new Error(`invoice_failed answered ${failed.res.status}`);
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', 90_000, `renewal ${orderId} paid by the service's retry`);
  return { orderId, subscriptionId: fixture.subscription_id!, total, handle };
}

/**
 * A card renewal hard-declined (the card expired: the service plans no retry of its own and asks the customer), then
 * recovered by staff's Charge now on the subscription's card (renewed at the bank), or by the customer's new card:
 * the gateway announces it and the card plugin switches the subscription's `_reepay_token` to it, through WooCommerce.
 * Answers the invoice that holds the money (the order's transaction id).
 */
async function cardRenewalRecoveredBy(stage: Stage, tag: string, by: 'charge_now' | 'new_card'): Promise<{ orderId: number; total: string; handle: string; invoice: string }> {
  const { shop, service, card } = stage;
  const customer = `cust-${tag}`;
  const token = `ca-${tag}`;
  card.setPaymentMethod(token, { customer, state: by === 'charge_now' ? 'active' : 'failed', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242', card_type: 'visa' } });
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', subscription_meta: { _reepay_token: token } });
  const orderId = fixture.renewal_order_id!;
  const subscriptionId = fixture.subscription_id!;
  const handle = `order-${orderId}`;
  const total = String((await shop.snapshot([orderId])).by_id[orderId]!.data.total);
  card.setCharge(handle, { state: 'failed', amount: Math.round(Number(total) * 100), customer, error: 'credit_card_expired', error_state: 'hard_declined' });
  precondition((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_failed', invoice: handle }, card.webhookSecret)).res.status === 200, 'invoice_failed answered 200');
  await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-on-hold', SHOWN_WITHIN_MS, `subscription ${subscriptionId} on hold`);
  card.queueChargeOutcome({ kind: 'settled' });
  if (by === 'charge_now') {
    // The Payments panel's Charge now, as the shop manager's browser sends it; the service's case may still be opening.
    await eventually(async () => {
      const answer = await request(service.api.url, 'POST', `/payment-hub/v1/orders/${orderId}/charge-now`, { headers: stage.managerHeaders, body: {} });
      if (answer.status >= 500) throw new Error(`charge now answered ${answer.status}: ${answer.text}`);
      return answer.status === 200 || answer.status === 202;
    }, SHOWN_WITHIN_MS, `staff's Charge now on renewal ${orderId} accepted`);
  } else {
    const newCard = `ca-${tag}-new`;
    card.setPaymentMethod(newCard, { customer, state: 'active', card: { exp_date: '11-31', masked_card: '520000XXXXXX0007', card_type: 'mc' } });
    precondition((await sendCardGatewayEvent(service.api.url, { event_type: 'customer_payment_method_added', customer, payment_method: newCard }, card.webhookSecret)).res.status === 200, 'customer_payment_method_added answered 200');
    await shop.call('order_update_meta', subscriptionId, { key: '_reepay_token', value: newCard });
  }
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', 90_000, `renewal ${orderId} paid (${by})`);
  const invoice = String((await shop.snapshot([orderId])).by_id[orderId]!.data.transaction_id);
  const [charge] = await shop.sql<{ requested_by: string }>(`SELECT requested_by FROM ${shop.prefix}sidecar_charges WHERE provider = 'card_gateway' AND external_id = ?`, [invoice]);
  precondition(charge?.requested_by === (by === 'charge_now' ? 'staff' : 'new_method'), `the money taken by ${by}, the ledger says ${JSON.stringify(charge)}`);
  return { orderId, total, handle, invoice };
}

/**
 * A wallet renewal whose charge, made by the wallet plugin when Subscriptions asked it (`_charge_id`, and its pending
 * flag `_vipps_recurring_pending_charge`, as set_order_as_pending() leaves it after creating a renewal charge), failed;
 * the service heard the failure first, charged the agreement again itself and the wallet took that charge: WooCommerce
 * shows the renewal paid. `beforeCapture` runs while the service's charge is still due at the wallet.
 */
async function walletRenewalRecoveredByService(stage: Stage, tag: string, beforeCapture?: (renewal: { orderId: number; chargeId: string }) => Promise<void>): Promise<{ orderId: number; agreementId: string; chargeId: string; failedCharge: string; amount: number }> {
  const { shop, service, wallet } = stage;
  const agreementId = `agr-${tag}`;
  const failedCharge = `chr-${tag}`;
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: failedCharge, _vipps_recurring_pending_charge: '1' } });
  const orderId = fixture.renewal_order_id!;
  wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
  wallet.setCharge(agreementId, failedCharge, { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
  precondition(await walletWebhook(service, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: failedCharge }) === 200, 'charge-failed answered 200');
  const created = await eventually(async () => wallet.requests.find((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`), SHOWN_WITHIN_MS, 'the service\'s wallet charge');
  const chargeId = String((created!.json as { orderId: string }).orderId);
  const amount = (created!.json as { amount: number }).amount;
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-failed', SHOWN_WITHIN_MS, 'the renewal failed in WooCommerce');
  await beforeCapture?.({ orderId, chargeId });
  wallet.setCharge(agreementId, chargeId, { status: 'CHARGED', amount, summary: { captured: amount, refunded: 0, cancelled: 0 } });
  precondition(await walletWebhook(service, { eventType: 'recurring.charge-captured.v1', agreementId, chargeId }) === 200, 'charge-captured answered 200');
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-processing', SHOWN_WITHIN_MS, 'the renewal paid in WooCommerce');
  return { orderId, agreementId, chargeId, failedCharge, amount };
}

/** A precondition of a scenario: a failure names what went wrong before the test's own assertions. */
function precondition(condition: boolean, what: string): void {
  if (!condition) throw new Error(`not as expected: ${what}`);
}

/**
 * One card-gateway event as the gateway sends it to every webhook URL of the account during the move: the service's
 * route, and the card plugin's handler (WooCommerce's wc-api endpoint WC_Gateway_Reepay, its OrderFlow/Webhook.php),
 * the same signed body to both, in the order given.
 */
async function cardEventToBoth(stage: Stage, event: CardGatewayDeliveryEvent, order: Array<'service' | 'plugin'>): Promise<void> {
  const delivery = cardGatewayDelivery(event, stage.card.webhookSecret);
  for (const to of order) {
    const res = to === 'service'
      ? await request(stage.service.api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: delivery.headers, body: delivery.body })
      : await request(stage.served.url, 'POST', '/?wc-api=WC_Gateway_Reepay', { headers: delivery.headers, body: delivery.body });
    if (res.status !== 200) throw new Error(`${to} answered ${res.status} to ${String(event.event_type)}: ${res.text.slice(0, 500)}`);
  }
}

/** How often WooCommerce has fired woocommerce_payment_complete for the order (its recorder's log). */
const paymentCompletions = async (shop: WooCommerceShop, orderId: number) =>
  (await shop.log(orderId)).filter((event) => event.kind === 'hook' && event.name === 'woocommerce_payment_complete').length;
const refundsAt = (card: FakeCardGateway) => card.requestsTo('POST', '/v1/refund').map((r) => r.json as { invoice: string; amount: number });
const pluginNotes = async (shop: WooCommerceShop, orderId: number) =>
  (await shop.snapshot([orderId])).by_id[orderId]!.notes.map((note) => note.content).filter((content) => content.startsWith('Refunded: '));

function afterRecovery(storage: StorageMode): void {
  test.serial(`${storage}: a card renewal recovered by the service's retry, refunded in full from the order screen: the card plugin refunds invoice order-N-retry1 at the gateway, order-N is untouched, and the note is the plugin's own`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card, service } = made;
    const { orderId, total, handle } = await cardRenewalRecoveredByRetry(made, `full-${storage}`);
    const retry = `${handle}-retry1`;
    t.like((await shop.snapshot([orderId])).by_id[orderId]!.data, { transaction_id: retry });
    const before = refundsAt(card).length;

    const refund = await refundFromOrderScreen(shop, orderId, total, 'Customer cancelled');
    t.is(refund.error, undefined);
    t.true(Number(refund.refund_id) > 0);
    const sent = refundsAt(card).slice(before);
    t.deepEqual(sent, [{ invoice: retry, amount: Math.round(Number(total) * 100) }], 'one refund, of the invoice that holds the money');
    t.is(card.creditNotes(retry).length, 1);
    t.deepEqual(card.creditNotes(handle), [], 'the failed invoice untouched');
    const notes = await pluginNotes(shop, orderId);
    t.is(notes.length, 1);
    t.regex(notes[0]!, new RegExp(`^Refunded: ${total.replace('.', '\\.')}\\. Credit Note Id #${String(card.creditNotes(retry)[0]!.id)}\\. Reason: Customer cancelled`));

    // The gateway tells the service of the refund: the service records it, and WooCommerce is not refunded twice.
    t.is((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_refund', invoice: retry }, card.webhookSecret)).res.status, 200);
    await eventually(async () => (await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id = ?`, [retry]))[0]?.status === 'REFUNDED', SHOWN_WITHIN_MS, 'the service\'s payment refunded');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(after.refunds?.length, 1, 'one refund in WooCommerce');
    t.is(Number(after.total_refunded), Number(total));
    t.is(refundsAt(card).length, before + 1, 'the gateway asked once');
  });

  test.serial(`${storage}: a card renewal recovered by the service's retry, refunded in part and then the rest: both on invoice order-N-retry1, and no more than it holds`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card } = made;
    const { orderId, total, handle } = await cardRenewalRecoveredByRetry(made, `part-${storage}`);
    const retry = `${handle}-retry1`;
    const minor = Math.round(Number(total) * 100);
    const before = refundsAt(card).length;

    t.is((await refundFromOrderScreen(shop, orderId, '50.00', 'Partly')).error, undefined);
    const rest = ((minor - 5000) / 100).toFixed(2);
    t.is((await refundFromOrderScreen(shop, orderId, rest, 'The rest')).error, undefined);
    t.deepEqual(refundsAt(card).slice(before), [{ invoice: retry, amount: 5000 }, { invoice: retry, amount: minor - 5000 }]);
    t.deepEqual(card.creditNotes(retry).map((note) => note.amount), [5000, minor - 5000]);
    t.deepEqual(card.creditNotes(handle), []);
    t.is((await pluginNotes(shop, orderId)).length, 2);
    // Nothing is left on the invoice: the gateway refuses another cent (WooCommerce would not ask, the order being
    // refunded in full).
    const more = await request(card.url, 'POST', '/v1/refund', {
      headers: { authorization: `Basic ${Buffer.from(`${card.apiKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ invoice: retry, amount: 1 }),
    });
    t.like(more, { status: 400, json: { code: 65 } });
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(Number(after.total_refunded), Number(total));
  });

  for (const by of ['charge_now', 'new_card'] as const) {
    const how = by === 'charge_now' ? 'staff\'s Charge now' : 'the customer\'s new card';
    test.serial(`${storage}: a card renewal recovered by ${how}, refunded from the order screen in part and then the rest: both on the invoice that took the money, the failed invoice untouched, the notes the plugin's own`, async (t) => {
      const made = stages.get(storage) ?? await stage(storage);
      const { shop, card } = made;
      const { orderId, total, handle, invoice } = await cardRenewalRecoveredBy(made, `${by.replace('_', '')}-${storage}`, by);
      t.not(invoice, handle);
      t.deepEqual((await shop.snapshot([orderId])).by_id[orderId]!.meta._reepay_order, [invoice], 'the card plugin reads the invoice that holds the money');
      const minor = Math.round(Number(total) * 100);
      const before = refundsAt(card).length;

      t.is((await refundFromOrderScreen(shop, orderId, '25.00', 'Partly')).error, undefined);
      t.is((await refundFromOrderScreen(shop, orderId, ((minor - 2500) / 100).toFixed(2), 'The rest')).error, undefined);
      t.deepEqual(refundsAt(card).slice(before), [{ invoice, amount: 2500 }, { invoice, amount: minor - 2500 }]);
      t.deepEqual(card.creditNotes(invoice).map((note) => note.amount), [2500, minor - 2500]);
      t.deepEqual(card.creditNotes(handle), [], 'the failed invoice untouched');
      t.is((await pluginNotes(shop, orderId)).length, 2);
      t.is(Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded), Number(total));
    });
  }

  test.serial(`${storage}: the card gateway's events for the service's invoice, heard by the card plugin's webhook handler too: the settle changes nothing the service did, and a refund made at the gateway is refunded once in WooCommerce`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card, service } = made;
    const { orderId, total, handle } = await cardRenewalRecoveredByRetry(made, `hooks-${storage}`);
    const retry = `${handle}-retry1`;
    const completed = () => paymentCompletions(shop, orderId);
    const before = (await shop.snapshot([orderId])).by_id[orderId]!;
    const completedBefore = await completed();

    // invoice_settled for the service's invoice, to the service and to the plugin, naming the settle's transaction as
    // the gateway does (the plugin reads it: GET /v1/invoice/{id}/transaction/{transaction}).
    const settle = ((card.invoice(retry)?.transactions ?? []) as Array<{ id: string; type: string }>).find((transaction) => transaction.type === 'settle');
    precondition(settle !== undefined, `invoice ${retry} has its settle transaction`);
    await cardEventToBoth(made, { event_type: 'invoice_settled', invoice: retry, transaction: settle!.id }, ['service', 'plugin']);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const settled = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.deepEqual(
      [settled.status, settled.data.transaction_id, settled.data.date_paid, settled.meta._reepay_order, settled.meta._reepay_state_settled, settled.refunds?.length ?? 0],
      [before.status, before.data.transaction_id, before.data.date_paid, before.meta._reepay_order, before.meta._reepay_state_settled, before.refunds?.length ?? 0],
    );
    t.is(await completed(), completedBefore, 'no second payment_complete');
    t.deepEqual(settled.notes.slice(before.notes.length).map((n) => n.content), [], 'no note added');

    // A refund made in the gateway's administration (not from WooCommerce): its invoice_refund reaches the service
    // first, then the plugin.
    const atGateway = await request(card.url, 'POST', '/v1/refund', {
      headers: { authorization: `Basic ${Buffer.from(`${card.apiKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ invoice: retry, amount: 5000 }),
    });
    t.is(atGateway.status, 200);
    const event = { event_type: 'invoice_refund', invoice: retry, credit_note: String(atGateway.json.credit_note_id), transaction: String(atGateway.json.id) };
    await cardEventToBoth(made, event, ['service']);
    await eventually(async () => Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded) === 50, SHOWN_WITHIN_MS, 'the service\'s refund in WooCommerce');
    const reads = () => card.requestsTo('GET', `/v1/invoice/${retry}`).length;
    const readsBefore = reads();
    await cardEventToBoth(made, event, ['plugin']);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    t.true(reads() > readsBefore, 'the plugin found the order by its _reepay_order and read the invoice\'s credit notes');
    const refunded = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(Number(refunded.total_refunded), 50, 'refunded once in WooCommerce');
    t.is(refunded.refunds?.length, 1);

    // Another, heard by the plugin first: the plugin refunds it in WooCommerce, and the service finds nothing more.
    const second = await request(card.url, 'POST', '/v1/refund', {
      headers: { authorization: `Basic ${Buffer.from(`${card.apiKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ invoice: retry, amount: 3000 }),
    });
    t.is(second.status, 200);
    await cardEventToBoth(made, { event_type: 'invoice_refund', invoice: retry, credit_note: String(second.json.credit_note_id), transaction: String(second.json.id) }, ['plugin', 'service']);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const twice = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(Number(twice.total_refunded), 80, 'each refund at the gateway once in WooCommerce');
    t.is(twice.refunds?.length, 2);
    t.deepEqual(twice.meta._reepay_credit_note_ids, [[String(atGateway.json.credit_note_id), String(second.json.credit_note_id)]]);
  });

  test.serial(`${storage}: the card metas of a renewal the service recovered are the card plugin's own for a renewal it charged itself, field by field`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card } = made;
    const tag = `fidelity-${storage}`;
    const { orderId, subscriptionId } = await cardRenewalRecoveredByRetry(made, tag, { savedCard: true });
    await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');
    const cardMetas = (meta: Record<string, unknown[]>) => Object.fromEntries(Object.entries(meta).filter(([key]) => /^_?reepay_/.test(key)).map(([key, values]) => [key, values.map(String)]));
    const service = cardMetas((await shop.snapshot([orderId])).by_id[orderId]!.meta);

    // The twin: the next renewal of the same subscription, charged and settled by the plugin itself on the same saved
    // card. Subscriptions made it pending (staff's "Create pending renewal order"); staff move it to Processing, and the
    // plugin, finding no invoice for it at the gateway, charges it with settle (its Actions/Subscriptions.php
    // create_sub_invoice()).
    const next = (await shop.call('subscription_create_renewal', subscriptionId, {}) as { result: { renewal_order_id: number } }).result.renewal_order_id;
    await shop.call('order_update_status', next, { status: 'processing', manual: true });
    await eventually(async () => ((await shop.snapshot([next])).by_id[next]!.meta._reepay_state_settled ?? []).length > 0, SHOWN_WITHIN_MS, 'the plugin\'s own charge settled');
    const plugin = cardMetas((await shop.snapshot([next])).by_id[next]!.meta);
    t.log('service', JSON.stringify(service), 'plugin', JSON.stringify(plugin));
    t.deepEqual(card.requestsTo('POST', '/v1/charge').filter((r) => (r.json as { handle?: string }).handle === `order-${next}`).map((r) => (r.json as { settle?: boolean }).settle), [true], 'the plugin charged its renewal once, settled');

    // Field by field: the same saved card (its ID and the gateway's token, twice), each order's own invoice, its settle
    // transaction at the gateway, and the money settled; no other meta on either order.
    const settleOf = (handle: string) => String(card.charge(handle)?.transaction);
    t.true((service._reepay_token_id ?? []).length === 1);
    t.deepEqual(service._reepay_token_id, plugin._reepay_token_id);
    t.deepEqual(service._reepay_token, plugin._reepay_token);
    t.deepEqual(service.reepay_token, plugin.reepay_token);
    t.deepEqual(service._reepay_order, [`order-${orderId}-retry1`]);
    t.deepEqual(plugin._reepay_order, [`order-${next}`]);
    t.deepEqual(service._reepay_capture_transaction, [settleOf(`order-${orderId}-retry1`)]);
    t.deepEqual(plugin._reepay_capture_transaction, [settleOf(`order-${next}`)]);
    t.deepEqual(service._reepay_state_settled, ['1']);
    t.deepEqual(plugin._reepay_state_settled, ['1']);
    t.deepEqual(Object.keys(service).sort(), Object.keys(plugin).sort(), 'no other meta on either order');
  });

  test.serial(`${storage}: after the service recovered a card renewal, the card plugin charges the next renewal itself: once, on the subscription's card, under the next order's own handle, and the recovered order is left as the service paid it`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card } = made;
    const tag = `next-${storage}`;
    const { orderId, subscriptionId, handle } = await cardRenewalRecoveredByRetry(made, tag);
    await eventually(async () => (await statusOf(shop, subscriptionId)) === 'wc-active', SHOWN_WITHIN_MS, 'the subscription active again');
    const recovered = (await shop.snapshot([orderId])).by_id[orderId]!;
    // The card saved as the plugin's checkout saves it, then the next payment falls due: Subscriptions asks the plugin
    // (which charges without settling, and waits 5-10 s for the gateway's invoice).
    await shop.call('card_plugin_save_card', subscriptionId, { customer: `cust-${tag}`, token: `ca-${tag}` });
    card.queueChargeOutcome({ kind: 'authorized' });
    const before = card.requestsTo('POST', '/v1/charge').length;
    const next = ((await shop.call('subscription_due_renewal', subscriptionId)) as { result: { renewal_order_id: number } }).result.renewal_order_id;
    t.not(next, orderId);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const charges = card.requestsTo('POST', '/v1/charge').slice(before).map((r) => r.json as { handle: string; source: string; amount: number; settle: boolean });
    t.is(charges.length, 1, 'one charge');
    t.like(charges[0], { handle: `order-${next}`, source: `ca-${tag}`, settle: false });
    const nextOrder = (await shop.snapshot([next])).by_id[next]!;
    t.deepEqual(nextOrder.meta._reepay_order, [`order-${next}`]);
    t.true(nextOrder.notes.some((note) => note.content.startsWith('Payment has been authorized.')), 'the plugin\'s own note');
    // The service's recovered order: unchanged by the plugin's charge.
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.deepEqual(after.meta._reepay_order, [`${handle}-retry1`]);
    t.deepEqual([after.status, after.data.transaction_id], [recovered.status, recovered.data.transaction_id]);
    t.is(card.requestsTo('POST', '/v1/charge').filter((r) => String((r.json as { handle: string }).handle).startsWith(`order-${next}`)).length, 1, 'the service did not charge it too');
  });

  test.serial(`${storage}: a wallet renewal recovered by the service's charge: the wallet plugin's webhook handler, hearing the capture, changes nothing; refunded from the order screen, the plugin refunds that charge at the wallet, once`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, service, wallet } = made;
    const { orderId, agreementId, chargeId, failedCharge, amount } = await walletRenewalRecoveredByService(made, `plugins-${storage}`);
    const paid = (await shop.snapshot([orderId])).by_id[orderId]!;
    const total = String(paid.data.total);

    // The same capture event, heard by the wallet plugin's webhook handler too (as during the move): it finds the
    // order by _charge_id, the service's charge, and checks it; nothing the service did changes.
    const completed = () => paymentCompletions(shop, orderId);
    const completedBefore = await completed();
    const fetchesBefore = wallet.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`/recurring/v3/agreements/${agreementId}`)).length;
    await shop.php('wallet_plugin_webhook', { body: { eventType: 'recurring.charge-captured.v1', agreementId, chargeId, amount, currency: 'DKK', occurred: new Date().toISOString(), msn: wallet.merchantSerialNumber } });
    t.true(wallet.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`/recurring/v3/agreements/${agreementId}`)).length > fetchesBefore, 'the plugin asked the wallet about the order\'s charge');
    const heard = (await shop.snapshot([orderId])).by_id[orderId]!;
    const kept = (o: typeof paid) => [o.status, o.data.transaction_id, o.data.date_paid, o.meta._charge_id, o.meta._agreement_id, o.meta._vipps_recurring_captured, o.meta._vipps_recurring_pending_charge, o.refunds?.length ?? 0];
    t.deepEqual(kept(heard), kept(paid));
    t.is(await completed(), completedBefore, 'no second payment_complete');
    t.deepEqual(heard.notes.slice(paid.notes.length).map((n) => n.content), [], 'no note added');

    const refund = await refundFromOrderScreen(shop, orderId, total, 'Customer cancelled');
    t.is(refund.error, undefined);
    const refunds = wallet.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/refund'));
    t.deepEqual(refunds.map((r) => r.path), [`/recurring/v3/agreements/${agreementId}/charges/${chargeId}/refund`], 'refunded on the service\'s charge, once');
    t.like(refunds[0]!.json, { amount: Math.round(Number(total) * 100) });
    t.like(wallet.charge(agreementId, chargeId), { status: 'REFUNDED', summary: { captured: amount, refunded: amount, cancelled: 0 } });
    t.is(wallet.charge(agreementId, failedCharge)?.status, 'FAILED', 'the failed charge untouched');
    t.is(Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded), Number(total));

    // The wallet tells the service of the refund: the service records it, and WooCommerce is not refunded twice.
    t.is(await walletWebhook(service, { eventType: 'recurring.charge-refunded.v1', agreementId, chargeId }), 200);
    await eventually(async () => (await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'mobile_wallet' AND external_id = ?`, [chargeId]))[0]?.status === 'REFUNDED', SHOWN_WITHIN_MS, 'the service\'s payment refunded');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(after.refunds?.length, 1, 'one refund in WooCommerce');
    t.is(Number(after.total_refunded), Number(total));
  });

  test.serial(`${storage}: the wallet plugin's check of pending charges, run while the service's charge is due and after it was taken, changes nothing the service did`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, wallet } = made;
    const check = async () => (await shop.php<{ checked: number[] }>('wallet_plugin_check_charges', { limit: 100 })).checked;
    const writes = () => wallet.writes().filter((r) => r.path.startsWith(`/recurring/v3/agreements/agr-check-${storage}`)).length;
    let whileDue: { checked: number[]; before: { status?: string; chargeId?: unknown }; after: { status?: string; chargeId?: unknown }; notesAdded: string[]; writes: number } | undefined;
    const { orderId, agreementId, chargeId, failedCharge } = await walletRenewalRecoveredByService(made, `check-${storage}`, async ({ orderId: id }) => {
      // The renewal failed, the plugin's pending flag set as it leaves it after creating a renewal charge of its own
      // (set_order_as_pending(); its own attempt in this shop may already have lowered it, when WP-Cron ran it), the
      // service's charge due: the plugin's job picks the order up, sees it failed and only lowers its flag
      // (check_charge_status()).
      await shop.call('order_update_meta', id, { key: '_vipps_recurring_pending_charge', value: '1' });
      const before = (await shop.snapshot([id])).by_id[id]!;
      const writesBefore = writes();
      const checked = await check();
      const after = (await shop.snapshot([id])).by_id[id]!;
      whileDue = {
        checked,
        before: { status: before.status, chargeId: before.meta._charge_id },
        after: { status: after.status, chargeId: after.meta._charge_id },
        notesAdded: after.notes.slice(before.notes.length).map((n) => n.content),
        writes: writes() - writesBefore,
      };
        t.deepEqual(after.meta._vipps_recurring_pending_charge?.map(String), [''], 'the plugin lowered its own flag');
    });
    t.true(whileDue!.checked.includes(orderId), 'the plugin checked the failed renewal its flag named');
    t.deepEqual(whileDue!.after, whileDue!.before, 'still failed, still naming the plugin\'s charge');
    t.deepEqual(whileDue!.notesAdded, []);
    t.is(whileDue!.writes, 0, 'nothing asked of the wallet');
    t.is(wallet.charge(agreementId, chargeId)?.status, 'CHARGED');

    // Paid by the service's charge, with the flag the plugin leaves after a charge of its own went through: the job
    // does not pick the order up, and nothing changes (no second payment_complete, which would name another charge).
    const paid = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.deepEqual([paid.meta._charge_id, paid.meta._vipps_recurring_pending_charge].map((v) => v?.map(String)), [[chargeId], ['']]);
    const completed = () => paymentCompletions(shop, orderId);
    const completedBefore = await completed();
    const writesBefore = writes();
    t.false((await check()).includes(orderId));
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.deepEqual([after.status, after.data.transaction_id, after.data.date_paid, after.meta._charge_id, after.notes.length], [paid.status, paid.data.transaction_id, paid.data.date_paid, paid.meta._charge_id, paid.notes.length]);
    t.is(await completed(), completedBefore);
    t.is(writes(), writesBefore);
    t.is(wallet.charge(agreementId, failedCharge)?.status, 'FAILED');
  });

  test.serial(`${storage}: a wallet refund from the order screen whose answer the wallet plugin never got: WooCommerce refuses it at first, and shows it once the wallet's refund event reaches the service; a second try refunds nothing more`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, service, wallet } = made;
    const { orderId, agreementId, chargeId, amount } = await walletRenewalRecoveredByService(made, `lost-refund-${storage}`);
    const total = String((await shop.snapshot([orderId])).by_id[orderId]!.data.total);
    const refundPath = `/recurring/v3/agreements/${agreementId}/charges/${chargeId}/refund`;
    wallet.loseAnswers((method, path) => method === 'POST' && path === refundPath);

    // The wallet refunds, its answer is lost: the plugin reads an error, tries to cancel the charge instead (a full
    // refund), which the wallet refuses for a refunded charge, so WooCommerce drops the refund and says why.
    const first = await refundFromOrderScreen(shop, orderId, total, 'Customer cancelled');
    t.truthy(first.error, 'the staff member is told the refund did not go through');
    t.like(wallet.charge(agreementId, chargeId), { status: 'REFUNDED', summary: { captured: amount, refunded: amount, cancelled: 0 } }, 'the wallet did refund');
    t.deepEqual(wallet.requests.filter((r) => r.method === 'DELETE').map((r) => r.path), [`/recurring/v3/agreements/${agreementId}/charges/${chargeId}`], 'the plugin\'s cancel-instead, refused');
    t.is(Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded), 0, 'not shown refunded in WooCommerce yet');

    // The wallet's event for the refund reaches the service: WooCommerce shows the money returned, once.
    t.is(await walletWebhook(service, { eventType: 'recurring.charge-refunded.v1', agreementId, chargeId }), 200);
    await eventually(async () => Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded) === Number(total), SHOWN_WITHIN_MS, 'the refund shown in WooCommerce');
    const shown = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(shown.refunds?.length, 1);
    t.is((await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'mobile_wallet' AND external_id = ?`, [chargeId]))[0]?.status, 'REFUNDED');

    // Staff try again: WooCommerce has nothing left to refund, and the wallet is asked nothing more.
    const refundsAsked = wallet.requests.filter((r) => r.method === 'POST' && r.path === refundPath).length;
    const again = await refundFromOrderScreen(shop, orderId, '1.00', 'Again');
    t.truthy(again.error);
    t.is(wallet.requests.filter((r) => r.method === 'POST' && r.path === refundPath).length, refundsAsked);
    t.is(Number((await shop.snapshot([orderId])).by_id[orderId]!.total_refunded), Number(total));
  });

  test.serial(`${storage}: staff complete, then cancel, a card renewal the service recovered: the card plugin reads the settled invoice, captures nothing, cancels nothing, and the payment stays as the service recorded it`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card } = made;
    const { orderId, handle } = await cardRenewalRecoveredByRetry(made, `status-${storage}`);
    const retry = `${handle}-retry1`;
    const paid = (await shop.snapshot([orderId])).by_id[orderId]!;
    const writesBefore = card.writes().length;
    const readsBefore = card.requestsTo('GET', `/v1/invoice/${retry}`).length;
    const kept = (o: typeof paid) => [o.data.transaction_id, o.data.date_paid, o.meta._reepay_order, o.meta._reepay_state_settled, o.refunds?.length ?? 0];

    // Completed: the plugin's capture on a status change (OrderFlow/OrderCapture.php capture_full_order()) finds the
    // invoice settled in full, nothing left to capture.
    await shop.call('order_update_status', orderId, { status: 'completed', manual: true });
    const completed = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(completed.status, 'completed');
    t.deepEqual(kept(completed), kept(paid));
    // Cancelled: its cancel (OrderFlow/OrderStatuses.php, can_cancel()) is only for an authorised invoice.
    await shop.call('order_update_status', orderId, { status: 'cancelled', manual: true });
    const cancelled = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(cancelled.status, 'cancelled');
    t.deepEqual(kept(cancelled), kept(paid));
    t.true(card.requestsTo('GET', `/v1/invoice/${retry}`).length > readsBefore, 'the plugin read the service\'s invoice');
    t.deepEqual(card.writes().slice(writesBefore).map((r) => `${r.method} ${r.path}`), [], 'no settle, cancel, charge or refund asked of the gateway');
    t.is(card.invoice(retry)?.state, 'settled');
    t.is(card.charge(handle)?.state, 'failed', 'the failed invoice untouched');
    const [payment] = await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id = ?`, [retry]);
    t.is(payment?.status, 'CAPTURED');
  });

  test.serial(`${storage}: the gateway only authorised the service's retry: the service settles it itself (the plugin's full capture reads order-N), WooCommerce is paid once with the settle transaction, staff's Completed asks nothing more, and the Refund button refunds that invoice`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card, service } = made;
    const { orderId, handle, total } = await cardRenewalRecoveredByRetry(made, `authorised-${storage}`, { authorisedOnly: true });
    const retry = `${handle}-retry1`;
    const settles = card.requestsTo('POST', `/v1/charge/${retry}/settle`);
    t.is(settles.length, 1, 'the service settled its authorisation, once');
    t.like(settles[0]!.json, { amount: Math.round(Number(total) * 100) });
    t.is(card.invoice(retry)?.state, 'settled');
    t.is(card.charge(handle)?.state, 'failed', 'the failed invoice untouched');
    const paid = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(paid.data.transaction_id, retry);
    t.deepEqual(paid.meta._reepay_order, [retry]);
    t.deepEqual(paid.meta._reepay_capture_transaction, [String(card.charge(retry)?.transaction)], 'the settle transaction, as the plugin keeps it after its own settle');
    t.deepEqual(paid.meta._reepay_state_settled, ['1']);
    t.is(await paymentCompletions(shop, orderId), 1, 'paid once');

    // The gateway's invoice_settled for that settle, heard by the service: nothing changes.
    precondition((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_settled', invoice: retry, transaction: String(card.charge(retry)?.transaction) }, card.webhookSecret)).res.status === 200, 'invoice_settled answered 200');
    // Staff complete the order: the plugin's capture on that status (capture_full_order(), multi_settle()) has nothing left to take.
    const writesBefore = card.writes().length;
    await shop.call('order_update_status', orderId, { status: 'completed', manual: true });
    t.is((await shop.snapshot([orderId])).by_id[orderId]!.status, 'completed');
    t.deepEqual(card.writes().slice(writesBefore).map((r) => `${r.method} ${r.path}`), [], 'no settle or cancel asked of the gateway');
    t.is(await paymentCompletions(shop, orderId), 1, 'still paid once');

    const refund = await refundFromOrderScreen(shop, orderId, total, 'Customer returned the box');
    t.is(refund.error, undefined);
    t.deepEqual(refundsAt(card).filter((r) => r.invoice.startsWith(handle)), [{ invoice: retry, amount: Math.round(Number(total) * 100) }]);
    const [payment] = await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id = ?`, [retry]);
    t.true(['CAPTURED', 'REFUNDED'].includes(String(payment?.status)));
  });

  test.serial(`${storage}: paid twice with both plugins active: the failed invoice settles at the gateway after the service's retry took the money; WooCommerce is not paid again, and the order names the later capture, which the Refund button then refunds`, async (t) => {
    const made = stages.get(storage) ?? await stage(storage);
    const { shop, card, service } = made;
    const tag = `twice-${storage}`;
    const { orderId, handle, total } = await cardRenewalRecoveredByRetry(made, tag);
    const retry = `${handle}-retry1`;
    const paid = (await shop.snapshot([orderId])).by_id[orderId]!;
    const completed = () => paymentCompletions(shop, orderId);
    const completedBefore = await completed();

    // The failed invoice is settled at the gateway after all (the customer's bank let the first charge through late):
    // the gateway holds the money twice, and says so.
    const minor = Math.round(Number(total) * 100);
    const late = 'tx-late-settle';
    card.setCharge(handle, { state: 'settled', amount: minor, customer: `cust-${tag}`, transaction: late });
    card.setInvoice(handle, {
      state: 'settled', amount: minor, settled_amount: minor, customer: `cust-${tag}`,
      transactions: [{ id: late, state: 'settled', type: 'settle', amount: minor, payment_type: 'card' }],
    });
    precondition((await sendCardGatewayEvent(service.api.url, { event_type: 'invoice_settled', invoice: handle, transaction: late }, card.webhookSecret)).res.status === 200, 'invoice_settled answered 200');
    const applied = async () => (await shop.sql<{ status: string; result: string | null }>(`SELECT status, result FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'order_payment_complete' ORDER BY id`, [orderId]));
    await eventually(async () => (await applied()).length === 2 && (await applied()).every((change) => change.status === 'applied'), SHOWN_WITHIN_MS, 'the second capture handed to WooCommerce');
    t.regex(String((await applied())[1]!.result), /left as it is; payment metas set/);

    // The wallet plugin makes WooCommerce accept a payment on processing and completed orders (its
    // append_valid_statuses_for_payment_complete()): the order is still not paid again.
    const after = (await shop.snapshot([orderId])).by_id[orderId]!;
    t.is(await completed(), completedBefore, 'no second woocommerce_payment_complete');
    t.deepEqual([after.status, after.data.transaction_id, after.data.date_paid], [paid.status, paid.data.transaction_id, paid.data.date_paid]);
    t.deepEqual(after.meta._reepay_order, [handle], 'the later capture named for the refund');
    t.deepEqual(after.meta._reepay_capture_transaction, [late]);

    // Refunded from the order screen: the plugin refunds the later capture, and the service's invoice keeps its money.
    const refund = await refundFromOrderScreen(shop, orderId, total, 'Charged twice');
    t.is(refund.error, undefined);
    t.deepEqual(refundsAt(card).filter((r) => r.invoice === handle || r.invoice === retry), [{ invoice: handle, amount: minor }]);
    t.deepEqual(card.creditNotes(retry), []);
  });
}

/** The file for one storage mode: its own shop, service and fakes, so the two modes run side by side. */
export function providerPluginTests(storage: StorageMode): void {
  pluginsActive(storage);
  afterRecovery(storage);
}
