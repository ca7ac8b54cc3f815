import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { handOverKey, shopEventsKey, signHandOver } from '../../src/woocommerce-handover/handover-signature';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { eventually, handleWalletEvent, openHub, startPacedWorker } from '../support/payment-hub-fixture';
import { parsePrometheusText, total } from '../support/prometheus-text';
import { providerEnvironment } from '../support/provider-environment';
import { failedWalletRenewal } from '../support/failed-renewals';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import { WP_SECRETS, WP_SECRETS_ENV } from '../support/wordpress-fixtures';

// The companion's notice that a renewal order no longer awaits payment, through the whole API (under the same pinned
// clock as the worker, which acts only when ticked): the order's open wallet charge is cancelled at the wallet at
// once, without a pass of the worker; a notice not signed with the site's salts, or not now, changes nothing and is
// counted; a notice heard twice, or about an order with nothing open, does nothing.

const HOUR = 3_600_000;
const ROUTE = '/payment-hub/v1/shop/order-status-changed';
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-shop-notice';
/** The key the companion signs with: derived from `wp_salt('logged_in')`, LOGGED_IN_KEY . LOGGED_IN_SALT. */
const KEY = shopEventsKey(`${WP_SECRETS.loggedInKey}${WP_SECRETS.loggedInSalt}`);

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let api: RunningApi;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const chargesOf = async (orderId: number) => q(`SELECT external_id, state, cancel_wanted_at, cancel_reason FROM ${shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
const walletCancels = (chargeId: string) => wallet.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/charges/${chargeId}`));
const env = () => shop.config({ ...WP_SECRETS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }) });
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
const setStatus = (orderId: number, status: string) => q(`UPDATE ${shop.prefix}posts SET post_status = ? WHERE ID = ?`, [`wc-${status}`, orderId]);

/** The companion's notice, signed as it signs: `timestamp` (Unix seconds) the service's now unless given, `key` the site's. */
function notice(body: Record<string, unknown>, options: { timestamp?: number; key?: string; headers?: Record<string, string> } = {}) {
  const text = JSON.stringify(body);
  const timestamp = options.timestamp ?? Math.floor(now.getTime() / 1000);
  const headers = options.headers ?? {
    'content-type': 'application/json',
    'x-shop-sidecar-timestamp': String(timestamp),
    'x-shop-sidecar-signature': signHandOver(options.key ?? KEY, timestamp, text),
  };
  return request(api.url, 'POST', ROUTE, { headers, body: text });
}

/** A wallet renewal that failed, charged again by the worker's plan: the wallet holds the service's charge until its due date. */
async function walletRenewalWithOpenCharge() {
  const { orderId, agreementId } = await failedWalletRenewal({ shop, wallet, deliver: walletWebhook }, 'notice');
  now = new Date(now.getTime() + 12 * HOUR);
  await worker.tick();
  const [charge] = await chargesOf(orderId);
  if (charge?.state !== 'OPEN') throw new Error(`no open charge: ${JSON.stringify(charge)}`);
  if (!['PENDING', 'DUE'].includes(String(wallet.charge(agreementId, charge.external_id)?.status))) throw new Error('the wallet holds no charge');
  return { orderId, agreementId, chargeId: String(charge.external_id) };
}

