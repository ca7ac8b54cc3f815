import { Post, PostMeta, WpComment, WpCommentMeta, WpOption, WpUser, WpUserMeta } from './wordpress';
import { Agreement, MobileWalletRegistration, Payment, PaymentMeta, PaymentRetry, ReconcileCount, ReconcileItem, ReconcileState, Webhook, WorkerHeartbeat, DunningCase, ChargeAttempt, CardExpiryReminder, CardExpiryReminderPass, ProviderRefusal, DunningStaffAction, Charge, RenewalChargeSlot, PreRenewalCheck } from './payment-hub';
import { HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta, PaymentToken, PaymentTokenMeta, SubscriptionPaymentRetry } from './woocommerce';
import {
  CustomerContact, CustomerContactIndexState, RenewalDiscount, RenewalDiscountType, ScheduledAction, ScheduledActionGroup,
  SubscriptionCancellationReason, WooCommerceApiKey,
} from './staff';
import { WooCommerceChange } from './woocommerce-changes';

export * from './wordpress';
export * from './woocommerce';
export * from './payment-hub';
export * from './staff';
export * from './woocommerce-changes';

/** Every entity: WordPress's and WooCommerce's tables (read and written, never altered) and the service's own. */
export const shopEntities = [
  Post, PostMeta, WpOption, WpUser, WpUserMeta, WpComment, WpCommentMeta,
  OrderItem, OrderItemMeta, HposOrder, HposOrderAddress, HposOrderOperationalData, HposOrderMeta, SubscriptionPaymentRetry, PaymentToken, PaymentTokenMeta,
  Webhook, Payment, PaymentMeta, Agreement, PaymentRetry, MobileWalletRegistration, WorkerHeartbeat,
  ReconcileItem, ReconcileCount, ReconcileState, DunningCase, ChargeAttempt, CardExpiryReminder, CardExpiryReminderPass, ProviderRefusal, DunningStaffAction, Charge, RenewalChargeSlot, PreRenewalCheck,
  WooCommerceApiKey, ScheduledAction, ScheduledActionGroup,
  CustomerContact, CustomerContactIndexState, SubscriptionCancellationReason, RenewalDiscountType, RenewalDiscount, WooCommerceChange,
];
