import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { HELPDESK_KEY, HELPDESK_SECRET } from '../support/test-shop';
import { apiGetFromPage, logIn, openBrowser, screenshot, SCREENS_DIR, wordsOf, type AdminBrowser, type Page } from './support/admin-browser';
import { installCompanion, PanelsService } from './support/panels-service';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * The staff panels in WP admin, as a shop manager uses them: real WordPress + WooCommerce + Subscriptions with the
 * companion installed as docs/companion.md says (copied into mu-plugins/), and the real `npm run api` and `npm run worker`,
 * both behind one nginx HTTPS origin; Debian's chromium logged in at wp-login.php, its own clock set to UTC while
 * the shop is in Europe/Copenhagen. In posts and in HPOS storage:
 * two cancellation reasons recorded (by a double click), a pause and its new next payment, a force-activation (each
 * followed by WooCommerce's own Update for another change, which keeps it: the panel fills WooCommerce's boxes, and
 * the companion's guard keeps a change made behind a stale form's back), a
 * renewal discount created and another cancelled (the second after the page's nonce went stale); two failed
 * renewals of one card told in words (English and Danish, no raw code outside the <code> details), in the shop's
 * time: Charge now recovers the first with one charge at the gateway, and the order screen's own status follows;
 * the second is refused by the day's cap with the reason shown, gets the payment link e-mail once, has its dunning
 * stopped with no attempt left planned, and "Ask the provider now" finds it settled, which WooCommerce's Update
 * then keeps; a customer sees no panel and gets 403; the Danish strings; the API stopped. After each step
 * WooCommerce's own state is read through PHP. Screenshots: test-artifacts/screens/panels-*.png.
 */

const MANAGER = { login: 'panel-manager', password: 'manager-pass-0123456789' };
const CUSTOMER = { login: 'panel-customer', password: 'customer-pass-0123456789' };
const WAIT_MS = 60_000;
const SHOP_ZONE = 'Europe/Copenhagen';
/** WP admin's and WooCommerce's sticky bars, hidden in a panel's own screenshot (they would cover its top). */
const STICKY_HEADERS = '#wpadminbar, .woocommerce-layout__header { display: none !important; }';
const DUNNING_EMAIL = 'shop_sidecar_payment_method_needed';
/**
 * Codes the service and the providers speak in, which staff must not have to read: in the panels they appear only
 * as a detail (<code>) or a title.
 */
const RAW_CODES = [
  'card_gateway', 'mobile_wallet', 'insufficient_funds', 'soft_declined', 'hard_declined', 'FAILED', 'CAPTURED', 'CANCELED', 'PENDING',
  'PROCESSED', 'SKIPPED', 'invoice_failed', 'invoice_settled', 'renewal_failed', 'attempt_planned', 'staff_sent_payment_link',
  'staff_stopped_dunning', 'daily_cap', 'link_just_sent', 'case_closed', 'payment(s)',
];

let browser: AdminBrowser;

test.before(async () => {
  browser = await openBrowser();
});

test.after.always(async () => {
  await browser?.close();
});

const subscriptionScreen = (mode: StorageMode, id: number) => (mode === 'posts'
  ? `/wp-admin/post.php?post=${id}&action=edit`
  : `/wp-admin/admin.php?page=wc-orders--shop_subscription&action=edit&id=${id}`);
const orderScreen = (mode: StorageMode, id: number) => (mode === 'posts'
  ? `/wp-admin/post.php?post=${id}&action=edit`
  : `/wp-admin/admin.php?page=wc-orders&action=edit&id=${id}`);

interface WooState { status: string; date_paid: string | null; next_payment?: string | null; auto_reactivation?: string | null }

/** `YYYY-MM-DD` plus `days`. */
function addDays(date: string, days: number): string {
  const at = new Date(`${date}T12:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/** The panel's notice once one saying `says` is shown (an earlier action's may still be there until then), with its kind. */
async function noticeOf(page: Page, panel: string, says: RegExp): Promise<{ kind: string; text: string }> {
  const notice = page.locator(`${panel} .shop-sidecar-notice`).filter({ hasText: says }).first();
  await notice.waitFor({ state: 'visible', timeout: WAIT_MS });
  const className = (await notice.getAttribute('class')) ?? '';
  // The notice's own words (wp.components puts a heading for screen readers before them).
  const text = ((await notice.locator('.components-notice__content').first().textContent()) ?? '').trim();
  return { kind: /is-error/.test(className) ? 'error' : /is-success/.test(className) ? 'success' : className, text };
}

/** The raw codes a text still shows. */
const rawCodesIn = (text: string) => RAW_CODES.filter((code) => new RegExp(`(^|[^\\w.])${code.replace(/[()]/g, '\\$&')}($|[^\\w])`).test(text));

/** A moment in the shop's time zone, `YYYY-MM-DD HH:MM`, as the panels stamp it (data-shop-time). */
function shopStamp(iso: string, timeZone = SHOP_ZONE): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-GB', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(new Date(iso)).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/** A staff action on the order screen's Payments panel: the button, then the panel's own confirm step. */
async function confirmAction(page: Page, panel: string, button: string): Promise<void> {
  await page.locator(`${panel} ${button}`).click();
  await page.locator(`${panel} .shop-sidecar-confirm-yes`).click();
}

/** An order's status select and transaction ID as WooCommerce's Order Data box would post them now. */
async function orderForm(page: Page): Promise<{ status: string; transactionId: string }> {
  return page.evaluate(() => ({
    status: (document.querySelector('select[name="order_status"]') as HTMLSelectElement | null)?.value ?? '',
    transactionId: (document.querySelector('input[name="_transaction_id"]') as HTMLInputElement | null)?.value ?? '',
  }));
}

/** Another change in WooCommerce's own boxes, not saved yet: the Customer Provided Note, behind the Shipping column's Edit link. */
async function editCustomerNote(page: Page, note: string): Promise<void> {
  await page.locator('#woocommerce-subscription-data .order_data_column', { has: page.locator('#excerpt') }).locator('a.edit_address').click();
  await page.locator('#excerpt').fill(note);
}

/** WooCommerce's Update, as staff click it; resolves once the saved screen is drawn again (its panel: `drawn`). */
async function clickUpdate(page: Page, drawn = '#shop-sidecar-support .shop-sidecar-facts'): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.locator('button.save_order').click()]);
  await page.locator(drawn).waitFor({ timeout: WAIT_MS });
}

async function updateWithCustomerNote(page: Page, note: string): Promise<void> {
  await editCustomerNote(page, note);
  await clickUpdate(page);
}

/** What WooCommerce's own boxes on the page would post now: the status select and Schedule's next payment. */
async function formState(page: Page): Promise<{ status: string; nextPayment: string; nextPaymentShown: string; expectedShown: string }> {
  return page.evaluate(() => {
    const value = (selector: string) => (document.querySelector(selector) as HTMLInputElement | null)?.value ?? '';
    const seconds = Number(value('input[name="next_payment_timestamp_utc"]'));
    const at = new Date(seconds * 1000);
    const pad = (n: number) => String(n).padStart(2, '0');
    return {
      status: value('select[name="order_status"]'),
      nextPayment: value('input[name="next_payment_timestamp_utc"]'),
      nextPaymentShown: `${value('#next_payment')} ${value('#next_payment_hour')}:${value('#next_payment_minute')}`,
      // As Subscriptions' own script shows a date: in the browser's time.
      expectedShown: seconds > 0 ? `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}` : ' :',
    };
  });
}

async function scenario(t: ExecutionContext, mode: StorageMode): Promise<void> {
  let shop: WooCommerceShop | undefined;
  const service = new PanelsService();
  const card = new FakeCardGateway();
  const support = '#shop-sidecar-support';
  const payments = '#shop-sidecar-payments';
  try {
    shop = await createWooCommerceShop(`admin_panels_${mode}`, 'current', mode);
    await installCompanion(shop);
    await card.start();
    await service.start(shop, {
      HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET,
      CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
      // Only the panel's button asks the gateway about the failed renewal: the worker does not on its own.
      RECONCILE_ENABLED: 'false',
      // Four charges a day per card: the three renewals' failed charges and the first's Charge now use up the day
      // of the card they share, so the second meets the day's cap.
      DUNNING_MAX_CHARGES_PER_DAY: '4',
    });
    const origin = service.origin!;

    const reasons = [];
    for (const title of ['Too expensive', 'Moving abroad', 'Not using it']) reasons.push((await shop.php<{ id: number }>('post', { type: 'cancellation_reason', title })).id);
    const manager = await shop.php<{ id: number }>('user', { ...MANAGER, role: 'shop_manager' });
    await shop.php('user', { ...CUSTOMER, role: 'customer' });
    const active = (await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout', status: 'active' })).subscription_id!;
    const onHold = (await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' })).subscription_id!;
    const renewing = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const renewingToo = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const leaving = await shop.fixture({ kind: 'subscription', gateway: 'reepay_checkout' });
    const wooState = (id: number) => shop!.php<WooState>('state', { id });
    t.is((await wooState(active)).status, 'active');
    t.is((await wooState(onHold)).status, 'on-hold');

    // The manager's computer is set to UTC; the shop is in Copenhagen: the panels show the shop's times.
    const page = await browser.newPage({ timezoneId: 'UTC' });
    const landed = await logIn(page, origin.url, MANAGER.login, MANAGER.password);
    t.true(new URL(landed).pathname.startsWith('/wp-admin'), `the manager landed on ${landed}`);

    // ---- Cancellation reasons: two recorded, once, however quickly the button is clicked twice.
    await page.goto(`${origin.url}${subscriptionScreen(mode, active)}`);
    await page.locator(`${support} .shop-sidecar-reasons`).waitFor({ timeout: WAIT_MS });
    t.is((await page.locator(`${support} [data-field="status"]`).textContent())?.trim(), 'Active');
    await screenshot(page, `panels-${mode}-support`);
    await page.getByLabel('Too expensive').check();
    await page.getByLabel('Moving abroad').check();
    await page.locator(`${support} .shop-sidecar-record`).dblclick();
    t.like(await noticeOf(page, support, /Recorded|Nothing|cannot|could not/), { kind: 'success', text: 'Recorded 2 cancellation reasons.' });
    // Announced to screen readers: WordPress's polite live region says it.
    await page.locator('#a11y-speak-polite', { hasText: 'Recorded 2 cancellation reasons.' }).waitFor({ state: 'attached', timeout: WAIT_MS });
    const recorded = await shop.sql<{ reason_id: number }>(`SELECT reason_id FROM ${shop.prefix}sidecar_subscription_cancellation_reasons WHERE subscription_id = ? ORDER BY reason_id`, [active]);
    t.deepEqual(recorded.map((row) => Number(row.reason_id)), [reasons[0], reasons[1]], 'two reasons recorded, once each');
    t.is(await page.locator(`${support} table.shop-sidecar-table`).first().locator('tbody tr').count(), 2);

    // ---- Pause until a date: the service's answer on the page, WooCommerce's own dates through PHP.
    const earliest = await page.locator(`${support} .shop-sidecar-pause-end input`).getAttribute('min');
    t.regex(earliest ?? '', /^\d{4}-\d{2}-\d{2}$/, 'the earliest pause end is offered (tomorrow, in the shop\'s time zone)');
    const pauseEnd = addDays(earliest!, 9);
    // On the phone, the staff member has already started another change in WooCommerce's boxes; the pause must not lose it.
    await editCustomerNote(page, 'Ring efter kl. 17');
    await page.locator(`${support} .shop-sidecar-pause-end input`).fill(pauseEnd);
    const paused = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith(`/subscription/${active}/pause`) && response.request().method() === 'POST');
    await page.locator(`${support} .shop-sidecar-pause`).click();
    const pauseAnswer = await (await paused).json() as { status: string; next_payment_date: string; auto_reactivation_date: string };
    t.like(await noticeOf(page, support, /Paused until|Nothing|cannot|could not/), { kind: 'success' });
    t.is(pauseAnswer.status, 'on-hold');
    t.is(pauseAnswer.auto_reactivation_date.slice(0, 10), pauseEnd);
    t.is(pauseAnswer.next_payment_date.slice(0, 10), addDays(pauseEnd, 1), 'the next payment moves to the day after the pause');
    t.is((await page.locator(`${support} [data-field="next-payment"] time`).getAttribute('data-shop-time'))?.slice(0, 10), addDays(pauseEnd, 1), 'the page shows the new next payment, in the shop\'s time');
    const gmt = (iso: string) => new Date(iso).toISOString().slice(0, 19).replace('T', ' ');
    await eventually(async () => {
      const state = await wooState(active);
      return state.status === 'on-hold' && state.next_payment === gmt(pauseAnswer.next_payment_date) && state.auto_reactivation === gmt(pauseAnswer.auto_reactivation_date);
    }, WAIT_MS, 'WooCommerce to show the pause');
    // WooCommerce's own boxes on the same screen follow, without a reload: the status select, Schedule's next
    // payment (posted and shown), and the notes list with WooCommerce's note of the pause.
    const seconds = (iso: string) => String(Date.parse(iso) / 1000);
    const notesShown = () => page.locator('#woocommerce-order-notes ul.order_notes li.note').count();
    const notesHeld = (id: number) => shop!.php<{ notes: number }>('state', { id }).then((state) => state.notes);
    await eventually(async () => await notesShown() === await notesHeld(active), WAIT_MS, 'the notes list to show WooCommerce\'s notes');
    const form = await formState(page);
    t.like(form, { status: 'wc-on-hold', nextPayment: seconds(pauseAnswer.next_payment_date) }, 'WooCommerce\'s boxes hold the pause');
    t.is(form.nextPaymentShown, form.expectedShown, 'Schedule shows the new next payment');
    t.is(await page.locator('#order_status').evaluate((select) => (select as HTMLSelectElement).selectedOptions[0]?.textContent?.trim()), 'On hold');
    await screenshot(page, `panels-${mode}-support-paused`);

    // ---- WooCommerce's Update, for another change on the same screen: the pause holds.
    const shownFacts = async () => page.locator(`${support} .shop-sidecar-facts dd`).allTextContents();
    const answered = await shownFacts();
    t.is(await page.locator('#excerpt').inputValue(), 'Ring efter kl. 17', 'the unsaved edit is still there');
    await clickUpdate(page);
    t.is(await page.locator('#excerpt').inputValue(), 'Ring efter kl. 17', 'WooCommerce saved the other change');
    t.like(await wooState(active), { status: 'on-hold', next_payment: gmt(pauseAnswer.next_payment_date), auto_reactivation: gmt(pauseAnswer.auto_reactivation_date) }, 'the pause holds in WooCommerce');
    await screenshot(page, `panels-${mode}-support-paused-updated`);
    // Drawn again from what WooCommerce holds, the page shows the same moments the service answered (one time zone).
    t.deepEqual(await shownFacts(), answered, 'status, next payment and pause end as WooCommerce holds them, in the shop\'s time zone');
    await page.locator(`${support} .shop-sidecar-reasons`).waitFor({ timeout: WAIT_MS });

    // ---- Renewal discounts: one created; after the nonce went stale, a second created without the user noticing; the first cancelled.
    const discountRow = (status: string) => shop!.sql<{ id: number; status: string }>(`SELECT id, status FROM ${shop!.prefix}sidecar_renewal_discounts WHERE subscription_id = ? AND status = ?`, [active, status]);
    await page.locator(`${support} .shop-sidecar-discount-amount input`).fill('25');
    await page.locator(`${support} .shop-sidecar-create-discount`).click();
    t.like(await noticeOf(page, support, /Discount of 25|Nothing|cannot|could not/), { kind: 'success' });
    const [first] = await discountRow('pending');
    t.truthy(first, 'the discount is stored, pending');

    const statuses: number[] = [];
    const watch = (response: { url(): string; status(): number }) => {
      // apiFetch adds ?_locale=user to every address.
      if (new URL(response.url()).pathname.endsWith('/renewal-discounts/v1/discounts')) statuses.push(response.status());
    };
    page.on('response', watch);
    await page.evaluate(() => {
      (window as unknown as { wp: { apiFetch: { nonceMiddleware: { nonce: string } } } }).wp.apiFetch.nonceMiddleware.nonce = 'a1b2c3d4e5';
    });
    await page.locator(`${support} .shop-sidecar-discount-amount input`).fill('10');
    await page.locator(`${support} .shop-sidecar-create-discount`).click();
    t.like(await noticeOf(page, support, /Discount of 10|Nothing|cannot|could not|login/), { kind: 'success' });
    page.off('response', watch);
    t.deepEqual(statuses, [403, 201], 'the stale nonce was refused, a fresh one fetched and the request sent again');
    t.is((await discountRow('pending')).length, 2);

    await page.locator(`${support} .shop-sidecar-cancel-discount[data-discount="${first.id}"]`).click();
    t.like(await noticeOf(page, support, /cancelled\.|Nothing|cannot|could not/), { kind: 'success', text: `Discount ${first.id} cancelled.` });
    t.deepEqual((await discountRow('cancelled')).map((row) => Number(row.id)), [Number(first.id)]);
    await screenshot(page, `panels-${mode}-support-discounts`);
    await page.locator(support).screenshot({ path: path.join(SCREENS_DIR, `panel-${mode}-support.png`), style: STICKY_HEADERS });

    // ---- Force-activate an on-hold subscription, then at once WooCommerce's Update for another change (WooCommerce
    // may not have applied the activation yet): it holds.
    await page.goto(`${origin.url}${subscriptionScreen(mode, onHold)}`);
    await page.locator(`${support} .shop-sidecar-force-activate`).waitFor({ timeout: WAIT_MS });
    t.is((await formState(page)).status, 'wc-on-hold');
    const activating = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith(`/subscription/${onHold}/force-activate`) && response.request().method() === 'POST');
    await page.locator(`${support} .shop-sidecar-force-activate`).click();
    const activated = await (await activating).json() as { status: string; next_payment_date: string | null };
    t.like(await noticeOf(page, support, /active again|Nothing|cannot|could not/), { kind: 'success' });
    t.is((await page.locator(`${support} [data-field="status"]`).textContent())?.trim(), 'Active');
    t.is(await page.locator(`${support} .shop-sidecar-force-activate`).count(), 0, 'force-activate is no longer offered');
    t.like(await formState(page), { status: 'wc-active', nextPayment: activated.next_payment_date ? seconds(activated.next_payment_date) : '0' }, 'WooCommerce\'s boxes hold the activation at once');
    await updateWithCustomerNote(page, 'Kunden ringede');
    t.is(await page.locator('#excerpt').inputValue(), 'Kunden ringede', 'WooCommerce saved the other change');
    await eventually(async () => (await wooState(onHold)).status === 'active', WAIT_MS, 'WooCommerce to show the subscription active');
    const activeAfterUpdate = await wooState(onHold);
    t.is(activeAfterUpdate.auto_reactivation, null);
    t.true(!!activeAfterUpdate.next_payment && Date.parse(`${activeAfterUpdate.next_payment.replace(' ', 'T')}Z`) > Date.now(), `a next payment ahead: ${activeAfterUpdate.next_payment}`);
    await page.reload();
    await page.locator(`${support} .shop-sidecar-reasons`).waitFor({ timeout: WAIT_MS });
    t.is((await page.locator(`${support} [data-field="status"]`).textContent())?.trim(), 'Active', 'still active once WooCommerce has applied everything');
    t.like(await wooState(onHold), { status: 'active', next_payment: activeAfterUpdate.next_payment, auto_reactivation: null });
    await screenshot(page, `panels-${mode}-support-activated-updated`);

    // ---- A change the page did not see (made in another tab, or by the worker): the form still shows the state it
    // was drawn with, and WooCommerce's Update for another change keeps the newer change (the companion's guard).
    const elsewhere = await page.evaluate(async ({ id, end }) => {
      const { apiFetch } = (window as unknown as { wp: { apiFetch: (options: object) => Promise<unknown> } }).wp;
      return apiFetch({ url: `/wp-json/subscription-support/v1/subscription/${id}/pause`, method: 'POST', data: { end_date: end } });
    }, { id: onHold, end: pauseEnd }) as { next_payment_date: string; auto_reactivation_date: string };
    await eventually(async () => (await wooState(onHold)).status === 'on-hold', WAIT_MS, 'WooCommerce to show the pause made elsewhere');
    t.is((await formState(page)).status, 'wc-active', 'the form still shows the state it was drawn with');
    await updateWithCustomerNote(page, 'Ringer igen i morgen');
    t.is(await page.locator('#excerpt').inputValue(), 'Ringer igen i morgen', 'WooCommerce saved the other change');
    t.like(await wooState(onHold), { status: 'on-hold', next_payment: gmt(elsewhere.next_payment_date), auto_reactivation: gmt(elsewhere.auto_reactivation_date) }, 'the pause made elsewhere holds');
    t.regex((await page.locator('#wpbody-content .notice, #wpbody-content .updated').allTextContents()).join(' '), /changed since this page was opened/, 'the staff member is told why');
    await screenshot(page, `panels-${mode}-support-stale-form-updated`);

    // ---- Three failed renewals of one card (the gateway customer's card), each a dunning case with an attempt planned.
    const firstRenewal = renewing.renewal_order_id!;
    const second = renewingToo.renewal_order_id!;
    const third = leaving.renewal_order_id!;
    card.setPaymentMethod('ca-panels', { customer: 'cust-panels', state: 'active', card: { exp_date: '12-30', masked_card: '457199XXXXXX4242' } });
    for (const renewal of [firstRenewal, second, third]) {
      card.setCharge(`order-${renewal}`, { state: 'failed', amount: 14900, customer: 'cust-panels', error: 'insufficient_funds', error_state: 'soft_declined' });
      t.is((await sendCardGatewayEvent(service.apiUrl, { event_type: 'invoice_failed', invoice: `order-${renewal}` }, card.webhookSecret)).res.status, 200);
    }
    const allIn = async (ids: number[], status: string) => (await Promise.all(ids.map(wooState))).every((state) => state.status === status);
    await eventually(() => allIn([firstRenewal, second, third], 'failed'), WAIT_MS, 'WooCommerce to show the renewals failed');
    await eventually(() => allIn([renewing, renewingToo, leaving].map((fixture) => fixture.subscription_id!), 'on-hold'), WAIT_MS, 'the subscriptions on hold');

    // ---- The first, told in words, in the shop's time although the browser's clock is UTC.
    t.is(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone), 'UTC');
    const story = `${payments} .shop-sidecar-dunning`;
    const caseShown = (status: string) => page.locator(`${story} [data-dunning-status="${status}"]`).waitFor({ timeout: WAIT_MS });
    await page.goto(`${origin.url}${orderScreen(mode, firstRenewal)}`);
    await caseShown('open');
    const told = await wordsOf(page, payments);
    t.regex(told, /Being collected/);
    t.regex(told, /by Card \(Frisbii\), failed on .*: Declined: not enough money\. It may go through later\./);
    t.regex(told, /We try again on .+ \(attempt 1\)\./, 'what happens next, and when');
    t.regex(told, /The renewal payment failed\./);
    t.regex(told, /Payment failed/, 'the gateway\'s webhook in words');
    t.deepEqual(rawCodesIn(told), [], `no raw code in the words: ${told}`);
    t.true((await page.locator(`${payments} code`).allTextContents()).some((code) => code.includes('insufficient_funds')), 'the decline\'s code stays as a detail');
    t.is(await page.locator(`${payments} [data-payment-status]`).first().getAttribute('data-payment-status'), 'FAILED');
    // The failure's moment and the next attempt's, as the shop's clock shows them, not the browser's.
    const failedAt = (await page.locator(`${story} .shop-sidecar-timeline time`).first().getAttribute('datetime'))!;
    t.regex(failedAt, /[+-]\d{2}:\d{2}$/, 'the service sends times with their offset');
    t.is(await page.locator(`${story} .shop-sidecar-timeline time`).first().getAttribute('data-shop-time'), shopStamp(failedAt));
    t.not(shopStamp(failedAt), shopStamp(failedAt, 'UTC'));
    const tableTime = new Intl.DateTimeFormat('en-US', { timeZone: SHOP_ZONE, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(failedAt));
    t.is((await page.locator(`${story} .shop-sidecar-timeline time`).first().textContent())?.replace(/\s+/g, ' '), tableTime.replace(/\s+/g, ' '), 'in the shop\'s time zone, in the user\'s locale');
    t.regex(await wordsOf(page, `${story} .shop-sidecar-summary`), /kr\.\d+,\d{2}/, 'money as WooCommerce writes it on this shop');
    await screenshot(page, `panels-${mode}-payments-failed`);

    // ---- Charge now recovers it: one charge at the gateway, the case recovered, WooCommerce's order paid, and the
    // order screen's own status select follows (so a later Update keeps it paid).
    const charges = () => card.requestsTo('POST', '/v1/charge').length;
    const chargesBefore = charges();
    t.false(await page.locator(`${payments} .shop-sidecar-charge-now`).isDisabled());
    await confirmAction(page, payments, '.shop-sidecar-charge-now');
    t.like(await noticeOf(page, payments, /charge|Nothing|cannot|could not/i), { kind: 'success', text: 'The charge went through. The renewal is paid.' });
    t.is(charges(), chargesBefore + 1, 'the gateway shows one charge');
    await caseShown('recovered');
    t.regex(await wordsOf(page, story), /Recovered on .+\. Nothing more happens\./);
    await eventually(async () => ['processing', 'completed'].includes((await wooState(firstRenewal)).status), WAIT_MS, 'WooCommerce to show the first renewal paid');
    const paidStatus = (await wooState(firstRenewal)).status;
    await eventually(async () => (await orderForm(page)).status === `wc-${paidStatus}`, WAIT_MS, 'the order screen\'s status select to follow');
    await screenshot(page, `panels-${mode}-payments-charged`);
    t.is(charges(), chargesBefore + 1, 'still one charge');

    // ---- The second renewal, same card: Charge now is refused by the day's cap, with the reason and from when.
    await page.goto(`${origin.url}${orderScreen(mode, second)}`);
    await caseShown('open');
    t.true(await page.locator(`${payments} .shop-sidecar-charge-now`).isDisabled(), 'Charge now is not offered');
    const capped = `${payments} .shop-sidecar-refusals [data-action="charge_now"]`;
    t.is(await page.locator(`${capped} [data-reason]`).getAttribute('data-reason'), 'daily_cap');
    t.regex(await wordsOf(page, capped), /^Charge now: This payment method has been charged as often today as the card schemes allow\. Possible again from .+\.$/);
    const refused = await page.evaluate(async (id) => {
      const { apiFetch } = (window as unknown as { wp: { apiFetch: (options: object) => Promise<unknown> } }).wp;
      return apiFetch({ url: `/wp-json/payment-hub/v1/orders/${id}/charge-now`, method: 'POST' }).catch((error: unknown) => error);
    }, second) as { code?: string; data?: { status?: number; reason?: string; not_before?: string } };
    t.like(refused, { code: 'action_not_allowed', data: { status: 409, reason: 'daily_cap' } }, 'the route refuses a charge made anyway');
    t.is(charges(), chargesBefore + 1, 'nothing more charged');
    await screenshot(page, `panels-${mode}-payments-capped`);

    // ---- Send payment link: WooCommerce sends the "payment method needed" e-mail, once.
    const linkMails = async () => (await shop!.log(renewingToo.subscription_id!)).filter((event) => event.kind === 'mail' && event.name === DUNNING_EMAIL).length;
    t.is(await linkMails(), 0);
    await confirmAction(page, payments, '.shop-sidecar-payment-link');
    t.like(await noticeOf(page, payments, /e-mailed|Nothing|cannot|could not/), { kind: 'success', text: 'The customer was e-mailed a link to pay.' });
    await eventually(async () => await linkMails() === 1, WAIT_MS, 'WooCommerce to send the e-mail');
    await page.locator(`${story} [data-event="staff_sent_payment_link"]`).waitFor({ timeout: WAIT_MS });
    t.regex(await wordsOf(page, `${story} .shop-sidecar-timeline`), /sent the customer a payment link\./);
    t.true(await page.locator(`${payments} .shop-sidecar-payment-link`).isDisabled(), 'not sent twice by a second click');
    await page.locator(payments).screenshot({ path: path.join(SCREENS_DIR, `panel-${mode}-payments.png`), style: STICKY_HEADERS });

    // ---- Ask the provider now: the gateway has settled the second since (the customer paid through the link); no
    // webhook tells. The order becomes paid, the payment shows no old failure, and WooCommerce's own Update on this
    // screen keeps it paid.
    card.setInvoice(`order-${second}`, { state: 'settled', amount: 14900, customer: 'cust-panels' });
    await page.locator(`${payments} .shop-sidecar-reconcile`).click();
    t.like(await noticeOf(page, payments, /provider/), { kind: 'success', text: 'The provider was asked: 1 payment was updated here, and WooCommerce updates the order.' });
    await page.locator(`${payments} [data-payment-status="CAPTURED"]`).waitFor({ timeout: WAIT_MS });
    t.is((await page.locator(`${payments} .shop-sidecar-payments tbody tr`, { has: page.locator('[data-payment-status="CAPTURED"]') }).locator('.shop-sidecar-failure').textContent())?.trim(), '—', 'a paid payment shows no old failure');
    t.is(await page.locator(`${payments} [data-outcome="changed"]`).count(), 1);
    t.is(await page.locator(`${payments} .shop-sidecar-findings caption`).textContent(), 'What the provider said just now');
    t.deepEqual(rawCodesIn(await wordsOf(page, payments)), []);
    await eventually(async () => ['processing', 'completed'].includes((await wooState(second)).status), WAIT_MS, 'WooCommerce to show the second renewal paid');
    const reconciledStatus = (await wooState(second)).status;
    await eventually(async () => (await orderForm(page)).status === `wc-${reconciledStatus}`, WAIT_MS, 'the order screen\'s status select to follow');
    await screenshot(page, `panels-${mode}-payments-reconciled`);
    await clickUpdate(page, `${payments} .shop-sidecar-payments`);
    t.is((await wooState(second)).status, reconciledStatus, 'WooCommerce\'s Update keeps the order paid');
    t.is(await linkMails(), 1, 'still one e-mail');

    // ---- Stop dunning, for a customer who is leaving: no attempt is left planned, the case is lost by staff, the
    // subscription left as it is.
    await page.goto(`${origin.url}${orderScreen(mode, third)}`);
    await caseShown('open');
    await confirmAction(page, payments, '.shop-sidecar-stop-dunning');
    t.like(await noticeOf(page, payments, /Dunning stopped|Nothing|cannot|could not/), { kind: 'success' });
    await caseShown('lost');
    t.is(await page.locator(`${story} .shop-sidecar-next`).getAttribute('data-next'), 'none');
    t.regex(await wordsOf(page, story), /Lost: dunning was stopped by staff\./);
    const planned = await shop.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? AND status IN ('PENDING', 'PROCESSING')`, [third]);
    t.is(Number(planned[0].n), 0, 'no attempt planned');
    t.is((await wooState(leaving.subscription_id!)).status, 'on-hold', 'the subscription is left as it is');
    await screenshot(page, `panels-${mode}-payments-stopped`);

    // ---- A customer: no panel, and the routes refuse their cookie.
    const customerPage = await browser.newPage();
    await logIn(customerPage, origin.url, CUSTOMER.login, CUSTOMER.password);
    await customerPage.goto(`${origin.url}${subscriptionScreen(mode, active)}`);
    t.is(await customerPage.locator(support).count(), 0, 'a customer sees no panel');
    for (const route of [`/subscription-support/v1/subscription/${active}/cancellation-reasons`, `/renewal-discounts/v1/discounts?subscription=${active}`, `/payment-hub/v1/orders/${second}/payments`]) {
      const denied = await apiGetFromPage(customerPage, route);
      t.like(denied, { status: 403 }, `${route} with a customer's cookie: ${JSON.stringify(denied.body).slice(0, 300)}`);
    }
    await customerPage.context().close();

    // ---- In Danish, for a manager whose language is Danish.
    await shop.php('user', { ...MANAGER, role: 'shop_manager', locale: 'da_DK' });
    await page.goto(`${origin.url}${subscriptionScreen(mode, onHold)}`);
    await page.locator(`${support} .shop-sidecar-reasons`).waitFor({ timeout: WAIT_MS });
    t.is((await page.locator(`${support} .shop-sidecar-record`).textContent())?.trim(), 'Registrér årsager');
    t.is((await page.locator(`#shop-sidecar-support h2`).first().textContent())?.trim(), 'Support');
    await screenshot(page, `panels-${mode}-support-da`);
    // The third renewal's story, in Danish words.
    await page.goto(`${origin.url}${orderScreen(mode, third)}`);
    await caseShown('lost');
    const fortalt = await wordsOf(page, payments);
    t.regex(fortalt, /Fejlet fornyelse/);
    t.regex(fortalt, /Afvist: ikke penge nok\. Den kan gå igennem senere\./);
    t.regex(fortalt, /Tabt: rykkerforløbet blev stoppet af en medarbejder\./);
    t.regex(fortalt, /Kort \(Frisbii\)/);
    t.deepEqual(rawCodesIn(fortalt), [], `no raw code in the Danish words: ${fortalt}`);
    await screenshot(page, `panels-${mode}-payments-da`);
    await shop.php('user', { ...MANAGER, role: 'shop_manager', locale: '' });

    // ---- The service stopped: the panel says so, and nothing in the shop changes.
    await page.goto(`${origin.url}${subscriptionScreen(mode, active)}`);
    await page.locator(`${support} .shop-sidecar-force-activate`).waitFor({ timeout: WAIT_MS });
    const before = await wooState(active);
    await service.api!.kill();
    await page.locator(`${support} .shop-sidecar-force-activate`).click();
    const refusal = await noticeOf(page, support, /.+/);
    t.is(refusal.kind, 'error');
    t.regex(refusal.text, /cannot be reached right now\. Nothing was changed\./);
    await page.locator('#a11y-speak-assertive', { hasText: 'cannot be reached right now' }).waitFor({ state: 'attached', timeout: WAIT_MS });
    t.is((await page.locator(`${support} [data-field="status"]`).textContent())?.trim(), 'On hold', 'the page still shows what the service last said');
    await screenshot(page, `panels-${mode}-support-service-down`);
    t.deepEqual(await wooState(active), before, 'nothing in the shop changed');
  } catch (error) {
    await service.log(t);
    throw error;
  } finally {
    await service.stop();
    await card.stop();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  }
}

for (const mode of ['posts', 'hpos'] as const) {
  test.serial(`Staff panels in WP admin (${mode}): reasons, pause, force-activate, discounts, failed renewals in words and staff's actions on them; a customer refused; a stale nonce refreshed; the service stopped`, (t) => scenario(t, mode));
}
