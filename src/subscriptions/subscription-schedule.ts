import { isoInZone, localDateInZone, parseLocalDateTime, type ShopTimeZone } from '../shop/shop-time';
import type { BillingPeriod } from '../shop/subscription';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The calendar day after `date` (`YYYY-MM-DD`). */
export function dayAfter(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

export interface PauseDates {
  /** The start of the end date in the shop's time zone: the subscription is active again from then. */
  autoReactivation: Date;
  /** The day after the pause ends, at the local time of day renewals have been taken at. */
  nextPayment: Date;
}

/**
 * When a pause until `endDate` (shop-local) ends and the next renewal falls. The renewal keeps the local
 * time of day of the current next payment (or of the start), as WooCommerce Subscriptions keeps a
 * subscription's payment time across periods.
 */
export function pauseDates(endDate: string, current: { nextPayment: Date | null; start: Date | null }, zone: ShopTimeZone): PauseDates {
  const reference = current.nextPayment ?? current.start;
  const timeOfDay = reference ? isoInZone(reference, zone).slice(11, 19) : '00:00:00';
  const autoReactivation = parseLocalDateTime(`${endDate} 00:00:00`, zone)!;
  const nextPayment = parseLocalDateTime(`${dayAfter(endDate)} ${timeOfDay}`, zone)!;
  return { autoReactivation, nextPayment };
}

/** Whether `endDate` is after today in the shop's time zone. */
export function isFutureDate(endDate: string, now: Date, zone: ShopTimeZone): boolean {
  return endDate > localDateInZone(now, zone);
}

/** `wcs_add_months`: the same day of a later month, or that month's last day when it is shorter; time of day kept. */
function addMonths(from: Date, months: number): Date {
  const year = from.getUTCFullYear();
  const month = from.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(from.getUTCDate(), lastDay), from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds()));
}

/** `wcs_add_time($interval, $period, $from)`. */
export function addBillingPeriods(from: Date, interval: number, period: BillingPeriod): Date {
  switch (period) {
    case 'day': return new Date(from.getTime() + interval * DAY_MS);
    case 'week': return new Date(from.getTime() + interval * 7 * DAY_MS);
    case 'month': return addMonths(from, interval);
    case 'year': return addMonths(from, interval * 12);
  }
}

export interface ActivationSchedule {
  start: Date | null;
  trialEnd: Date | null;
  nextPayment: Date | null;
  end: Date | null;
  billingInterval: number;
  billingPeriod: BillingPeriod;
}

/**
 * The next payment after (re)activation, as `WC_Subscription::update_status('active')` decides it: a stored
 * date at least two hours ahead is kept; otherwise it is recalculated from the schedule (the trial end while
 * in trial, else whole billing periods on from the stored next payment or the start until it is two hours
 * ahead), and none if that would fall within 23 hours of the end date. (WCS would also count from the last
 * renewal order's date; the stored next payment stands in for it here.)
 */
export function nextPaymentOnActivation(schedule: ActivationSchedule, now: Date): Date | null {
  const threshold = now.getTime() + 2 * HOUR_MS;
  if (schedule.nextPayment && schedule.nextPayment.getTime() >= threshold) return schedule.nextPayment;
  let next: Date | null;
  if (schedule.trialEnd && schedule.trialEnd.getTime() > now.getTime()) {
    next = schedule.trialEnd;
  } else {
    const start = schedule.start?.getTime() ?? 0;
    const from = schedule.nextPayment && schedule.nextPayment.getTime() > start ? schedule.nextPayment : schedule.start;
    if (!from) return null;
    next = addBillingPeriods(from, schedule.billingInterval, schedule.billingPeriod);
    for (let i = 1; next.getTime() < threshold && i < 3000; i += 1) next = addBillingPeriods(next, schedule.billingInterval, schedule.billingPeriod);
  }
  if (schedule.end && next.getTime() + 23 * HOUR_MS > schedule.end.getTime()) return null;
  return next;
}
