import test from 'ava';
import { request, type TestResponse } from '../support/http-client';
import { openStaffServices, startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop, type TestShopOptions } from '../support/test-shop';
import {
  createCancellationReason, createStaffUser, logIn, metaInStores, notesOf, renewalActions, scheduleRenewalAction, statusInStores,
  WP_SECRETS_ENV, type StaffSession, type StaffUser,
} from '../support/wordpress-fixtures';
import type { SubscriptionSpec } from '../../src/demo/shop-seeder';

const ZONE = 'Europe/Copenhagen';
const DAY = 86_400_000;

/** The shop-local calendar date `days` from now. */
function localDate(days: number): string {
  return new Date(Date.now() + days * DAY).toLocaleString('sv-SE', { timeZone: ZONE }).slice(0, 10);
}

/** The instant a Copenhagen wall-clock time happens at (computed with Intl, independently of the service). */
function copenhagen(date: string, time: string): Date {
  for (const offset of [1, 2]) {
    const candidate = new Date(Date.parse(`${date}T${time}Z`) - offset * 3_600_000);
    if (candidate.toLocaleString('sv-SE', { timeZone: ZONE }) === `${date} ${time}`) return candidate;
  }
  throw new Error(`no ${date} ${time} in ${ZONE}`);
}

const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** ISO 8601 with the Copenhagen offset, as the service writes dates. */
function iso(date: Date): string {
  const local = date.toLocaleString('sv-SE', { timeZone: ZONE }).replace(' ', 'T');
  const offset = (Date.parse(`${local}Z`) - date.getTime()) / 60_000;
  return `${local}+${String(offset / 60).padStart(2, '0')}:00`;
}

