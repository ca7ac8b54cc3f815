import type { Executor, OrderWriteRepository } from '../data-access/order-write-repository';
import { gmtDateTime } from '../shop/shop-time';
import type { ScheduledActionRepository } from '../data-access/scheduled-action-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { statusChangeNote } from '../shop/status-labels';
import { AUTO_REACTIVATION_META, NEXT_PAYMENT_META, type ShopSubscription } from '../shop/subscription';
import { nextPaymentOnActivation } from './subscription-schedule';

/**
 * Moving an on-hold subscription back to active, as WooCommerce Subscriptions does it: the status in every
 * store in use, the pause end cleared, the next payment kept when it is at least two hours ahead (else
 * recalculated), the pending renewal action moved with it, and a note. The one place force-activation and
 * the end of a pause share. Call inside a transaction holding the subscription's row lock.
 */
export class SubscriptionActivation {
  constructor(private readonly orderWrites: OrderWriteRepository, private readonly actions: ScheduledActionRepository) {}

  async activate(
    db: Executor,
    subscription: ShopSubscription,
    settings: ShopSettings,
    now: Date,
    note: { reason: string; author?: { name: string; email: string } },
  ): Promise<ShopSubscription> {
    const id = subscription.id;
    await this.orderWrites.setStatus(db, id, 'active', settings, now);
    await this.orderWrites.deleteMeta(db, id, AUTO_REACTIVATION_META, settings);
    const nextPayment = nextPaymentOnActivation(subscription, now);
    if (nextPayment?.getTime() !== subscription.nextPayment?.getTime()) {
      await this.orderWrites.setMeta(db, id, NEXT_PAYMENT_META, nextPayment ? gmtDateTime(nextPayment) : '0', settings);
    }
    await this.actions.scheduleRenewal(db, id, nextPayment, settings);
    const transition = statusChangeNote('subscription', subscription.status, 'active');
    await this.orderWrites.addNote(db, id, `${note.reason} ${transition}`, settings, now, note.author);
    return { ...subscription, status: 'active', nextPayment, autoReactivation: null };
  }
}
