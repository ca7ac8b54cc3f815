import type { Logger } from '../logger';
import type { OrderRepository } from '../data-access/order-repository';
import type { DiscountFilter, DiscountRecord, RenewalDiscountRepository } from '../data-access/renewal-discount-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { SubscriptionRefusal } from '../subscriptions/subscription-outcomes';
import { ENDED_STATUSES } from '../shop/subscription';
import { statusLabel } from '../shop/status-labels';
import { checkAmount, scaled, schemeOf } from './discount-schemes';
import { discountTypeView, discountView, type DiscountTypeView, type DiscountView } from './discount-view';

interface Deps {
  discounts: RenewalDiscountRepository;
  subscriptions: SubscriptionRepository;
  orders: OrderRepository;
  settings: ShopSettingsRepository;
  /** The WordPress site URL admin links start from (SHOP_URL, else the `siteurl` option). */
  siteUrl: () => Promise<string>;
  log: Logger;
  clock: () => Date;
}

/**
 * A discount is refused as a subscription change is, and answered alike, except that the subscription is
 * named in the body, not the path: an unknown one is an invalid field, never subscription_not_found.
 */
export type DiscountRefusal = Exclude<SubscriptionRefusal, { kind: 'subscription_not_found' }>;

/** Every registered discount type whose scheme is known, with the scheme resolved. */
export class ListDiscountTypes {
  constructor(private readonly deps: Pick<Deps, 'discounts' | 'log'>) {}

  async execute(): Promise<DiscountTypeView[]> {
    const views: DiscountTypeView[] = [];
    for (const type of await this.deps.discounts.types()) {
      const view = discountTypeView(type);
      if (view) views.push(view);
      else this.deps.log.warn('discount_type_unknown_scheme', { typeId: type.id, scheme: type.scheme });
    }
    return views;
  }
}

/** Discounts, newest first, optionally of one subscription and/or one order, a page at a time. */
export class ListDiscounts {
  constructor(private readonly deps: Pick<Deps, 'discounts' | 'settings' | 'siteUrl'>) {}

  async execute(filter: DiscountFilter, page: number, perPage: number): Promise<{ discounts: DiscountView[]; total: number }> {
    const settings = await this.deps.settings.current();
    const { discounts, total } = await this.deps.discounts.list(filter, page, perPage);
    const types = await this.deps.discounts.typesByIds([...new Set(discounts.map((discount) => discount.typeId))]);
    const siteUrl = await this.deps.siteUrl();
    return { discounts: discounts.map((discount) => discountView(discount, types.get(discount.typeId), settings, siteUrl)), total };
  }
}

/** One discount as the API shows it, with its type, the shop's settings and the site's address. */
async function viewOne(deps: Pick<Deps, 'discounts' | 'settings' | 'siteUrl'>, discount: DiscountRecord): Promise<DiscountView> {
  const settings = await deps.settings.current();
  const types = await deps.discounts.typesByIds([discount.typeId]);
  return discountView(discount, types.get(discount.typeId), settings, await deps.siteUrl());
}

export class GetDiscount {
  constructor(private readonly deps: Pick<Deps, 'discounts' | 'settings' | 'siteUrl'>) {}

  async execute(id: number): Promise<DiscountView | null> {
    const discount = await this.deps.discounts.findById(id);
    return discount ? viewOne(this.deps, discount) : null;
  }
}

/** A discount as staff ask for it; the route's contract has checked each field's form (IDs positive, amount positive, created_via 1 to MAX_CREATED_VIA characters). */
export interface CreateDiscountInput {
  subscriptionId: number;
  typeId: number;
  /** A positive JSON number, or decimal text. */
  amount: number | string;
  createdVia: string | null;
  orderId: number | null;
  createdBy: number;
}

export type CreateDiscountOutcome = { kind: 'created'; discount: DiscountView } | DiscountRefusal;

export const MAX_CREATED_VIA = 100;

/**
 * Creates a pending discount on a subscription (SPEC 4.4). What needs the shop is checked here: the type must
 * be registered, the amount is read by the type's scheme (money in the subscription's currency, at most its
 * recurring total; or a percentage of at most 100), and an optional `order` must be the subscription's parent or
 * renewal order. A subscription or order that does not exist is an invalid field (400), not a missing resource:
 * the path names none.
 */
