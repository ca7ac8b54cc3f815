import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { RetryRecord, RetryRepository } from '../data-access/retry-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import { toMinorUnits } from '../shared/currency';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { FailedPaymentHandling, PaymentFailure } from '../payments/failed-payment-handling';
import type { PaymentRecorder } from '../payments/payment-recorder';
import { displayedOrderNumber, type ShopOrder } from '../shop/order';
import { gmtDateTime } from '../shop/shop-time';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import { capsInWords, type ChargeCaps } from './decline-policy';
import type { UnwantedCharges } from '../payments/unwanted-charges';
import type { ProviderRefusalRepository } from '../data-access/provider-refusal-repository';
import { chargeMethodKey, earliestChargeAllowed } from './dunning';
import type { ChargeAnswer, ChargeLedger } from '../payments/charge-ledger';
import { renewalWantsMoney } from '../payments/renewal-wants-money';
import type { ChargeRecord } from '../data-access/charge-ledger-repository';
import type { ChargeRequester, Provider } from '../../entities';
import type { ChargePayments } from '../payments/charge-payments';
import { chargingProvider, PROVIDER_DOWN_WAIT_MS, type ChargeResult, type ChargeTarget, type ProviderChargeRules, type Refusal } from './charge-rules/charge-rules';



/**
 * What became of one attempt. `postponed`: it runs again at `until` (the provider could not be reached, a charge
 * is under way, a cap); `held`: the provider refused the service's own request, asked again later; `canceled`:
 * nothing to charge any more (the order or subscription moved on, or the failed payment was taken meanwhile).
 */
export type AttemptOutcome =
  | { kind: 'paid'; externalId: string }
  | { kind: 'pending'; externalId: string }
  | { kind: 'declined'; externalId: string; failure: PaymentFailure }
  | { kind: 'held'; message: string }
  | { kind: 'postponed'; cause: 'unreachable' | 'under_way' | 'caps' | 'error'; until: Date; why: string }
  | { kind: 'canceled'; cause: 'order_moved_on' | 'subscription_moved_on' | 'paid_meanwhile'; why: string };

/**
 * `planned`: an attempt of the plan, made when due. `staff`: one staff asked for now; what would postpone a
 * planned attempt (a charge under way, a cap) cancels it instead, as staff are told and nothing waits on their behalf.
 */
export type AttemptMode = 'planned' | 'staff';


/** Wait before a held attempt (its request refused for a reason of the service's own) asks again. */
const REFUSED_WAIT_MS = 10 * 60_000;

/**
 * One dunning attempt (the plan's, staff's Charge now, a new payment method's): a new recurring charge through
 * the payment's provider, following that provider's rules (charge-rules/), opened in the charge ledger before the
 * provider is asked, with the attempt's idempotency key so a repeat after a crash or timeout cannot charge twice. A decline (the provider answers 200 with state failed) runs the failed
 * payment handling at once, which plans the next attempt; a success completes the renewal. As in
 * WooCommerce Subscriptions, an attempt is charged only while the order still awaits payment and its
 * subscription is still on hold.
 */
export class RenewalAttempt {
  constructor(private readonly deps: {
    retries: RetryRepository;
    /** Read only: the payment rows are written by payments (ChargePayments, the recorder). */
    payments: PaymentRepository;
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    recorder: PaymentRecorder;
    failedPayments: FailedPaymentHandling;
    subscriptions: SubscriptionRepository;
    settings: ShopSettingsRepository;
    log: Logger;
    clock: () => Date;
    cases: DunningCaseRepository;
    caps: ChargeCaps;
    unwantedCharges: Pick<UnwantedCharges, 'cancelOpenOfOrder'>;
    refusals: ProviderRefusalRepository;
    ledger: Pick<ChargeLedger, 'open' | 'send' | 'closeIfFinal'>;
    chargePayments: Pick<ChargePayments, 'paymentOfAnswer'>;
    /** Each provider's rules for a charge (charge-rules/). */
    chargeRules: Record<Provider, ProviderChargeRules>;
  }) {}

  /**
   * One attempt staff asked for, made now by the same steps as a planned one (`retry`: taken already, plan
   * `staff`). Something unexpected puts it back for the worker, with its key, and is thrown to the caller.
   */
  async attemptNow(retry: RetryRecord): Promise<AttemptOutcome> {
    try {
      return await this.attempt(retry, 'staff');
    } catch (error) {
      await this.postponeOnError(retry, error);
      throw error;
    }
  }

