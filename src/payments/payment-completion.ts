import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { Executor } from '../data-access/transaction';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import { statusChangeNote } from '../shop/status-labels';
import { orderNoteWords } from '../shop/order-note-words';
import { endHasPassed, SUSPENSION_COUNT_META } from '../shop/subscription';
import type { SubscriptionActivation } from '../subscriptions/subscription-activation';
import { RENEWAL_FAILED_META } from './failed-payment-handling';
import type { PluginPaymentMetas } from './plugin-payment-metas';

/** Subscriptions' own note (`payment_complete_for_order()`), kept as it writes it. */
const PAYMENT_COMPLETE_NOTE = 'Payment status marked complete.';

/** The statuses WooCommerce's `payment_complete()` moves to processing (`woocommerce_valid_order_statuses_for_payment_complete`). */
const AWAITING_PAYMENT = ['on-hold', 'pending', 'failed', 'cancelled'];

/**
 * A renewal paid after all: a dunning attempt that went through, or the failed payment itself settled
 * later, or a dunning attempt the provider confirmed by webhook before its own answer arrived. Whichever
 * payment of a renewal marked as failed goes through, it does what WooCommerce's `payment_complete()`
 * and WooCommerce Subscriptions' `payment_complete_for_order()` do. An order still awaiting payment
 * becomes processing and paid, and loses its failed-renewal mark. Its subscription's suspension count
 * is reset, and an on-hold or pending subscription becomes active the way `update_status('active')`
 * does it, so a next payment that has passed moves on by billing periods and its renewal is scheduled
 * again; without that the subscription would never renew after a late payment. An order already paid
 * (or refunded) another way is left as it is, with a note, as `payment_complete()` leaves it.
 */
export class RenewalPaymentCompletion {
  constructor(
    private readonly orders: OrderWriteRepository,
    private readonly subscriptions: SubscriptionRepository,
    private readonly activation: SubscriptionActivation,
  ) {}

  /** Returns what was done, for the payment's processing note; null when the order is not a renewal whose payment failed. */
  async complete(db: Executor, input: { orderId: number; reference: string; settings: ShopSettings; now: Date; paidAt?: Date | null; meta?: PluginPaymentMetas }): Promise<string | null> {
    const { orderId, settings, now } = input;
    const paidAt = input.paidAt ?? now;
    const words = orderNoteWords(settings);
    if ((await this.orders.getMeta(db, orderId, RENEWAL_FAILED_META, settings)) !== 'yes') return null;
    const order = await this.orders.lockStatus(db, orderId, settings);
    if (!order) return `order ${orderId} not found`;
    // The metas the provider's plugin reads to find the money (plugin-payment-metas.ts), as the companion sets them:
    // whatever the order's status, so a second capture names the later payment for the refund.
    if (input.meta) {
      for (const [key, value] of Object.entries(input.meta.set)) await this.orders.setMeta(db, orderId, key, value, settings);
      for (const key of input.meta.delete) await this.orders.deleteMeta(db, orderId, key, settings);
    }
    if (!AWAITING_PAYMENT.includes(order.status)) {
      await this.orders.addNote(db, orderId, words.paidOrderLeft({ reference: input.reference, orderStatus: order.status }), settings, now);
      return `order already ${order.status}`;
    }
    await this.orders.setStatus(db, orderId, 'processing', settings, now);
    await this.orders.addNote(db, orderId, statusChangeNote('order', order.status, 'processing'), settings, now);
    await this.orders.setDatePaid(db, orderId, paidAt, settings);
    await this.orders.addNote(db, orderId, words.renewalPaid({ reference: input.reference, at: input.paidAt ?? null }), settings, now);
    await this.orders.deleteMeta(db, orderId, RENEWAL_FAILED_META, settings);

    const subscriptionId = Number(await this.orders.getMeta(db, orderId, '_subscription_renewal', settings));
    if (!subscriptionId) return 'order paid';
    const subscription = await this.subscriptions.lockForChange(db, subscriptionId, settings);
    if (!subscription) return 'order paid';
    await this.orders.setMeta(db, subscriptionId, SUSPENSION_COUNT_META, '0', settings);
    if ((subscription.status === 'on-hold' || subscription.status === 'pending') && !endHasPassed(subscription, now)) {
      await this.activation.activate(db, subscription, settings, now, { reason: PAYMENT_COMPLETE_NOTE });
      return 'renewal paid; subscription active';
    }
    await this.orders.addNote(db, subscriptionId, PAYMENT_COMPLETE_NOTE, settings, now);
    return `renewal paid; subscription left ${subscription.status}`;
  }
}
