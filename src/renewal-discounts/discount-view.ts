import type { DiscountRecord, DiscountTypeRecord } from '../data-access/renewal-discount-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { formatAmount } from '../shared/currency';
import { orderEditUrl } from '../shop/admin-urls';
import { isoInZone, parseGmtDateTime } from '../shop/shop-time';
import { schemeOf, type DiscountScheme } from './discount-schemes';

/** SPEC 2.4: a discount type with its scheme resolved. */
export interface DiscountTypeView {
  id: number;
  slug: string;
  name: string;
  description: string | null;
  scheme: DiscountScheme;
}

/** SPEC 2.5: a discount with its resolved type and where WP admin edits the order it belongs to. */
export interface DiscountView {
  id: number;
  subscription: number;
  order: number | null;
  type: DiscountTypeView | null;
  /** As WooCommerce's REST API writes coupon amounts: a decimal string, money with the shop's price decimals, a percentage with two. */
  amount: string;
  currency: string;
  /** pending, applied or cancelled (see DiscountStatus). */
  status: string;
  /** What the renewal in `order` was lowered by; null until applied. */
  applied_amount: string | null;
  date_applied_gmt: string | null;
  created_via: string;
  created_by: number;
  date_created: string | null;
  date_created_gmt: string;
  /** The linked order's edit screen, else the subscription's (a subscription is an order type in WooCommerce). */
  order_edit_url: string;
}

/** A type whose scheme is defined in code; null for a row naming an unknown scheme. */
export function discountTypeView(type: DiscountTypeRecord): DiscountTypeView | null {
  const scheme = schemeOf(type.scheme);
  return scheme ? { id: type.id, slug: type.slug, name: type.name, description: type.description, scheme } : null;
}

export function discountView(discount: DiscountRecord, type: DiscountTypeRecord | undefined, settings: ShopSettings, siteUrl: string): DiscountView {
  const typeView = type ? discountTypeView(type) : null;
  const created = parseGmtDateTime(discount.createdAt);
  return {
    id: discount.id,
    subscription: discount.subscriptionId,
    order: discount.orderId,
    type: typeView,
    amount: formatAmount(discount.amount, typeView?.scheme.decimals ?? settings.priceDecimals),
    currency: discount.currency,
    status: discount.status,
    applied_amount: discount.appliedAmount === null ? null : formatAmount(discount.appliedAmount, settings.priceDecimals),
    date_applied_gmt: discount.appliedAt?.slice(0, 19) ?? null,
    created_via: discount.createdVia,
    created_by: discount.createdBy,
    date_created: created ? isoInZone(created, settings.timeZone) : null,
    date_created_gmt: discount.createdAt.slice(0, 19),
    order_edit_url: discount.orderId !== null
      ? orderEditUrl(siteUrl, discount.orderId, 'shop_order', settings.hpos)
      : orderEditUrl(siteUrl, discount.subscriptionId, 'shop_subscription', settings.hpos),
  };
}
