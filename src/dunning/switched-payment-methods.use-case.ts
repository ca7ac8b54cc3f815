import type { DunningCaseRecord, DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { Provider } from '../../entities';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { ShopSubscription } from '../shop/subscription';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import type { OrderRepository } from '../data-access/order-repository';
import type { PaymentRepository } from '../data-access/payment-repository';
import { toMinorUnits } from '../shared/currency';
import { chargingProvider } from './charge-rules/charge-rules';
import { agreementTerms } from './charge-rules/mobile-wallet-charges';
import { waitsForAmountChange } from './decline-policy';
import { chargeMethodKey, subscriptionPaymentMethod, type Dunning } from './dunning';

/** Open cases looked at per pass (one meta read each; the provider is asked only about a method that changed). */
const PER_PASS = 500;
/**
 * The dunning loop runs every few seconds; a switch needs finding within a minute, so this pass, which reads every
 * open case, runs at most this often.
 */
const PASS_SPACING_MS = 15_000;
/**
 * How often the agreement of a renewal whose charge the wallet refused as above its maximum is read again: the
 * customer raises the maximum in the app after the e-mail, and the charge the service then makes is due days later;
 * the wallet allows 120 agreement reads a minute per agreement (reference 2.6, "Read limits").
 */
const AMOUNT_LOOK_SPACING_MS = 5 * 60_000;

/**
 * The customer who acted is never lost. A failed renewal's subscription may come to name another payment method
 * without any event the service hears, or before it: the card gateway's plugin switches `_reepay_token` when the
 * customer's browser comes back (after the gateway's `customer_payment_method_added`, or with no event at all for a
 * card already saved); the wallet's plugin switches `_agreement_id`. Each pass of the worker, and before a case's
 * deadline cancels its subscription, the subscription's method is compared with the one its case saw last: another,
 * active at its provider, is charged once, at once, within the caps.
 *
 * So is the customer who raised the maximum: a renewal whose charge the wallet refused to create as above the
 * agreement's maximum (decline-policy.ts, waitsForAmountChange) is charged once more on the same agreement when the
 * agreement's terms (its maximum, its price) differ from those at the refusal, or the renewal's amount does.
 */
export class SwitchedPaymentMethods {
  constructor(private readonly deps: {
    cases: DunningCaseRepository;
    orders: OrderWriteRepository;
    subscriptions: Pick<SubscriptionRepository, 'find' | 'findMany'>;
    dunning: Pick<Dunning, 'chargeWithNewMethod' | 'chargeAgainAfterChange'>;
    payments: Pick<PaymentRepository, 'findById' | 'meta' | 'setMeta'>;
    shopOrders: Pick<OrderRepository, 'findManyByIds'>;
    settings: ShopSettingsRepository;
    cardGateway: CardGatewayClient;
    mobileWallet: MobileWalletClient;
    log: Logger;
    clock: () => Date;
  }) {}

  private lastPassAt = -Infinity;
  /**
   * Of each wallet case asking the customer, in this process: the decline it was last seen with (its payment), whether
   * that one waits for a change of the agreement's terms, and when the agreement was read last (0: not yet). So a
   * pass reads the decline's meta once per decline, and the agreement at most every AMOUNT_LOOK_SPACING_MS.
   */
  private readonly amountLooks = new Map<number, { paymentId: number; waiting: boolean; lookedAt: number }>();

  async pass(): Promise<number> {
    const now = this.deps.clock().getTime();
    if (now - this.lastPassAt < PASS_SPACING_MS) return 0;
    this.lastPassAt = now;
    const open = await this.deps.cases.openCases(PER_PASS);
    if (!open.length) return 0;
    const settings = await this.deps.settings.current();
    // The cases' subscriptions in one read: the pass runs every few seconds over every open case.
    const subscriptions = await this.deps.subscriptions.findMany(open.map((found) => found.subscriptionId), settings);
    let charged = 0;
    for (const found of open) if (await this.check(found, settings, subscriptions.get(found.subscriptionId) ?? null)) charged += 1;
    return charged;
  }

  /**
   * True when the case's subscription names a new method, active at its provider, and a charge with it is planned.
   * The method is the one of the provider whose gateway the subscription names now: a customer who moved from the
   * wallet to a card (WooCommerce's change of payment method sets `_payment_method` and the card plugin's
   * `_reepay_token`) is charged on that card, as Subscriptions' own retries would charge it.
   */
  async check(found: DunningCaseRecord, settings: ShopSettings, read?: ShopSubscription | null): Promise<boolean> {
    const now = this.deps.clock();
    const subscription = read === undefined ? await this.deps.subscriptions.find(found.subscriptionId, settings) : read;
    const provider = chargingProvider(subscription, found.provider);
    const method = await subscriptionPaymentMethod(this.deps.orders, this.deps.cases.pool, found.subscriptionId, provider, settings);
    if (!method) return false;
    if (method === found.paymentMethodSeen) return provider === 'mobile_wallet' ? this.amountAllowedAgain(found, method, settings) : false;
    if (found.paymentMethodSeen === null) {
      // A case from before the service kept what it saw: this is its starting point, not a switch.
      await this.deps.cases.seeMethod(this.deps.cases.pool, found.id, method, now);
      return false;
    }
    if (!(await this.active(provider, method))) return false;
    const planned = await this.deps.orders.transaction(async (db) => {
      const locked = await this.deps.cases.lockCaseOfOrder(db, found.orderId);
      if (locked?.status !== 'OPEN' || locked.paymentMethodSeen === method) return false;
      // The caps are counted on the method's own key when it is charged (another provider's method: not the case's key).
      return this.deps.dunning.chargeWithNewMethod(db, locked, { methodKey: provider === found.provider ? found.methodKey : null, method, settings, now });
    });
    if (planned) this.deps.log.info('dunning_switched_payment_method', { orderId: found.orderId, subscriptionId: found.subscriptionId, provider, method, from: found.provider });
    return planned;
  }

  /**
   * True when the case waits for a change after the wallet refused its charge as above the agreement's maximum, the
   * agreement's terms or the renewal's amount have changed since, and one more charge on it is planned. Terms not
   * kept at the refusal (the wallet could not be read then) are kept from this first look.
   */
  private async amountAllowedAgain(found: DunningCaseRecord, agreementId: string, settings: ShopSettings): Promise<boolean> {
    if (found.provider !== 'mobile_wallet' || found.policy !== 'ask_customer') return false;
    const now = this.deps.clock();
    const seen = this.amountLooks.get(found.id);
    if (seen?.paymentId === found.paymentId && (!seen.waiting || Math.abs(now.getTime() - seen.lookedAt) < AMOUNT_LOOK_SPACING_MS)) return false;
    const meta = await this.deps.payments.meta(found.paymentId);
    // Charged again once already for this refusal (`charged_again_at`): what comes of that charge is its own decline.
    const waiting = waitsForAmountChange('mobile_wallet', { code: meta.failure_code ?? null, state: meta.failure_state ?? null })
      && meta.agreement_id === agreementId && !meta.charged_again_at;
    this.amountLooks.set(found.id, { paymentId: found.paymentId, waiting, lookedAt: now.getTime() });
    if (!waiting) return false;
    const [payment, [order]] = await Promise.all([this.deps.payments.findById(found.paymentId), this.deps.shopOrders.findManyByIds([found.orderId], settings)]);
    const read = await this.deps.mobileWallet.getAgreement(agreementId);
    // A stopped or expired agreement is the customer's to replace (a new agreement is a switch); unreadable: next look.
    if (!payment || !order || !read.ok || read.value.status !== 'ACTIVE') return false;
    const terms = agreementTerms(read.value);
    if (!meta.refused_agreement_terms) {
      await this.deps.payments.setMeta(this.deps.cases.pool, payment.id, { refused_agreement_terms: terms });
      return false;
    }
    const amount = toMinorUnits('mobile_wallet', order.currency, order.total);
    const changed = terms !== meta.refused_agreement_terms ? 'agreement' as const
      : amount.ok && payment.amountMinor !== null && amount.minor !== payment.amountMinor ? 'amount' as const : null;
    if (!changed) return false;
    const planned = await this.deps.orders.transaction(async (db) => {
      const locked = await this.deps.cases.lockCaseOfOrder(db, found.orderId);
      if (locked?.status !== 'OPEN' || locked.paymentId !== found.paymentId) return false;
      if (!(await this.deps.dunning.chargeAgainAfterChange(db, locked, { changed, chargeKey: chargeMethodKey('mobile_wallet', meta), settings, now }))) return false;
      await this.deps.payments.setMeta(db, payment.id, { charged_again_at: now.toISOString() });
      return true;
    });
    if (planned) {
      this.amountLooks.delete(found.id);
      this.deps.log.info('dunning_amount_allowed_again', { orderId: found.orderId, agreementId, changed });
    }
    return planned;
  }

  /** Whether the provider holds the method active (a card in state active, an ACTIVE agreement); unknown counts as not. */
  private async active(provider: Provider, method: string): Promise<boolean> {
    if (provider === 'card_gateway') {
      const read = await this.deps.cardGateway.getPaymentMethod(method);
      return read.ok && read.value.state === 'active';
    }
    const read = await this.deps.mobileWallet.getAgreement(method);
    return read.ok && read.value.status === 'ACTIVE';
  }
}
