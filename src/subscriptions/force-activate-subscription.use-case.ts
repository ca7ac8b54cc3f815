import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import { orderNoteWords } from '../shop/order-note-words';
import { statusLabel } from '../shop/status-labels';
import { endHasPassed } from '../shop/subscription';
import type { SubscriptionActivation } from './subscription-activation';
import { actorLabel, subscriptionStateView, type StaffActor, type SubscriptionRefusal, type SubscriptionStateView } from './subscription-outcomes';

export type ForceActivateOutcome = { kind: 'activated'; subscription: SubscriptionStateView } | SubscriptionRefusal;

/**
 * Force-activate an on-hold subscription (SPEC 3.4): 409 unless on hold, and, as WooCommerce Subscriptions
 * refuses it too, not once its end date has passed. A pause in progress ends with it.
 */
export class ForceActivateSubscription {
  constructor(private readonly deps: {
    subscriptions: SubscriptionRepository;
    orderWrites: OrderWriteRepository;
    activation: SubscriptionActivation;
    settings: ShopSettingsRepository;
    clock: () => Date;
  }) {}

  async execute(input: { subscriptionId: number; actor: StaffActor }): Promise<ForceActivateOutcome> {
    const settings = await this.deps.settings.current();
    const now = this.deps.clock();
    return this.deps.orderWrites.transaction(async (db): Promise<ForceActivateOutcome> => {
      const subscription = await this.deps.subscriptions.lockForChange(db, input.subscriptionId, settings);
      if (!subscription) return { kind: 'subscription_not_found' };
      if (subscription.status !== 'on-hold') {
        return { kind: 'invalid_state', status: subscription.status, message: `Only an on-hold subscription can be force-activated; this one is ${statusLabel(subscription.status).toLowerCase()}.` };
      }
      if (endHasPassed(subscription, now)) {
        return { kind: 'invalid_state', status: subscription.status, message: 'The subscription\'s end date has passed; it cannot be activated.' };
      }
      const activated = await this.deps.activation.activate(db, subscription, settings, now, {
        reason: orderNoteWords(settings).forceActivated({ by: actorLabel(input.actor) }),
        actor: input.actor,
      });
      return { kind: 'activated', subscription: subscriptionStateView(activated, settings) };
    });
  }
}
