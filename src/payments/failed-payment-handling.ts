import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { Executor } from '../data-access/transaction';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { statusChangeNote } from '../shop/status-labels';
import { SUSPENSION_COUNT_META } from '../shop/subscription';
import { gmtDateTime } from '../shop/shop-time';
import { orderNoteWords } from '../shop/order-note-words';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import { chargeMethodKey, newMethodKey } from './method-keys';
import type { WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import { SCHEDULE_RETRY, type PaymentEvents } from './payment-events';

export interface PaymentFailure {
  code: string | null;
  description: string | null;
  /** `soft_declined`, `hard_declined`, `processing_error`... */
  state: string | null;
}

/** WooCommerce Subscriptions' mark on a renewal order whose payment failed (WC_Subscription::RENEWAL_FAILED_META_KEY). */
export const RENEWAL_FAILED_META = '_failed_renewal_order';

/**
 * What a failed renewal does to its subscription (`WC_Subscription::payment_failed_for_related_order()`):
 * pending cancellation ends it, an active or pending one goes on hold, any other is left as it is.
 */
export function subscriptionStatusAfterFailedRenewal(status: string): string {
  if (status === 'pending-cancel') return 'cancelled';
  return ['active', 'pending'].includes(status) ? 'on-hold' : status;
}

/**
 * SPEC 3.6: a payment that ends FAILED sets its order to failed, with a note. With the companion plugin
 * WooCommerce does it (`update_status('failed')`), and for a renewal Subscriptions' own listener fails
 * the subscription, with every consequence of theirs. Without it, the rows are written here as they
 * would write them: the order failed; for a renewal the order marked, the subscription noted and put on
 * hold, or cancelled when it was pending cancellation. Either way the schedule-retry event then fires
 * while the subscription is (or is about to be) on hold: as Subscriptions' retry rules apply only to an
 * on-hold subscription, a cancelled one is never charged again.
 */
export class FailedPaymentHandling {
  constructor(
    private readonly orders: OrderWriteRepository,
    private readonly changes: WooCommerceChangeRepository,
    private readonly events: PaymentEvents,
    private readonly payments: Pick<PaymentRepository, 'meta'>,
  ) {}

  async apply(db: Executor, payment: PaymentRecord, failure: PaymentFailure, settings: ShopSettings, now: Date): Promise<string> {
    if (payment.orderId === null) return 'no linked order';
    const order = await this.orders.lockStatus(db, payment.orderId, settings);
    if (!order || order.type !== 'shop_order') return `order ${payment.orderId} not found`;

    const words = orderNoteWords(settings);
    const note = words.paymentFailed({ reference: payment.externalId, provider: payment.provider, decline: failure });
    const subscriptionId = Number(await this.orders.getMeta(db, payment.orderId, '_subscription_renewal', settings));
    let subscriptionStatus: string | null;
    if (settings.companion) {
      await this.changes.enqueue(db, { op: 'order_payment_failed', objectId: payment.orderId, payload: { note } }, settings, now);
      if (!subscriptionId) return 'order failed (handed to WooCommerce)';
      // A renewal that had already failed fails no further: WooCommerce sees no new transition.
      const subscription = await this.orders.lockStatus(db, subscriptionId, settings);
      subscriptionStatus = subscription?.type !== 'shop_subscription' ? null
        : order.status === 'failed' ? subscription.status : subscriptionStatusAfterFailedRenewal(subscription.status);
    } else {
      if (order.status !== 'failed') {
        await this.orders.setStatus(db, payment.orderId, 'failed', settings, now);
        await this.orders.addNote(db, payment.orderId, statusChangeNote('order', order.status, 'failed'), settings, now);
      }
      await this.orders.addNote(db, payment.orderId, note, settings, now);
      if (!subscriptionId) return 'order failed';
      await this.orders.setMeta(db, payment.orderId, RENEWAL_FAILED_META, 'yes', settings);
      subscriptionStatus = await this.failRenewal(db, subscriptionId, settings, now);
      if (subscriptionStatus !== 'on-hold') {
        await this.orders.addNote(db, payment.orderId, words.noRetry({ subscriptionStatus }), settings, now);
      }
    }
    if (subscriptionStatus !== 'on-hold') return `renewal order failed; no retry, the subscription is ${subscriptionStatus ?? 'gone'}`;
    await this.planNextAttempt(db, { payment, failure, orderId: payment.orderId, subscriptionId, settings, now });
    return 'renewal order failed';
  }

  /** Fires the schedule-retry event: dunning decides by the decline's reason what comes next. */
  async planNextAttempt(db: Executor, input: { payment: PaymentRecord; failure: PaymentFailure; orderId: number; subscriptionId: number; settings: ShopSettings; now: Date }): Promise<void> {
    const { payment, failure } = input;
    const meta = await this.payments.meta(payment.id, db);
    await this.events.emit(SCHEDULE_RETRY, {
      orderId: input.orderId, subscriptionId: input.subscriptionId, paymentId: payment.id, provider: payment.provider,
      failure: { code: failure.code, state: failure.state },
      // A payment the provider told no amount of (rare) still opens its case; the report then counts it at 0.
      amountMinor: payment.amountMinor ?? 0, currency: payment.currency ?? '',
      chargeKey: chargeMethodKey(payment.provider, meta), newMethodKey: newMethodKey(payment.provider, meta, input.subscriptionId),
      settings: input.settings, now: input.now,
    }, db);
  }

  /** The subscription's status after the failure, or null when it is gone. */
  private async failRenewal(db: Executor, subscriptionId: number, settings: ShopSettings, now: Date): Promise<string | null> {
    const subscription = await this.orders.lockStatus(db, subscriptionId, settings);
    if (!subscription || subscription.type !== 'shop_subscription') return null;
    await this.orders.addNote(db, subscriptionId, 'Payment failed.', settings, now);
    const next = subscriptionStatusAfterFailedRenewal(subscription.status);
    if (next === subscription.status) return next;
    await this.orders.setStatus(db, subscriptionId, next, settings, now);
    await this.orders.addNote(db, subscriptionId, statusChangeNote('subscription', subscription.status, next), settings, now);
    if (next === 'on-hold') {
      await this.orders.incrementMeta(db, subscriptionId, SUSPENSION_COUNT_META, settings);
    } else {
      // Cancelling ends the subscription now and clears what was still to come, as WCS does.
      const nowGmt = gmtDateTime(now);
      if (!Number(await this.orders.getMeta(db, subscriptionId, '_schedule_cancelled', settings))) {
        await this.orders.setMeta(db, subscriptionId, '_schedule_cancelled', nowGmt, settings);
      }
      await this.orders.setMeta(db, subscriptionId, '_schedule_end', nowGmt, settings);
      await this.orders.setMeta(db, subscriptionId, '_schedule_next_payment', '0', settings);
      await this.orders.setMeta(db, subscriptionId, '_schedule_trial_end', '0', settings);
    }
    return next;
  }
}
