import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config';
import { createShopDataSource, rawPool } from '../../src/data-access/data-source';
import { ScheduledActionRepository } from '../../src/data-access/scheduled-action-repository';
import { ShopSettingsRepository, type ShopSettings } from '../../src/data-access/shop-settings-repository';
import {
  APPLY_CHANGE_HOOK, CHANGE_ACTION_GROUP, WooCommerceChangeRepository, type PaymentMethodNeeded, type ShopChange,
} from '../../src/data-access/woocommerce-change-repository';
import { renderMo } from '../support/companion-translations';
import { createWooCommerceShop, type OrderSnapshot, type RunActionsResult, type StorageMode, type WooCommerceShop, type WooCommerceStack } from './support/woocommerce-shop';

/**
 * The dunning's two hand-overs on a real shop, applied by the companion as the service stores them (its own
 * WooCommerceChangeRepository.enqueue, then Action Scheduler): `customer_payment_method_needed` makes WooCommerce send
 * its customer e-mail "Payment method needed" (recorded, not sent: the test recorder stops every e-mail, and the
 * driver reads each in full just before) with Subscriptions' change-payment-method link, once per change, and a
 * private note on the subscription; `subscription_cancel_after_dunning` cancels an on-hold subscription as
 * Subscriptions does and leaves an active one alone. The site in Danish gets the e-mail in Danish.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const EMAIL_ID = 'shop_sidecar_payment_method_needed';
const SETTINGS_OPTION = `woocommerce_${EMAIL_ID}_settings`;
const CUSTOMER_EMAIL = 'kunde@example.dk';
const SITE = 'https://shop.example.dk';
const SHOP_ZONE = 'Europe/Copenhagen';
const DAY = 86400_000;

interface Mail { to: string[]; subject: string; message: string; headers: string | string[] }
type RunWithMail = RunActionsResult & { mails: Mail[] };
interface ChangeRow { status: string; attempts: number; result: string | null }

/** WordPress's default date format (F j, Y) in the shop's time zone. */
const shopDate = (at: Date) => new Intl.DateTimeFormat('en-US', { timeZone: SHOP_ZONE, month: 'long', day: 'numeric', year: 'numeric' }).format(at);

/** A deadline 14 days ahead at 23:30 UTC: already the next day in Copenhagen, so the e-mail must show the shop's date. */
function lateEveningDeadline(): Date {
  const at = new Date(Date.now() + 14 * DAY);
  at.setUTCHours(23, 30, 0, 0);
  return at;
}

const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'', nbsp: ' ', ndash: '–', mdash: '—', rarr: '→', hellip: '…',
  aelig: 'æ', oslash: 'ø', aring: 'å', AElig: 'Æ', Oslash: 'Ø', Aring: 'Å',
};

/** What a reader sees of an e-mail: tags and the <head> gone, entities decoded, whitespace folded. */
function readable(message: string): string {
  return message
    .replace(/<head[\s\S]*?<\/head>/i, ' ')
    .replace(/<style[\s\S]*?<\/style>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&([a-z]+);/gi, (whole, name: string) => ENTITIES[name] ?? whole)
    .replace(/\s+/g, ' ')
    .trim();
}

const headerList = (headers: string | string[]) => (Array.isArray(headers) ? headers : headers.split(/\r?\n/)).filter(Boolean);

