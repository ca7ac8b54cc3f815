import type { Provider, RecoveryMeans } from '../../entities';
import type { DunningConfig } from '../config';
import type { DunningCaseRecord, DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRecord } from '../data-access/payment-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { Executor } from '../data-access/transaction';
import { companionRunsDunning, type PaymentMethodNeededReason, type WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { Logger } from '../logger';
import type { ScheduleRetryEvent } from '../payments/payment-events';
import { orderNoteWords, type CustomerAsked } from '../shop/order-note-words';
import { parseGmtDateTime, type ShopTimeZone } from '../shop/shop-time';
import { decideOnDecline, earliestWithinCaps, isLackOfFunds, waitsForAmountChange, type ChargeCaps } from './decline-policy';
import { nextPaydayMorning } from '../shop/danish-bank-calendar';
import { WALLET_DUE_IN_DAYS } from './charge-rules/charge-rules';
import { BASELINE_PLAN_SECONDS, holdoutArm } from './holdout';

const DAY_MS = 86_400_000;
/** From the payday morning (00:15) to midday, for a wallet attempt made ahead of payday (see `paydayAttemptTime`). */
const WALLET_PAYDAY_LEAD_MS = 12 * 3_600_000;

/**
 * When a payday attempt is made: on the payday morning for a card, which is charged at once. The wallet takes a
 * charge on its due date, which is WALLET_DUE_IN_DAYS after the charge is made, so its attempt is made that much
 * before payday, at midday (when its UTC date is the shop's date), and its charge is due on payday; not before now.
 */
export function paydayAttemptTime(provider: Provider, morning: Date, now: Date): Date {
  if (provider !== 'mobile_wallet') return morning;
  return new Date(Math.max(now.getTime(), morning.getTime() - WALLET_DUE_IN_DAYS * DAY_MS + WALLET_PAYDAY_LEAD_MS));
}
/** The shop-local time of the payday attempt (see `paydayAttempt`). */
const PAYDAY_TIME = '00:15';

/** The payment methods' keys are the payments capability's: what a charge was made on, where a new one is saved. */
export { chargeMethodKey, newMethodKey } from '../payments/method-keys';

/**
 * The earliest moment at or after `at` at which the payment method `chargeKey` may be charged again: the
 * charges logged on it in the last 30 days, counted against `caps`. `at` when the method is unknown.
 */
export async function earliestChargeAllowed(
  cases: Pick<DunningCaseRepository, 'chargesOfMethodSince'>, db: Executor, chargeKey: string | null, at: Date, now: Date, caps: ChargeCaps,
): Promise<Date> {
  if (!chargeKey) return at;
  return earliestWithinCaps(at, await cases.chargesOfMethodSince(db, chargeKey, new Date(now.getTime() - 30 * DAY_MS)), caps);
}

/** The card gateway plugin's meta on a subscription: the card (`ca_…`) its renewals are charged to. */
export const SUBSCRIPTION_CARD_META = '_reepay_token';
/** The wallet plugin's meta on a subscription: the agreement its renewals are charged on. */
export const SUBSCRIPTION_AGREEMENT_META = '_agreement_id';

/** What the subscription's renewals are charged on now, as the provider's WooCommerce plugin records it; null when it names none. */
export async function subscriptionPaymentMethod(
  orders: Pick<OrderWriteRepository, 'getMeta'>, db: Executor, subscriptionId: number, provider: Provider, settings: ShopSettings,
): Promise<string | null> {
  const value = await orders.getMeta(db, subscriptionId, provider === 'card_gateway' ? SUBSCRIPTION_CARD_META : SUBSCRIPTION_AGREEMENT_META, settings);
  return value?.trim() || null;
}

/**
 * Dunning of failed renewals: each decline decided by the decline policy (retry on a plan within the
 * card schemes' caps, or ask the customer for a new payment method), the renewal charged again at once
 * when one is saved, and each failed renewal followed as a case until it is paid or lost. Everything
 * runs inside the transaction of the payment change it follows from.
 */
export class Dunning {
  constructor(private readonly deps: {
    cases: DunningCaseRepository;
    retries: RetryRepository;
    orders: OrderWriteRepository;
    changes: WooCommerceChangeRepository;
    planSeconds: number[];
    config: DunningConfig;
    log: Logger;
  }) {}

  /** A renewal's payment failed while its subscription is on hold (the schedule-retry event). */
  async onFailedRenewal(event: ScheduleRetryEvent, db: Executor): Promise<void> {
    const { orderId, settings, now } = event;
    const decision = decideOnDecline(event.provider, event.failure);
    const words = orderNoteWords(settings);
    const noted = { provider: event.provider, decline: event.failure };
    const { case: found, opened } = await this.deps.cases.open(db, {
      orderId, subscriptionId: event.subscriptionId, paymentId: event.paymentId, provider: event.provider, methodKey: event.newMethodKey,
      currency: event.currency, amountMinor: event.amountMinor, reason: decision.reason, policy: decision.policy, now,
      arm: holdoutArm(settings.siteUrl, orderId, this.deps.config.holdoutPercent),
    });
    if (event.chargeKey) await this.deps.cases.recordCharge(db, { methodKey: event.chargeKey, orderId, paymentId: event.paymentId, at: now });
    if (found.status !== 'OPEN') {
      await this.deps.orders.addNote(db, orderId, words.dunning({ ...noted, next: { kind: 'ended', status: found.status } }), settings, now);
      return;
    }
    if (!opened) await this.deps.cases.update(db, found.id, { policy: decision.policy, attempts: found.attempts + 1, paymentId: event.paymentId }, now);
    // What the subscription is charged on now: another named later is the customer's switch (SwitchedPaymentMethods).
    if (!found.paymentMethodSeen) {
      const method = await subscriptionPaymentMethod(this.deps.orders, db, found.subscriptionId, event.provider, settings);
      if (method) await this.deps.cases.seeMethod(db, found.id, method, now);
    }
    this.deps.log.info('dunning_decision', { orderId, provider: event.provider, code: event.failure.code, state: event.failure.state, policy: decision.policy });
    if (!decision.plan) {
      // Refused at creation as above the agreement's maximum: charged again once something changed (chargeAgainAfterChange).
      const because = waitsForAmountChange(event.provider, event.failure) ? 'amount_too_high' : 'not_charged_again';
      await this.askCustomer(db, found, decision.customerReason!, (customer) => words.dunning({ ...noted, next: { kind: 'ask_customer', because, planLength: 0, customer } }), event);
      return;
    }
    // The holdout's baseline retries soft declines on WooCommerce Subscriptions' default timing (src/dunning/holdout.ts).
    const plan = decision.plan === 'soft' ? (found.arm === 'baseline' ? BASELINE_PLAN_SECONDS : this.deps.planSeconds) : this.deps.config.processingPlanSeconds;
    // A decline for lack of funds also gets an attempt early on payday (the holdout's baseline does not: it is the plain timing).
    const payday = decision.plan === 'soft' && found.arm !== 'baseline' && isLackOfFunds(event.provider, event.failure)
      ? this.paydayAttempt(found, plan, now, settings.timeZone) : undefined;
    const outcome = await this.deps.retries.scheduleNext(db, {
      orderId, subscriptionId: event.subscriptionId, paymentId: event.paymentId, plan: decision.plan, planSeconds: plan, now,
      notBefore: (at) => this.withinCaps(db, event.chargeKey, at, now),
      instead: payday,
    });
    if (outcome.kind === 'scheduled' && outcome.instead) {
      this.deps.log.info('dunning_payday_attempt', { orderId, at: outcome.at.toISOString(), planUsedUp: outcome.instead.planUsedUp });
      const step = (planUsedUp: null | { planLength: number; customer: CustomerAsked }) => ({
        kind: 'payday' as const, at: outcome.at, plannedFor: outcome.plannedFor, caps: this.deps.config.caps, planUsedUp,
      });
      if (!outcome.instead.planUsedUp) {
        await this.deps.orders.addNote(db, orderId, words.dunning({ ...noted, next: step(null) }), settings, now);
      } else {
        const reason = event.provider === 'mobile_wallet' ? 'wallet_action_required' : 'retries_exhausted';
        await this.askCustomer(db, found, reason, (customer) => words.dunning({ ...noted, next: step({ planLength: plan.length, customer }) }), event);
      }
    } else if (outcome.kind === 'scheduled') {
      const next = { kind: 'retry' as const, attempt: outcome.planAttempt, of: plan.length, at: outcome.at, plannedFor: outcome.plannedFor, caps: this.deps.config.caps };
      await this.deps.orders.addNote(db, orderId, words.dunning({ ...noted, next }), settings, now);
    } else if (outcome.kind === 'plan_used_up') {
      // The wallet's customer is sent to the app, which knows the reason; a card's customer is told the tries ran out.
      const reason = event.provider === 'mobile_wallet' ? 'wallet_action_required' : 'retries_exhausted';
      await this.askCustomer(db, found, reason, (customer) => words.dunning({ ...noted, next: { kind: 'ask_customer', because: 'plan_used_up', planLength: plan.length, customer } }), event);
    }
  }

  /**
   * A payment of `orderId` was reserved or taken: its open case is recovered, by the means the payment says
   * (a service retry, the charge after a new payment method, reconciliation, or else the provider's own retry).
   */
  async onPaid(db: Executor, payment: PaymentRecord, metaOf: () => Promise<Record<string, string>>, via: 'reconciliation' | undefined, now: Date): Promise<void> {
    if (payment.orderId === null) return;
    const found = await this.deps.cases.lockCaseOfOrder(db, payment.orderId);
    if (found?.status !== 'OPEN') return;
    const meta = await metaOf();
    // A payment that had failed and was then taken is the provider's own retry of it; one that never failed
    // and that the service did not make was made through the shop (its checkout, its gateway plugin).
    const means: RecoveryMeans = via === 'reconciliation' ? 'reconciliation'
      : meta.retry_reason === 'new_payment_method' ? 'new_payment_method'
        : meta.retry_reason === 'staff_charge' ? 'staff_charge'
          : meta.retry_of ? 'service_retry'
            : 'failure_code' in meta || 'failure_state' in meta || payment.id === found.paymentId ? 'provider_retry' : 'shop_payment';
    const attempts = meta.retry_of ? found.attempts + 1 : found.attempts;
    if (attempts !== found.attempts) await this.deps.cases.update(db, found.id, { policy: found.policy, attempts, paymentId: found.paymentId }, now);
    await this.deps.cases.recover(db, found.id, means, payment.amountMinor ?? found.amountMinor, now);
    this.deps.log.info('dunning_recovered', { orderId: payment.orderId, means, attempts });
  }

  /**
   * The renewal's subscription ended while it was being dunned (the customer cancelled it in My Account, it expired or
   * was trashed): its planned attempts are dropped and its case is lost, as WooCommerce Subscriptions cancels its own
   * pending retry when the subscription's status moves on (WCS_Retry_Manager::maybe_cancel_retry).
   */
  async onRenewalEnded(db: Executor, event: { orderId: number; reason: string; now: Date }): Promise<void> {
    const found = await this.deps.cases.lockCaseOfOrder(db, event.orderId);
    if (found?.status !== 'OPEN') return;
    await this.deps.retries.cancelPendingOfOrder(db, event.orderId, `the renewal wants no money any more (${event.reason})`, event.now);
    await this.deps.cases.lose(db, found.id, event.now);
    this.deps.log.info('dunning_lost', { orderId: event.orderId, subscriptionId: found.subscriptionId, reason: event.reason });
  }

  /**
   * A new payment method was saved where a failed renewal waits for one (the card gateway customer's new
   * card, a new wallet agreement of the subscription): each such renewal is charged again at once, one
   * attempt within the caps, instead of what was planned.
   */
  async onNewPaymentMethod(db: Executor, input: { methodKey: string; method: string; settings: ShopSettings; now: Date }): Promise<number> {
    const { settings, now } = input;
    let planned = 0;
    for (const found of await this.deps.cases.openOfMethod(db, input.methodKey)) {
      // The wallet agreement the renewal failed on, heard of for the first time (active all along, never announced to
      // the service: a shop moved from the wallet's plugin): not new, so charged on the plan. (An agreement is never
      // activated twice; a card the gateway reactivates is the customer's fix, and is charged.)
      if (input.methodKey.startsWith('mobile_wallet:') && found.paymentMethodSeen === input.method) continue;
      if (!(await this.isSubscriptionsCard(db, found.subscriptionId, input, settings))) continue;
      if (await this.chargeWithNewMethod(db, found, input)) planned += 1;
    }
    return planned;
  }

  /**
   * The renewal of `found` charged once with the customer's new payment method, at once within the caps, instead of
   * what was planned; the case then knows the method, so the same one is not charged twice as new. False when an
   * attempt is being made already.
   */
  async chargeWithNewMethod(db: Executor, found: DunningCaseRecord, input: { methodKey: string | null; method: string; settings: ShopSettings; now: Date }): Promise<boolean> {
    const { settings, now } = input;
    await this.deps.retries.cancelPendingOfOrder(db, found.orderId, `new payment method ${input.method} saved; charged with it instead`, now);
    const outcome = await this.deps.retries.scheduleNext(db, {
      orderId: found.orderId, subscriptionId: found.subscriptionId, paymentId: found.paymentId, plan: 'new_method', planSeconds: [0], now,
      notBefore: (at) => this.withinCaps(db, input.methodKey?.startsWith('card_gateway:') ? input.methodKey : null, at, now),
    });
    if (outcome.kind !== 'scheduled') return false;
    await this.deps.cases.seeMethod(db, found.id, input.method, now);
    await this.deps.orders.addNote(db, found.orderId, orderNoteWords(settings).newMethodCharged({ method: input.method, at: outcome.at }), settings, now);
    return true;
  }

  /**
   * The renewal of `found`, whose charge the wallet refused as above the agreement's maximum, charged once more, at once
   * within the caps, now that what the refusal depended on changed (the agreement's terms, or the renewal's amount):
   * an attempt of the plan, on the same agreement (SwitchedPaymentMethods finds the change). False when an attempt is
   * planned or being made already.
   */
  async chargeAgainAfterChange(db: Executor, found: DunningCaseRecord, input: { changed: 'agreement' | 'amount'; chargeKey: string | null; settings: ShopSettings; now: Date }): Promise<boolean> {
    const { settings, now } = input;
    const retry = await this.deps.retries.scheduleOne(db, {
      orderId: found.orderId, subscriptionId: found.subscriptionId, paymentId: found.paymentId, plan: 'soft', at: now, now,
      notBefore: (at) => this.withinCaps(db, input.chargeKey, at, now),
    });
    if (!retry) return false;
    const at = parseGmtDateTime(retry.scheduledAt) ?? now;
    await this.deps.orders.addNote(db, found.orderId, orderNoteWords(settings).amountAllowedAgain({ changed: input.changed, at }), settings, now);
    return true;
  }

  /**
   * A card is charged for the renewals of the subscription it was saved for: one whose card (the gateway
   * plugin's `_reepay_token`) is another is left to its own. A subscription that names no card takes the
   * customer's new one, as before the plugin kept one per subscription. A wallet agreement is the
   * subscription's own already.
   */
  private async isSubscriptionsCard(db: Executor, subscriptionId: number, input: { methodKey: string; method: string }, settings: ShopSettings): Promise<boolean> {
    if (!input.methodKey.startsWith('card_gateway:')) return true;
    const card = (await this.deps.orders.getMeta(db, subscriptionId, SUBSCRIPTION_CARD_META, settings))?.trim();
    return !card || card === input.method;
  }

  /**
   * The payday attempt a decline for lack of funds may get: early on the first bank day from the next payday
   * (DUNNING_PAYDAYS, src/shop/danish-bank-calendar.ts) in the shop's zone, within the case's window: before its
   * deadline once the customer was asked, else before the deadline it would get (the plan's waits from the first
   * decline, then DUNNING_CUSTOMER_DAYS). 00:15 local: salaries are available from 00:00 on payday, and a quarter of
   * an hour lets the banks' midnight booking settle, well before the wallet's 03:00 batch and the customer's day.
   */
  private paydayAttempt(found: DunningCaseRecord, planSeconds: readonly number[], now: Date, zone: ShopTimeZone): { plan: 'payday'; at: Date; until: Date; since: Date } | undefined {
    const morning = nextPaydayMorning(now, zone, this.deps.config.paydays, PAYDAY_TIME);
    if (!morning) return undefined;
    const at = paydayAttemptTime(found.provider, morning, now);
    const deadline = parseGmtDateTime(found.deadlineAt);
    const openedAt = parseGmtDateTime(found.openedAt) ?? now;
    const until = deadline ?? new Date(openedAt.getTime() + planSeconds.reduce((sum, wait) => sum + wait * 1000, 0) + this.deps.config.customerDays * DAY_MS);
    // One attempt per payday: any made for this one is at least its lead (the wallet's) ahead of the morning, not a payday earlier.
    const since = new Date(morning.getTime() - (WALLET_DUE_IN_DAYS + 1) * DAY_MS);
    return at.getTime() < until.getTime() ? { plan: 'payday', at, until, since } : undefined;
  }

  private withinCaps(db: Executor, chargeKey: string | null, at: Date, now: Date): Promise<Date> {
    return earliestChargeAllowed(this.deps.cases, db, chargeKey, at, now, this.deps.config.caps);
  }

  /**
   * Only the customer can fix it: WooCommerce e-mails them the change-payment-method link (once per failed
   * renewal) and the subscription is cancelled at the deadline unless the renewal is paid before.
   */
  private async askCustomer(
    db: Executor, found: DunningCaseRecord, reason: PaymentMethodNeededReason, note: (customer: CustomerAsked) => string, event: ScheduleRetryEvent,
  ): Promise<void> {
    const { orderId, settings, now } = event;
    if (found.customerAskedAt) {
      const askedAt = parseGmtDateTime(found.customerAskedAt) ?? now;
      await this.deps.orders.addNote(db, orderId, note({ kind: 'asked_before', askedAt, deadline: parseGmtDateTime(found.deadlineAt) }), settings, now);
      await this.deps.cases.update(db, found.id, { policy: 'ask_customer', attempts: found.attempts, paymentId: found.paymentId }, now);
      return;
    }
    const deadline = new Date(now.getTime() + this.deps.config.customerDays * DAY_MS);
    await this.deps.cases.markAsked(db, found.id, deadline, now);
    if (!companionRunsDunning(settings)) {
      await this.deps.orders.addNote(db, orderId, note({ kind: 'needs_companion', deadline }), settings, now);
      return;
    }
    await this.deps.changes.enqueue(db, {
      op: 'customer_payment_method_needed', objectId: found.subscriptionId,
      payload: { kind: 'failed_renewal', order_id: orderId, reason, deadline: deadline.toISOString(), card_expires: null, masked_card: null },
    }, settings, now);
    await this.deps.orders.addNote(db, orderId, note({ kind: 'emailed', deadline }), settings, now);
  }
}
