import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { providerEnvironment } from '../support/provider-environment';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop } from '../support/test-shop';
import { createStaffUser, logIn, WP_SECRETS_ENV, type StaffSession, type StaffUser } from '../support/wordpress-fixtures';

/**
 * Issue 51: every order the service's own charge pays looks to the providers' WooCommerce plugins as if they had
 * paid it. For each way the service records money (its planned retry, staff's Charge now, the charge after a new
 * card, a late webhook, reconciliation), the metas the plugin reads to refund, capture and check the payment
 * (src/payments/plugin-payment-metas.ts) travel in the same change as the payment (with the companion), or are
 * written on the order in the same transaction (without it), in the storage WooCommerce uses. The metas of a
 * payment the service did not make (the failed invoice settled later) are left to the plugin.
 */
export function pluginPaymentMetaScenarios(name: string, storage: { hpos: boolean }): void {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
  const WALLET_SECRET = `wallet-secret-${name}`;

  let shop: TestShop;
  let card: FakeCardGateway;
  let wallet: FakeMobileWallet;
  let hub: PaymentHub & { close(): Promise<void> };
  let worker: RunningWorker;
  let api: RunningStaffApi;
  let session: StaffSession;
  let manager: StaffUser;
  let now = new Date('2026-11-23T08:00:00Z');
  const clock = () => now;
  const advance = (ms: number) => { now = new Date(now.getTime() + ms); };
  async function tickAfter(ms: number) {
    advance(ms);
    await worker.tick();
  }

  const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
  const env = () => shop.config({ ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }) });
  const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);
  const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
  const asManager = (method: string, path: string) => request(api.url, method, path, { headers: session.headers, body: {} });

  /** An order's (or subscription's) status, in the storage WooCommerce uses, as WooCommerce would set it. */
  const setStatus = (id: number, status: string) => (storage.hpos
    ? q(`UPDATE ${shop.prefix}wc_orders SET status = ? WHERE id = ?`, [`wc-${status}`, id])
    : q(`UPDATE ${shop.prefix}posts SET post_status = ? WHERE ID = ?`, [`wc-${status}`, id]));
  const setMeta = (id: number, key: string, value: string) => (storage.hpos
    ? q(`UPDATE ${shop.prefix}wc_orders_meta SET meta_value = ? WHERE order_id = ? AND meta_key = ?`, [value, id, key])
    : q(`UPDATE ${shop.prefix}postmeta SET meta_value = ? WHERE post_id = ? AND meta_key = ?`, [value, id, key]));
  /** The order's metas of the plugins, as WooCommerce reads them from its storage. */
  async function pluginMetas(orderId: number): Promise<Record<string, string>> {
    const rows = storage.hpos
      ? await q(`SELECT meta_key AS k, meta_value AS v FROM ${shop.prefix}wc_orders_meta WHERE order_id = ? AND (meta_key LIKE '\\_reepay%' OR meta_key IN ('_charge_id', '_agreement_id') OR meta_key LIKE '\\_vipps%') ORDER BY id`, [orderId])
      : await q(`SELECT meta_key AS k, meta_value AS v FROM ${shop.prefix}postmeta WHERE post_id = ? AND (meta_key LIKE '\\_reepay%' OR meta_key IN ('_charge_id', '_agreement_id') OR meta_key LIKE '\\_vipps%') ORDER BY meta_id`, [orderId]);
    return Object.fromEntries(rows.map((row) => [row.k, row.v]));
  }
  /** The payment change the service handed WooCommerce for the order. */
  async function paymentChange(orderId: number): Promise<{ transaction_id: string; meta?: { set: Record<string, string>; delete: string[] } }> {
    const rows = await q(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'order_payment_complete' ORDER BY id`, [orderId]);
    if (rows.length !== 1) throw new Error(`${rows.length} payment changes for order ${orderId}`);
    return JSON.parse(String(rows[0].payload));
  }

  let serial = 0;
  /** A card renewal whose invoice `order-N` failed at the gateway (soft or hard decline), as the card plugin leaves it. */
  async function failedCardRenewal(errorState: 'soft_declined' | 'hard_declined' = 'soft_declined') {
    serial += 1;
    const customer = `cust-${name}-${serial}`;
    const oldCard = `ca-${name}-${serial}`;
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', nextPaymentGmt: now, meta: { _reepay_token: oldCard } });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _reepay_order: '' } });
    // The card plugin names a renewal's invoice by its number when Subscriptions creates it (renewal_order_created()).
    await setMeta(orderId, '_reepay_order', `order-${orderId}`);
    card.setPaymentMethod(oldCard, { customer, state: errorState === 'hard_declined' ? 'failed' : 'active' });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, currency: 'DKK', customer, error: errorState === 'hard_declined' ? 'credit_card_expired' : 'insufficient_funds', error_state: errorState });
    if ((await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` })) !== 'PROCESSED') throw new Error('failure not processed');
    await setStatus(orderId, 'failed');
    await setStatus(subscriptionId, 'on-hold');
    return { orderId, subscriptionId, customer };
  }
  /** A wallet renewal whose charge failed at the wallet, as the wallet plugin leaves it (`_charge_id`, failure metas). */
  async function failedWalletRenewal() {
    serial += 1;
    const agreementId = `agr-${name}-${serial}`;
    const chargeId = `chr-${name}-${serial}`;
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
    const orderId = await shop.seeder.createOrder({
      status: 'pending', total: '99.00', createdVia: 'subscription',
      meta: {
        _subscription_renewal: String(subscriptionId), _charge_id: chargeId, _agreement_id: agreementId,
        _vipps_recurring_failed_charge: '1', _vipps_recurring_failed_charge_reason: 'insufficient_funds', _vipps_recurring_latest_api_status: 'FAILED',
        _vipps_recurring_pending_charge: '', _vipps_recurring_captured: '',
      },
    });
    wallet.setAgreement(agreementId);
    wallet.setCharge(agreementId, chargeId, { status: 'FAILED' });
    if ((await walletWebhook({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId })) !== 'PROCESSED') throw new Error('failure not processed');
    await setStatus(orderId, 'failed');
    await setStatus(subscriptionId, 'on-hold');
    return { orderId, subscriptionId, agreementId, chargeId };
  }

  /** The settle transaction of the gateway's charge that took the money, which the plugin keeps after a settled charge of its own. */
  const settledBy = (handle: string) => String(card.charge(handle)?.transaction);
  const cardMetas = (handle: string) => ({ set: { _reepay_order: handle, _reepay_capture_transaction: settledBy(handle), _reepay_state_settled: '1' }, delete: [] });
  const walletMetas = (chargeId: string, agreementId: string) => ({
    set: { _charge_id: chargeId, _agreement_id: agreementId, _vipps_recurring_latest_api_status: 'CHARGED', _vipps_recurring_pending_charge: '', _vipps_recurring_captured: '1' },
    delete: ['_vipps_recurring_failed_charge', '_vipps_recurring_failed_charge_reason', '_vipps_recurring_failed_charge_description'],
  });
  const serviceCharge = async (orderId: number) => (await q(`SELECT external_id, requested_by, state FROM ${shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]))[0];

  test.before(async () => {
    shop = await createTestShop(name, { hpos: storage.hpos });
    card = new FakeCardGateway();
    wallet = new FakeMobileWallet({ now: clock });
    await Promise.all([card.start(), wallet.start()]);
    manager = await createStaffUser(shop, { login: `lea.${name}`, displayName: 'Lea Metas', roles: ['shop_manager'] });
    hub = await openHub(env(), clock);
    await hub.registrations.add({ registrationId: `reg-${name}`, url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.charge-canceled.v1'], secret: WALLET_SECRET });
    worker = await startPacedWorker(env(), clock);
    api = await startStaffApi(env(), { clock });
    await announceCompanion(shop, true);
  });

  test.beforeEach(async () => {
    session = await logIn(shop, manager, { nowSeconds: Math.floor(now.getTime() / 1000) });
  });

  test.after.always(async () => {
    await api?.stop();
    await worker?.stop();
    await hub?.close();
    await Promise.allSettled([card?.stop(), wallet?.stop()]);
    await shop?.drop();
  });

  test.serial('card, the service\'s planned retry: the change that records the payment names its invoice for the plugin', async (t) => {
    const { orderId } = await failedCardRenewal();
    await tickAfter(12 * HOUR);
    t.like(await serviceCharge(orderId), { external_id: `order-${orderId}-retry1`, requested_by: 'plan', state: 'TAKEN' });
    const change = await paymentChange(orderId);
    t.is(change.transaction_id, `order-${orderId}-retry1`);
    t.deepEqual(change.meta, cardMetas(`order-${orderId}-retry1`));
  });

  test.serial('card, a card WooCommerce has saved for the plugin: the change also names that saved card (its ID, then the gateway\'s token twice) as the plugin\'s assign_payment_token() does before a renewal charge of its own', async (t) => {
    // The card the checkout saved, as the card plugin saves it (WC_Payment_Token_CC under its gateway), and another
    // gateway's card with the same token, which is not the plugin's.
    serial += 1;
    const token = `ca-${name}-saved-${serial}`;
    await q(`INSERT INTO ${shop.prefix}woocommerce_payment_tokens (gateway_id, token, user_id, type, is_default) VALUES ('other_gateway', ?, 7, 'CC', 0), ('reepay_checkout', ?, 7, 'Reepay', 1)`, [token, token]);
    const [saved] = await q(`SELECT token_id FROM ${shop.prefix}woocommerce_payment_tokens WHERE gateway_id = 'reepay_checkout' AND token = ?`, [token]);
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', nextPaymentGmt: now, meta: { _reepay_token: token } });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
    card.setPaymentMethod(token, { customer: `cust-${name}-saved`, state: 'active' });
    card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, currency: 'DKK', customer: `cust-${name}-saved`, error: 'insufficient_funds', error_state: 'soft_declined' });
    t.is(await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` }), 'PROCESSED');
    await setStatus(orderId, 'failed');
    await setStatus(subscriptionId, 'on-hold');
    await tickAfter(12 * HOUR);
    t.like(await serviceCharge(orderId), { external_id: `order-${orderId}-retry1`, state: 'TAKEN' });
    const change = await paymentChange(orderId);
    const retry = `order-${orderId}-retry1`;
    t.deepEqual(change.meta, { set: { _reepay_token_id: String(saved.token_id), reepay_token: token, _reepay_token: token, _reepay_order: retry, _reepay_capture_transaction: settledBy(retry), _reepay_state_settled: '1' }, delete: [] });
    t.deepEqual(Object.keys(change.meta!.set), ['_reepay_token_id', 'reepay_token', '_reepay_token', '_reepay_order', '_reepay_capture_transaction', '_reepay_state_settled'], 'in the order the plugin writes them');
  });

  test.serial('card, staff\'s Charge now: the same metas, naming the handle staff\'s charge took', async (t) => {
    const { orderId } = await failedCardRenewal();
    advance(MINUTE);
    const answer = await asManager('POST', `/payment-hub/v1/orders/${orderId}/charge-now`);
    t.is(answer.status, 200, answer.text);
    t.is(answer.json.result.outcome, 'paid');
    const charge = await serviceCharge(orderId);
    t.like(charge, { requested_by: 'staff', state: 'TAKEN' });
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(charge.external_id));
  });

  test.serial('card, a new card after a hard decline: the charge on the new card is the one named', async (t) => {
    const { orderId, subscriptionId, customer } = await failedCardRenewal('hard_declined');
    const newCard = `ca-new-${name}-${serial}`;
    card.setPaymentMethod(newCard, { customer, state: 'active' });
    await setMeta(subscriptionId, '_reepay_token', newCard);
    await tickAfter(MINUTE);
    const charge = await serviceCharge(orderId);
    t.like(charge, { requested_by: 'new_method', state: 'TAKEN' });
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(charge.external_id));
  });

  test.serial('card, a late webhook: the charge\'s answer lost, its invoice_settled records it with the same metas', async (t) => {
    const { orderId } = await failedCardRenewal();
    card.loseAnswers((method, path) => method === 'POST' && path === '/v1/charge');
    await tickAfter(12 * HOUR);
    t.like(await serviceCharge(orderId), { state: 'OPEN' });
    t.is(await cardWebhook({ event_type: 'invoice_settled', invoice: `order-${orderId}-retry1` }), 'PROCESSED');
    t.like(await serviceCharge(orderId), { state: 'TAKEN' });
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(`order-${orderId}-retry1`));
  });

  test.serial('card, reconciliation: a charge the gateway answered pending, settled since without a webhook; Ask the provider now records it with the same metas', async (t) => {
    const { orderId } = await failedCardRenewal();
    card.queueChargeOutcome({ kind: 'pending' });
    await tickAfter(12 * HOUR);
    const handle = `order-${orderId}-retry1`;
    t.like(await serviceCharge(orderId), { external_id: handle, state: 'OPEN' });
    card.settlePendingCharge(handle);
    const asked = await asManager('POST', `/payment-hub/v1/orders/${orderId}/reconcile`);
    t.is(asked.status, 200, asked.text);
    t.like(await serviceCharge(orderId), { state: 'TAKEN' });
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(handle));
  });

  /** The service's payments of the order, oldest first. */
  const paymentsOf = async (orderId: number) => (await q(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]))
    .map((row) => ({ external_id: String(row.external_id), status: row.status }));
  const settles = (handle: string) => card.requestsTo('POST', `/v1/charge/${handle}/settle`);
  async function until(check: () => Promise<boolean>, what: string) {
    for (let i = 0; i < 100; i += 1) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`not within 5 s: ${what}`);
  }

  test.serial('card, an authorised charge: the plugin\'s handle and its authorised state travel with the authorisation; the service then settles it, once, and the order is paid with the settle transaction', async (t) => {
    const { orderId } = await failedCardRenewal();
    card.queueChargeOutcome({ kind: 'authorized' });
    await tickAfter(12 * HOUR);
    const rows = await q(`SELECT payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'order_payment_authorized'`, [orderId]);
    t.is(rows.length, 1);
    t.deepEqual(JSON.parse(String(rows[0].payload)).meta, { set: { _reepay_order: `order-${orderId}-retry1`, _reepay_state_authorized: '1' }, delete: [] });
    // The gateway took nothing: the service settles what it asked to settle, right after the commit.
    const handle = `order-${orderId}-retry1`;
    await until(async () => (await paymentsOf(orderId)).some((payment) => payment.status === 'CAPTURED'), 'the authorisation settled');
    const charge = (await q(`SELECT idempotency_key FROM ${shop.prefix}sidecar_charges WHERE order_id = ?`, [orderId]))[0];
    t.deepEqual(settles(handle).map((r) => r.json), [{ key: `${charge.idempotency_key}-settle`, amount: 14900 }]);
    t.like(card.charge(handle), { state: 'settled', amount: 14900 });
    t.deepEqual(await paymentsOf(orderId), [{ external_id: `order-${orderId}`, status: 'FAILED' }, { external_id: handle, status: 'CAPTURED' }]);
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(handle));
    await tickAfter(MINUTE);
    t.is(settles(handle).length, 1, 'the worker\'s pass asks nothing more');
  });

  test.serial('card, an authorised charge whose settle answer was lost: the worker\'s pass asks again with the same key, and the gateway settled it once', async (t) => {
    const { orderId } = await failedCardRenewal();
    const handle = `order-${orderId}-retry1`;
    card.queueChargeOutcome({ kind: 'authorized' });
    card.loseAnswers((method, path) => method === 'POST' && path === `/v1/charge/${handle}/settle`);
    await tickAfter(12 * HOUR);
    await until(async () => settles(handle).length === 1, 'the settle asked after the commit');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual((await paymentsOf(orderId)).map((payment) => payment.status), ['FAILED', 'AUTHORIZED'], 'not settled while the answer is unknown');
    await tickAfter(MINUTE);
    t.is(settles(handle).length, 2);
    t.deepEqual(settles(handle)[1]!.json, settles(handle)[0]!.json, 'the same key and amount');
    t.deepEqual((await paymentsOf(orderId)).map((payment) => payment.status), ['FAILED', 'CAPTURED']);
    t.is(((card.invoice(handle)?.transactions as { type: string }[]) ?? []).filter((transaction) => transaction.type === 'settle').length, 1, 'one settle at the gateway');
    t.deepEqual((await paymentChange(orderId)).meta, cardMetas(handle));
  });

  test.serial('card, an authorised charge of an order the shop cancelled before the settle: the authorisation is released, never settled', async (t) => {
    const { orderId } = await failedCardRenewal();
    const handle = `order-${orderId}-retry1`;
    card.queueChargeOutcome({ kind: 'authorized' });
    // The settle after the commit never reaches the gateway (the connection drops before it is read).
    card.stallRequests((method, path) => method === 'POST' && path === `/v1/charge/${handle}/settle`, 'before');
    await tickAfter(12 * HOUR);
    await until(async () => card.stalledRequests.length === 1, 'the settle under way');
    await setStatus(orderId, 'cancelled');
    card.dropStalled();
    await tickAfter(MINUTE);
    t.like(card.charge(handle), { state: 'cancelled' });
    t.deepEqual(((card.invoice(handle)?.transactions as { type: string }[]) ?? []).map((transaction) => transaction.type), ['authorization', 'cancel'], 'nothing settled');
    t.deepEqual((await paymentsOf(orderId)).map((payment) => payment.status), ['FAILED', 'CANCELED']);
    t.is((await q(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'order_payment_complete'`, [orderId]))[0].n, 0, 'the order is not paid');
  });

  test.serial('wallet, the service\'s planned retry taken on its due date (webhook): the change names the charge, its agreement and its status as the plugin keeps them', async (t) => {
    const { orderId, agreementId } = await failedWalletRenewal();
    await tickAfter(12 * HOUR);
    const charge = await serviceCharge(orderId);
    t.like(charge, { requested_by: 'plan', state: 'OPEN' });
    advance(3 * 86_400_000);
    await wallet.advanceTo(now);
    t.is(wallet.charge(agreementId, charge.external_id)?.status, 'CHARGED');
    t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId, chargeId: charge.external_id }), 'PROCESSED');
    const change = await paymentChange(orderId);
    t.is(change.transaction_id, charge.external_id);
    t.deepEqual(change.meta, walletMetas(charge.external_id, agreementId));
  });

  test.serial('wallet, reconciliation: taken on its due date without a webhook, Ask the provider now records it with the same metas', async (t) => {
    const { orderId, agreementId } = await failedWalletRenewal();
    await tickAfter(12 * HOUR);
    const charge = await serviceCharge(orderId);
    advance(3 * 86_400_000);
    await wallet.advanceTo(now);
    session = await logIn(shop, manager, { nowSeconds: Math.floor(now.getTime() / 1000) });
    const asked = await asManager('POST', `/payment-hub/v1/orders/${orderId}/reconcile`);
    t.is(asked.status, 200, asked.text);
    t.like(await serviceCharge(orderId), { state: 'TAKEN' });
    t.deepEqual((await paymentChange(orderId)).meta, walletMetas(charge.external_id, agreementId));
  });

  test.serial('without the companion, the service writes the plugins\' metas on the order itself as it completes the renewal (card, then wallet)', async (t) => {
    await announceCompanion(shop, false);
    try {
      const { orderId } = await failedCardRenewal();
      await tickAfter(12 * HOUR);
      t.like(await serviceCharge(orderId), { state: 'TAKEN' });
      t.like(await pluginMetas(orderId), { _reepay_order: `order-${orderId}-retry1`, _reepay_state_settled: '1' });

      const wallet1 = await failedWalletRenewal();
      await tickAfter(12 * HOUR);
      const charge = await serviceCharge(wallet1.orderId);
      advance(3 * 86_400_000);
      await wallet.advanceTo(now);
      t.is(await walletWebhook({ eventType: 'recurring.charge-captured.v1', agreementId: wallet1.agreementId, chargeId: charge.external_id }), 'PROCESSED');
      t.deepEqual(await pluginMetas(wallet1.orderId), {
        _charge_id: charge.external_id, _agreement_id: wallet1.agreementId,
        _vipps_recurring_latest_api_status: 'CHARGED', _vipps_recurring_pending_charge: '', _vipps_recurring_captured: '1',
      }, 'the failed charge\'s metas gone, the service\'s charge named as the plugin names its own');
    } finally {
      await announceCompanion(shop, true);
    }
  });
}
