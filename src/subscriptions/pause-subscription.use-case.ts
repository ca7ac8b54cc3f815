import type { OrderWriteRepository } from '../data-access/order-write-repository';
import { gmtDateTime } from '../shop/shop-time';
import { orderNoteWords } from '../shop/order-note-words';
import type { ScheduledActionRepository } from '../data-access/scheduled-action-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import { statusChangeNote, statusLabel } from '../shop/status-labels';
import { AUTO_REACTIVATION_META, NEXT_PAYMENT_META, SUSPENSION_COUNT_META } from '../shop/subscription';
import { actorAuthor, actorLabel, subscriptionStateView, type StaffActor, type SubscriptionRefusal, type SubscriptionStateView } from './subscription-outcomes';
import { isFutureDate, pauseDates } from './subscription-schedule';

export type PauseOutcome = { kind: 'paused'; subscription: SubscriptionStateView } | SubscriptionRefusal;

/** Statuses a subscription can be put on hold from (WCS: active or pending), plus on hold itself to change the end. */
/** The statuses a subscription may be paused from (the card offers the pause only in them). */
export const PAUSABLE = ['active', 'pending', 'on-hold'];

/**
 * Pause until a date (SPEC 3.4, CONTRACT.md): the subscription goes on hold, the pause end is stored as
 * the subscription date `_schedule_auto_reactivation`, and the next payment moves to the day after, in
 * `_schedule_next_payment` and in the pending renewal action together. The worker reactivates it on the
 * date. Pausing an on-hold subscription again changes the end date. With the companion plugin,
 * WooCommerce Subscriptions makes the change (on hold, then the dates), with its own consequences.
 */
export class PauseSubscription {
  constructor(private readonly deps: {
    subscriptions: SubscriptionRepository;
    orderWrites: OrderWriteRepository;
    actions: ScheduledActionRepository;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    clock: () => Date;
  }) {}

  /** `endDate`: a calendar date `YYYY-MM-DD` (the route's contract checks it is one). */
  async execute(input: { subscriptionId: number; endDate: string; actor: StaffActor }): Promise<PauseOutcome> {
    const settings = await this.deps.settings.current();
    const now = this.deps.clock();
    const { endDate } = input;
    const exists = await this.deps.subscriptions.find(input.subscriptionId, settings);
    if (!exists) return { kind: 'subscription_not_found' };
    if (!isFutureDate(endDate, now, settings.timeZone)) {
      return { kind: 'invalid_params', params: ['end_date'], message: 'end_date must be a future date.' };
    }

    const { orderWrites } = this.deps;
    return orderWrites.transaction(async (db): Promise<PauseOutcome> => {
      const subscription = await this.deps.subscriptions.lockForChange(db, input.subscriptionId, settings);
      if (!subscription) return { kind: 'subscription_not_found' };
      if (!PAUSABLE.includes(subscription.status)) {
        return { kind: 'invalid_state', status: subscription.status, message: `A ${statusLabel(subscription.status).toLowerCase()} subscription cannot be paused.` };
      }
      const dates = pauseDates(endDate, subscription, settings.timeZone);
      if (subscription.end && dates.nextPayment.getTime() >= subscription.end.getTime()) {
        return { kind: 'invalid_params', params: ['end_date'], message: 'The pause would end after the subscription itself ends.' };
      }

      const id = subscription.id;
      let note = orderNoteWords(settings).paused({ until: endDate, by: actorLabel(input.actor), nextPayment: dates.nextPayment });
      const paused = {
        kind: 'paused' as const,
        subscription: subscriptionStateView({ id, status: 'on-hold', nextPayment: dates.nextPayment, autoReactivation: dates.autoReactivation }, settings),
      };
      if (settings.companion) {
        await this.deps.changes.enqueue(db, {
          op: 'subscription_pause',
          objectId: id,
          payload: { next_payment: gmtDateTime(dates.nextPayment), auto_reactivation: gmtDateTime(dates.autoReactivation), note, user_id: input.actor.userId },
        }, settings, now);
        return paused;
      }
      if (subscription.status !== 'on-hold') {
        await orderWrites.setStatus(db, id, 'on-hold', settings, now);
        // WCS counts every move to on-hold (`_suspension_count`).
        await orderWrites.incrementMeta(db, id, SUSPENSION_COUNT_META, settings);
        note += ` ${statusChangeNote('subscription', subscription.status, 'on-hold')}`;
      }
      await orderWrites.setMeta(db, id, AUTO_REACTIVATION_META, gmtDateTime(dates.autoReactivation), settings);
      await orderWrites.setMeta(db, id, NEXT_PAYMENT_META, gmtDateTime(dates.nextPayment), settings);
      await this.deps.actions.scheduleRenewal(db, id, dates.nextPayment, settings);
      await orderWrites.addNote(db, id, note, settings, now, actorAuthor(input.actor));
      return paused;
    });
  }
}
