import moment from 'moment-business-days';
import { BoundedMemo } from '../shared/bounded-memo';

/** Business days (Mon–Fri) each listed carrier needs, by destination (SPEC 3.3). */
export function carrierBusinessDays(methodId: string, destinationCountry: string): number | null {
  switch (methodId.trim().toLowerCase()) {
    case 'dao': return 2;
    case 'dhl': return destinationCountry.toUpperCase() === 'DK' ? 3 : 7;
    case 'bladkompagniet': return 6;
    default: return null;
  }
}

// Kept per date and count: a pure function of both, asked for again and again, and moment's day-by-day
// stepping is among the costlier steps of an order status answer. A date not yet kept is given to moment as
// numbers, not as text to parse by a format, and read back as ISO text: the parsing and the formatting
// cost more than the stepping.
const businessDays = new BoundedMemo<string>(10_000);
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Adds business days to a calendar date (`YYYY-MM-DD`); counting starts on the next business day. */
export function addBusinessDays(date: string, days: number): string {
  return businessDays.get(`${date}+${days}`, () => {
    const parts = CALENDAR_DATE.exec(date);
    const start = parts ? moment.utc([Number(parts[1]), Number(parts[2]) - 1, Number(parts[3])]) : null;
    // Text that is no calendar date gets moment's own answer for it, as it always did.
    if (!start?.isValid()) return moment.utc(date, 'YYYY-MM-DD', true).businessAdd(days).format('YYYY-MM-DD');
    return start.businessAdd(days).toISOString().slice(0, 10);
  });
}

export interface DeliveryInput {
  /** Shipping item method ids in item order. */
  shippingMethodIds: string[];
  shippingCountry: string;
  billingCountry: string;
  /** Shop-local date of completion, else of payment; null when the order has neither. */
  baseDate: string | null;
}

/** `YYYY-MM-DD`, or null without a base date or a listed carrier. */
export function estimateDelivery(input: DeliveryInput): string | null {
  if (!input.baseDate) return null;
  const destination = input.shippingCountry || input.billingCountry;
  for (const methodId of input.shippingMethodIds) {
    const days = carrierBusinessDays(methodId, destination);
    if (days !== null) return addBusinessDays(input.baseDate, days);
  }
  return null;
}
