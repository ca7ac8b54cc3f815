import path from 'node:path';
import test from 'ava';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { logIn, openBrowser, screenshot, SCREENS_DIR, wordsOf, type AdminBrowser } from './support/admin-browser';
import { installCompanion, PanelsService } from './support/panels-service';
import { createWooCommerceShop, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * Issue 45's words on the order screen, in Debian's Chromium against real WordPress + WooCommerce + Subscriptions
 * behind the same nginx origin as the service, with the companion installed as docs/companion.md says:
 * - a card renewal declined for lack of funds, with the shop's payday tomorrow (`DUNNING_PAYDAYS`), shows its
 *   attempt planned early on payday and why;
 * - a wallet renewal whose attempt the wallet now retries itself shows that MobilePay is retrying, until when, and
 *   that nothing is charged on top; Charge now is not offered meanwhile.
 * The service runs as its two processes on the real clock: the plan's first wait is long (20 days), so the payday
 * attempt comes first, and the processing plan's is 2 s, so the wallet's technical error is charged again at once.
 */

const MANAGER = { login: 'timing-manager', password: 'manager-pass-0123456789' };
const WAIT_MS = 60_000;
const SHOP_ZONE = 'Europe/Copenhagen';
const STICKY_HEADERS = '#wpadminbar, .woocommerce-layout__header { display: none !important; }';
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-for-the-panels-timing-test';

const orderScreen = (id: number) => `/wp-admin/post.php?post=${id}&action=edit`;

/** Tomorrow's day of the month in the shop's zone: the shop's payday for this test (DUNNING_PAYDAYS takes day numbers). */
function tomorrowInShop(): number {
  return Number(new Intl.DateTimeFormat('en-GB', { timeZone: SHOP_ZONE, day: 'numeric' }).format(new Date(Date.now() + 86_400_000)));
}

let browser: AdminBrowser;

test.before(async () => {
  browser = await openBrowser();
});

test.after.always(async () => {
  await browser?.close();
});

test.serial('The Payments panel tells staff why an attempt is planned on payday, and that MobilePay is retrying its charge itself and until when', async (t) => {
  let shop: WooCommerceShop | undefined;
  const service = new PanelsService();
  const card = new FakeCardGateway();
  const wallet = new FakeMobileWallet();
  const payments = '#shop-sidecar-payments';
  const story = `${payments} .shop-sidecar-dunning`;
  try {
    shop = await createWooCommerceShop('panels_dunning_timing', 'current', 'posts');
    await installCompanion(shop);
    await Promise.all([card.start(), wallet.start()]);
    await service.start(shop, {
      CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
      MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
      MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
      MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
      DUNNING_PLAN: '20d,1d', DUNNING_PROCESSING_PLAN: '2s,1d', DUNNING_PAYDAYS: String(tomorrowInShop()),
      RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0', PRE_RENEWAL_CHECK_DAYS: '0',
    });
    const origin = service.origin!;
    const apiUrl = service.apiUrl;

    await shop.php('user', { ...MANAGER, role: 'shop_manager' });
    const wooStatus = async (id: number) => (await shop!.php<{ status: string }>('state', { id })).status;

    // ---- A card renewal declined for lack of funds: the payday attempt comes before the plan's 20 days.
    const cardRenewal = (await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' })).renewal_order_id!;
    card.setPaymentMethod('ca-timing', { customer: 'cust-timing', state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
    card.setCharge(`order-${cardRenewal}`, { state: 'failed', amount: 14900, customer: 'cust-timing', error: 'insufficient_funds', error_state: 'soft_declined' });
    t.is((await sendCardGatewayEvent(apiUrl, { event_type: 'invoice_failed', invoice: `order-${cardRenewal}` }, card.webhookSecret)).res.status, 200);
    await eventually(async () => (await wooStatus(cardRenewal)) === 'failed', WAIT_MS, 'WooCommerce to show the card renewal failed');

    // ---- A wallet renewal with a technical error: the processing plan charges the same agreement again in 2 s,
    // one charge that the wallet retries itself.
    const agreementId = 'agr-timing';
    const walletFixture = await shop.fixture({ kind: 'subscription', gateway: 'vipps_recurring', subscription_meta: { _agreement_id: agreementId }, meta: { _charge_id: 'chr-timing' } });
    const walletRenewal = walletFixture.renewal_order_id!;
    wallet.setAgreement(agreementId, { pricing: { type: 'LEGACY', amount: 100000, currency: 'DKK' } });
    // The renewal's own charge, for the order's total (149 kr.), failed at the wallet.
    wallet.setCharge(agreementId, 'chr-timing', { status: 'FAILED', amount: 14900, failureReason: 'technical_error', failureDescription: 'Technical error' });
    const delivery = mobileWalletDelivery({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: 'chr-timing' }, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
    t.is((await request(apiUrl, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body })).status, 200);
    const walletCharges = () => wallet.requests.filter((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`);
    await eventually(async () => walletCharges().length > 0, WAIT_MS, 'the worker to charge the same agreement again');
    const [created] = walletCharges();
    t.like(created!.json, { processingMode: 'MULTIPLE_ATTEMPTS', retryDays: 2, amount: 14900 }, 'an attempt of the processing plan asks the wallet for 2 days');

    const page = await browser.newPage({ timezoneId: 'UTC' });
    const landed = await logIn(page, origin.url, MANAGER.login, MANAGER.password);
    t.true(new URL(landed).pathname.startsWith('/wp-admin'), `the manager landed on ${landed}`);

    // ---- The card renewal: the attempt planned early on payday, and why, in the shop's time.
    await page.goto(`${origin.url}${orderScreen(cardRenewal)}`);
    await page.locator(`${story} [data-dunning-status="open"]`).waitFor({ timeout: WAIT_MS });
    const cardWords = await wordsOf(page, payments);
    t.regex(cardWords, /We try again on .+ \(attempt 1\)\./, cardWords);
    t.regex(cardWords, /Attempt 1 is planned for this time: early on payday, as the decline was for lack of funds\./, cardWords);
    // The timeline's row of the planned attempt: its moment in one cell, what happened in another.
    const planned = page.locator(`${story} [data-event="attempt_planned"]`).first().locator('xpath=ancestor::tr[1]').locator('time').first();
    t.regex((await planned.getAttribute('data-shop-time')) ?? '', / 00:15$/, 'at 00:15 in the shop\'s time, whatever the browser\'s');
    await screenshot(page, 'panels-payday-attempt');
    await page.locator(payments).screenshot({ path: path.join(SCREENS_DIR, 'panel-payday-attempt.png'), style: STICKY_HEADERS });

    // ---- The wallet renewal: MobilePay is retrying, until when; nothing on top, and Charge now not offered.
    await page.goto(`${origin.url}${orderScreen(walletRenewal)}`);
    await page.locator(`${story} [data-dunning-status="open"]`).waitFor({ timeout: WAIT_MS });
    const walletWords = await wordsOf(page, payments);
    t.regex(walletWords, /MobilePay is retrying the charge itself and tells the customer in the app; its outcome is known on .+\. Nothing is charged on top\./, walletWords);
    t.regex(walletWords, /Attempt 1 was made; the provider has not answered yet\./, 'the attempt made, its answer awaited');
    t.regex(walletWords, /MobilePay kr\.149,00 Awaiting the provider/, 'its payment row: no status yet, in words');
    t.true(await page.locator(`${payments} .shop-sidecar-charge-now`).isDisabled(), 'Charge now is not offered while the wallet retries');
    await screenshot(page, 'panels-wallet-retrying');
    await page.locator(payments).screenshot({ path: path.join(SCREENS_DIR, 'panel-wallet-retrying.png'), style: STICKY_HEADERS });
    t.is(walletCharges().length, 1, 'one charge while the wallet retries');
    await page.close();
  } catch (error) {
    await service.log(t);
    throw error;
  } finally {
    await service.stop();
    await Promise.allSettled([card.stop(), wallet.stop()]);
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  }
});