/** Subscription support in one storage mode (one test file per mode). */
export function subscriptionSupportScenarios(name: string, options: TestShopOptions) {
  const mode = { hpos: options.hpos ?? false, sync: options.sync ?? false };
  const inUse = { legacy: !mode.hpos || mode.sync, hpos: mode.hpos || mode.sync };
  let shop: TestShop;
  let api: RunningStaffApi;
  let manager: StaffUser;
  let session: StaffSession;
  const reasons: Record<string, number> = {};
  const subs: Record<string, number> = {};
  let orderId = 0;

  const base = '/subscription-support/v1';
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse> =>
    request(api.url, method, `${base}${path}`, { headers: headers ?? session.headers, body });

  const nextPaymentAt = new Date(Date.now() + 10 * DAY);
  nextPaymentAt.setUTCHours(9, 30, 0, 0);
  const subscription = (spec: Partial<SubscriptionSpec> = {}): SubscriptionSpec => ({
    status: 'active', createdGmt: new Date('2026-09-10T09:30:00Z'), startGmt: new Date('2026-09-10T09:30:00Z'), currency: 'DKK', total: '199.00',
    paymentMethodTitle: 'MobilePay', billing: { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: 'mette@example.dk', phone: '20123456' },
    nextPaymentGmt: nextPaymentAt, lineItems: [{ name: 'Kaffeabonnement', qty: 1, total: '199.00' }], ...spec,
  });

  test.before(async () => {
    shop = await createTestShop(name, options);
    manager = await createStaffUser(shop, { login: 'anna', roles: ['shop_manager'], displayName: 'Anna Holm' });
    reasons.expensive = await createCancellationReason(shop, 'Too expensive', { menuOrder: 2 });
    reasons.moving = await createCancellationReason(shop, 'Moving abroad', { menuOrder: 1 });
    reasons.draft = await createCancellationReason(shop, 'Draft reason', { status: 'draft' });
    reasons.binned = await createCancellationReason(shop, 'Not needed anymore', { status: 'trash' });
    const s = shop.seeder;
    orderId = await s.createOrder({ status: 'completed', billing: { email: 'mette@example.dk' }, total: '199.00' });
    for (const key of ['reasons', 'otherReasons', 'pause', 'pauseNoAction', 'repause', 'activate', 'badEndDate', 'worker', 'workerCancelled']) {
      subs[key] = await s.createSubscription(subscription());
    }
    subs.cancelled = await s.createSubscription(subscription({ status: 'cancelled', nextPaymentGmt: null }));
    subs.ending = await s.createSubscription(subscription({ endGmt: new Date(Date.now() + 20 * DAY) }));
    subs.onHoldOverdue = await s.createSubscription(subscription({ status: 'on-hold', nextPaymentGmt: new Date('2026-10-10T09:30:00Z') }));
    subs.binned = await s.createSubscription(subscription({ status: 'trash' }));
    for (const key of ['pause', 'repause', 'activate', 'worker', 'workerCancelled', 'ending']) await scheduleRenewalAction(shop, subs[key], nextPaymentAt);
    session = await logIn(shop, manager);
    api = await startStaffApi(shop.config(WP_SECRETS_ENV));
  });

  test.after.always(async () => {
    await api?.stop();
    await shop?.drop();
  });

  // -------------------------------------------------------------------------------------------------------------
  // Cancellation reasons

  test('When the reasons are listed, Then only published cancellation_reason posts come, in menu order', async (t) => {
    const res = await call('GET', '/cancellation-reasons');
    t.is(res.status, 200);
    t.deepEqual(res.json, [
      { id: reasons.moving, title: 'Moving abroad', slug: 'moving-abroad' },
      { id: reasons.expensive, title: 'Too expensive', slug: 'too-expensive' },
    ]);
  });

  test('When several reasons are recorded at once, Then each comes back as an entry and can be read as a list and one by one', async (t) => {
    const created = await call('POST', `/subscription/${subs.reasons}/cancellation-reasons`, { reason_post_ids: [reasons.expensive, String(reasons.moving)] });
    t.is(created.status, 201, created.text);
    t.is(created.json.length, 2);
    const [first, second] = created.json;
    t.like(first, { subscription_id: subs.reasons, reason_id: reasons.expensive, title: 'Too expensive', slug: 'too-expensive' });
    t.like(second, { subscription_id: subs.reasons, reason_id: reasons.moving, title: 'Moving abroad', slug: 'moving-abroad' });
    t.regex(first.date, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    t.regex(first.date_gmt, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    t.is(first.date, new Date(`${first.date_gmt.replace(' ', 'T')}Z`).toLocaleString('sv-SE', { timeZone: ZONE }), 'date is the site\'s local time');
    t.regex(first.recorded_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/, 'recorded_at carries its offset');
    t.is(Date.parse(first.recorded_at), Date.parse(`${first.date_gmt.replace(' ', 'T')}Z`), 'the same moment as date_gmt');
    t.is(first.recorded_at.slice(0, 19), first.date.replace(' ', 'T'), 'in the shop\'s local time');

    const list = await call('GET', `/subscription/${subs.reasons}/cancellation-reasons`);
    t.is(list.status, 200);
    t.deepEqual(list.json, created.json);
    const one = await call('GET', `/subscription/${subs.reasons}/cancellation-reasons/${second.id}`);
    t.is(one.status, 200);
    t.deepEqual(one.json, second);
  });

  test('When an entry is read under another subscription, or does not exist, Then it is 404', async (t) => {
    const created = await call('POST', `/subscription/${subs.otherReasons}/cancellation-reasons`, { reason_post_ids: [reasons.moving] });
    t.is(created.status, 201);
    const entryId = created.json[0].id;
    const elsewhere = await call('GET', `/subscription/${subs.reasons}/cancellation-reasons/${entryId}`);
    t.is(elsewhere.status, 404);
    t.deepEqual(elsewhere.json, { code: 'cancellation_reason_not_found', message: elsewhere.json.message, data: { status: 404 } });
    t.is((await call('GET', `/subscription/${subs.otherReasons}/cancellation-reasons/99999999`)).status, 404);
    t.is((await call('GET', `/subscription/${subs.otherReasons}/cancellation-reasons/abc`)).status, 404);
  });

  test('When any of the ids is not a published reason, Then nothing is recorded and the bad ids are named', async (t) => {
    const sub = await shop.seeder.createSubscription(subscription());
    t.is((await call('POST', `/subscription/${sub}/cancellation-reasons`, { reason_post_ids: [reasons.moving] })).status, 201);
    const res = await call('POST', `/subscription/${sub}/cancellation-reasons`, { reason_post_ids: [reasons.expensive, reasons.draft, reasons.binned, 99999999] });
    t.is(res.status, 400);
    t.deepEqual(res.json, {
      code: 'invalid_params', message: res.json.message,
      data: { status: 400, params: ['reason_post_ids'], invalid_ids: [reasons.draft, reasons.binned, 99999999] },
    });
    t.is((await call('GET', `/subscription/${sub}/cancellation-reasons`)).json.length, 1, 'only the earlier entry');
  });

  test('When reason_post_ids is missing, empty, not a list or holds non-ids, Then it is 400 naming reason_post_ids', async (t) => {
    for (const body of [{}, { reason_post_ids: [] }, { reason_post_ids: 'abc' }, { reason_post_ids: [0] }, { reason_post_ids: [1.5] }, { reason_post_ids: [{}] }]) {
      const res = await call('POST', `/subscription/${subs.otherReasons}/cancellation-reasons`, body);
      t.is(res.status, 400, JSON.stringify(body));
      t.deepEqual(res.json.data.params, ['reason_post_ids']);
    }
    const broken = await call('POST', `/subscription/${subs.otherReasons}/cancellation-reasons`, '{"reason_post_ids": [', { ...session.headers, 'content-type': 'application/json' });
    t.is(broken.status, 400);
    t.deepEqual(broken.json.data.params, ['body']);
  });

  test('When the same reason is given twice, Then it is recorded once', async (t) => {
    const sub = await shop.seeder.createSubscription(subscription());
    const res = await call('POST', `/subscription/${sub}/cancellation-reasons`, { reason_post_ids: [reasons.expensive, reasons.expensive] });
    t.is(res.status, 201);
    t.is(res.json.length, 1);
  });

  test('When the subscription does not exist (or is an order, binned, or not a number), Then every route is 404 subscription_not_found', async (t) => {
    for (const id of ['99999999', String(orderId), String(subs.binned), 'abc']) {
      for (const [method, path, body] of [
        ['GET', `/subscription/${id}/cancellation-reasons`, undefined],
        ['POST', `/subscription/${id}/cancellation-reasons`, { reason_post_ids: [reasons.expensive] }],
        ['GET', `/subscription/${id}/cancellation-reasons/1`, undefined],
        ['POST', `/subscription/${id}/pause`, { end_date: localDate(30) }],
        ['POST', `/subscription/${id}/force-activate`, undefined],
      ] as const) {
        const res = await call(method, path, body);
        t.is(res.status, 404, `${method} ${path}`);
        t.deepEqual(res.json, { code: 'subscription_not_found', message: res.json.message, data: { status: 404 } });
      }
    }
  });

  // -------------------------------------------------------------------------------------------------------------
  // Pause

  test('When an active subscription is paused, Then it is on hold until the date, the next payment and its pending action move to the day after', async (t) => {
    const endDate = localDate(30);
    const [action] = await renewalActions(shop, subs.pause);
    const res = await call('POST', `/subscription/${subs.pause}/pause`, { end_date: endDate });
    t.is(res.status, 200, res.text);
    const reactivation = copenhagen(endDate, '00:00:00');
    const nextDay = new Date(Date.parse(`${endDate}T12:00:00Z`) + DAY).toISOString().slice(0, 10);
    const timeOfDay = nextPaymentAt.toLocaleString('sv-SE', { timeZone: ZONE }).slice(11);
    const nextPayment = copenhagen(nextDay, timeOfDay);
    t.deepEqual(res.json, { id: subs.pause, status: 'on-hold', next_payment_date: iso(nextPayment), auto_reactivation_date: iso(reactivation) });

    const expectIn = (value: string | null) => ({ legacy: inUse.legacy ? value : null, hpos: inUse.hpos ? value : null });
    t.deepEqual(await metaInStores(shop, subs.pause, '_schedule_auto_reactivation'), expectIn(gmt(reactivation)));
    t.deepEqual(await metaInStores(shop, subs.pause, '_schedule_next_payment'), expectIn(gmt(nextPayment)));
    t.deepEqual(await metaInStores(shop, subs.pause, '_suspension_count'), expectIn('1'));
    const status = await statusInStores(shop, subs.pause);
    if (inUse.legacy) t.is(status.legacy, 'wc-on-hold');
    if (inUse.hpos) t.is(status.hpos, 'wc-on-hold');

    const actions = await renewalActions(shop, subs.pause);
    t.is(actions.length, 1, 'the same action moved, none added');
    t.like(actions[0], { action_id: action.action_id, status: 'pending', scheduled_date_gmt: gmt(nextPayment), scheduled_date_local: gmt(nextPayment).replace(gmt(nextPayment), nextPayment.toLocaleString('sv-SE', { timeZone: ZONE })) });
    const ts = Math.floor(nextPayment.getTime() / 1000);
    t.is(actions[0].schedule, `O:30:"ActionScheduler_SimpleSchedule":2:{s:22:"\0*\0scheduled_timestamp";i:${ts};s:41:"\0ActionScheduler_SimpleSchedule\0timestamp";i:${ts};}`);

    const notes = await notesOf(shop, subs.pause);
    t.is(notes.length, 1);
    t.is(notes[0].author, 'Anna Holm');
    t.regex(notes[0].content, new RegExp(`^Paused until ${endDate} by Anna Holm \\(anna\\).*Status changed from Active to On hold\\.$`));
  });

  test('When the subscription has no pending renewal action, Then pausing schedules one as WooCommerce Subscriptions would', async (t) => {
    const endDate = localDate(40);
    const res = await call('POST', `/subscription/${subs.pauseNoAction}/pause`, { end_date: endDate });
    t.is(res.status, 200, res.text);
    const actions = await renewalActions(shop, subs.pauseNoAction);
    t.is(actions.length, 1);
    t.like(actions[0], { status: 'pending', priority: 5, group: 'wc_subscription_scheduled_event', scheduled_date_gmt: gmt(new Date(res.json.next_payment_date)) });
  });

  test('When a paused subscription is paused again, Then the dates move again and it is not counted as a second suspension', async (t) => {
    const first = await call('POST', `/subscription/${subs.repause}/pause`, { end_date: localDate(15) });
    t.is(first.status, 200);
    const second = await call('POST', `/subscription/${subs.repause}/pause`, { end_date: localDate(45) });
    t.is(second.status, 200, second.text);
    t.is(second.json.auto_reactivation_date, iso(copenhagen(localDate(45), '00:00:00')));
    const count = await metaInStores(shop, subs.repause, '_suspension_count');
    t.is(count.legacy ?? count.hpos, '1');
    const actions = await renewalActions(shop, subs.repause);
    t.is(actions.filter((a) => a.status === 'pending').length, 1);
    t.is(actions[0].scheduled_date_gmt, gmt(new Date(second.json.next_payment_date)));
  });

  test('When end_date is missing, malformed, impossible, today or past, Then it is 400 naming end_date and nothing changes', async (t) => {
    for (const body of [{}, { end_date: '' }, { end_date: '24-12-2026' }, { end_date: '2026-02-30' }, { end_date: localDate(0) }, { end_date: localDate(-3) }, { end_date: 20261224 }]) {
      const res = await call('POST', `/subscription/${subs.badEndDate}/pause`, body);
      t.is(res.status, 400, JSON.stringify(body));
      t.deepEqual(res.json, { code: 'invalid_params', message: res.json.message, data: { status: 400, params: ['end_date'] } });
    }
    const status = await statusInStores(shop, subs.badEndDate);
    t.is(status[mode.hpos ? 'hpos' : 'legacy'], 'wc-active');
  });

  test('When the pause would run past the subscription\'s end date, Then it is 400', async (t) => {
    const res = await call('POST', `/subscription/${subs.ending}/pause`, { end_date: localDate(25) });
    t.is(res.status, 400);
    t.deepEqual(res.json.data.params, ['end_date']);
  });

  test('When the subscription is cancelled, Then pausing is 409 invalid_state', async (t) => {
    const res = await call('POST', `/subscription/${subs.cancelled}/pause`, { end_date: localDate(30) });
    t.is(res.status, 409);
    t.deepEqual(res.json, { code: 'invalid_state', message: res.json.message, data: { status: 409, subscription_status: 'cancelled' } });
  });

  // -------------------------------------------------------------------------------------------------------------
  // Force-activate

  test('When a paused subscription is force-activated, Then it is active, the pause end is cleared and the next payment stays', async (t) => {
    const paused = await call('POST', `/subscription/${subs.activate}/pause`, { end_date: localDate(20) });
    t.is(paused.status, 200);
    const res = await call('POST', `/subscription/${subs.activate}/force-activate`);
    t.is(res.status, 200, res.text);
    t.deepEqual(res.json, { id: subs.activate, status: 'active', next_payment_date: paused.json.next_payment_date, auto_reactivation_date: null });
    t.deepEqual(await metaInStores(shop, subs.activate, '_schedule_auto_reactivation'), { legacy: null, hpos: null });
    const status = await statusInStores(shop, subs.activate);
    if (inUse.legacy) t.is(status.legacy, 'wc-active');
    if (inUse.hpos) t.is(status.hpos, 'wc-active');
    const actions = await renewalActions(shop, subs.activate);
    t.is(actions.filter((a) => a.status === 'pending').length, 1);
    t.is(actions[0].scheduled_date_gmt, gmt(new Date(paused.json.next_payment_date)));
    t.regex((await notesOf(shop, subs.activate)).at(-1)!.content, /^Force-activated by Anna Holm \(anna\)\. Status changed from On hold to Active\.$/);
  });

  test('When the subscription is not on hold, Then force-activate is 409 invalid_state', async (t) => {
    const res = await call('POST', `/subscription/${subs.reasons}/force-activate`);
    t.is(res.status, 409);
    t.deepEqual(res.json, { code: 'invalid_state', message: res.json.message, data: { status: 409, subscription_status: 'active' } });
    t.is((await call('POST', `/subscription/${subs.cancelled}/force-activate`)).status, 409);
  });

  test('When an on-hold subscription\'s next payment has passed, Then activation recalculates it a whole period on and schedules the renewal', async (t) => {
    const res = await call('POST', `/subscription/${subs.onHoldOverdue}/force-activate`);
    t.is(res.status, 200, res.text);
    const next = new Date(res.json.next_payment_date);
    t.true(next.getTime() > Date.now() + 2 * 3_600_000, 'at least two hours ahead');
    t.is(next.getUTCDate(), 10, 'same day of the month as the schedule');
    t.is(next.toISOString().slice(11, 19), '09:30:00', 'same time of day');
    const actions = await renewalActions(shop, subs.onHoldOverdue);
    t.like(actions[0], { status: 'pending', scheduled_date_gmt: gmt(next) });
  });

  // -------------------------------------------------------------------------------------------------------------
  // The worker's end of a pause. Serial: the worker's pass acts on every paused subscription of the
  // shop, so another test's pause must not be caught half-way (paused, not yet cancelled).

  test.serial('When the pause end date comes, Then the worker reactivates the subscription and keeps the next payment on the day after', async (t) => {
    const endDate = localDate(12);
    const paused = await call('POST', `/subscription/${subs.worker}/pause`, { end_date: endDate });
    t.is(paused.status, 200);
    const reactivation = copenhagen(endDate, '00:00:00');
    const services = await openStaffServices(shop.config(WP_SECRETS_ENV));
    try {
      t.is(await services.reactivatePausedSubscriptions.execute(new Date(reactivation.getTime() - 60_000)), 0, 'a minute early: nothing');
      t.is(await services.reactivatePausedSubscriptions.execute(new Date(reactivation.getTime() + 5 * 60_000)), 1);
      t.is(await services.reactivatePausedSubscriptions.execute(new Date(reactivation.getTime() + 10 * 60_000)), 0, 'only once');
    } finally {
      await services.close();
    }
    const status = await statusInStores(shop, subs.worker);
    t.is(status[mode.hpos ? 'hpos' : 'legacy'], 'wc-active');
    if (mode.sync) t.is(status[mode.hpos ? 'legacy' : 'hpos'], 'wc-active');
    t.deepEqual(await metaInStores(shop, subs.worker, '_schedule_auto_reactivation'), { legacy: null, hpos: null });
    const next = await metaInStores(shop, subs.worker, '_schedule_next_payment');
    t.is(next[mode.hpos ? 'hpos' : 'legacy'], gmt(new Date(paused.json.next_payment_date)));
    const actions = await renewalActions(shop, subs.worker);
    t.like(actions[0], { status: 'pending', scheduled_date_gmt: gmt(new Date(paused.json.next_payment_date)) });
    t.regex((await notesOf(shop, subs.worker)).at(-1)!.content, /^Pause ended\. Status changed from On hold to Active\.$/);
  });

  test.serial('When a paused subscription was cancelled before its pause ended, Then the worker does not reactivate it and clears the pause end', async (t) => {
    const endDate = localDate(9);
    t.is((await call('POST', `/subscription/${subs.workerCancelled}/pause`, { end_date: endDate })).status, 200);
    if (inUse.hpos) await shop.db.query(`UPDATE ${shop.prefix}wc_orders SET status = 'wc-cancelled' WHERE id = ?`, [subs.workerCancelled]);
    if (inUse.legacy) await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'wc-cancelled' WHERE ID = ?`, [subs.workerCancelled]);
    const services = await openStaffServices(shop.config(WP_SECRETS_ENV));
    try {
      t.is(await services.reactivatePausedSubscriptions.execute(new Date(copenhagen(endDate, '00:00:00').getTime() + 60_000)), 0);
    } finally {
      await services.close();
    }
    t.is((await statusInStores(shop, subs.workerCancelled))[mode.hpos ? 'hpos' : 'legacy'], 'wc-cancelled');
    t.deepEqual(await metaInStores(shop, subs.workerCancelled, '_schedule_auto_reactivation'), { legacy: null, hpos: null });
  });

  test('When staff without edit_shop_orders, or no cookie, call the routes, Then it is 403 / 401', async (t) => {
    const customer = await createStaffUser(shop, { login: 'customer-x', roles: ['customer'] });
    const customerSession = await logIn(shop, customer);
    t.is((await call('POST', `/subscription/${subs.reasons}/force-activate`, undefined, customerSession.headers)).status, 403);
    t.is((await call('POST', `/subscription/${subs.reasons}/pause`, { end_date: localDate(30) }, { 'x-forwarded-proto': 'https' })).status, 401);
  });
}
