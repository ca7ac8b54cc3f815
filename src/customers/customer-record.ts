import type { ShopSettings } from '../data-access/shop-settings-repository';
import { formatAmount } from '../shared/currency';
import type { ShopOrder } from '../shop/order';
import { isoInZone } from '../shop/shop-time';
import type { ShopSubscription } from '../shop/subscription';
import { emailKey, storedPhoneKey } from './contact-keys';
import { subscriptionStateView } from '../subscriptions/subscription-outcomes';

/** A subscription as the helpdesk sees it: status, schedule and what it renews for. */
export interface CustomerSubscription {
  id: number;
  status: string;
  start_date: string | null;
  next_payment_date: string | null;
  end_date: string | null;
  /** Set while the subscription is paused: when it becomes active again. */
  auto_reactivation_date: string | null;
  recurring_total: string;
  currency: string;
  billing_period: string;
  billing_interval: number;
  payment_method_title: string;
  items: { name: string; quantity: number }[];
}

/**
 * SPEC 2.2 in the helpdesk's end-user shape (Dixa's end user): the top-level name, email and phone, the
 * same values under Dixa's own field names (so a sync to Dixa's `/v1/endusers` is a straight mapping),
 * then the customer's recent orders (the order status fields) and subscriptions.
 */
export interface CustomerRecord {
  name: string;
  email: string | null;
  /** E.164 when the stored number could be read, otherwise as stored. */
  phone: string | null;
  displayName: string;
  firstName: string;
  lastName: string;
  phoneNumber: string | null;
  /** The WooCommerce customer (user) ID; null for a guest. */
  externalId: string | null;
  additionalEmails: string[];
  additionalPhoneNumbers: string[];
  orders: Record<string, unknown>[];
  subscriptions: CustomerSubscription[];
}

type Dated = { id: number; dateCreated: Date | null };

/** Newest first, by creation date then ID. */
export function newestFirst(a: Dated, b: Dated): number {
  return (b.dateCreated?.getTime() ?? 0) - (a.dateCreated?.getTime() ?? 0) || b.id - a.id;
}

function phoneOf(order: { billing: ShopOrder['billing']; shipping: ShopOrder['shipping'] }, shopCountry: string): string | null {
  const stored = order.billing.phone.trim();
  if (stored === '') return null;
  return storedPhoneKey(stored, order.billing.country, order.shipping.country, shopCountry) ?? stored;
}

export function subscriptionView(subscription: ShopSubscription, settings: ShopSettings): CustomerSubscription {
  const iso = (date: Date | null) => (date ? isoInZone(date, settings.timeZone) : null);
  return {
    ...subscriptionStateView(subscription, settings),
    start_date: iso(subscription.start),
    end_date: iso(subscription.end),
    recurring_total: formatAmount(subscription.recurringTotal, settings.priceDecimals),
    currency: subscription.currency,
    billing_period: subscription.billingPeriod,
    billing_interval: subscription.billingInterval,
    payment_method_title: subscription.paymentMethodTitle,
    items: subscription.items.filter((item) => item.type === 'line_item').map((item) => ({ name: item.name, quantity: Number(item.meta._qty) || 0 })),
  };
}

/**
 * Who the customer is, from the newest match: the billing name (else the company, else the email), the email, and
 * the phone in E.164 when it can be read (as stored otherwise). The customer lookup's record and the helpdesk card
 * both show the customer so.
 */
export function customerContact(anchor: ShopOrder | ShopSubscription, settings: ShopSettings): { name: string; email: string | null; phone: string | null } {
  const email = anchor.billing.email.trim() || null;
  const name = [anchor.billing.firstName.trim(), anchor.billing.lastName.trim()].filter(Boolean).join(' ') || anchor.billing.company.trim() || email || '';
  return { name, email, phone: phoneOf(anchor, settings.baseCountry) };
}

/**
 * The customer record for the matched orders and subscriptions. `anchor` (the newest match) gives the
 * name and primary contact details; the others' differing emails and phones are listed as additional.
 */
export function customerRecord(input: {
  anchor: ShopOrder | ShopSubscription;
  orders: { order: ShopOrder; fields: Record<string, unknown> }[];
  subscriptions: ShopSubscription[];
  settings: ShopSettings;
}): CustomerRecord {
  const { anchor, settings } = input;
  const firstName = anchor.billing.firstName.trim();
  const lastName = anchor.billing.lastName.trim();
  const { name, email, phone } = customerContact(anchor, settings);

  const everyone = [...input.orders.map((entry) => entry.order), ...input.subscriptions];
  const additionalEmails: string[] = [];
  const seenEmails = new Set([emailKey(email)]);
  const additionalPhoneNumbers: string[] = [];
  const seenPhones = new Set([phone]);
  for (const record of everyone) {
    const otherEmail = record.billing.email.trim();
    const key = emailKey(otherEmail);
    if (key && !seenEmails.has(key)) {
      seenEmails.add(key);
      additionalEmails.push(otherEmail);
    }
    const otherPhone = phoneOf(record, settings.baseCountry);
    if (otherPhone && !seenPhones.has(otherPhone)) {
      seenPhones.add(otherPhone);
      additionalPhoneNumbers.push(otherPhone);
    }
  }

  return {
    name,
    email,
    phone,
    displayName: name,
    firstName,
    lastName,
    phoneNumber: phone,
    externalId: anchor.customerId > 0 ? String(anchor.customerId) : null,
    additionalEmails,
    additionalPhoneNumbers,
    orders: input.orders.map((entry) => ({ id: entry.order.id, ...entry.fields })),
    subscriptions: input.subscriptions.map((subscription) => subscriptionView(subscription, settings)),
  };
}