function dunningEmails(stack: WooCommerceStack, mode: StorageMode): void {
  const title = (what: string) => `${stack} ${mode}: ${what}`;
  let shop: WooCommerceShop;
  let dataSource: DataSource;
  let changes: WooCommerceChangeRepository;
  let actions: ScheduledActionRepository;
  let settings: ShopSettings;

  test.before(async () => {
    shop = await createWooCommerceShop(`dunning_mail_${stack}_${mode}`.replace('-', '_'), stack, mode, { companion: COMPANION });
    const config = loadConfig({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: SITE });
    dataSource = createShopDataSource(config.db, 2);
    await dataSource.initialize();
    await dataSource.runMigrations();
    actions = new ScheduledActionRepository(dataSource);
    changes = new WooCommerceChangeRepository(dataSource, actions);
    settings = await new ShopSettingsRepository(dataSource).current();
  });

  test.after.always(async () => {
    await dataSource?.destroy();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  });

  const q = async <T = Record<string, any>>(sql: string, values: unknown[] = []) =>
    (await rawPool(dataSource).query(sql.replace(/\{prefix\}/g, shop.prefix), values))[0] as T[];
  const changeRow = async (id: number) =>
    (await q<ChangeRow>('SELECT status, attempts, result FROM {prefix}sidecar_woocommerce_changes WHERE id = ?', [id]))[0];
  const snapshotOf = async (id: number): Promise<OrderSnapshot> => (await shop.snapshot([id])).by_id[id];

  /**
   * Stored as the service stores a change (the row and its Action Scheduler action, due now), then run by Action
   * Scheduler with the rest of WooCommerce's queue; every e-mail WordPress would send meanwhile, in full.
   */
  async function apply(change: ShopChange): Promise<{ id: number; row: ChangeRow; run: RunWithMail }> {
    const id = await changes.enqueue(rawPool(dataSource), change, settings, new Date());
    const run = await shop.php<RunWithMail>('run_actions_mail');
    return { id, row: await changeRow(id), run };
  }

  /** A subscription of the fixture customer (Karen Kunde, kunde@example.dk), on hold with its renewal order pending (or `status`). */
  async function subscription(status?: string): Promise<{ subscriptionId: number; renewalId: number }> {
    const fixture = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', ...(status ? { status } : {}) });
    await shop.runActions(); // what the fixture queued, so a test's run does only its own work
    await shop.logReset();
    return { subscriptionId: fixture.subscription_id!, renewalId: fixture.renewal_order_id! };
  }

  const needed = (subscriptionId: number, payload: Partial<PaymentMethodNeeded> & Pick<PaymentMethodNeeded, 'kind' | 'reason'>): ShopChange => ({
    op: 'customer_payment_method_needed',
    objectId: subscriptionId,
    payload: { order_id: null, deadline: null, card_expires: null, masked_card: null, ...payload },
  });

  /** The one e-mail of ours among what WordPress would have sent, and WooCommerce's own record of it. */
  async function theEmail(t: ExecutionContext, run: RunWithMail, subscriptionId: number): Promise<Mail> {
    t.deepEqual(run.failures, [], 'every action ran without error');
    const recorded = (await shop.log(subscriptionId)).filter((event) => event.kind === 'mail' && event.name === EMAIL_ID);
    t.is(recorded.length, 1, 'WooCommerce sent its e-mail once');
    t.deepEqual(recorded[0].detail.to, [CUSTOMER_EMAIL], 'to the subscription\'s customer');
    t.like(recorded[0].detail, { customer: true, object_class: 'WC_Subscription' });
    const mails = run.mails.filter((mail) => mail.subject === recorded[0].detail.subject);
    t.is(mails.length, 1, 'the e-mail read in full is the one WooCommerce recorded');
    return mails[0];
  }

  test.serial(title('the e-mail is one of WooCommerce\'s, on by default'), async (t) => {
    t.true(shop.install.emails_enabled[EMAIL_ID], 'listed in WooCommerce → Settings → Emails and enabled');
  });

  test.serial(title('failed renewal: WooCommerce e-mails the customer once, with the change-payment-method link, and notes it'), async (t) => {
    const { subscriptionId, renewalId } = await subscription();
    const deadline = lateEveningDeadline();
    const change = needed(subscriptionId, { kind: 'failed_renewal', order_id: renewalId, reason: 'card_declined', deadline: deadline.toISOString(), card_expires: '03-27', masked_card: '457111XXXXXX1234' });
    const { id, row, run } = await apply(change);
    t.deepEqual(row, { status: 'applied', attempts: 1, result: `e-mail sent to ${CUSTOMER_EMAIL} (failed_renewal, card_declined)` });

    const mail = await theEmail(t, run, subscriptionId);
    t.is(mail.subject, 'Your Test shop subscription payment did not go through');
    t.true(headerList(mail.headers).some((header) => /^Content-Type: text\/html/i.test(header)), 'HTML, as WooCommerce sends by default');
    const link = `${SITE}/my-account/subscription-payment-method/${subscriptionId}/`;
    t.regex(mail.message, new RegExp(`<a [^>]*href="${link.replace(/[.?/]/g, '\\$&')}"[^>]*>\\s*Add a new payment method\\s*</a>`), 'the link to Subscriptions\' change-payment-method page');
    const text = readable(mail.message);
    t.true(text.includes('Please add a new payment method'), `the heading: ${text}`);
    t.true(text.includes('Hi Karen,'));
    t.true(text.includes(`We could not take the payment for renewal order #${renewalId} of your subscription #${subscriptionId}. Your card was declined by your bank, and trying it again will not help.`), text);
    t.true(text.includes(`If no new payment method has been added by ${shopDate(deadline)}, your subscription will be cancelled.`), `the deadline in the shop's time zone (${shopDate(deadline)}): ${text}`);
    t.true(text.includes('Test shop'), 'in the shop\'s own e-mail frame (header and footer)');

    const notes = (await snapshotOf(subscriptionId)).notes.filter((note) => note.content.includes('Payment method needed'));
    t.deepEqual(notes.map((note) => ({ content: note.content, customer_note: note.customer_note })), [{
      content: `The "Payment method needed" e-mail (failed renewal) was sent to ${CUSTOMER_EMAIL}: the card was declined for good; renewal order #${renewalId}; cancelled on ${shopDate(deadline)} unless a new payment method is added; card ending in 1234; card expires 03/27.`,
      customer_note: false,
    }], 'a private note says which e-mail went, to whom and why');

    // The same change reached again (Action Scheduler runs another action for it, as after a lost hand-over answer).
    await actions.scheduleSingle(rawPool(dataSource), { hook: APPLY_CHANGE_HOOK, args: JSON.stringify([id]), group: CHANGE_ACTION_GROUP, priority: 5 }, new Date(), settings);
    const again = await shop.php<RunWithMail>('run_actions_mail');
    t.is((again.hooks as Record<string, number>)[APPLY_CHANGE_HOOK], 1, 'the second action ran');
    t.deepEqual(again.failures, []);
    t.deepEqual(again.mails, [], 'and sent nothing');
    t.is((await shop.log(subscriptionId)).filter((event) => event.kind === 'mail' && event.name === EMAIL_ID).length, 1, 'still one e-mail');
    t.is((await snapshotOf(subscriptionId)).notes.filter((note) => note.content.includes('Payment method needed')).length, 1, 'still one note');
    t.deepEqual(await changeRow(id), row, 'the change was applied once');
  });

  test.serial(title('final reminder, plain text: the subscription is cancelled on the deadline unless a new payment method is added'), async (t) => {
    const { subscriptionId, renewalId } = await subscription();
    await shop.php('option', { name: SETTINGS_OPTION, value: { enabled: 'yes', email_type: 'plain' } });
    try {
      const deadline = lateEveningDeadline();
      const { row, run } = await apply(needed(subscriptionId, { kind: 'final_reminder', order_id: renewalId, reason: 'retries_exhausted', deadline: deadline.toISOString() }));
      t.deepEqual(row, { status: 'applied', attempts: 1, result: `e-mail sent to ${CUSTOMER_EMAIL} (final_reminder, retries_exhausted)` });
      const mail = await theEmail(t, run, subscriptionId);
      t.is(mail.subject, `Last reminder: your Test shop subscription will be cancelled on ${shopDate(deadline)}`);
      t.true(headerList(mail.headers).some((header) => /^Content-Type: text\/plain/i.test(header)), 'plain text, as set in its settings');
      t.false(/<[a-z][^>]*>/i.test(mail.message), 'no HTML');
      const text = mail.message.replace(/\s+/g, ' ');
      t.true(text.includes('Your subscription will be cancelled soon'), text);
      t.true(text.includes(`We could not take the payment for renewal order #${renewalId} of your subscription #${subscriptionId}. We have tried again several times, and none of the attempts went through.`), text);
      t.true(text.includes(`This is our last reminder: your subscription will be cancelled on ${shopDate(deadline)} unless you add a new payment method before then.`), text);
      t.true(mail.message.includes(`Add a new payment method:\n${SITE}/my-account/subscription-payment-method/${subscriptionId}/\n`), mail.message);
      const notes = (await snapshotOf(subscriptionId)).notes.filter((note) => note.content.includes('Payment method needed'));
      t.deepEqual(notes.map((note) => note.content), [
        `The "Payment method needed" e-mail (final reminder) was sent to ${CUSTOMER_EMAIL}: the retries are used up; renewal order #${renewalId}; cancelled on ${shopDate(deadline)} unless a new payment method is added.`,
      ]);
    } finally {
      await shop.php('option', { name: SETTINGS_OPTION, value: null });
    }
  });

  test.serial(title('card expiring: the card ending … expires MM/YY before the next renewal'), async (t) => {
    const { subscriptionId } = await subscription('active');
    const state = await shop.php<{ status: string; next_payment: string | null }>('state', { id: subscriptionId });
    t.is(state.status, 'active');
    t.truthy(state.next_payment);
    const nextPayment = new Date(`${state.next_payment!.replace(' ', 'T')}Z`);
    const { row, run } = await apply(needed(subscriptionId, { kind: 'card_expiring', reason: 'card_expired', card_expires: '03-27', masked_card: '457111XXXXXX4242' }));
    t.deepEqual(row, { status: 'applied', attempts: 1, result: `e-mail sent to ${CUSTOMER_EMAIL} (card_expiring, card_expired)` });
    const mail = await theEmail(t, run, subscriptionId);
    t.is(mail.subject, 'Your card for your Test shop subscription is about to expire');
    const text = readable(mail.message);
    t.true(text.includes('Your card is about to expire'), text);
    t.true(text.includes(`The card ending in 4242 that pays for your subscription expires 03/27, before your next renewal. Your next renewal is on ${shopDate(nextPayment)}.`), text);
    t.true(text.includes('Please add a new payment method before then, so that your subscription continues without interruption.'), text);
    t.false(text.includes('renewal order #'), 'no failed order to speak of');
    t.true(mail.message.includes(`href="${SITE}/my-account/subscription-payment-method/${subscriptionId}/"`));
    t.is((await shop.php<{ status: string }>('state', { id: subscriptionId })).status, 'active', 'the subscription is left as it is');
  });

  test.serial(title('a Danish shop: the e-mail and the note in Danish'), async (t) => {
    const { subscriptionId, renewalId } = await subscription();
    // WordPress takes a site language only once it is installed (Settings → General lists it): its core catalogue
    // in wp-content/languages/, here an empty one. WooCommerce's and Subscriptions' own strings stay English.
    const languages = path.join(shop.siteDir, 'wp-content', 'languages');
    await fs.mkdir(languages, { recursive: true });
    await fs.writeFile(path.join(languages, 'da_DK.mo'), renderMo({
      locale: 'da_DK', pluralForms: 'nplurals=2; plural=(n != 1);', messages: new Map(),
      headerText: 'Language: da_DK\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n',
    }));
    t.like(await shop.php('option', { name: 'WPLANG', value: 'da_DK' }), { value: 'da_DK' }, 'the site\'s language is Danish');
    try {
      const deadline = lateEveningDeadline();
      const { row, run } = await apply(needed(subscriptionId, { kind: 'failed_renewal', order_id: renewalId, reason: 'wallet_amount_too_high', deadline: deadline.toISOString() }));
      t.is(row.status, 'applied', row.result ?? '');
      const mail = await theEmail(t, run, subscriptionId);
      t.is(mail.subject, 'Betalingen for dit abonnement hos Test shop gik ikke igennem');
      const text = readable(mail.message);
      t.true(text.includes('Tilføj venligst en ny betalingsmetode'), text);
      t.true(text.includes('Hej Karen,'), text);
      t.true(text.includes(`Vi kunne ikke trække betalingen for fornyelsesordre #${renewalId} af dit abonnement #${subscriptionId}. Beløbet er højere end det maksimum, du har godkendt i din betalingsaftale i din betalingsapp.`), text);
      t.true(text.includes('Tilføj en ny betalingsmetode'), 'the link in Danish');
      t.true(text.includes('Har du spørgsmål, så svar bare på denne e-mail.'), text);
      t.false(/We could not|Please add|Add a new payment method/.test(text), 'no English left');
      const notes = (await snapshotOf(subscriptionId)).notes.filter((note) => note.content.startsWith('E-mailen'));
      t.is(notes.length, 1);
      t.true(notes[0].content.startsWith(`E-mailen "Ny betalingsmetode påkrævet" (mislykket fornyelse) er sendt til ${CUSTOMER_EMAIL}: beløbet er højere end betalingsaftalens maksimum; fornyelsesordre #${renewalId}; annulleres den `), notes[0].content);
    } finally {
      await shop.php('option', { name: 'WPLANG', value: null });
    }
  });

  test.serial(title('a subscription that is gone: the change fails with the reason, nothing is sent'), async (t) => {
    const missing = 987654321;
    const { row, run } = await apply(needed(missing, { kind: 'failed_renewal', reason: 'card_declined' }));
    t.is(row.status, 'failed');
    t.is(row.result, `subscription ${missing} not found; the payment method e-mail (failed_renewal) was not sent`);
    t.is(run.failures.length, 1, 'Action Scheduler records the failure too');
    t.regex(run.failures[0].message, /not found; the payment method e-mail/);
    t.deepEqual(run.mails, []);
  });

  test.serial(title('cancel after dunning: an on-hold subscription is cancelled as Subscriptions cancels; an active one is left'), async (t) => {
    const onHold = await subscription();
    const note = `Dunning ended unpaid: renewal order #${onHold.renewalId} was not paid in time.`;
    const before = await snapshotOf(onHold.subscriptionId);
    t.is(before.status, 'on-hold');
    t.is(before.subscription!.dates.end, null);
    const { row, run } = await apply({ op: 'subscription_cancel_after_dunning', objectId: onHold.subscriptionId, payload: { note, order_id: onHold.renewalId } });
    t.deepEqual(run.failures, []);
    t.deepEqual(row, { status: 'applied', attempts: 1, result: 'cancelled' });
    const after = await snapshotOf(onHold.subscriptionId);
    t.is(after.status, 'cancelled');
    t.truthy(after.subscription!.dates.end, 'Subscriptions set the end date');
    t.is(after.subscription!.dates.cancelled, after.subscription!.dates.end, 'and the cancelled date, both now');
    t.true(Math.abs(Date.parse(after.subscription!.dates.end!) - Date.now()) < 10 * 60_000, `ended now: ${after.subscription!.dates.end}`);
    t.is(after.subscription!.dates.next_payment, null, 'no next payment');
    t.false(after.actions.some((action) => action.status === 'pending' && action.hook.startsWith('woocommerce_scheduled_subscription_')), 'nothing of it scheduled');
    t.true(after.notes.some((n) => n.content.startsWith(note) && !n.customer_note), 'the service\'s note');
    const hooks = (name: string) => after.recorded.filter((event) => event.kind === 'hook' && event.name === name).length;
    t.is(hooks('woocommerce_subscription_status_cancelled'), 1, 'the hooks other plugins hear');
    t.is(hooks('woocommerce_subscription_status_on-hold_to_cancelled'), 1);
    t.is(hooks('woocommerce_subscription_status_updated'), 1);
    // A reminder arriving after the end tells the customer nothing untrue.
    const late = await apply(needed(onHold.subscriptionId, { kind: 'final_reminder', order_id: onHold.renewalId, reason: 'retries_exhausted', deadline: new Date().toISOString() }));
    t.deepEqual(late.row, { status: 'applied', attempts: 1, result: 'subscription is cancelled; e-mail not sent' });
    t.deepEqual(late.run.mails, []);

    const active = await subscription('active');
    const activeBefore = await snapshotOf(active.subscriptionId);
    const left = await apply({ op: 'subscription_cancel_after_dunning', objectId: active.subscriptionId, payload: { note: 'Dunning ended unpaid.', order_id: active.renewalId } });
    t.deepEqual(left.row, { status: 'applied', attempts: 1, result: 'subscription is active; left as it is' });
    const activeAfter = await snapshotOf(active.subscriptionId);
    t.is(activeAfter.status, 'active');
    t.deepEqual(activeAfter.subscription!.dates, activeBefore.subscription!.dates, 'its dates unchanged');
    t.is(activeAfter.recorded.filter((event) => event.kind === 'hook' && event.name.startsWith('woocommerce_subscription_status_')).length, 0, 'no status change');
    t.false(activeAfter.notes.some((n) => n.content.startsWith('Dunning ended unpaid')), 'no note');
  });
}

dunningEmails('current', 'hpos');
dunningEmails('current', 'posts');
dunningEmails('older', 'posts');