async function scrape() {
  const res = await request(api.url, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parsePrometheusText(res.text);
}
const noticesAnswered = async (status: string) => total(await scrape(), 'sidecar_http_requests_total', { method: 'POST', route: ROUTE, status });

test.before(async () => {
  shop = await createTestShop('shop_notice', { hpos: false });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(env(), clock);
  await hub.registrations.add({ registrationId: 'reg-notice', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-canceled.v1'], secret: WALLET_SECRET });
  worker = await startPacedWorker(env(), clock);
  api = await startApi(env(), undefined, clock);
});

test.after.always(async () => {
  await api?.stop();
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('A renewal paid in the shop while the service\'s wallet charge is due: the companion\'s notice has it cancelled at the wallet at once, without a pass of the worker; heard again, it does nothing more', async (t) => {
  const { orderId, agreementId, chargeId } = await walletRenewalWithOpenCharge();
  // Staff mark it paid (a bank transfer): only WooCommerce's order changes.
  await setStatus(orderId, 'processing');

  const heard = await notice({ order_id: orderId, from: 'failed', to: 'processing' });
  t.is(heard.status, 202, heard.text);
  t.deepEqual(heard.json, { outcome: 'withdrawn', reason: 'order_processing' });
  await eventually(async () => wallet.charge(agreementId, chargeId)?.status === 'CANCELLED', 10_000, 'the charge cancelled at the wallet');
  await eventually(async () => (await chargesOf(orderId))[0].state === 'CANCELED', 10_000, 'the ledger\'s charge closed');
  t.like((await chargesOf(orderId))[0], { state: 'CANCELED', cancel_reason: 'order_processing' });
  t.is(walletCancels(chargeId).length, 1);

  const again = await notice({ order_id: orderId, from: 'failed', to: 'processing' });
  t.is(again.status, 202, again.text);
  t.deepEqual(again.json, { outcome: 'nothing_open' });
  t.is(walletCancels(chargeId).length, 1, 'the wallet is not asked again');
});

test.serial('A notice not signed with the site\'s salts, without its headers, or stamped more than 300 s from the service\'s clock is refused 401 and counted; nothing is read or changed', async (t) => {
  const { orderId, chargeId } = await walletRenewalWithOpenCharge();
  await setStatus(orderId, 'cancelled');
  const body = { order_id: orderId, from: 'failed', to: 'cancelled' };
  const before = await noticesAnswered('401');

  const seconds = Math.floor(now.getTime() / 1000);
  const refused = [
    await notice(body, { key: shopEventsKey('another site\'s salts') }),
    // A key of the same salts for another purpose (the hand-over's) signs nothing here.
    await notice(body, { key: handOverKey(`${WP_SECRETS.loggedInKey}${WP_SECRETS.loggedInSalt}`) }),
    await notice(body, { timestamp: seconds - 301 }),
    await notice(body, { timestamp: seconds + 301 }),
    await notice(body, { headers: { 'content-type': 'application/json' } }),
  ];
  for (const res of refused) {
    t.is(res.status, 401, res.text);
    t.is(res.json.code, 'invalid_signature');
  }
  t.regex(refused[0].json.message, /does not verify/);
  t.regex(refused[2].json.message, /within 300 seconds/);
  t.regex(refused[4].json.message, /headers are required/);
  t.is(await noticesAnswered('401') - before, refused.length, 'each refusal counted under the route');
  t.like((await chargesOf(orderId))[0], { state: 'OPEN', cancel_wanted_at: null, cancel_reason: null });
  t.is(walletCancels(chargeId).length, 0);

  // Stamped 300 s ago, the companion's clock a little behind: still heard.
  const late = await notice(body, { timestamp: seconds - 300 });
  t.is(late.status, 202, late.text);
  t.deepEqual(late.json, { outcome: 'withdrawn', reason: 'order_cancelled' });
});

test.serial('A notice about an order with nothing open, or whose order still awaits payment, changes nothing; a signed body that is not a notice is 400', async (t) => {
  const paidOrder = await shop.seeder.createOrder({ status: 'processing', total: '99.00' });
  const nothing = await notice({ order_id: paidOrder, from: 'pending', to: 'processing' });
  t.is(nothing.status, 202, nothing.text);
  t.deepEqual(nothing.json, { outcome: 'nothing_open' });

  // The statuses the notice tells are not believed: the database says the order still awaits payment.
  const { orderId, chargeId } = await walletRenewalWithOpenCharge();
  const untrue = await notice({ order_id: orderId, from: 'failed', to: 'completed' });
  t.is(untrue.status, 202, untrue.text);
  t.deepEqual(untrue.json, { outcome: 'still_wanted' });
  t.like((await chargesOf(orderId))[0], { state: 'OPEN', cancel_wanted_at: null });
  t.is(walletCancels(chargeId).length, 0);

  const malformed = await notice({ order_id: 'one', from: 'failed' });
  t.is(malformed.status, 400, malformed.text);
  t.like(malformed.json, { code: 'invalid_params', data: { params: ['order_id', 'to'] } });
});
