import type { ContactKey, CustomerContactIndex } from '../data-access/customer-contact-index';
import type { OrderRepository } from '../data-access/order-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { describeOrderStatus } from '../order-status/lookup-order-status.use-case';
import type { ShopOrder } from '../shop/order';
import type { Logger } from '../logger';
import type { SiteExtensions } from '../shop/site-extensions';
import { subscriptionFrom, type ShopSubscription } from '../shop/subscription';
import { emailKey, storedPhoneKey, suppliedPhoneKey } from './contact-keys';
import { customerRecord, newestFirst, type CustomerRecord } from './customer-record';

export type CustomerQuery = { email: string } | { phone: string };

/** Who matched: the newest match (whose name and contact details the customer is shown with), and all of theirs found. */
export interface CustomerMatch {
  anchor: ShopOrder | ShopSubscription;
  orders: ShopOrder[];
  /** With the subscription's meta as stored (its payment method's card or agreement). */
  subscriptions: (ShopSubscription & { meta: Record<string, string> })[];
}

export type CustomerLookupOutcome = { kind: 'found'; customer: CustomerRecord } | { kind: 'no_match' };

/** How many of the customer's newest orders and subscriptions the record lists. */
export const RECENT_ORDERS = 10;
export const LISTED_SUBSCRIPTIONS = 20;
/** Extra index hits read, so a few stale ones (dropped by the re-check) do not shorten the lists. */
const SLACK = 5;

/**
 * Customer lookup (SPEC 4.2): the orders and subscriptions whose billing email, or billing phone after
 * normalisation, is the one supplied, found through the service's contact index (never by scanning meta
 * values). Every hit is re-checked against the order as it is now, so an index entry that has not caught
 * up with an edit can never show someone else's orders. Orders created since the index last looked are
 * indexed first, so a new order is found at once, with or without the worker running. When the newest
 * match belongs to a registered customer, that customer's other orders are included too.
 */
export class LookupCustomer {
  constructor(private readonly deps: {
    index: CustomerContactIndex;
    orders: OrderRepository;
    settings: ShopSettingsRepository;
    extensions: SiteExtensions;
    newContacts: { indexNew(): Promise<number> };
    log: Logger;
  }) {}

  /** The catch-up in progress, shared by the lookups that arrive meanwhile. */
  private catchingUp: Promise<void> | null = null;

  async execute(query: CustomerQuery): Promise<CustomerLookupOutcome> {
    const settings = await this.deps.settings.current();
    const matched = await this.match(query, settings);
    if (!matched) return { kind: 'no_match' };
    const { anchor, orders, subscriptions } = matched;
    const recentOrders = orders.slice(0, RECENT_ORDERS);
    const listed = subscriptions.slice(0, LISTED_SUBSCRIPTIONS);
    const described = await Promise.all(recentOrders.map(async (order) => ({ order, fields: await describeOrderStatus(order, settings, this.deps.extensions) })));
    return { kind: 'found', customer: customerRecord({ anchor, orders: described, subscriptions: listed, settings }) };
  }

  /**
   * The customer's orders and subscriptions, newest first, as the lookup matches them (also the helpdesk card's
   * match); null when nothing matches.
   */
  async match(query: CustomerQuery, settings: ShopSettings): Promise<CustomerMatch | null> {
    await this.indexNewContacts();
    const key = 'email' in query ? emailKey(query.email) : suppliedPhoneKey(query.phone, settings.baseCountry);
    if (!key) return null;
    const contact: ContactKey = 'email' in query ? { email: key } : { phone: key };
    // Only the key asked by is worked out for each hit: phone keys cost libphonenumber parses.
    const matches = (record: ShopOrder | ShopSubscription) => ('email' in contact
      ? emailKey(record.billing.email) === contact.email
      : storedPhoneKey(record.billing.phone, record.billing.country, record.shipping.country, settings.baseCountry) === contact.phone);

    const found = await this.read(contact, settings, new Set());
    const orders = found.orders.filter(matches);
    const subscriptions = found.subscriptions.filter(matches);
    const anchor = [...orders, ...subscriptions].sort(newestFirst)[0];
    if (!anchor) return null;

    if (anchor.customerId > 0) {
      const known = new Set([...orders, ...subscriptions].map((record) => record.id));
      const more = await this.read({ customerId: anchor.customerId }, settings, known);
      const sameCustomer = (record: ShopOrder | ShopSubscription) => record.customerId === anchor.customerId;
      orders.push(...more.orders.filter(sameCustomer));
      subscriptions.push(...more.subscriptions.filter(sameCustomer));
    }

    return { anchor, orders: orders.sort(newestFirst), subscriptions: subscriptions.sort(newestFirst) };
  }

  /** Best effort: when it fails, the lookup still answers from the index as it is. */
  private indexNewContacts(): Promise<void> {
    this.catchingUp ??= this.deps.newContacts.indexNew()
      .then(() => undefined, (error) => this.deps.log.warn('customer_contacts_catch_up_failed', { error }))
      .finally(() => { this.catchingUp = null; });
    return this.catchingUp;
  }

  /** The index hits for `key` (minus `skip`), read from the authoritative store. */
  private async read(key: ContactKey, settings: ShopSettings, skip: Set<number>): Promise<Omit<CustomerMatch, 'anchor'>> {
    const hits = await this.deps.index.find(key, { orders: RECENT_ORDERS + SLACK, subscriptions: LISTED_SUBSCRIPTIONS + SLACK });
    const ids = (found: number[]) => found.filter((id) => !skip.has(id));
    const [orders, subscriptions] = await Promise.all([
      this.deps.orders.findManyByIds(ids(hits.orders), settings, 'shop_order'),
      this.deps.orders.findManyByIds(ids(hits.subscriptions), settings, 'shop_subscription'),
    ]);
    return { orders, subscriptions: subscriptions.map((record) => ({ ...subscriptionFrom(record), meta: record.meta })) };
  }
}
