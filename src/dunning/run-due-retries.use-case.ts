import crypto from 'node:crypto';
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
import type { CardGatewayClient, ProviderFailure } from '../payments/providers/card-gateway/client';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import { displayedOrderNumber, type ShopOrder } from '../shop/order';
import { gmtDateTime, gmtDateTimeMs } from '../shop/shop-time';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import { capsInWords, type ChargeCaps } from './decline-policy';
import type { UnwantedCharges } from '../payments/unwanted-charges';
import type { ProviderRefusalRepository } from '../data-access/provider-refusal-repository';
import { chargeMethodKey, earliestChargeAllowed, SUBSCRIPTION_CARD_META, subscriptionPaymentMethod } from './dunning';
import type { MobileWalletCharge } from '../payments/providers/mobile-wallet/client';
import type { ChargeUnderWay } from './staff-actions';
import { CHARGEABLE_ORDER_STATUSES, type ChargeAnswer, type ChargeLedger } from '../payments/charge-ledger';
import type { ChargeRecord, NewCharge } from '../data-access/charge-ledger-repository';
import type { ChargeRequester } from '../../entities';

const DAY_MS = 86_400_000;
/** Wallet charge statuses in which the wallet may still take the money: never charged again on top. */
const WALLET_STILL_TRYING = ['PENDING', 'DUE', 'PROCESSING', 'UNKNOWN'];

/**
 * When the wallet stops retrying a charge itself: it retries daily through `retryDays` days after `due`, and
 * its outcome is final after 00:00 UTC the next day. A charge without a readable due date is looked at
 * again in a day.
 */
export function walletRetryWindowEnd(charge: Pick<MobileWalletCharge, 'due' | 'retryDays'>, now: Date): Date {
  const due = charge.due ? Date.parse(`${charge.due.slice(0, 10)}T00:00:00Z`) : NaN;
  if (Number.isNaN(due)) return new Date(now.getTime() + DAY_MS);
  const end = new Date(due + ((charge.retryDays ?? 0) + 1) * DAY_MS);
  return end.getTime() > now.getTime() ? end : new Date(now.getTime() + DAY_MS);
}

/** Wait before trying an attempt again when the provider could not be reached (same idempotency key). */
const PROVIDER_DOWN_WAIT_MS = 5 * 60_000;

export interface RetryRunSummary {
  attempted: number;
  succeeded: number;
  failed: number;
  postponed: number;
  canceled: number;
}

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
type AttemptMode = 'planned' | 'staff';

const SUMMARY_KEY: Record<AttemptOutcome['kind'], keyof RetryRunSummary> = {
  paid: 'succeeded', pending: 'succeeded', declined: 'failed', held: 'postponed', postponed: 'postponed', canceled: 'canceled',
};


/** Wait before a held attempt (its request refused for a reason of the service's own) asks again. */
const REFUSED_WAIT_MS = 10 * 60_000;

/** An attempt's result from the provider, in the service's terms. */
type ChargeResult =
  | { kind: 'paid'; externalId: string; status: 'CAPTURED' | 'AUTHORIZED' }
  | { kind: 'pending'; externalId: string }
  | { kind: 'declined'; externalId: string; failure: PaymentFailure }
  | { kind: 'unreachable'; message: string }
  /** The provider refused the request itself (a 4xx that is not a decline): the service's fault, never the customer's. */
  | Refusal;


/**
 * The worker's dunning step: for each attempt that is due, a new recurring charge through the
 * payment's provider, with the attempt's idempotency key so a repeat after a crash or timeout
 * cannot charge twice. A decline (the provider answers 200 with state failed) runs the failed
 * payment handling at once, which plans the next attempt; a success completes the renewal. As in
 * WooCommerce Subscriptions, an attempt is charged only while the order still awaits payment and its
 * subscription is still on hold.
 */
