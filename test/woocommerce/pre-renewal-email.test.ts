import path from 'node:path';
import test from 'ava';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config';
import { createShopDataSource, rawPool } from '../../src/data-access/data-source';
import { ScheduledActionRepository } from '../../src/data-access/scheduled-action-repository';
import { ShopSettingsRepository, type ShopSettings } from '../../src/data-access/shop-settings-repository';
import { WooCommerceChangeRepository, type ShopChange } from '../../src/data-access/woocommerce-change-repository';
import { createWooCommerceShop, type RunActionsResult, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * Before the renewal (src/dunning/pre-renewal-check.use-case.ts) on a real shop: the hand-over the check stores
 * (`customer_payment_method_needed`, kind `pre_renewal`) makes WooCommerce send its own customer e-mail "Payment
 * method needed" (a WC_Email, recorded by the test recorder, read in full) once, saying the next payment on its
 * date will not go through, with Subscriptions' change-payment-method link, and notes it on the subscription.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const EMAIL_ID = 'shop_sidecar_payment_method_needed';
const CUSTOMER_EMAIL = 'kunde@example.dk';
const SITE = 'https://shop.example.dk';
const SHOP_ZONE = 'Europe/Copenhagen';

interface Mail { to: string[]; subject: string; message: string; headers: string | string[] }
type RunWithMail = RunActionsResult & { mails: Mail[] };

const shopDate = (at: Date) => new Intl.DateTimeFormat('en-US', { timeZone: SHOP_ZONE, month: 'long', day: 'numeric', year: 'numeric' }).format(at);
const readable = (message: string) => message.replace(/<head[\s\S]*?<\/head>/i, ' ').replace(/<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' ')
  .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec))).replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();

let shop: WooCommerceShop;
let dataSource: DataSource;
let changes: WooCommerceChangeRepository;
let settings: ShopSettings;

test.before(async () => {
  shop = await createWooCommerceShop('pre_renewal_mail_current_posts', 'current', 'posts', { companion: COMPANION });
  const config = loadConfig({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: SITE });
  dataSource = createShopDataSource(config.db, 2);
  await dataSource.initialize();
  await dataSource.runMigrations();
  changes = new WooCommerceChangeRepository(dataSource, new ScheduledActionRepository(dataSource));
  settings = await new ShopSettingsRepository(dataSource).current();
});

test.after.always(async () => {
  await dataSource?.destroy();
  if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
});

test.serial('before the renewal: WooCommerce\'s own e-mail, once, says the next payment on its date will not go through, with the change-payment-method link', async (t) => {
  const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', status: 'active' });
  await shop.runActions();
  await shop.logReset();
  const subscriptionId = fixture.subscription_id!;
  const state = await shop.php<{ status: string; next_payment: string | null }>('state', { id: subscriptionId });
  t.truthy(state.next_payment);
  const nextPayment = new Date(`${state.next_payment!.replace(' ', 'T')}Z`);

  // As the check stores it (src/dunning/pre-renewal-check.use-case.ts), then run by Action Scheduler.
  const change: ShopChange = {
    op: 'customer_payment_method_needed', objectId: subscriptionId,
    payload: { kind: 'pre_renewal', order_id: null, reason: null, deadline: null, card_expires: '12-29', masked_card: '457111XXXXXX4242' },
  };
  const id = await changes.enqueue(rawPool(dataSource), change, settings, new Date());
  const run = await shop.php<RunWithMail>('run_actions_mail');
  t.deepEqual(run.failures, []);
  const [row] = (await rawPool(dataSource).query(`SELECT status, result FROM ${shop.prefix}sidecar_woocommerce_changes WHERE id = ?`, [id]))[0] as any[];
  t.like(row, { status: 'applied' });

  const recorded = (await shop.log(subscriptionId)).filter((event) => event.kind === 'mail' && event.name === EMAIL_ID);
  t.is(recorded.length, 1, 'WooCommerce sent its e-mail once');
  t.deepEqual(recorded[0].detail.to, [CUSTOMER_EMAIL]);
  t.like(recorded[0].detail, { customer: true, object_class: 'WC_Subscription' });
  const mails = run.mails.filter((mail) => mail.subject === recorded[0].detail.subject);
  t.is(mails.length, 1);
  const mail = mails[0];
  t.is(mail.subject, 'Your next Test shop subscription payment will not go through');
  const text = readable(mail.message);
  t.true(text.includes('Please update your payment method'), text);
  t.true(text.includes(`on ${shopDate(nextPayment)} will not go through`), text);
  t.true(mail.message.includes(`href="${SITE}/my-account/subscription-payment-method/${subscriptionId}/"`), 'Subscriptions\' change-payment-method link');

  // Run again: nothing more is sent for the same change.
  const again = await shop.php<RunWithMail>('run_actions_mail');
  t.deepEqual(again.mails.filter((m) => m.subject === mail.subject), []);
  t.is((await shop.log(subscriptionId)).filter((event) => event.kind === 'mail' && event.name === EMAIL_ID).length, 1);
  t.is((await shop.php<{ status: string }>('state', { id: subscriptionId })).status, 'active', 'the subscription is left as it is');
});
