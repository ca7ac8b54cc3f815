import type { OrderAddress, OrderLineItem, ShopOrder } from './order';
import { parseGmtDateTime } from './shop-time';

/**
 * The meta key of the pause end: a subscription date (GMT `Y-m-d H:i:s`) in WooCommerce Subscriptions'
 * `_schedule_{type}` pattern, so WCS and WP admin read it like its own dates.
 */
export const AUTO_REACTIVATION_META = '_schedule_auto_reactivation';
export const NEXT_PAYMENT_META = '_schedule_next_payment';
export const SUSPENSION_COUNT_META = '_suspension_count';

export type BillingPeriod = 'day' | 'week' | 'month' | 'year';

/** A WooCommerce Subscriptions subscription, read from whichever store is authoritative. */
export interface ShopSubscription {
  id: number;
  /** Without `wc-`: active, on-hold, pending, pending-cancel, cancelled, expired, switched. */
  status: string;
  customerId: number;
  currency: string;
  /** The recurring total as stored (the subscription's own order total). */
  recurringTotal: string;
  /** The WooCommerce gateway its renewals are charged through (`_payment_method`), e.g. `reepay_checkout`; empty when none. */
  paymentMethod: string;
  paymentMethodTitle: string;
  billingPeriod: BillingPeriod;
  billingInterval: number;
  start: Date | null;
  trialEnd: Date | null;
  nextPayment: Date | null;
  end: Date | null;
  autoReactivation: Date | null;
  requiresManualRenewal: boolean;
  dateCreated: Date | null;
  billing: OrderAddress;
  shipping: OrderAddress;
  items: OrderLineItem[];
}

/** `wcs_get_subscription_ended_statuses()`: a subscription in one of these will not renew again. */
export const ENDED_STATUSES = ['cancelled', 'trash', 'expired', 'switched', 'pending-cancel'];

/** A WCS date meta value: GMT `Y-m-d H:i:s`, or `0` / empty for "no date". */
function subscriptionDate(value: string | undefined): Date | null {
  if (!value || value === '0') return null;
  return parseGmtDateTime(value);
}

const PERIODS: BillingPeriod[] = ['day', 'week', 'month', 'year'];

/** The subscription view of a `shop_subscription` read as an order (its schedule is in its meta). */
/** Whether the subscription's end date has come: WooCommerce Subscriptions never activates it after that. */
export function endHasPassed(subscription: Pick<ShopSubscription, 'end'>, now: Date): boolean {
  return subscription.end !== null && subscription.end.getTime() <= now.getTime();
}

export function subscriptionFrom(record: ShopOrder): ShopSubscription {
  const meta = record.meta;
  const period = meta._billing_period as BillingPeriod;
  const interval = Number(meta._billing_interval);
  return {
    id: record.id,
    status: record.status,
    customerId: record.customerId,
    currency: record.currency,
    recurringTotal: record.total,
    paymentMethod: record.paymentMethod,
    paymentMethodTitle: record.paymentMethodTitle,
    billingPeriod: PERIODS.includes(period) ? period : 'month',
    billingInterval: Number.isInteger(interval) && interval > 0 ? interval : 1,
    start: subscriptionDate(meta._schedule_start) ?? record.dateCreated,
    trialEnd: subscriptionDate(meta._schedule_trial_end),
    nextPayment: subscriptionDate(meta[NEXT_PAYMENT_META]),
    end: subscriptionDate(meta._schedule_end),
    autoReactivation: subscriptionDate(meta[AUTO_REACTIVATION_META]),
    requiresManualRenewal: meta._requires_manual_renewal === 'true',
    dateCreated: record.dateCreated,
    billing: record.billing,
    shipping: record.shipping,
    items: record.items,
  };
}
