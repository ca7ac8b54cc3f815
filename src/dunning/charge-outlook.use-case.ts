import type { Provider } from '../../entities';
import type { OrderRepository } from '../data-access/order-repository';
import type { PaymentRepository } from '../data-access/payment-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import { CHARGEABLE_ORDER_STATUSES } from '../payments/charge-ledger';
import { chargingProvider, type ProviderChargeRules } from './charge-rules/charge-rules';
import { chargeMethodKey } from './dunning';
import type { ChargeUnderWay } from './staff-actions';

/** What a charge for a case would meet now (see `ChargeOutlookOfCase.outlook`). */
export interface ChargeOutlook {
  orderAwaitsPayment: boolean;
  subscriptionOnHold: boolean;
  /** What the charge would be made on, for the caps; null when unknown. */
  chargeKey: string | null;
  hasPaymentMethod: boolean;
  underWay: ChargeUnderWay | null;
}

/**
 * Staff's outlook on a failed renewal (what the story says can happen next, and what staff may do now): what an
 * attempt for the case would meet, read by the same provider rules an attempt follows. Whether the order and the
 * subscription still want a charge, what it would charge, and a charge already under way; the provider is asked
 * only when everything else allows a charge.
 */
export class ChargeOutlookOfCase {
  constructor(private readonly deps: {
    payments: PaymentRepository;
    orders: OrderRepository;
    subscriptions: SubscriptionRepository;
    settings: ShopSettingsRepository;
    chargeRules: Record<Provider, ProviderChargeRules>;
  }) {}

  async outlook(found: { orderId: number; subscriptionId: number; paymentId: number }, now: Date): Promise<ChargeOutlook> {
    const settings = await this.deps.settings.current();
    const [original, order, subscription] = await Promise.all([
      this.deps.payments.findById(found.paymentId), this.deps.orders.findById(found.orderId, settings), this.deps.subscriptions.find(found.subscriptionId, settings),
    ]);
    const orderAwaitsPayment = Boolean(original && order && CHARGEABLE_ORDER_STATUSES.includes(order.status));
    const subscriptionOnHold = subscription?.status === 'on-hold';
    const outlook: ChargeOutlook = { orderAwaitsPayment, subscriptionOnHold, chargeKey: null, hasPaymentMethod: false, underWay: null };
    if (!original || !order) return outlook;
    // As the attempt itself charges (RenewalAttempt): through the provider the subscription names now.
    const provider = chargingProvider(subscription, original.provider);
    const rules = this.deps.chargeRules[provider];
    const meta = provider === original.provider ? await this.deps.payments.meta(original.id) : {};
    const target = await rules.target({ plan: 'staff', subscriptionId: found.subscriptionId }, original, meta, settings);
    outlook.chargeKey = chargeMethodKey(provider, target);
    outlook.hasPaymentMethod = rules.hasPaymentMethod(target);
    if (!orderAwaitsPayment || !subscriptionOnHold || !outlook.hasPaymentMethod) return outlook;
    const still = await rules.underWay(order, original, meta, settings, now);
    outlook.underWay = still === null ? null : still.kind === 'wait' ? { kind: still.cause, until: still.until } : { kind: 'unreadable' };
    return outlook;
  }
}