export class RunDueRetries {
  constructor(private readonly deps: {
    retries: RetryRepository;
    payments: PaymentRepository;
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    recorder: PaymentRecorder;
    failedPayments: FailedPaymentHandling;
    subscriptions: SubscriptionRepository;
    settings: ShopSettingsRepository;
    cardGateway: CardGatewayClient;
    mobileWallet: MobileWalletClient;
    log: Logger;
    clock: () => Date;
    cases: DunningCaseRepository;
    caps: ChargeCaps;
    unwantedCharges: Pick<UnwantedCharges, 'cancelOpenOfOrder'>;
    refusals: ProviderRefusalRepository;
    ledger: Pick<ChargeLedger, 'open' | 'send' | 'closeIfFinal' | 'repository'>;
  }) {}

  async execute(limit = 20): Promise<RetryRunSummary> {
    const summary: RetryRunSummary = { attempted: 0, succeeded: 0, failed: 0, postponed: 0, canceled: 0 };
    const now = this.deps.clock();
    await this.deps.retries.releaseStale(600, now);
    for (const retry of await this.deps.retries.claimDue(now, limit)) {
      summary.attempted += 1;
      const outcome = await this.attempt(retry, 'planned').catch(async (error) => {
        await this.postponeOnError(retry, error);
        return { kind: 'postponed' as const };
      });
      summary[SUMMARY_KEY[outcome.kind]] += 1;
    }
    return summary;
  }

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
  private async postponeOnError(retry: RetryRecord, error: unknown): Promise<void> {
    await this.deps.retries.postpone(retry.id, new Date(this.deps.clock().getTime() + PROVIDER_DOWN_WAIT_MS), `error: ${error instanceof Error ? error.message : String(error)}`, this.deps.clock());
    this.deps.log.error('retry_attempt_failed', { retryId: retry.id, error });
  }

  /**
   * What an attempt for the order's case would meet now, read as an attempt reads it (for what staff may do):
   * whether the order and subscription still want it, what it would charge, and a charge already under way.
   * The provider is asked only when everything else allows a charge.
   */
  async chargeOutlook(found: { orderId: number; subscriptionId: number; paymentId: number }, now: Date): Promise<ChargeOutlook> {
    const settings = await this.deps.settings.current();
    const [original, order, subscription] = await Promise.all([
      this.deps.payments.findById(found.paymentId), this.deps.orders.findById(found.orderId, settings), this.deps.subscriptions.find(found.subscriptionId, settings),
    ]);
    const orderAwaitsPayment = Boolean(original && order && CHARGEABLE_ORDER_STATUSES.includes(order.status));
    const subscriptionOnHold = subscription?.status === 'on-hold';
    const outlook: ChargeOutlook = { orderAwaitsPayment, subscriptionOnHold, chargeKey: null, hasPaymentMethod: false, underWay: null };
    if (!original || !order) return outlook;
    const meta = await this.deps.payments.meta(original.id);
    const target = await this.chargeTarget({ plan: 'staff', subscriptionId: found.subscriptionId }, original, meta, settings);
    outlook.chargeKey = chargeMethodKey(original.provider, target);
    outlook.hasPaymentMethod = original.provider === 'card_gateway' ? Boolean(target.customer_handle || target.card) : Boolean(target.agreement_id);
    if (!orderAwaitsPayment || !subscriptionOnHold || !outlook.hasPaymentMethod) return outlook;
    const still = await this.chargeUnderWay(order, original, meta, settings, now);
    outlook.underWay = still === null ? null : still.kind === 'wait' ? { kind: still.cause, until: still.until } : { kind: 'unreadable' };
    return outlook;
  }

