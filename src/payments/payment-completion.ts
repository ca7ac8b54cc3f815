import type { Executor, OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { statusChangeNote } from '../shop/status-labels';
import { SUSPENSION_COUNT_META } from '../shop/subscription';
import { RENEWAL_FAILED_META } from './failed-payment-handling';

/**
 * A renewal paid after all (a dunning retry that went through): what WooCommerce's
 * `payment_complete()` and WooCommerce Subscriptions' `payment_complete_for_order()` do: the order
 * is paid and processing, the failed-renewal mark goes, and the subscription is active again with
 * its suspension count reset.
 */
export async function completeRenewalPayment(orders: OrderWriteRepository, db: Executor, input: { orderId: number; reference: string; settings: ShopSettings; now: Date }): Promise<void> {
  const { orderId, settings, now } = input;
  const order = await orders.lockStatus(db, orderId, settings);
  if (!order) return;
  if (order.status !== 'processing' && order.status !== 'completed') {
    await orders.setStatus(db, orderId, 'processing', settings, now);
    await orders.addNote(db, orderId, statusChangeNote('order', order.status, 'processing'), settings, now);
  }
  await orders.setDatePaid(db, orderId, now, settings);
  await orders.addNote(db, orderId, `Payment ${input.reference} completed.`, settings, now);
  await orders.deleteMeta(db, orderId, RENEWAL_FAILED_META, settings);

  const subscriptionId = Number(await orders.getMeta(db, orderId, '_subscription_renewal', settings));
  if (!subscriptionId) return;
  const subscription = await orders.lockStatus(db, subscriptionId, settings);
  if (!subscription || subscription.type !== 'shop_subscription') return;
  await orders.setMeta(db, subscriptionId, SUSPENSION_COUNT_META, '0', settings);
  await orders.addNote(db, subscriptionId, 'Payment status marked complete.', settings, now);
  if (subscription.status === 'on-hold' || subscription.status === 'pending') {
    await orders.setStatus(db, subscriptionId, 'active', settings, now);
    await orders.addNote(db, subscriptionId, statusChangeNote('subscription', subscription.status, 'active'), settings, now);
  }
}
