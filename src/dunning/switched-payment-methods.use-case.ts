import type { DunningCaseRecord, DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { Provider } from '../../entities';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { ShopSubscription } from '../shop/subscription';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import { chargingProvider } from './charge-rules/charge-rules';
import { subscriptionPaymentMethod, type Dunning } from './dunning';

/** Open cases looked at per pass (one meta read each; the provider is asked only about a method that changed). */
const PER_PASS = 500;
/**
 * The dunning loop runs every few seconds; a switch needs finding within a minute, so this pass, which reads every
 * open case, runs at most this often.
 */
const PASS_SPACING_MS = 15_000;

/**
 * The customer who acted is never lost. A failed renewal's subscription may come to name another payment method
 * without any event the service hears, or before it: the card gateway's plugin switches `_reepay_token` when the
 * customer's browser comes back (after the gateway's `customer_payment_method_added`, or with no event at all for a
 * card already saved); the wallet's plugin switches `_agreement_id`. Each pass of the worker, and before a case's
 * deadline cancels its subscription, the subscription's method is compared with the one its case saw last: another,
 * active at its provider, is charged once, at once, within the caps.
 */
export class SwitchedPaymentMethods {
  constructor(private readonly deps: {
    cases: DunningCaseRepository;
    orders: OrderWriteRepository;
    subscriptions: Pick<SubscriptionRepository, 'find' | 'findMany'>;
    dunning: Pick<Dunning, 'chargeWithNewMethod'>;
    settings: ShopSettingsRepository;
    cardGateway: CardGatewayClient;
    mobileWallet: MobileWalletClient;
    log: Logger;
    clock: () => Date;
  }) {}

  private lastPassAt = -Infinity;

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
    if (!method || method === found.paymentMethodSeen) return false;
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
