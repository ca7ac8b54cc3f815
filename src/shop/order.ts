/** An address as WooCommerce stores it for billing or shipping. */
export interface OrderAddress {
  firstName: string;
  lastName: string;
  company: string;
  address1: string;
  address2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
  email: string;
  phone: string;
}

export interface OrderLineItem {
  id: number;
  name: string;
  /** `line_item`, `shipping`, `fee`, `coupon` or `tax`. */
  type: string;
  meta: Record<string, string>;
}

/**
 * One order read from whichever store is authoritative, in the same shape for both. This is also
 * the `order` that site extensions receive.
 */
export interface ShopOrder {
  id: number;
  type: string;
  /** Without the `wc-` prefix. */
  status: string;
  currency: string;
  /** As stored, e.g. `199.00` or `199.00000000`. */
  total: string;
  customerId: number;
  paymentMethod: string;
  paymentMethodTitle: string;
  createdVia: string;
  dateCreated: Date | null;
  datePaid: Date | null;
  dateCompleted: Date | null;
  billing: OrderAddress;
  shipping: OrderAddress;
  /** Meta rows not mapped to fields above (e.g. `_order_number`); the first value of each key. */
  meta: Record<string, string>;
  items: OrderLineItem[];
  refundCount: number;
  /** Payment decisions the service has handed to WooCommerce that it has not applied yet, oldest first. */
  paymentsNotYetInShop: PaymentHandOver[];
}

/** A payment decision waiting in the hand-over to WooCommerce (the companion plugin applies it). */
export interface PaymentHandOver {
  op: 'order_payment_complete' | 'order_payment_authorized' | 'order_payment_failed';
  /** When the provider took the money (a payment's `paid_at`), else when the service decided. */
  at: Date;
}

export const PAYMENT_HAND_OVER_OPS: PaymentHandOver['op'][] = ['order_payment_complete', 'order_payment_authorized', 'order_payment_failed'];

/**
 * The order as WooCommerce will show it once it has applied the payment decisions still waiting for it:
 * money taken completes an order awaiting payment (`payment_complete()`: processing, and paid then),
 * money reserved puts it on hold, a failure fails it. So nobody is told a paid order needs paying while
 * the hand-over is on its way.
 */
export function withPaymentsHandedOver(order: ShopOrder): ShopOrder {
  let { status, datePaid } = order;
  for (const { op, at } of order.paymentsNotYetInShop) {
    if (op === 'order_payment_complete' && ['pending', 'failed', 'on-hold'].includes(status)) {
      status = 'processing';
      datePaid ??= at;
    } else if (op === 'order_payment_authorized' && ['pending', 'failed'].includes(status)) {
      status = 'on-hold';
    } else if (op === 'order_payment_failed' && ['pending', 'on-hold'].includes(status)) {
      status = 'failed';
    }
  }
  return status === order.status && datePaid === order.datePaid ? order : { ...order, status, datePaid };
}

export function emptyAddress(): OrderAddress {
  return { firstName: '', lastName: '', company: '', address1: '', address2: '', city: '', state: '', postcode: '', country: '', email: '', phone: '' };
}

/** The number the shop shows: `_order_number_formatted`, else `_order_number`, else the ID. */
export function displayedOrderNumber(order: ShopOrder, numbering: 'id' | 'sequential'): string {
  if (numbering === 'sequential') {
    return order.meta._order_number_formatted || order.meta._order_number || String(order.id);
  }
  return String(order.id);
}

/** A status as WordPress stores it: `wc-` prefixed, except the core statuses `trash`, `draft` and `auto-draft`. */
export function storedStatus(status: string): string {
  return ['trash', 'draft', 'auto-draft'].includes(status) ? status : `wc-${status}`;
}

/** A stored status without its `wc-` prefix. */
export function plainStatus(stored: string): string {
  return stored.startsWith('wc-') ? stored.slice(3) : stored;
}
