import type { Provider } from '../../entities';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { Executor } from '../data-access/transaction';
import type { ShopSubscription } from '../shop/subscription';
import { renewalWantsMoney, type RenewalWants } from './renewal-wants-money';

/** The renewal a charge is for, as the rule needs it named. */
export interface RenewalOfCharge {
  orderId: number;
  subscriptionId: number;
  provider: Provider;
}

/**
 * Reads what renewal-wants-money.ts decides on, from the shop's tables and the renewal's dunning case, and asks the
 * rule. `locked`: inside a transaction that is about to open or send a charge, the order's and the case's rows are
 * locked (as the ledger's opening locks them), so a payment, Stop dunning or the deadline moving them at the same
 * moment either comes first and is seen, or waits for this transaction.
 */
export class RenewalFacts {
  constructor(private readonly deps: {
    orderWrites: Pick<OrderWriteRepository, 'lockStatus' | 'status'>;
    subscriptions: Pick<SubscriptionRepository, 'find'>;
    cases: Pick<DunningCaseRepository, 'lockCaseOfOrder' | 'ofOrderUnlocked'>;
  }) {}

  async wants(db: Executor, renewal: RenewalOfCharge, settings: ShopSettings, how: { locked: boolean; subscription?: ShopSubscription | null }): Promise<RenewalWants> {
    const order = how.locked ? await this.deps.orderWrites.lockStatus(db, renewal.orderId, settings) : await this.deps.orderWrites.status(db, renewal.orderId, settings);
    const subscription = how.subscription !== undefined ? how.subscription : await this.deps.subscriptions.find(renewal.subscriptionId, settings, db);
    const dunningCase = how.locked ? await this.deps.cases.lockCaseOfOrder(db, renewal.orderId) : await this.deps.cases.ofOrderUnlocked(renewal.orderId, db);
    return renewalWantsMoney({
      order: order ? { status: order.status } : null,
      subscription: subscription ? { status: subscription.status, paymentMethod: subscription.paymentMethod } : null,
      dunningCase: dunningCase ? { status: dunningCase.status } : null,
      provider: renewal.provider,
    });
  }
}
