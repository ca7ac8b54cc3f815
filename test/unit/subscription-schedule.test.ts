import test from 'ava';
import { shopTimeZone } from '../../src/shop/shop-time';
import { addBillingPeriods, dayAfter, isFutureDate, nextPaymentOnActivation, pauseDates } from '../../src/subscriptions/subscription-schedule';
import { rescheduled, simpleSchedule, subscriptionActionArgs } from '../../src/data-access/scheduled-action-repository';

const copenhagen = shopTimeZone('Europe/Copenhagen', '0');
const d = (text: string) => new Date(text);

test('dayAfter crosses months and years', (t) => {
  t.is(dayAfter('2026-12-31'), '2027-01-01');
  t.is(dayAfter('2028-02-28'), '2028-02-29');
});

test('a pause ends at local midnight and the next payment keeps its local time of day on the day after', (t) => {
  // Winter (CET, +01:00): the next payment was at 10:30 local.
  const winter = pauseDates('2026-12-24', { nextPayment: d('2026-12-10T09:30:00Z'), start: d('2026-09-10T08:30:00Z') }, copenhagen);
  t.is(winter.autoReactivation.toISOString(), '2026-12-23T23:00:00.000Z');
  t.is(winter.nextPayment.toISOString(), '2026-12-25T09:30:00.000Z');
  // Across the spring change (CEST, +02:00 from 2027-03-28): still 10:30 local.
  const spring = pauseDates('2027-04-01', { nextPayment: d('2026-12-10T09:30:00Z'), start: null }, copenhagen);
  t.is(spring.autoReactivation.toISOString(), '2027-03-31T22:00:00.000Z');
  t.is(spring.nextPayment.toISOString(), '2027-04-02T08:30:00.000Z');
  // No next payment: the start's time of day.
  t.is(pauseDates('2026-12-24', { nextPayment: null, start: d('2026-09-10T06:15:00Z') }, copenhagen).nextPayment.toISOString(), '2026-12-25T07:15:00.000Z');
});

test('a future date is one after today in the shop\'s zone', (t) => {
  const lateEvening = d('2026-12-23T23:30:00Z'); // already 24 December in Copenhagen
  t.false(isFutureDate('2026-12-24', lateEvening, copenhagen));
  t.true(isFutureDate('2026-12-25', lateEvening, copenhagen));
});

test('billing periods are added as wcs_add_time does: months keep the day or fall to the month\'s last', (t) => {
  t.is(addBillingPeriods(d('2026-01-31T10:00:00Z'), 1, 'month').toISOString(), '2026-02-28T10:00:00.000Z');
  t.is(addBillingPeriods(d('2026-01-31T10:00:00Z'), 3, 'month').toISOString(), '2026-04-30T10:00:00.000Z');
  t.is(addBillingPeriods(d('2028-02-29T10:00:00Z'), 1, 'year').toISOString(), '2029-02-28T10:00:00.000Z');
  t.is(addBillingPeriods(d('2026-11-01T10:00:00Z'), 2, 'week').toISOString(), '2026-11-15T10:00:00.000Z');
  t.is(addBillingPeriods(d('2026-11-01T10:00:00Z'), 3, 'day').toISOString(), '2026-11-04T10:00:00.000Z');
});

test('on activation a next payment at least two hours ahead is kept; otherwise whole periods are added; never within 23 h of the end', (t) => {
  const now = d('2026-11-21T12:00:00Z');
  const schedule = { start: d('2026-01-15T09:00:00Z'), trialEnd: null, end: null, billingInterval: 1, billingPeriod: 'month' as const };
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: d('2026-11-21T14:30:00Z') }, now)?.toISOString(), '2026-11-21T14:30:00.000Z');
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: d('2026-11-21T13:00:00Z') }, now)?.toISOString(), '2026-12-21T13:00:00.000Z', 'within two hours: a period on');
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: d('2026-09-15T09:00:00Z') }, now)?.toISOString(), '2026-12-15T09:00:00.000Z', 'overdue: whole periods on');
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: null }, now)?.toISOString(), '2026-12-15T09:00:00.000Z', 'none: from the start');
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: null, end: d('2026-12-15T20:00:00Z') }, now), null, 'too close to the end');
  t.is(nextPaymentOnActivation({ ...schedule, nextPayment: null, trialEnd: d('2026-11-30T09:00:00Z') }, now)?.toISOString(), '2026-11-30T09:00:00.000Z', 'in trial: the trial end');
});

test('the Action Scheduler schedule is serialized as in real actionscheduler_actions rows', (t) => {
  // The form of a row from a public WooCommerce database dump (wp_actionscheduler_actions, AS 3.x), with the
  // NUL bytes PHP puts around protected and private property names.
  const dumped = 'O:30:"ActionScheduler_SimpleSchedule":2:{s:22:"\0*\0scheduled_timestamp";i:1708399245;s:41:"\0ActionScheduler_SimpleSchedule\0timestamp";i:1708399245;}';
  t.is(simpleSchedule(1708399245), dumped);
  t.is(rescheduled(dumped, 1767225600), dumped.replaceAll('1708399245', '1767225600'));
  const interval = 'O:32:"ActionScheduler_IntervalSchedule":5:{s:22:"\0*\0scheduled_timestamp";i:1708399187;}';
  t.is(rescheduled(interval, 1767225600), simpleSchedule(1767225600), 'any other schedule becomes a simple one-off');
  t.is(rescheduled(null, 5), simpleSchedule(5));
  t.is(subscriptionActionArgs(123), '{"subscription_id":123}');
});