  private async attempt(retry: RetryRecord, mode: AttemptMode): Promise<AttemptOutcome> {
    const { retries, payments, orders, orderWrites, log, clock } = this.deps;
    const settings = await this.deps.settings.current();
    const original = await payments.findById(retry.paymentId);
    const order = await orders.findById(retry.orderId, settings);
    const now = clock();
    // As WooCommerce Subscriptions does: a retry is dropped when the order was paid or changed meanwhile,
    // or its subscription is no longer on hold (cancelled, or reactivated another way).
    if (!original || !order || !CHARGEABLE_ORDER_STATUSES.includes(order.status)) {
      return this.orderMovedOn(retry, order ? order.status : null, order ? `order is ${order.status}` : 'order or payment is gone', now);
    }
    const { subscriptionId } = retry;
    const subscription = await this.deps.subscriptions.find(subscriptionId, settings);
    if (subscription?.status !== 'on-hold') {
      const why = subscription ? `subscription is ${subscription.status}` : 'subscription is gone';
      // Ended: the renewal is lost. Active again (staff, or WooCommerce not yet told of the failure): the
      // attempt is dropped as Subscriptions drops it, and the renewal's case is left to what comes next.
      const ended = !subscription || ['cancelled', 'expired', 'trash'].includes(subscription.status);
      if (ended) await this.endCase(retry, why, 'lost', now);
      else await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
      return { kind: 'canceled', cause: 'subscription_moved_on', why };
    }

    // Read once: the charge and the payment record of this attempt both use them.
    const originalMeta = await payments.meta(original.id);
    // The failed payment may have been paid since, its webhook late or lost: then there is nothing to charge.
    const meanwhile = await this.stateAtProvider(original, originalMeta);
    if (meanwhile.kind === 'refused') return this.hold(retry, original, order.id, meanwhile, now);
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
    // Whatever charge for this renewal is already under way, ours or the shop's: nothing is charged on top.
    const still = await this.chargeUnderWay(order, original, originalMeta, settings, now);
    if (still?.kind === 'refused') return this.hold(retry, original, order.id, still, now);
    if (still) {
      if (mode === 'staff') return this.dropStaffAttempt(retry, 'under_way', still.until, still.why, now);
      return this.postpone(retry, 'under_way', still.until, still.why, now);
    }
    const target = await this.chargeTarget(retry, original, originalMeta, settings);
    const chargeKey = chargeMethodKey(original.provider, target);
    const minor = toMinorUnits(original.provider, order.currency, order.total);
    if (!minor.ok) return this.hold(retry, original, order.id, { kind: 'refused', status: null, code: minor.kind, message: `renewal order ${order.id} in ${order.currency}: ${minor.message}` }, now);
    const amount = minor.minor;
    const planned = await this.newCharge(retry, original, target, amount, order, settings);
    if (planned.kind !== 'charge') {
      return this.recordAnswer(retry, original, order, settings, target, chargeKey, amount, planned.result, null);
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
      const why = `charge ${answer.charge.externalId} withdrawn before it was sent; nothing charged`;
      await retries.finish(retries.pool, retry.id, 'CANCELED', why, now);
      return { kind: 'canceled', cause: 'order_moved_on', why };
    }
    return this.recordAnswer(retry, original, order, settings, target, chargeKey, amount, resultOf(answer), opened.charge);
  }

  /** What the provider answered an attempt's charge, recorded: the payment, the caps, the attempt, the ledger. */
  private async recordAnswer(
    retry: RetryRecord, original: PaymentRecord, order: ShopOrder, settings: ShopSettings, target: ChargeTarget, chargeKey: string | null, amount: number,
    result: ChargeResult, charge: ChargeRecord | null,
  ): Promise<AttemptOutcome> {
    const { retries, payments, orderWrites, clock } = this.deps;
    const { subscriptionId } = retry;
    const now = clock();
    if (result.kind === 'unreachable') return this.postpone(retry, 'unreachable', new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS), result.message, now);
    if (result.kind === 'refused') return this.hold(retry, original, order.id, result, now);
    await this.deps.refusals.resolve(retry.id, now);