  /** Anything unexpected: the attempt goes back to the plan rather than being lost. */
  async postponeOnError(retry: RetryRecord, error: unknown): Promise<void> {
    await this.deps.retries.postpone(retry.id, new Date(this.deps.clock().getTime() + PROVIDER_DOWN_WAIT_MS), `error: ${error instanceof Error ? error.message : String(error)}`, this.deps.clock());
    this.deps.log.error('retry_attempt_failed', { retryId: retry.id, error });
  }

  async attempt(retry: RetryRecord, mode: AttemptMode): Promise<AttemptOutcome> {
    const { retries, payments, orders, orderWrites, log, clock } = this.deps;
    const settings = await this.deps.settings.current();
    const original = await payments.findById(retry.paymentId);
    const order = await orders.findById(retry.orderId, settings);
    const now = clock();
    // As WooCommerce Subscriptions does: a retry is dropped when the order was paid or changed meanwhile,
    // or its subscription is no longer on hold (cancelled, or reactivated another way).
    if (!original || !order) return this.orderMovedOn(retry, order ? order.status : null, 'order or payment is gone', now);
    const { subscriptionId } = retry;
    const subscription = await this.deps.subscriptions.find(subscriptionId, settings);
    // The one rule (renewal-wants-money.ts), on the provider the subscription names now; the case is asked under its
    // lock as the charge opens.
    const wants = renewalWantsMoney({
      order, subscription, dunningCase: null, provider: subscription ? chargingProvider(subscription, original.provider) : original.provider,
    });
    if (!wants.wants && wants.reason.startsWith('order_')) return this.orderMovedOn(retry, order.status, `order is ${order.status}`, now);
    if (!wants.wants || subscription?.status !== 'on-hold') {
      const why = subscription ? `subscription is ${subscription.status}` : 'subscription is gone';
      // Ended: the renewal is lost. Active again (staff, or WooCommerce not yet told of the failure): the
      // attempt is dropped as Subscriptions drops it, and the renewal's case is left to what comes next.
      if (!wants.wants) await this.endCase(retry, why, 'lost', now);
      else await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
      return { kind: 'canceled', cause: 'subscription_moved_on', why };
    }

    // Read once: the charge and the payment record of this attempt both use them.
    const originalMeta = await payments.meta(original.id);
    // The failed payment may have been paid since, its webhook late or lost: then there is nothing to charge.
    const meanwhile = await this.deps.chargeRules[original.provider].stateAtProvider(original, originalMeta);
    if (meanwhile.kind === 'refused') return this.hold(retry, original.provider, order.id, meanwhile, now);
    if (meanwhile.kind === 'unreachable') return this.postpone(retry, 'unreachable', new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS), meanwhile.message, now);
    if (meanwhile.kind === 'paid') {
      return orderWrites.transaction(async (db) => {
        const at = clock();
        const payment = await payments.lock(db, original.provider, original.externalId);
        if (payment) await this.deps.recorder.move(db, payment, meanwhile.status, settings, at);
        const why = `payment ${original.externalId} is ${meanwhile.status} at the provider; nothing charged`;
        await retries.finish(db, retry.id, 'CANCELED', why, at);
        return { kind: 'canceled' as const, cause: 'paid_meanwhile' as const, why };
      });
    }
    // Through the provider the subscription names now (chargingProvider). A charge still open on a provider it left is
    // withdrawn by the settle pass; until that one is closed, the ledger's one open charge per renewal holds this back.
    const provider = chargingProvider(subscription, original.provider);
    const rules = this.deps.chargeRules[provider];
    // Whatever charge for this renewal is already under way, ours or the shop's: nothing is charged on top.
    const still = await rules.underWay(order, original, originalMeta, settings, now);
    if (still?.kind === 'refused') return this.hold(retry, provider, order.id, still, now);
    if (still) {
      if (mode === 'staff') return this.dropStaffAttempt(retry, 'under_way', still.until, still.why, now);
      return this.postpone(retry, 'under_way', still.until, still.why, now);
    }
    const target = await rules.target(retry, original, provider === original.provider ? originalMeta : {}, settings);
    const chargeKey = chargeMethodKey(provider, target);
    const minor = toMinorUnits(provider, order.currency, order.total);
    if (!minor.ok) return this.hold(retry, provider, order.id, { kind: 'refused', status: null, code: minor.kind, message: `renewal order ${order.id} in ${order.currency}: ${minor.message}` }, now);
    const amount = minor.minor;
    const number = displayedOrderNumber(order, settings.orderNumbers);
    const requestedBy: ChargeRequester = retry.plan === 'staff' ? 'staff' : retry.plan === 'new_method' ? 'new_method' : 'plan';
    const planned = await rules.newCharge({
      retry, original, target, order, number, settings, key: await this.requestKey(retry),
      base: { orderId: order.id, subscriptionId: retry.subscriptionId, provider, amountMinor: amount, currency: order.currency, requestedBy, retryId: retry.id },
    });
    if (planned.kind !== 'charge') {
      return this.recordAnswer(retry, original, provider, order, settings, target, chargeKey, amount, planned.result, null);
    }
    // One renewal, one payment: the charge is written, and the renewal's one slot claimed, before the provider is asked.
    const open = () => this.deps.ledger.open(planned.charge, settings, async (db) => {
      // The caps under the case's lock, so that two attempts of one renewal count each other's charges.
      await this.deps.cases.lockCaseOfOrder(db, order.id);
      const allowed = await earliestChargeAllowed(this.deps.cases, db, chargeKey, now, now, this.deps.caps);
      return allowed.getTime() > now.getTime() ? allowed : null;
    });
    let opened = await open();
    // The open charge may have ended at the provider with nobody telling (a lost webhook): its record decides.
    if (opened.kind === 'under_way' && await this.deps.ledger.closeIfFinal(opened.charge)) opened = await open();
    switch (opened.kind) {
      case 'order_moved_on':
        return this.orderMovedOn(retry, opened.status, `order is ${opened.status ?? 'gone'}`, now);
      case 'unwanted': {
        // Between this attempt's first look and the charge's opening, the subscription ended or the case closed.
        const why = `the renewal wants no money any more (${opened.reason}); nothing charged`;
        if (opened.reason.startsWith('subscription_')) await this.endCase(retry, why, 'lost', now);
        else await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
        return { kind: 'canceled', cause: 'subscription_moved_on', why };
      }
      case 'guarded': {
        const why = `charge caps: ${capsInWords(this.deps.caps)}; next at ${gmtDateTime(opened.refusal)} UTC`;
        if (mode === 'staff') return this.dropStaffAttempt(retry, 'caps', opened.refusal, why, now);
        return this.postpone(retry, 'caps', opened.refusal, why, now);
      }
      case 'taken': {
        const why = `${opened.charge ? `charge ${opened.charge.externalId}` : 'a charge'} took the renewal's money; nothing charged`;
        await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
        return { kind: 'canceled', cause: 'paid_meanwhile', why };
      }
      case 'under_way': {
        const why = `charge ${opened.charge.externalId} (${opened.charge.requestedBy}) is open at ${opened.charge.provider}; nothing charged on top`;
        const until = new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS);
        if (mode === 'staff') return this.dropStaffAttempt(retry, 'under_way', until, why, now);
        return this.postpone(retry, 'under_way', until, why, now);
      }
      default:
        break;
    }
    const answer = await this.deps.ledger.send(opened.charge);
    if (answer.kind === 'withdrawn') {
      // Withdrawn between its opening and its request (dunning stopped, the renewal paid or cancelled): nothing was sent.
      const why = `charge ${answer.charge.externalId} withdrawn before it was sent (${answer.charge.cancelReason ?? 'unwanted'}); nothing charged`;
      if (answer.charge.cancelReason?.startsWith('subscription_')) await this.endCase(retry, why, 'lost', now);
      else await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
      return { kind: 'canceled', cause: 'order_moved_on', why };
    }
    return this.recordAnswer(retry, original, provider, order, settings, target, chargeKey, amount, resultOf(answer), opened.charge);
  }

  /** What the provider answered an attempt's charge, recorded: the payment, the caps, the attempt, the ledger. */
  private async recordAnswer(
    retry: RetryRecord, original: PaymentRecord, provider: Provider, order: ShopOrder, settings: ShopSettings, target: ChargeTarget, chargeKey: string | null,
    amount: number, answered: ChargeResult, charge: ChargeRecord | null,
  ): Promise<AttemptOutcome> {
    const { retries, orderWrites, clock } = this.deps;
    const { subscriptionId } = retry;
    const now = clock();
    // A decline of our own request, as the provider's rules read it (the wallet's refusal to create a charge above the agreement's maximum).
    const declined = answered.kind === 'declined' && charge ? await this.deps.chargeRules[provider].declineOfRequest?.(answered.failure, target) : undefined;
    const result: ChargeResult = declined && answered.kind === 'declined' ? { ...answered, failure: declined.failure } : answered;
    if (result.kind === 'unreachable') return this.postpone(retry, 'unreachable', new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS), result.message, now);
    if (result.kind === 'refused') return this.hold(retry, provider, order.id, result, now);
    await this.deps.refusals.resolve(retry.id, now);

    return orderWrites.transaction(async (db): Promise<AttemptOutcome> => {
      const at = clock();
      // Payments writes the answer's payment row and closes the ledger's charge on the provider's word.
      const payment = await this.deps.chargePayments.paymentOfAnswer(db, {
        provider, externalId: result.externalId, orderId: order.id, agreementId: provider === original.provider ? original.agreementId : null, amountMinor: amount, currency: order.currency,
        meta: {
          retry_of: String(original.id), retry_attempt: String(retry.attempt),
          // Who asked for the charge, for the story's ending: the customer's new method, a staff member's Charge now, or the plan.
          retry_reason: retry.plan === 'new_method' ? 'new_payment_method' : retry.plan === 'staff' ? 'staff_charge' : undefined,
          customer_handle: target.customer_handle, agreement_id: target.agreement_id, ...declined?.meta,
        },
        charge,
        closes: result.kind === 'declined' ? { state: 'DECLINED', result: `declined: ${result.failure.code ?? ''}` }
          : result.kind === 'paid' ? { state: 'TAKEN', result: result.status } : null,
      }, settings, at);
      if (chargeKey) await this.deps.cases.recordCharge(db, { methodKey: chargeKey, orderId: order.id, paymentId: payment.id, at });
      if (result.kind === 'declined') {
        await retries.finish(db, retry.id, 'FAILED', `declined: ${result.failure.code ?? ''} ${result.failure.state ?? ''}`.trim(), at);
        const moved = await this.deps.recorder.move(db, payment, 'FAILED', settings, at, { failure: result.failure });
        if (!moved.moved) {
          // The provider's webhook told of this decline first, while this attempt was still planned, so
          // nothing was planned then; the attempt has ended now, so the next one can be.
          await this.deps.failedPayments.planNextAttempt(db, { payment, failure: result.failure, orderId: order.id, subscriptionId, settings, now: at });
        }
        return { kind: 'declined', externalId: result.externalId, failure: result.failure };
      }
      if (result.kind === 'pending') {
        await retries.finish(db, retry.id, 'SUCCEEDED', `charge ${result.externalId} created; the provider confirms it by webhook`, at);
        return { kind: 'pending', externalId: result.externalId };
      }
      // The recorder completes the renewal: the payment is this attempt's (retry_of above).
      await this.deps.recorder.move(db, payment, result.status, settings, at, { providerTransaction: result.transaction });
      await retries.finish(db, retry.id, 'SUCCEEDED', `charge ${result.externalId} ${result.status}`, at);
      return { kind: 'paid', externalId: result.externalId };
    });
  }

  private async postpone(retry: RetryRecord, cause: 'unreachable' | 'under_way' | 'caps', until: Date, why: string, now: Date): Promise<AttemptOutcome> {
    await this.deps.retries.postpone(retry.id, until, why, now);
    if (cause === 'unreachable') this.deps.log.warn('retry_postponed', { retryId: retry.id, reason: why });
    else this.deps.log.info('retry_postponed', { retryId: retry.id, reason: why });
    return { kind: 'postponed', cause, until, why };
  }

  /** A staff attempt that may not charge now is not left waiting: staff are told, and the plan goes on as it was. */
  private async dropStaffAttempt(retry: RetryRecord, cause: 'under_way' | 'caps', until: Date, why: string, now: Date): Promise<AttemptOutcome> {
    await this.deps.retries.finish(this.deps.retries.pool, retry.id, 'CANCELED', `not charged now: ${why}`, now);
    return { kind: 'postponed', cause, until, why };
  }

  /**
   * Not the customer's decline: the provider refused the service's own request (a revoked key, a field). The
   * attempt is held (no cap used, no e-mail, the case stays open) and asked again until the cause is fixed;
   * the operator hears of it (log, metrics, alert, doctor).
   */
  private async hold(retry: RetryRecord, provider: Provider, orderId: number, refusal: Refusal, now: Date): Promise<AttemptOutcome> {
    const answer = `${refusal.status ?? ''}${refusal.code ? ` code ${refusal.code}` : ''} ${refusal.message}`.trim();
    const why = `held: ${provider} refused the request (${answer}); not a decline, the service's own request must be fixed`;
    await this.deps.refusals.record({ provider, retryId: retry.id, orderId, httpStatus: refusal.status, code: refusal.code, message: refusal.message }, now);
    await this.deps.retries.postpone(retry.id, new Date(now.getTime() + REFUSED_WAIT_MS), why, now);
    this.deps.log.error('provider_refused_request', { retryId: retry.id, orderId, provider, status: refusal.status, code: refusal.code, message: refusal.message });
    return { kind: 'held', message: answer };
  }

  /**
   * The renewal order no longer awaits payment (`status`, null when it is gone): the attempt is dropped, and so is its
   * dunning. Paid some other way (the shop's own checkout or gateway plugin): a charge of ours the provider would still
   * take for it is cancelled. Cancelled or gone: lost.
   */
  private async orderMovedOn(retry: RetryRecord, status: string | null, why: string, now: Date): Promise<AttemptOutcome> {
    const paid = status !== null && ['processing', 'completed', 'on-hold'].includes(status);
    await this.endCase(retry, why, paid ? 'shop_payment' : 'lost', now);
    if (paid) await this.deps.unwantedCharges.cancelOpenOfOrder(retry.orderId);
    return { kind: 'canceled', cause: 'order_moved_on', why };
  }

  /** The attempt is dropped, and so is its renewal's dunning: lost, or paid some way the service did not charge. */
  private async endCase(retry: RetryRecord, why: string, ending: 'lost' | 'shop_payment', now: Date): Promise<void> {
    await this.deps.orderWrites.transaction(async (db) => {
      await this.deps.retries.finish(db, retry.id, 'CANCELED', why, now);
      const found = await this.deps.cases.lockCaseOfOrder(db, retry.orderId);
      if (found?.status !== 'OPEN') return;
      if (ending === 'lost') await this.deps.cases.lose(db, found.id, now);
      else await this.deps.cases.recover(db, found.id, 'shop_payment', found.amountMinor, now);
    });
  }

  /**
   * The idempotency key of the attempt's request: its own, and after each refusal of the service's own a new
   * one. A refused request made nothing, but the providers keep their answer under its key (the wallet's 4xx
   * answers included; the same key with another body is 409), so the corrected request needs a key of its own.
   * The card gateway's handle stays the attempt's: one settled charge per handle.
   */
  private async requestKey(retry: RetryRecord): Promise<string> {
    const refused = await this.deps.refusals.countOfRetry(retry.id);
    return refused ? `${retry.idempotencyKey}-r${refused}` : retry.idempotencyKey;
  }

}

/** The ledger's answer to an attempt's charge, as the attempt records it. */
function resultOf(answer: Exclude<ChargeAnswer, { kind: 'withdrawn' }>): ChargeResult {
  const externalId = answer.charge.externalId;
  switch (answer.kind) {
    case 'paid': return { kind: 'paid', externalId, status: answer.status, transaction: answer.transaction };
    case 'pending': return { kind: 'pending', externalId };
    case 'declined': return { kind: 'declined', externalId, failure: answer.failure };
    // Cancelled at the provider before it was taken (staff at the provider, the gateway's own): not paid, a decline here.
    case 'cancelled': return { kind: 'declined', externalId, failure: { code: 'cancelled', description: 'the charge was cancelled at the provider', state: null } };
    case 'unreachable': return { kind: 'unreachable', message: answer.message };
    case 'refused': return { kind: 'refused', status: answer.status, code: answer.code, message: answer.message };
  }
}

