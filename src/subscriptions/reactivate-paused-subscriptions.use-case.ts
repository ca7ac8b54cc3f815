import type { Logger } from '../logger';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import { orderNoteWords } from '../shop/order-note-words';
import { AUTO_REACTIVATION_META, endHasPassed } from '../shop/subscription';
import type { SubscriptionActivation } from './subscription-activation';

/**
 * The worker's end of a pause: every on-hold subscription whose `_schedule_auto_reactivation` has come
 * becomes active again (one transaction each). A pause end left on a subscription that is no longer on
 * hold (cancelled or activated by hand meanwhile) is cleared. Returns how many were reactivated (or, with
 * the companion plugin, handed to WooCommerce to reactivate).
 */
export class ReactivatePausedSubscriptions {
  constructor(private readonly deps: {
    subscriptions: SubscriptionRepository;
    orderWrites: OrderWriteRepository;
    activation: SubscriptionActivation;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    log: Logger;
  }) {}

  async execute(now: Date): Promise<number> {
    const settings = await this.deps.settings.current();
    const due = await this.deps.orderWrites.findIdsByDateMetaUpTo(AUTO_REACTIVATION_META, now, 'shop_subscription', settings);
    let reactivated = 0;
    for (const id of due) {
      try {
        const result = await this.deps.orderWrites.transaction(async (db) => {
          const subscription = await this.deps.subscriptions.lockForChange(db, id, settings);
          if (!subscription || !subscription.autoReactivation || subscription.autoReactivation.getTime() > now.getTime()) return 'skipped';
          // Handed to WooCommerce already; the pause end goes when it applies the activation.
          if (settings.companion && await this.deps.changes.isWaiting(db, id, 'subscription_activate')) return 'skipped';
          if (subscription.status !== 'on-hold') {
            await this.deps.orderWrites.deleteMeta(db, id, AUTO_REACTIVATION_META, settings);
            return 'cleared';
          }
          if (endHasPassed(subscription, now)) {
            // WCS never reactivates past the end date; the pause is over all the same.
            await this.deps.orderWrites.deleteMeta(db, id, AUTO_REACTIVATION_META, settings);
            await this.deps.orderWrites.addNote(db, id, orderNoteWords(settings).pauseEndedPastEnd(), settings, now);
            return 'ended';
          }
          await this.deps.activation.activate(db, subscription, settings, now, { reason: orderNoteWords(settings).pauseEnded() });
          return 'reactivated';
        });
        if (result === 'reactivated') reactivated += 1;
        if (result !== 'skipped') this.deps.log.info('paused_subscription_handled', { subscriptionId: id, result });
      } catch (error) {
        this.deps.log.error('paused_subscription_reactivation_failed', { subscriptionId: id, error });
      }
    }
    return reactivated;
  }
}
