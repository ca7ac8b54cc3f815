import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { Executor } from '../data-access/transaction';
import { gmtDateTime } from '../shop/shop-time';
import type { ScheduledActionRepository } from '../data-access/scheduled-action-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import { statusChangeNote } from '../shop/status-labels';
import { AUTO_REACTIVATION_META, NEXT_PAYMENT_META, type ShopSubscription } from '../shop/subscription';
import { nextPaymentOnActivation } from './subscription-schedule';
import { actorAuthor, type StaffActor } from './subscription-outcomes';

/**
 * Moving an on-hold subscription back to active, the one place force-activation, the end of a pause and a
 * paid renewal share. With the companion plugin, WooCommerce Subscriptions does it (`update_status('active')`,
 * the pause end cleared), with every consequence of its own. Without it, the rows are written here as
 * Subscriptions writes them: the status in every store in use, the pause end cleared, the next payment kept
 * when it is at least two hours ahead (else recalculated), the pending renewal action moved with it, and a
 * note. Returns the subscription as it is (or will be) afterwards. Call inside a transaction holding the
 * subscription's row lock.
 */
export class SubscriptionActivation {
  constructor(
    private readonly orderWrites: OrderWriteRepository,
    private readonly actions: ScheduledActionRepository,
    private readonly changes: WooCommerceChangeRepository,
  ) {}

  async activate(
    db: Executor,
    subscription: ShopSubscription,
    settings: ShopSettings,
    now: Date,
    note: { reason: string; actor?: StaffActor },
  ): Promise<ShopSubscription> {
    const id = subscription.id;
    const nextPayment = nextPaymentOnActivation(subscription, now);
    if (settings.companion) {
      await this.changes.enqueue(db, { op: 'subscription_activate', objectId: id, payload: { note: note.reason, user_id: note.actor?.userId ?? 0 } }, settings, now);
      return { ...subscription, status: 'active', nextPayment, autoReactivation: null };
    }
    await this.orderWrites.setStatus(db, id, 'active', settings, now);
    await this.orderWrites.deleteMeta(db, id, AUTO_REACTIVATION_META, settings);
    if (nextPayment?.getTime() !== subscription.nextPayment?.getTime()) {
      await this.orderWrites.setMeta(db, id, NEXT_PAYMENT_META, nextPayment ? gmtDateTime(nextPayment) : '0', settings);
    }
    await this.actions.scheduleRenewal(db, id, nextPayment, settings);
    const transition = statusChangeNote('subscription', subscription.status, 'active');
    await this.orderWrites.addNote(db, id, `${note.reason} ${transition}`, settings, now, note.actor && actorAuthor(note.actor));
    return { ...subscription, status: 'active', nextPayment, autoReactivation: null };
  }
}