export class CreateDiscount {
  constructor(private readonly deps: Deps) {}

  async execute(input: CreateDiscountInput): Promise<CreateDiscountOutcome> {
    const { subscriptionId, typeId, orderId } = input;
    const settings = await this.deps.settings.current();
    const bad = new Map<string, string>();

    const type = (await this.deps.discounts.typesByIds([typeId])).get(typeId);
    const scheme = type ? schemeOf(type.scheme) : null;
    if (!scheme) bad.set('type', 'type is not a registered discount type.');
    let amount: string | null = null;
    if (scheme) {
      const checked = checkAmount(scheme, input.amount, settings.priceDecimals);
      if (checked.ok) amount = checked.amount; else bad.set('amount', checked.message);
    }
    const createdVia = input.createdVia?.trim() || 'rest';
    if (bad.size) return invalid(bad);

    // A subscription or order the body names that does not exist is a bad field like any other: 400 naming it, before any state is judged.
    const [subscription, orderExists] = await Promise.all([
      this.deps.subscriptions.find(subscriptionId, settings),
      orderId === null ? true : this.deps.orders.exists(orderId, settings),
    ]);
    if (!subscription) bad.set('subscription', 'subscription is not a subscription of the shop.');
    if (!orderExists) bad.set('order', 'order is not an order of the shop.');
    if (!subscription || bad.size) return invalid(bad);
    if (ENDED_STATUSES.includes(subscription.status)) {
      return { kind: 'invalid_state', status: subscription.status, message: `A ${statusLabel(subscription.status).toLowerCase()} subscription does not renew; it cannot get a renewal discount.` };
    }
    if (scheme!.amount_type === 'currency' && scaled(amount!) > scaled(normalisedDecimal(subscription.recurringTotal))) {
      bad.set('amount', `amount exceeds the subscription's recurring total (${subscription.recurringTotal} ${subscription.currency}).`);
    }
    if (orderId !== null && !(await this.deps.orders.relatesToSubscription(orderId, subscription.id, settings))) {
      bad.set('order', 'order is not an order of this subscription.');
    }
    if (bad.size) return invalid(bad);

    const id = await this.deps.discounts.insert({
      subscriptionId: subscription.id, orderId, typeId, amount: amount!, currency: subscription.currency, createdVia, createdBy: input.createdBy,
    }, this.deps.clock());
    const created = await this.deps.discounts.findById(id);
    return { kind: 'created', discount: discountView(created!, type, settings, await this.deps.siteUrl()) };
  }
}

function invalid(bad: Map<string, string>): DiscountRefusal {
  return { kind: 'invalid_params', params: [...bad.keys()], message: [...bad.values()].join(' ') };
}

/** A stored decimal (`199.00000000`, possibly negative or empty) as a non-negative decimal for comparison. */
function normalisedDecimal(stored: string): string {
  const match = /^(\d+)(?:\.(\d*))?/.exec(stored.trim());
  return match ? `${match[1]}${match[2] ? `.${match[2].slice(0, 8)}` : ''}` : '0';
}

export type CancelDiscountOutcome =
  | { kind: 'cancelled'; discount: DiscountView }
  | { kind: 'discount_not_found' }
  | { kind: 'invalid_state'; status: string; message: string };

/**
 * Staff withdraw a pending discount: it is cancelled and no renewal will carry it. One that has been applied
 * (or cancelled) is left as it is: its renewal order is what it is.
 */
export class CancelDiscount {
  constructor(private readonly deps: Pick<Deps, 'discounts' | 'settings' | 'siteUrl' | 'clock'>) {}

  async execute(id: number): Promise<CancelDiscountOutcome> {
    const cancelled = await this.deps.discounts.cancelPending(id, this.deps.clock());
    const discount = await this.deps.discounts.findById(id);
    if (!discount) return { kind: 'discount_not_found' };
    if (!cancelled) return { kind: 'invalid_state', status: discount.status, message: `Only a pending discount can be cancelled; this one is ${discount.status}.` };
    return { kind: 'cancelled', discount: await viewOne(this.deps, discount) };
  }
}
