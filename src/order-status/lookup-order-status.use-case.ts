import type { OrderRepository } from '../data-access/order-repository';
import { formatAmount } from '../shared/currency';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { displayedOrderNumber, emptyAddress, withPaymentsHandedOver, type ShopOrder } from '../shop/order';
import { isoInZone, localDateInZone } from '../shop/shop-time';
import type { OrderStatusData, SiteExtensions } from '../shop/site-extensions';
import { constantTimeEqual } from '../security/constant-time';
import { estimateDelivery } from './estimated-delivery';
import { defaultCountryChain, phonesMatch } from './phone-match';

export interface OrderStatusQuery {
  orderNumber: string;
  email?: string;
  phone?: string;
}

export type OrderStatusOutcome = { kind: 'found'; data: OrderStatusData } | { kind: 'not_found' };

/** Stands in for a missing order so that a miss does the same comparisons as a mismatch. */
const NO_ORDER: ShopOrder = {
  id: 0, type: 'shop_order', status: '', currency: '', total: '0', customerId: 0, paymentMethod: '', paymentMethodTitle: '',
  createdVia: '', dateCreated: null, datePaid: null, dateCompleted: null, paymentsNotYetInShop: [],
  billing: { ...emptyAddress(), email: 'no-order@invalid.invalid', phone: '+4500000000' }, shipping: emptyAddress(),
  meta: {}, items: [], refundCount: 0,
};

/**
 * Where is my order (SPEC 4.1): the order is shown only when the number exists and the supplied
 * billing email or phone matches. A missing order and a mismatch are one outcome, reached through
 * the same reads and comparisons.
 */
export class LookupOrderStatus {
  constructor(
    private readonly orders: OrderRepository,
    private readonly settings: ShopSettingsRepository,
    private readonly extensions: SiteExtensions,
  ) {}

  async execute(query: OrderStatusQuery): Promise<OrderStatusOutcome> {
    const settings = await this.settings.current();
    const order = await this.orders.findByOrderNumber(query.orderNumber, settings);
    const verified = customerVerified(order ?? NO_ORDER, query, settings.baseCountry);
    if (!order || !verified) return { kind: 'not_found' };
    return { kind: 'found', data: await describeOrderStatus(order, settings, this.extensions) };
  }
}

/**
 * The order status fields of SPEC 2.1 for one order, with the site's filters applied: the answer of the
 * order status route, and each order of the customer lookup.
 */
export async function describeOrderStatus(stored: ShopOrder, settings: ShopSettings, extensions: SiteExtensions): Promise<OrderStatusData> {
  const order = withPaymentsHandedOver(stored);
  const zone = settings.timeZone;
  const baseDate = order.dateCompleted ?? order.datePaid;
  const shippingItems = order.items.filter((item) => item.type === 'shipping');
  const computed = estimateDelivery({
    shippingMethodIds: shippingItems.map((item) => item.meta.method_id ?? ''),
    shippingCountry: order.shipping.country,
    billingCountry: order.billing.country,
    baseDate: baseDate ? localDateInZone(baseDate, zone) : null,
  });
  // A filter the site does not have is not asked: nothing to wait for (three promises and turns an answer, most shops).
  const trackingUrl = extensions.has('shipping_label') ? await extensions.trackingUrl(order) : null;
  const data: OrderStatusData = {
    order_number: displayedOrderNumber(order, settings.orderNumbers),
    status: order.status,
    date_created: order.dateCreated ? isoInZone(order.dateCreated, zone) : null,
    date_paid: order.datePaid ? isoInZone(order.datePaid, zone) : null,
    date_completed: order.dateCompleted ? isoInZone(order.dateCompleted, zone) : null,
    needs_payment: needsPayment(order),
    payment_method_title: order.paymentMethodTitle,
    total: formatAmount(order.total, settings.priceDecimals),
    currency: order.currency,
    item_count: order.items
      .filter((item) => item.type === 'line_item')
      .reduce((count, item) => count + (Number(item.meta._qty) || 0), 0),
    shipping_method: shippingItems.map((item) => item.name).join(', '),
    shipping_country: order.shipping.country,
    is_refunded: order.status === 'refunded' || order.refundCount > 0,
    estimated_delivery: extensions.has('helpdesk_order_status_estimated_delivery') ? await extensions.estimatedDelivery(computed, order) : computed,
    tracking: trackingUrl ? { tracking_url: trackingUrl } : {},
  };
  return extensions.has('helpdesk_order_status_data') ? extensions.orderStatusData(data, order) : data;
}

/**
 * Rules 3 and 5 of SPEC 4.1.1: either supplied field may match. Both comparisons always run, so
 * the answer's timing does not tell which field (if any) was right.
 */
export function customerVerified(order: ShopOrder, query: OrderStatusQuery, shopCountry: string): boolean {
  const emailMatches = query.email !== undefined && emailsMatch(query.email, order.billing.email);
  const chain = defaultCountryChain(order.billing.country, order.shipping.country, shopCountry);
  const phoneMatches = query.phone !== undefined && order.billing.phone !== '' && phonesMatch(query.phone, order.billing.phone, chain);
  return emailMatches || phoneMatches;
}

function emailsMatch(supplied: string, stored: string): boolean {
  const normalised = supplied.trim().toLowerCase();
  return constantTimeEqual(normalised, stored.trim().toLowerCase()) && normalised !== '';
}

/** WooCommerce's `needs_payment()`: unpaid status and something to pay. */
function needsPayment(order: ShopOrder): boolean {
  return ['pending', 'failed'].includes(order.status) && Number(order.total) > 0;
}

