import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { request, type TestResponse } from '../support/http-client';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { freePort } from '../support/free-port';
import { serveOverHttp, type ServedShop } from './support/serve-over-http';
import { startServiceBeside, statusOf } from './support/service-beside-shop';
import { providersEnv, stopStagesAfterAll, walletWebhook, type ProvidersStage } from './support/providers-beside-shop';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * A charge only while its renewal wants one (issue 49), beside real WordPress + WooCommerce + Subscriptions (the
 * current stack, in HPOS and in posts storage) served over HTTP with the companion. A wallet renewal failed and the
 * service's retry charge is DUE at the wallet; then
 * - the customer cancels the subscription in My Account (Subscriptions' own Cancel link, with its nonce, in the
 *   customer's logged-in session), or
 * - staff move the renewal order to the bin.
 * The companion tells the service at the end of that request, and the charge is cancelled at the wallet (a DELETE,
 * the charge CANCELLED, nothing taken on its due date), with an order note saying so. The worker is stopped
 * meanwhile, as when it is down: its pass over the database cannot cancel anything then, only the notice can.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const WALLET_SECRET = 'wallet-secret-for-the-renewal-no-longer-wanted-test';
/** The fixture's customer (test/woocommerce/php/lib/commands.php, sidecar_base_fixture). */
const CUSTOMER = { login: 'kunde', password: 'kunde-test-password' };
const SHOWN_WITHIN_MS = 30_000;
/** The wallet retries a charge for at most this many days after its due date. */
const WALLET_RETRY_DAYS = 14;

type Stage = ProvidersStage;
const stages = new Map<StorageMode, Stage>();

/**
 * The shop, the provider fakes and the service. The shop's address is chosen first, so that the served shop's PHP
 * knows where the service is (SHOP_SIDECAR_SERVICE_URL, as an operator defines it in wp-config.php) and the service
 * knows where the shop is (SHOP_URL).
 */
async function stage(storage: StorageMode): Promise<Stage> {
  const shop = await createWooCommerceShop(`unwanted_${storage.replace('-', '_')}`, 'current', storage, { companion: COMPANION });
  // A theme that shows pages, My Account among them (a test shop has none of its own).
  for (const name of ['template', 'stylesheet']) await shop.php('option', { name, value: 'sidecar-test-theme' });
  const shopPort = await freePort();
  const card = new FakeCardGateway();
  const wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  const service = await startServiceBeside(shop, { url: `http://127.0.0.1:${shopPort}` }, {
    ...providersEnv(card, wallet, WALLET_SECRET),
    // The dunning plan in seconds, so that the real worker's first attempt comes within the test.
    DUNNING_PLAN: '2s,2s,2s,2s,2s', RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
  shop.env.SIDECAR_SERVICE_URL = `${service.api.url}/`;
  const served = await serveOverHttp(shop, { port: shopPort });
  const made = { shop, served, service, card, wallet };
  stages.set(storage, made);
  return made;
}

stopStagesAfterAll(stages);


interface DueCharge { orderId: number; subscriptionId: number; agreementId: string; chargeId: string; due: string }

/** A wallet renewal failed in WooCommerce, and the worker's retry charge is DUE at the wallet. */
async function failedWalletRenewalWithDueCharge(t: ExecutionContext, { shop, service, wallet }: Stage, name: string): Promise<DueCharge> {
  const agreementId = `agr-wc-${name}`;
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: `chr-wc-${name}` } });
  const orderId = fixture.renewal_order_id!;
  const subscriptionId = fixture.subscription_id!;
  wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
  wallet.setCharge(agreementId, `chr-wc-${name}`, { status: 'FAILED', failureReason: 'user_action_required', failureDescription: 'User action required' });
  t.is(await walletWebhook(service, { eventType: 'recurring.charge-failed.v1', agreementId, chargeId: `chr-wc-${name}` }), 200);
  await eventually(async () => (await statusOf(shop, orderId)) === 'wc-failed' && (await statusOf(shop, subscriptionId)) === 'wc-on-hold',
    SHOWN_WITHIN_MS, 'the renewal failed and the subscription on hold in WooCommerce');
  const created = await eventually(async () => wallet.requests.find((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`),
    SHOWN_WITHIN_MS, 'the service\'s wallet charge');
  const chargeId = String((created!.json as { orderId: string }).orderId);
  t.is(wallet.charge(agreementId, chargeId)?.status, 'DUE');
  return { orderId, subscriptionId, agreementId, chargeId, due: String((created!.json as { due: string }).due) };
}

/** The ledger's charges of the order. */
const chargesOf = (shop: WooCommerceShop, orderId: number) =>
  shop.sql<{ external_id: string; state: string; cancel_reason: string | null }>(`SELECT external_id, state, cancel_reason FROM ${shop.prefix}sidecar_charges WHERE order_id = ?`, [orderId]);

/**
 * What must follow once the renewal stopped wanting money: withdrawn for `reason`, one DELETE at the wallet, the charge
 * CANCELLED there and closed in the ledger, an order note saying so, and nothing taken when its due date and the
 * wallet's retry days have passed.
 */
async function cancelledAtTheWallet(t: ExecutionContext, { shop, wallet }: Stage, charge: DueCharge, reason: string): Promise<void> {
  const { orderId, agreementId, chargeId, due } = charge;
  t.like((await chargesOf(shop, orderId))[0], { external_id: chargeId, cancel_reason: reason }, 'withdrawn by the notice');
  await eventually(async () => wallet.charge(agreementId, chargeId)?.status === 'CANCELLED', SHOWN_WITHIN_MS, 'the service\'s wallet charge cancelled');
  t.true(wallet.today() < due, 'cancelled before its due date');
  const deletes = wallet.requests.filter((r) => r.method === 'DELETE' && r.path === `/recurring/v3/agreements/${agreementId}/charges/${chargeId}`);
  t.is(deletes.length, 1, 'one cancel reached the wallet');
  await eventually(async () => (await chargesOf(shop, orderId))[0]?.state === 'CANCELED', SHOWN_WITHIN_MS, 'the ledger\'s charge closed');
  const noted = await eventually(async () => (await shop.snapshot([orderId])).by_id[orderId]?.notes.find((note) => note.content.includes(`Charge ${chargeId}`)),
    SHOWN_WITHIN_MS, 'the order note of the cancelled charge');
  t.regex(noted!.content, /cancelled before it was taken/);
  t.notRegex(noted!.content, /already paid/, 'the note does not say the renewal was paid');

  // The wallet's processing run up to past its due date and retry days (its clock left as it is, for the next test).
  await wallet.runDueCharges(new Date(Date.parse(`${due}T23:00:00Z`) + (WALLET_RETRY_DAYS + 1) * 86_400_000));
  t.like(wallet.charge(agreementId, chargeId), { status: 'CANCELLED', summary: { captured: 0 } }, 'the wallet never takes it');
}

/** Each Set-Cookie's name=value, as a browser keeps them for the next request. */
function cookiesFrom(res: TestResponse, jar: Map<string, string>): Map<string, string> {
  const set = res.headers['set-cookie'] ?? [];
  for (const line of set) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    const value = pair.slice(at + 1);
    if (value === 'deleted' || /expires=Thu, 01-Jan-1970/i.test(line)) jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), value);
  }
  return jar;
}
const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

/** The customer logs in at wp-login.php as WordPress's login form posts it; the session's cookies. */
async function customerLogsIn(t: ExecutionContext, served: ServedShop): Promise<Map<string, string>> {
  const jar = new Map([['wordpress_test_cookie', 'WP%20Cookie%20check']]);
  const form = new URLSearchParams({ log: CUSTOMER.login, pwd: CUSTOMER.password, 'wp-submit': 'Log In', testcookie: '1', redirect_to: `${served.url}/my-account/` });
  const res = await request(served.url, 'POST', '/wp-login.php', {
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) }, body: form.toString(), timeoutMs: 60_000,
  });
  t.is(res.status, 302, `WordPress logged the customer in (${res.text.slice(0, 300)})`);
  cookiesFrom(res, jar);
  t.true([...jar.keys()].some((name) => name.startsWith('wordpress_logged_in_')), 'a logged-in cookie');
  return jar;
}

/**
 * The customer opens the subscription in My Account and follows Subscriptions' own Cancel link (its nonce belongs to
 * the session and the subscription's status), as the button does; Subscriptions answers with a redirect back.
 */
async function customerCancelsInMyAccount(t: ExecutionContext, served: ServedShop, subscriptionId: number): Promise<void> {
  const jar = await customerLogsIn(t, served);
  const page = await request(served.url, 'GET', `/my-account/view-subscription/${subscriptionId}/`, { headers: { cookie: cookieHeader(jar) }, timeoutMs: 60_000 });
  t.is(page.status, 200, 'My Account shows the subscription');
  const links = [...page.text.matchAll(/href="([^"]*change_subscription_to=cancelled[^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&').replace(/&#038;/g, '&'));
  if (links.length !== 1) t.log(page.text.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, '').replace(/\s+/g, ' ').slice(-6000));
  t.is(links.length, 1, 'one Cancel button');
  const cancel = new URL(links[0], served.url);
  t.is(cancel.searchParams.get('subscription_id'), String(subscriptionId));
  const res = await request(served.url, 'GET', `${cancel.pathname}${cancel.search}`, { headers: { cookie: cookieHeader(cookiesFrom(page, jar)) }, timeoutMs: 60_000 });
  t.is(res.status, 302, 'Subscriptions took the change and sent the customer back to the subscription');
  t.true(String(res.headers.location).includes(`/view-subscription/${subscriptionId}/`));
}

for (const storage of ['hpos', 'posts'] as StorageMode[]) {
  test.serial(`${storage}: the customer cancels the subscription in My Account while the service's wallet charge is DUE: the companion tells the service, and the charge is cancelled at the wallet, never taken`, async (t) => {
    const stage_ = stages.get(storage) ?? await stage(storage);
    const { shop, served, service } = stage_;
    const charge = await failedWalletRenewalWithDueCharge(t, stage_, `mine-${storage}`);

    await service.worker.stop();
    try {
      await customerCancelsInMyAccount(t, served, charge.subscriptionId);
      t.is(await statusOf(shop, charge.subscriptionId), 'wc-cancelled', 'the subscription cancelled in WooCommerce');
      t.is(await statusOf(shop, charge.orderId), 'wc-failed', 'the renewal order stays failed');
      await cancelledAtTheWallet(t, stage_, charge, 'subscription_cancelled');
    } catch (error) {
      t.log(served.output().slice(-4000));
      throw error;
    } finally {
      service.worker = await startTestWorker(service.config);
    }
  });

  test.serial(`${storage}: the renewal order moved to the bin while the service's wallet charge is DUE: the companion tells the service, and the charge is cancelled at the wallet, never taken`, async (t) => {
    const stage_ = stages.get(storage) ?? await stage(storage);
    const { shop, service } = stage_;
    const charge = await failedWalletRenewalWithDueCharge(t, stage_, `bin-${storage}`);

    await service.worker.stop();
    try {
      // Staff's "Move to Trash" (the shop's CLI process sends the notice at its end, as a request does).
      t.like(await shop.call('order_trash', charge.orderId), { result: 'trash' });
      t.is(await statusOf(shop, charge.orderId), 'trash');
      await cancelledAtTheWallet(t, stage_, charge, 'order_trash');
    } finally {
      service.worker = await startTestWorker(service.config);
    }
  });
}
