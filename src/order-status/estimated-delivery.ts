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

// Kept per date and count: a pure function of both, asked for again and again, and moment's parsing and
// day-by-day stepping are among the costlier steps of an order status answer.
const businessDays = new BoundedMemo<string>(10_000);

/** Adds business days to a calendar date (`YYYY-MM-DD`); counting starts on the next business day. */
export function addBusinessDays(date: string, days: number): string {
  return businessDays.get(`${date}+${days}`, () => moment.utc(date, 'YYYY-MM-DD', true).businessAdd(days).format('YYYY-MM-DD'));
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