    return orderWrites.transaction(async (db): Promise<AttemptOutcome> => {
      const at = clock();
      const { payment } = await payments.lockOrCreate(db, {
        provider: original.provider, externalId: result.externalId, orderId: order.id, agreementId: original.agreementId,
        amountMinor: amount, currency: order.currency,
      }, gmtDateTimeMs(at));
      // The order before the attempt's row, the order webhooks take them in (payment, order, retries),
      // so a webhook for another payment of this order cannot deadlock with this transaction.
      await orderWrites.lockStatus(db, order.id, settings);
      await payments.setMeta(db, payment.id, {
        retry_of: String(original.id), retry_attempt: String(retry.attempt),
        retry_reason: retry.plan === 'new_method' ? 'new_payment_method' : undefined,
        customer_handle: target.customer_handle, agreement_id: target.agreement_id,
      });
      if (chargeKey) await this.deps.cases.recordCharge(db, { methodKey: chargeKey, orderId: order.id, paymentId: payment.id, at });
      if (charge) {
        await this.deps.ledger.repository.attachPayment(db, charge.id, payment.id, at);
        if (result.kind === 'declined') await this.deps.ledger.repository.close(db, charge, 'DECLINED', `declined: ${result.failure.code ?? ''}`, at);
        if (result.kind === 'paid') await this.deps.ledger.repository.close(db, charge, 'TAKEN', `${result.status}`, at);
      }
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
      await this.deps.recorder.move(db, payment, result.status, settings, at);
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
  private async hold(retry: RetryRecord, original: PaymentRecord, orderId: number, refusal: Refusal, now: Date): Promise<AttemptOutcome> {
    const answer = `${refusal.status ?? ''}${refusal.code ? ` code ${refusal.code}` : ''} ${refusal.message}`.trim();
    const why = `held: ${original.provider} refused the request (${answer}); not a decline, the service's own request must be fixed`;
    await this.deps.refusals.record({ provider: original.provider, retryId: retry.id, orderId, httpStatus: refusal.status, code: refusal.code, message: refusal.message }, now);
    await this.deps.retries.postpone(retry.id, new Date(now.getTime() + REFUSED_WAIT_MS), why, now);
    this.deps.log.error('provider_refused_request', { retryId: retry.id, orderId, provider: original.provider, status: refusal.status, code: refusal.code, message: refusal.message });
    return { kind: 'held', message: answer };
  }

  /**
   * What the provider says now of the payment an attempt would replace: taken or reserved since it failed
   * (and nobody told us), still unpaid, or not known because the provider could not be asked (then no
   * charge is made either).
   */
  private async stateAtProvider(original: PaymentRecord, meta: Record<string, string>): Promise<
    { kind: 'paid'; status: 'CAPTURED' | 'AUTHORIZED' } | { kind: 'unpaid' } | { kind: 'unreachable'; message: string } | Refusal> {
    if (original.provider === 'card_gateway') {
      const result = await this.deps.cardGateway.getInvoice(original.externalId);
      if (!result.ok) return result.kind === 'not_found' ? { kind: 'unpaid' } : readProblem(`reading invoice ${original.externalId}`, result);
      if (result.value.state === 'settled') return { kind: 'paid', status: 'CAPTURED' };
      if (result.value.state === 'authorized') return { kind: 'paid', status: 'AUTHORIZED' };
      return { kind: 'unpaid' };
    }
    if (!meta.agreement_id) return { kind: 'unpaid' };
    const result = await this.deps.mobileWallet.getCharge(meta.agreement_id, original.externalId);
    if (!result.ok) return result.kind === 'not_found' ? { kind: 'unpaid' } : readProblem(`reading charge ${original.externalId}`, result);
    if (['CHARGED', 'PARTIALLY_CAPTURED'].includes(result.value.status)) return { kind: 'paid', status: 'CAPTURED' };
    if (result.value.status === 'RESERVED') return { kind: 'paid', status: 'AUTHORIZED' };
    return { kind: 'unpaid' };
  }

  /**
   * What an attempt charges: the failed payment's customer (the card gateway charges their newest active
   * card) or wallet agreement; after a new payment method, the subscription's newest active agreement.
   */
  private async chargeTarget(retry: Pick<RetryRecord, 'plan' | 'subscriptionId'>, original: PaymentRecord, meta: Record<string, string>, settings: ShopSettings): Promise<ChargeTarget> {
    if (original.provider === 'card_gateway') {
      // The card the subscription is set to (the gateway plugin's `_reepay_token`), not the customer's newest.
      const token = (await this.deps.orderWrites.getMeta(this.deps.cases.pool, retry.subscriptionId, SUBSCRIPTION_CARD_META, settings))?.trim();
      return { customer_handle: meta.customer_handle || undefined, card: token || undefined };
    }
    if (retry.plan === 'new_method') {
      // The agreement the subscription is switched to (the wallet plugin's `_agreement_id`), announced or not.
      const switched = await subscriptionPaymentMethod(this.deps.orderWrites, this.deps.cases.pool, retry.subscriptionId, 'mobile_wallet', settings);
      if (switched && switched !== meta.agreement_id) return { agreement_id: switched };
      const agreement = await this.deps.payments.activeAgreementOfSubscription('mobile_wallet', retry.subscriptionId);
      if (agreement) return { agreement_id: agreement.externalId };
    }
    return { agreement_id: meta.agreement_id || undefined };
  }

  /**
   * A charge for this renewal already under way at the provider, the service's own or the shop's: a wallet
   * charge the wallet still holds (`DUE` through its `retryDays`, until its window ends), one it has taken
   * (until the shop shows it), or a card charge still pending. Nothing is charged on top of it.
   */
  private async chargeUnderWay(order: ShopOrder, original: PaymentRecord, originalMeta: Record<string, string>, settings: ShopSettings, now: Date): Promise<UnderWay | Refusal | null> {
    const cannotRead = (what: string, failure: ProviderFailure): UnderWay | Refusal => {
      const problem = readProblem(what, failure);
      return problem.kind === 'refused' ? problem : { kind: 'wait', cause: 'unreadable', until: new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS), why: problem.message };
    };
    const known = await this.deps.payments.listByOrder(order.id);
    if (original.provider === 'card_gateway') {
      // A card charge of ours still pending (an asynchronous method) may yet be taken: nothing is charged on top.
      for (const payment of known) {
        if (payment.provider !== 'card_gateway' || payment.status !== null || payment.id === original.id) continue;
        const read = await this.deps.cardGateway.getCharge(payment.externalId);
        if (!read.ok) {
          if (read.kind === 'not_found') continue;
          return cannotRead(`reading charge ${payment.externalId}`, read);
        }
        if (['pending', 'created', 'authorized', 'settled'].includes(read.value.state)) {
          return { kind: 'wait', cause: 'pending', until: new Date(now.getTime() + DAY_MS / 24), why: `charge ${payment.externalId} is ${read.value.state} at the card gateway; nothing charged on top` };
        }
      }
      return null;
    }
    // The wallet: our own charges still open, and the charge the shop's own wallet plugin made for the order (`_charge_id`).
    const charges = known.filter((payment) => payment.provider === 'mobile_wallet' && payment.status === null && payment.meta.agreement_id)
      .map((payment) => ({ agreementId: payment.meta.agreement_id, chargeId: payment.externalId, whose: 'our' }));
    const shopCharge = (await this.deps.orderWrites.getMeta(this.deps.cases.pool, order.id, '_charge_id', settings))?.trim();
    const agreementOfShop = originalMeta.agreement_id || (await this.deps.orderWrites.getMeta(this.deps.cases.pool, order.id, '_agreement_id', settings))?.trim();
    if (shopCharge && agreementOfShop && !known.some((payment) => payment.externalId === shopCharge && payment.status !== null)) {
      charges.push({ agreementId: agreementOfShop, chargeId: shopCharge, whose: "the shop's" });
    }
    for (const { agreementId, chargeId, whose } of charges) {
      const read = await this.deps.mobileWallet.getCharge(agreementId, chargeId);
      if (!read.ok) {
        if (read.kind === 'not_found') continue;
        return cannotRead(`reading charge ${chargeId}`, read);
      }
      if (['CHARGED', 'RESERVED', 'PARTIALLY_CAPTURED'].includes(read.value.status)) {
        return { kind: 'wait', cause: 'pending', until: new Date(now.getTime() + DAY_MS / 24), why: `${whose} charge ${chargeId} is ${read.value.status} at the wallet: the renewal is paid, waiting for the shop to show it; nothing charged on top` };
      }
      if (!WALLET_STILL_TRYING.includes(read.value.status)) continue;
      const until = walletRetryWindowEnd(read.value, now);
      return { kind: 'wait', cause: 'wallet_retrying', until, why: `charge ${chargeId} is ${read.value.status} at the wallet, which retries it itself until ${gmtDateTime(until)} UTC; nothing charged on top` };
    }
    return null;
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
   * The charge an attempt asks for, with the identifiers every repeat of its request reuses: the card gateway's
   * handle (`order-<number>-retry<n>`) and key, or the wallet's `orderId` (the key with the shop's tag) and due date.
   * Null-charge results: nothing the provider can charge (no card, an agreement that is not active), a decline here.
   */
  private async newCharge(retry: RetryRecord, original: PaymentRecord, target: ChargeTarget, amount: number, order: ShopOrder, settings: ShopSettings): Promise<
    { kind: 'charge'; charge: NewCharge } | { kind: 'no_charge'; result: ChargeResult }> {
    const number = displayedOrderNumber(order, settings.orderNumbers);
    const requestedBy: ChargeRequester = retry.plan === 'staff' ? 'staff' : retry.plan === 'new_method' ? 'new_method' : 'plan';
    const base = { orderId: order.id, subscriptionId: retry.subscriptionId, provider: original.provider, amountMinor: amount, currency: order.currency, requestedBy, retryId: retry.id };
    if (original.provider === 'card_gateway') {
      const handle = cardGatewayRetryHandle(number, order.id, retry.attempt);
      const source = await this.cardSource(target, retry);
      if (!source) {
        return { kind: 'no_charge', result: { kind: 'declined', externalId: handle, failure: { code: 'no_card', description: 'the subscription has no card at the gateway that can be charged', state: 'hard_declined' } } };
      }
      return { kind: 'charge', charge: {
        ...base, externalId: handle, idempotencyKey: await this.requestKey(retry), paymentMethod: source, customerHandle: target.customer_handle ?? null,
        due: null, description: `Renewal order ${number}`,
      } };
    }
    const agreementId = target.agreement_id;
    // The charge ID is the attempt's key with the shop's tag, unique across every shop on the merchant serial number.
    const chargeId = walletRetryOrderId(settings, await this.requestKey(retry));
    if (!agreementId) return { kind: 'no_charge', result: { kind: 'declined', externalId: chargeId, failure: { code: 'no_agreement', description: 'the payment has no wallet agreement to charge', state: 'hard_declined' } } };
    // The wallet charges only an ACTIVE agreement; a stopped or expired one is the customer's to replace.
    const agreement = await this.deps.mobileWallet.getAgreement(agreementId);
    if (!agreement.ok && agreement.kind !== 'not_found') return { kind: 'no_charge', result: readProblem(`reading agreement ${agreementId}`, agreement) };
    const agreementStatus = agreement.ok ? agreement.value.status : 'UNKNOWN';
    if (agreementStatus !== 'ACTIVE') {
      return { kind: 'no_charge', result: { kind: 'declined', externalId: chargeId, failure: { code: 'no_agreement', description: `the wallet agreement ${agreementId} is ${agreementStatus}`, state: 'hard_declined' } } };
    }
    return { kind: 'charge', charge: {
      ...base, externalId: chargeId, idempotencyKey: chargeId, paymentMethod: agreementId, customerHandle: null,
      due: new Date(this.deps.clock().getTime() + 2 * DAY_MS).toISOString().slice(0, 10), description: `Renewal order ${number}`.slice(0, 45),
    } };
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

  /**
   * What a card attempt charges: the subscription's own card when the gateway still holds it active (one the
   * gateway failed or that was deleted is not charged), else the customer's newest active card at the
   * gateway; `auto` only with a customer, as the gateway requires one.
   */
  private async cardSource(target: ChargeTarget, retry: RetryRecord): Promise<string | null> {
    if (target.card) {
      const read = await this.deps.cardGateway.getPaymentMethod(target.card);
      if (read.ok && read.value.state === 'active') return target.card;
      if (!read.ok && read.kind !== 'not_found') return target.card;
      if (retry.plan !== 'new_method') return null;
    }
    const customer = target.customer_handle;
    const agreement = customer ? await this.deps.payments.activeAgreementOfCustomer('card_gateway', customer) : null;
    if (agreement?.paymentMethod) return agreement.paymentMethod;
    return customer ? 'auto' : null;
  }
}

/** The ledger's answer to an attempt's charge, as the attempt records it. */
function resultOf(answer: Exclude<ChargeAnswer, { kind: 'withdrawn' }>): ChargeResult {
  const externalId = answer.charge.externalId;
  switch (answer.kind) {
    case 'paid': return { kind: 'paid', externalId, status: answer.status };
    case 'pending': return { kind: 'pending', externalId };
    case 'declined': return { kind: 'declined', externalId, failure: answer.failure };
    // Cancelled at the provider before it was taken (staff at the provider, the gateway's own): not paid, a decline here.
    case 'cancelled': return { kind: 'declined', externalId, failure: { code: 'cancelled', description: 'the charge was cancelled at the provider', state: null } };
    case 'unreachable': return { kind: 'unreachable', message: answer.message };
    case 'refused': return { kind: 'refused', status: answer.status, code: answer.code, message: answer.message };
  }
}

/** A charge for the renewal already under way at the provider: wait `until`, and why (`unreadable`: the provider could not be asked). */
interface UnderWay {
  kind: 'wait';
  cause: 'wallet_retrying' | 'pending' | 'unreadable';
  until: Date;
  why: string;
}

/** What a charge for a case would meet now (see `RunDueRetries.chargeOutlook`). */
export interface ChargeOutlook {
  orderAwaitsPayment: boolean;
  subscriptionOnHold: boolean;
  /** What the charge would be made on, for the caps; null when unknown. */
  chargeKey: string | null;
  hasPaymentMethod: boolean;
  underWay: ChargeUnderWay | null;
}

/** What an attempt charges: the gateway customer and the card to use, or the wallet agreement. */
interface ChargeTarget {
  customer_handle?: string;
  card?: string;
  agreement_id?: string;
}


/** Characters the card gateway allows in a handle (the create-charge reference: `[a-zA-Z0-9_.-@]`, at most 255). */
const CARD_HANDLE = /^[a-zA-Z0-9_.@-]{1,255}$/;

/**
 * The handle of a card attempt: `order-<number>-retry<n>` as the gateway plugin names its invoices, when the
 * shop's order number is one the gateway accepts; otherwise the order's ID stands in for it, so whatever the
 * shop's numbers look like (`#`, `/`, spaces), the gateway never refuses the handle.
 */
export function cardGatewayRetryHandle(number: string, orderId: number, attempt: number): string {
  const byNumber = `order-${number}-retry${attempt}`;
  return CARD_HANDLE.test(byNumber) && !number.includes('-') ? byNumber : `order-${orderId}-retry${attempt}`;
}

/**
 * The wallet's `orderId` (and Idempotency-Key) of an attempt: at most 40 of `[a-zA-Z0-9-]` (the key's limit
 * is the tighter: 1-40 characters; orderId: 50), unique per merchant serial number across all of the
 * merchant's shops, so it carries a tag of the shop (its site URL's hash) before the attempt's key.
 */
export function walletRetryOrderId(settings: Pick<ShopSettings, 'siteUrl'>, attemptKey: string): string {
  const tag = crypto.createHash('sha256').update(settings.siteUrl.trim().toLowerCase()).digest('hex').slice(0, 8);
  const id = `${tag}-${attemptKey}`.replace(/[^a-zA-Z0-9-]/g, '-');
  return id.length <= 40 ? id : `${tag}-${crypto.createHash('sha256').update(attemptKey).digest('hex').slice(0, 31)}`;
}

/** A refusal of the service's own request: its HTTP status, the provider's error code and message. */
interface Refusal {
  kind: 'refused';
  status: number | null;
  code: string | null;
  message: string;
}

/**
 * A read the provider did not answer: refused (401 or 403, a wrong or revoked key; another 4xx but 404, 408
 * and 429) is the service's own fault, held as a charge request's refusal is; anything else, unreachable.
 */
function readProblem(what: string, failure: ProviderFailure): { kind: 'unreachable'; message: string } | Refusal {
  const status = failure.status;
  if (status !== undefined && status >= 400 && status < 500 && ![404, 408, 429].includes(status)) {
    return { kind: 'refused', status, code: failure.code === undefined ? null : String(failure.code), message: `${what}: ${failure.message}` };
  }
  return { kind: 'unreachable', message: `${what}: ${failure.kind} ${status ?? ''} ${failure.message}`.trim() };
}
