import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { announceCompanion, openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { providerEnvironment } from '../support/provider-environment';
import { createTestShop, type TestShop } from '../support/test-shop';

// Before the renewal, through the worker (as main.ts starts it, its pre-renewal pass run under a pinned clock)
// against the loopback card gateway and wallet, which answer as their docs say: a card the gateway reports failed
// (a network token the scheme suspended), a wallet agreement stopped, a card the gateway's updater renewed, and a
// customer who fixes the method after the notice. Cards are set up only as the real flow does it: the gateway's
// webhook handled by the service and the subscription's `_reepay_token` as the gateway plugin writes it.

/** The scenarios in one storage mode (posts, or HPOS), each file its own shop. */
export function preRenewalScenarios(name: string, storage: { hpos: boolean }): void {
  const DAY = 86_400_000;
  const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
  const WALLET_SECRET = 'wallet-secret-pre-renewal';
  const INTERVAL_SECONDS = 3600;

  let shop: TestShop;
  let card: FakeCardGateway;
  let wallet: FakeMobileWallet;
  let hub: PaymentHub & { close(): Promise<void> };
  let worker: RunningWorker;
  let now = new Date('2027-02-01T08:00:00Z');
  const clock = () => now;
  const advance = (ms: number) => { now = new Date(now.getTime() + ms); };
  /** The next pass of the check (they start at most once per interval). */
  async function nextPass() {
    advance(INTERVAL_SECONDS * 1000);
    await worker.preRenewalPass!();
  }

  const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
  const changesOf = (subscriptionId: number) =>
    q(`SELECT op, payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [subscriptionId]);
  const checksOf = (subscriptionId: number) =>
    q(`SELECT next_payment, provider, payment_method, finding, asked_at, fixed_at, fixed_method FROM ${shop.prefix}sidecar_pre_renewal_checks WHERE subscription_id = ?`, [subscriptionId]);
  const notesOf = (subscriptionId: number) =>
    q(`SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? AND comment_type = 'order_note' ORDER BY comment_ID`, [subscriptionId]);
  const cardCharges = () => card.requestsTo('POST', '/v1/charge');
  const walletCreates = () => wallet.requests.filter((r) => r.method === 'POST' && /\/charges$/.test(r.path));

  function env() {
    return shop.config({
      ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }),
      PRE_RENEWAL_CHECK_DAYS: '5', PRE_RENEWAL_CHECK_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
    });
  }
  const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);

  let serial = 0;
  /** A card subscription renewing at `nextPayment`: its card saved at the gateway, told by the webhook, and named by `_reepay_token`. */
  async function cardSubscription(nextPayment: Date) {
    serial += 1;
    const customer = `cust-pre-${serial}`;
    const pm = `ca_pre_${serial}`;
    card.setPaymentMethod(pm, { customer, state: 'active', card: { exp_date: '12-29', masked_card: '457199XXXXXX4242', card_type: 'visa' } });
    const subscriptionId = await shop.seeder.createSubscription({
      status: 'active', total: '149.00', billingPeriod: 'month', paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Card',
      startGmt: new Date('2026-10-01T08:00:00Z'), nextPaymentGmt: nextPayment, billing: { email: `pre-${serial}@example.dk` }, meta: { _reepay_token: pm },
    });
    await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: pm });
    return { subscriptionId, customer, pm };
  }

  test.before(async () => {
    shop = await createTestShop(name, { hpos: storage.hpos });
    card = new FakeCardGateway();
    wallet = new FakeMobileWallet({ now: clock });
    await Promise.all([card.start(), wallet.start()]);
    hub = await openHub(env(), clock);
    worker = await startPacedWorker(env(), clock);
    await announceCompanion(shop, true, 5);
  });

  test.after.always(async () => {
    await worker?.stop();
    await hub?.close();
    await Promise.allSettled([card?.stop(), wallet?.stop()]);
    await shop?.drop();
  });

  test.serial('A card reported suspended five days before its renewal: one e-mail through WooCommerce, a note, and no charge before the customer acts; fixing it is counted', async (t) => {
    const renewal = new Date(now.getTime() + 5 * DAY);
    const { subscriptionId, pm, customer } = await cardSubscription(renewal);
    // The scheme suspends the network token: the gateway puts the method in state failed and says so by its webhook.
    t.is(await cardWebhook(card.failPaymentMethod(pm)), 'PROCESSED');

    await nextPass();
    const changes = await changesOf(subscriptionId);
    t.is(changes.length, 1);
    t.is(changes[0].op, 'customer_payment_method_needed');
    t.deepEqual(JSON.parse(changes[0].payload), { kind: 'pre_renewal', order_id: null, reason: null, deadline: null, card_expires: '12-29', masked_card: '457199XXXXXX4242' });
    t.like((await checksOf(subscriptionId))[0], { provider: 'card_gateway', payment_method: pm, finding: 'card_failed', fixed_at: null });
    const notes = (await notesOf(subscriptionId)).map((row) => String(row.comment_content));
    // In the shop's language (this test shop's WPLANG is da_DK): what was found, and that the customer was asked.
    t.true(notes.some((note) => note.includes(pm) && note.includes('"failed"') && /customer was asked|Kunden er bedt/.test(note) && note.includes('2027-02-06')), notes.join('\n'));

    // Later passes and the dunning steps before the renewal: no second e-mail, no charge on the card.
    await nextPass();
    await worker.tick();
    advance(2 * DAY);
    await worker.preRenewalPass!();
    await worker.tick();
    t.is((await changesOf(subscriptionId)).length, 1, 'asked once for this renewal');
    t.deepEqual(cardCharges(), [], 'no charge attempted on it');

    // The customer saves a new card through the link: the gateway plugin names it on the subscription.
    const fresh = `${pm}_new`;
    card.setPaymentMethod(fresh, { customer, state: 'active', card: { exp_date: '10-30', masked_card: '457199XXXXXX5555' } });
    await cardWebhook({ event_type: 'customer_payment_method_added', customer, payment_method: fresh });
    // Where WooCommerce keeps the subscription's meta: HPOS's meta table, or postmeta.
    const [table, idColumn] = storage.hpos ? [`${shop.prefix}wc_orders_meta`, 'order_id'] : [`${shop.prefix}postmeta`, 'post_id'];
    await q(`UPDATE ${table} SET meta_value = ? WHERE ${idColumn} = ? AND meta_key = '_reepay_token'`, [fresh, subscriptionId]);
    await nextPass();
    t.like((await checksOf(subscriptionId))[0], { fixed_method: fresh });
    t.truthy((await checksOf(subscriptionId))[0].fixed_at, 'saved before failure');
    t.is((await changesOf(subscriptionId)).length, 1);
    t.deepEqual(cardCharges(), []);
  });

  test.serial('A card the gateway\'s updater renewed is simply used; a renewal further off than PRE_RENEWAL_CHECK_DAYS is not looked at yet', async (t) => {
    const { subscriptionId: updated, pm } = await cardSubscription(new Date(now.getTime() + 4 * DAY));
    // customer_payment_method_updated: the same payment method, a new expiry and masked card, still active.
    Object.assign(card.paymentMethod(pm)!, { card: { exp_date: '08-31', masked_card: '457199XXXXXX9999' } });
    const { subscriptionId: later, pm: laterPm } = await cardSubscription(new Date(now.getTime() + 6 * DAY));
    card.failPaymentMethod(laterPm);
    const before = card.requestsTo('GET', `/v1/payment_method/${laterPm}`).length;
    await nextPass();
    t.deepEqual(await changesOf(updated), []);
    t.deepEqual(await changesOf(later), []);
    t.is(card.requestsTo('GET', `/v1/payment_method/${laterPm}`).length, before, 'not read before its window');
    t.deepEqual(await checksOf(updated), []);
  });

  test.serial('A wallet agreement the customer stopped: one e-mail before the renewal, no wallet charge', async (t) => {
    const agreement = 'agr_pre_stopped';
    wallet.setAgreement(agreement, { status: 'STOPPED' });
    const subscriptionId = await shop.seeder.createSubscription({
      status: 'active', total: '99.00', billingPeriod: 'month', paymentMethod: 'vipps_mobilepay_recurring', paymentMethodTitle: 'MobilePay',
      startGmt: new Date('2026-10-01T08:00:00Z'), nextPaymentGmt: new Date(now.getTime() + 3 * DAY), billing: { email: 'wallet-pre@example.dk' }, meta: { _agreement_id: agreement },
    });
    await nextPass();
    await nextPass();
    const changes = await changesOf(subscriptionId);
    t.is(changes.length, 1);
    t.like(JSON.parse(changes[0].payload), { kind: 'pre_renewal', card_expires: null });
    t.like((await checksOf(subscriptionId))[0], { provider: 'mobile_wallet', payment_method: agreement, finding: 'agreement_STOPPED' });
    t.deepEqual(walletCreates(), []);
  });

  test.serial('A card that fails after the last pass is looked at on the worker\'s next loop, not an hour later: a method the service heard stopped working brings the pass forward', async (t) => {
    // The pass has just run: the next is an hour away.
    await nextPass();
    const { subscriptionId, pm } = await cardSubscription(new Date(now.getTime() + 3 * DAY));
    await worker.preRenewalPass!();
    t.deepEqual(await changesOf(subscriptionId), [], 'within the hour, a pass is not due again');

    advance(60_000);
    t.is(await cardWebhook(card.failPaymentMethod(pm)), 'PROCESSED');
    advance(60_000);
    await worker.preRenewalPass!();
    const changes = await changesOf(subscriptionId);
    t.is(changes.length, 1, 'asked on the next loop');
    t.like((await checksOf(subscriptionId))[0], { payment_method: pm, finding: 'card_failed' });
  });
}
