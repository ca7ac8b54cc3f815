import test, { type ExecutionContext } from 'ava';
import { loadConfig } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import { startApi, HELPDESK_KEY, HELPDESK_SECRET, type RunningApi } from '../support/test-shop';
import { WP_SECRETS_ENV } from '../support/wordpress-fixtures';
import { apiGetFromPage, logIn, openBrowser, screenshot, type AdminBrowser } from './support/admin-browser';
import { startAdminOrigin, type AdminOrigin } from './support/admin-origin';
import { freePort } from './support/serve-over-http';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * The harness for WP admin browser tests, end to end: a current-stack shop behind nginx on one HTTPS origin with
 * the real API (support/admin-origin.ts), a shop manager logged in in chromium (support/admin-browser.ts) on a
 * subscription's edit screen, and from inside that page a staff route of the service answers through nginx with
 * WordPress' own logged-in cookie and `wp_rest` nonce. A customer's cookie gets 403 there.
 *
 * The service verifies WordPress' cookies with the same secrets WordPress signs them with: the test shops'
 * bootstrap.php defines LOGGED_IN_KEY/SALT and NONCE_KEY/SALT from WP_SECRETS (support/woocommerce-shop.ts
 * passes them as SIDECAR_SALT_*), and the service gets them as WP_SECRETS_ENV.
 */

const MANAGER = { login: 'panel-manager', password: 'manager-pass-0123456789' };
const CUSTOMER = { login: 'panel-customer', password: 'customer-pass-0123456789' };
const REASONS = '/subscription-support/v1/cancellation-reasons';

let browser: AdminBrowser;

test.before(async () => {
  browser = await openBrowser();
});

test.after.always(async () => {
  await browser?.close();
});

function editScreen(mode: StorageMode, id: number): string {
  return mode === 'posts'
    ? `/wp-admin/post.php?post=${id}&action=edit`
    : `/wp-admin/admin.php?page=wc-orders--shop_subscription&action=edit&id=${id}`;
}

function ordersList(mode: StorageMode): string {
  return mode === 'posts' ? '/wp-admin/edit.php?post_type=shop_order' : '/wp-admin/admin.php?page=wc-orders';
}

async function scenario(t: ExecutionContext, mode: StorageMode): Promise<void> {
  let shop: WooCommerceShop | undefined;
  let api: RunningApi | undefined;
  let origin: AdminOrigin | undefined;
  try {
    shop = await createWooCommerceShop(`admin_origin_${mode.replace('-', '_')}`, 'current', mode);
    const port = await freePort();
    const config = loadConfig({
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: '0', SHOP_URL: `https://127.0.0.1:${port}`, ...WP_SECRETS_ENV,
      HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET,
    });
    const migrations = createShopDataSource(config.db, 1);
    await migrations.initialize();
    await migrations.runMigrations();
    await migrations.destroy();
    api = await startApi(config);
    origin = await startAdminOrigin({ shop, apiUrl: api.url, port });

    const { subscription_id: subscriptionId } = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const manager = await shop.php<{ id: number }>('user', { ...MANAGER, role: 'shop_manager' });
    await shop.php('user', { ...CUSTOMER, role: 'customer' });

    // The shop manager, on the subscription's edit screen.
    const page = await browser.newPage();
    const landed = await logIn(page, origin.url, MANAGER.login, MANAGER.password);
    t.true(new URL(landed).pathname.startsWith('/wp-admin'), `the manager landed on ${landed}`);
    await page.goto(`${origin.url}${editScreen(mode, subscriptionId!)}`);
    const heading = (await page.locator('h1.wp-heading-inline').first().textContent())?.trim();
    t.is(heading, 'Edit Subscription', `the edit screen's heading (${page.url()})`);
    await screenshot(page, `admin-origin-${mode}-subscription-edit`);

    const reasons = await apiGetFromPage(page, REASONS);
    t.is(reasons.status, 200, `the service through nginx (${reasons.via}): ${JSON.stringify(reasons.body).slice(0, 500)}`);
    t.log(`${mode}, subscription edit screen: ${REASONS} by ${reasons.via} -> ${reasons.status} ${JSON.stringify(reasons.body).slice(0, 200)}`);
    // WordPress' own REST API on the same origin (pretty permalinks), the same cookie and nonce.
    const me = await apiGetFromPage(page, '/wp/v2/users/me');
    t.like(me, { status: 200, body: { id: manager.id } }, 'WordPress\' /wp-json/wp/v2/users/me through nginx');

    // The orders list loads wp.apiFetch (WooCommerce's scripts), as a panel's screen will: its nonce middleware.
    await page.goto(`${origin.url}${ordersList(mode)}`);
    const byApiFetch = await apiGetFromPage(page, REASONS);
    t.like(byApiFetch, { status: 200, via: 'wp.apiFetch' }, `from the orders list: ${JSON.stringify(byApiFetch.body).slice(0, 500)}`);

    // A customer: WooCommerce keeps them out of WP admin; their cookie and nonce are valid but not staff's.
    const customerPage = await browser.newPage();
    const customerLanded = await logIn(customerPage, origin.url, CUSTOMER.login, CUSTOMER.password);
    t.false(new URL(customerLanded).pathname.startsWith('/wp-admin'), `the customer landed on ${customerLanded}`);
    const refused = await apiGetFromPage(customerPage, REASONS);
    // The service's refusal (WordPress would answer 404 rest_no_route for a route it does not have).
    t.like(refused, { status: 403, body: { code: 'forbidden' } }, `the customer (landed on ${customerLanded}): ${JSON.stringify(refused.body).slice(0, 500)}`);
  } catch (error) {
    if (origin) t.log(await origin.output());
    throw error;
  } finally {
    await origin?.stop();
    await api?.stop();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  }
}

for (const mode of ['posts', 'hpos'] as const) {
  test(`WP admin on one HTTPS origin with the service (${mode}): the shop manager's page reaches the staff route, a customer gets 403`, (t) => scenario(t, mode));
}
