import type { OrderRepository } from './order-repository';
import type { OrderWriteRepository } from './order-write-repository';
import type { Executor } from './transaction';
import type { ShopSettings } from './shop-settings-repository';
import { subscriptionFrom, type ShopSubscription } from '../shop/subscription';

/**
 * Subscriptions from the authoritative store. Drafts and the bin count as absent, as does an ID that is
 * not a subscription.
 */
export class SubscriptionRepository {
  constructor(private readonly orders: OrderRepository, private readonly orderWrites: OrderWriteRepository) {}

  async find(id: number, settings: ShopSettings, db?: Executor): Promise<ShopSubscription | null> {
    const [record] = await this.orders.findManyByIds([id], settings, 'shop_subscription', db);
    return record ? subscriptionFrom(record) : null;
  }

  /** Several at once, in one read, by id; an id that is no subscription is absent from the map. */
  async findMany(ids: number[], settings: ShopSettings): Promise<Map<number, ShopSubscription>> {
    const records = await this.orders.findManyByIds([...new Set(ids)], settings, 'shop_subscription');
    return new Map(records.map((record) => [record.id, subscriptionFrom(record)]));
  }

  /**
   * Locks the subscription's row for the rest of `db`'s transaction (so two changes cannot interleave),
   * then reads it, on the same connection, as committed.
   */
  async lockForChange(db: Executor, id: number, settings: ShopSettings): Promise<ShopSubscription | null> {
    const locked = await this.orderWrites.lockStatus(db, id, settings);
    if (!locked || locked.type !== 'shop_subscription') return null;
    return this.find(id, settings, db);
  }
}
