import { ChargeLedgerRepository, type ChargeRecord } from '../data-access/charge-ledger-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRepository } from '../data-access/payment-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { ShopSubscription } from '../shop/subscription';
import type { Logger } from '../logger';
import type { ChargeCancelledBecause } from '../shop/order-note-words';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';
import type { CancelOutcome, ChargeLedger } from './charge-ledger';
import type { RenewalFacts } from './renewal-facts';
import { RENEWAL_ENDED, type PaymentEvents } from './payment-events';
import type { PaymentRecorder } from './payment-recorder';
import type { UnwantedCharges } from './unwanted-charges';

/** Open charges looked at per pass: each renewal has one at most, so few are open at any time. */
const PER_PASS = 200;
/** The dunning loop runs every few seconds; what the renewals no longer want needs cancelling within a minute. */
const PASS_SPACING_MS = 15_000;
/**
 * How long the caller that withdrew a charge (a notice, Stop dunning, another worker's pass) has to cancel it before
 * the pass asks the provider again: its cancel, with the clients' bounded waits and retries, is done well within;
 * after that it is taken to have stopped (a process ended) and the pass cancels. Asking twice at once would spend the
 * wallet's cancels (5 a minute per charge) for nothing.
 */
const CANCEL_GRACE_MS = 120_000;
/**
 * A charge the renewal still wants is read back at its provider from 6 days after it was sent (reconciliation asks
 * daily until a week after its payment opened), every 6 hours (the wallet takes due charges at two times a day), at
 * most so many in a pass.
 */
const FOLLOW_UP_AFTER_MS = 6 * 86_400_000;
const READ_BACK_EVERY_MS = 6 * 60 * 60_000;
const READ_BACKS_PER_PASS = 20;
/**
 * Read-backs of one charge within a real minute, at most: half the wallet's limit of 10 reads a minute per charge
 * (the client's ResourceBudget keeps the limit itself), so that a clock that jumps by hours between passes (a test's,
 * or a host's put right) never leaves the charge's own webhook unable to read it.
 */
const READ_BACKS_A_REAL_MINUTE = 5;

export interface SettleSummary {
  looked: number;
  cancelled: number;
  /** Cancels accepted and not yet enacted, or providers that could not be asked: looked at again next pass. */
  waiting: number;
  /** Charges the provider took although the service no longer wanted them (flagged for staff). */
  takenAfterCancel: number;
  /** Charges still wanted that the provider was found to have taken, their webhook not heard: recorded. */
  takenReadBack: number;
}

/** What settling one order's open charge came to, as soon as it is known whether the charge is still wanted. */
export type OrderSettling =
  /** No charge of the service's is open for the order: none was made, or it is closed already (a notice heard twice). */
  | { kind: 'nothing_open' }
  /** The order still awaits payment: its charge is still wanted. */
  | { kind: 'still_wanted' }
  /** Withdrawn before (by the worker's pass, Stop dunning, an earlier notice): whoever withdrew it cancels it. */
  | { kind: 'already_withdrawn'; reason: string | null }
  /** Withdrawn now; `cancelled` settles once the provider has answered its cancel. */
  | { kind: 'withdrawn'; reason: string | null; cancelled: Promise<CancelOutcome> };

/**
 * Every way a renewal's case ends closes its open charge: the worker's pass, every minute, over the ledger's open
 * charges. A charge whose renewal no longer awaits payment (paid in the shop, by another gateway, by staff marking
 * it paid; the order cancelled), whose dunning was stopped, or whose attempt ended without the provider's answer is
 * cancelled at the provider and confirmed cancelled there; a cancel the provider accepted but has not enacted is
 * read back until it is. A charge the provider took all the same is recorded as the payment it is, and flagged.
 */
export class SettleOpenCharges {
  constructor(private readonly deps: {
    ledger: ChargeLedger;
    renewals: RenewalFacts;
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    payments: PaymentRepository;
    retries: Pick<RetryRepository, 'find'>;
    subscriptions: Pick<SubscriptionRepository, 'find' | 'findMany'>;
    recorder: PaymentRecorder;
    unwantedCharges: Pick<UnwantedCharges, 'recordCancelled'>;
    events: Pick<PaymentEvents, 'emit'>;
    settings: ShopSettingsRepository;
    log: Logger;
    clock: () => Date;
  }) {}

  private lastPassAt = -Infinity;
  /**
   * Each open charge the renewal still wants that this process read back (followUp): the shop time of its last
   * read-back, and the real times of those within the last real minute.
   */
  private readonly lastReadBack = new Map<number, { at: number; real: number[] }>();

  async pass(): Promise<SettleSummary> {
    const summary: SettleSummary = { looked: 0, cancelled: 0, waiting: 0, takenAfterCancel: 0, takenReadBack: 0 };
    const at = this.deps.clock().getTime();
    if (at - this.lastPassAt < PASS_SPACING_MS) return summary;
    this.lastPassAt = at;
    const open = await this.deps.ledger.openCharges(PER_PASS);
    if (!open.length) return summary;
    const settings = await this.deps.settings.current();
    // The charges' subscriptions in one read (which provider each names now), not one per charge every pass.
    const subscriptions = await this.deps.subscriptions.findMany(open.map((charge) => charge.subscriptionId), settings);
    const budget = { reads: READ_BACKS_PER_PASS };
    const stillOpen = new Set(open.map((charge) => charge.id));
    for (const id of this.lastReadBack.keys()) if (!stillOpen.has(id)) this.lastReadBack.delete(id);
    for (const charge of open) {
      summary.looked += 1;
      const unwanted = await this.unwanted(charge, settings, subscriptions.get(charge.subscriptionId) ?? null);
      if (!unwanted) {
        if (await this.followUp(charge, settings, budget)) summary.takenReadBack += 1;
        continue;
      }
      if (!unwanted.toCancel) continue;
      const outcome = await this.cancel(unwanted.charge, settings);
      if (outcome.kind === 'cancelled') summary.cancelled += 1;
      else if (outcome.kind === 'taken') summary.takenAfterCancel += 1;
      else if (outcome.kind !== 'declined') summary.waiting += 1;
    }
    return summary;
  }

  /**
   * The pass for one order, when the shop says it moved on (the companion's notice): its open charge withdrawn by the
   * pass's own rule, and cancelled at the provider. Answered once the withdrawal is committed, without waiting for the
   * provider: what the cancel comes to is `cancelled`, and should it not be done (the process stopping), the pass
   * finds the charge withdrawn and cancels it.
   */
  async settleOrder(orderId: number): Promise<OrderSettling> {
    const open = (await this.deps.ledger.repository.chargesOfOrder(orderId)).find((charge) => ChargeLedgerRepository.isOpen(charge));
    if (!open) return { kind: 'nothing_open' };
    // Its cancel is already being asked for: a second caller would only ask the provider the same again.
    if (open.cancelWantedAt || open.state === 'CANCELING') return { kind: 'already_withdrawn', reason: open.cancelReason };
    const settings = await this.deps.settings.current();
    const found = await this.unwanted(open, settings);
    if (!found) return { kind: 'still_wanted' };
    if (!found.toCancel) return { kind: 'already_withdrawn', reason: found.charge.cancelReason };
    const unwanted = found.charge;
    const cancelled = this.cancel(unwanted, settings).catch((error: unknown): CancelOutcome => {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log.error('open_charge_cancel_failed', { orderId, provider: unwanted.provider, externalId: unwanted.externalId, error: message });
      // As when the provider cannot be asked: the charge stays withdrawn and open, for the pass to cancel.
      return { kind: 'unreachable', charge: unwanted, message };
    });
    return { kind: 'withdrawn', reason: unwanted.cancelReason, cancelled };
  }

  /**
   * The charge, marked unwanted with the reason, when its renewal no longer wants it; null while it does. `toCancel`:
   * this caller asks the provider; not when another caller withdrew it between the read and this withdrawal, nor
   * within CANCEL_GRACE_MS of another's withdrawal (that caller cancels it; should it not get to, a pass after the
   * grace finds it withdrawn and does). A cancel the provider accepted and has not enacted (CANCELING) is read back
   * each pass.
   */
  private async unwanted(charge: ChargeRecord, settings: ShopSettings, read?: ShopSubscription | null): Promise<{ charge: ChargeRecord; toCancel: boolean } | null> {
    if (charge.state === 'CANCELING') return { charge, toCancel: true };
    if (charge.cancelWantedAt) {
      // A charge never sent has no cancel under way anywhere (its request is refused once withdrawn): closed at once.
      if (charge.sends === 0) return { charge, toCancel: true };
      // Else its withdrawer cancels it; untouched for the grace, one pass (the database's claim decides which) does.
      const now = this.deps.clock();
      return { charge, toCancel: await this.deps.ledger.repository.takeOverCancel(charge.id, new Date(now.getTime() - CANCEL_GRACE_MS), now) };
    }
    // The one rule (renewal-wants-money.ts): paid, cancelled or trashed in the shop, the subscription ended (the
    // customer cancelled in My Account), the case closed, or the subscription moved to the other provider's gateway.
    const wants = await this.deps.renewals.wants(this.deps.ledger.repository.pool, charge, settings, { locked: false, subscription: read });
    let reason: string | null = wants.wants ? null : wants.reason;
    if (!reason && charge.paymentId === null && charge.retryId !== null) {
      // Asked for and never answered: while its attempt lives, the attempt asks again with the same key.
      const retry = await this.deps.retries.find(charge.retryId);
      if (!retry || !['PENDING', 'PROCESSING'].includes(retry.status)) reason = 'attempt_ended';
    }
    if (!reason) return null;
    const why = reason;
    const withdrawn = await this.deps.orderWrites.transaction(async (db) => {
      const now = this.deps.clock();
      const marked = await this.deps.ledger.withdraw(db, charge.orderId, why, now);
      // The subscription ended: dunning hears that the renewal is over, as Subscriptions drops its retries then.
      if (marked?.first && why.startsWith('subscription_')) await this.deps.events.emit(RENEWAL_ENDED, { orderId: charge.orderId, reason: why, now }, db);
      return marked;
    });
    return withdrawn ? { charge: withdrawn.charge, toCancel: withdrawn.first } : null;
  }

  /**
   * A charge the provider took, recorded as the payment it is (the one that closes the charge records it, whoever else
   * finds it at the same moment: a webhook, reconciliation, a second pass) and asked of the rule whether the renewal
   * still wanted it. `afterCancel`: its cancel had been asked, which the payment's meta and an error line say.
   */
  private async recordTaken(charge: ChargeRecord, status: 'CAPTURED' | 'AUTHORIZED', settings: ShopSettings, afterCancel: boolean, transaction?: string): Promise<boolean> {
    const { payments, orderWrites, recorder, log } = this.deps;
    const now = this.deps.clock();
    const recorded = await orderWrites.transaction(async (db) => {
      const { payment } = await payments.lockOrCreate(db, {
        provider: charge.provider, externalId: charge.externalId, orderId: charge.orderId, amountMinor: charge.amountMinor, currency: charge.currency,
      }, gmtDateTimeMs(now));
      const why = afterCancel ? `taken at the provider after its cancel was asked (${charge.cancelReason ?? 'unwanted'})` : `${status}, read back at the provider`;
      if (!(await this.deps.ledger.repository.close(db, charge, 'TAKEN', why, now))) return false;
      // Taken for a renewal that wanted no money (the subscription ended, the order closed): said on the charge, to be flagged.
      await this.deps.ledger.takenForNobody(db, charge, now, settings);
      await this.deps.ledger.repository.attachPayment(db, charge.id, payment.id, now);
      if (afterCancel) await payments.setMeta(db, payment.id, { taken_after_cancel: gmtDateTimeMs(now), cancel_because: charge.cancelReason ?? undefined });
      await recorder.move(db, payment, status, settings, now, { providerTransaction: transaction });
      return true;
    });
    if (recorded && afterCancel) log.error('charge_taken_after_cancel', { orderId: charge.orderId, provider: charge.provider, externalId: charge.externalId, reason: charge.cancelReason });
    if (recorded && !afterCancel) log.warn('charge_taken_read_back', { orderId: charge.orderId, provider: charge.provider, externalId: charge.externalId, status });
    return recorded;
  }

  /**
   * A charge the renewal still wants, sent a while ago and still open (a wallet charge the wallet retries up to 14 days
   * after its due date; a card charge left pending or unanswered), read back at its provider: money taken whose webhook
   * was lost is recorded within hours, not left unseen. Reconciliation asks about the charge's payment 1, 5, 15 and 60
   * minutes and then daily for a week after it opened; from FOLLOW_UP_AFTER_MS on, this asks every READ_BACK_EVERY_MS
   * by the shop's clock, and at most READ_BACKS_A_REAL_MINUTE times in a real minute. True when it was recorded.
   */
  private async followUp(charge: ChargeRecord, settings: ShopSettings, budget: { reads: number }): Promise<boolean> {
    if (charge.state !== 'OPEN' || charge.sends === 0 || charge.cancelWantedAt || !charge.lastSentAt || budget.reads <= 0) return false;
    const now = this.deps.clock().getTime();
    const sentAt = parseGmtDateTime(charge.lastSentAt)?.getTime();
    if (sentAt === undefined || now - sentAt < FOLLOW_UP_AFTER_MS) return false;
    const last = this.lastReadBack.get(charge.id);
    const realNow = Date.now();
    const real = (last?.real ?? []).filter((at) => realNow - at < 60_000);
    if (last !== undefined && (now - last.at < READ_BACK_EVERY_MS || real.length >= READ_BACKS_A_REAL_MINUTE)) return false;
    this.lastReadBack.set(charge.id, { at: now, real: [...real, realNow] });
    budget.reads -= 1;
    const taken = await this.deps.ledger.takenAtProvider(charge);
    return taken ? this.recordTaken(charge, taken.status, settings, false, taken.transaction) : false;
  }

  /** Why the pass cancelled a charge, for its note: the subscription moved to the other provider or ended, its dunning ended, or the order's status in the shop. */
  private async cancelledBecause(charge: ChargeRecord, settings: ShopSettings): Promise<ChargeCancelledBecause> {
    const reason = charge.cancelReason ?? '';
    if (reason === 'method_switched') return { kind: 'method_switched', to: charge.provider === 'card_gateway' ? 'mobile_wallet' : 'card_gateway' };
    if (reason.startsWith('subscription_')) return { kind: 'subscription_ended', status: reason.slice('subscription_'.length) };
    if (reason === 'dunning_ended' || reason === 'deadline') return { kind: 'dunning_ended' };
    // In the bin or deleted: not "paid", and findById does not show such an order.
    if (reason === 'order_trash' || reason === 'order_gone') return { kind: 'order_removed', deleted: reason === 'order_gone' };
    const order = await this.deps.orders.findById(charge.orderId, settings);
    return { kind: 'shop', orderStatus: order?.status ?? 'cancelled' };
  }

  /**
   * Cancels an unwanted open charge at its provider and records what the provider says: cancelled (its payment row,
   * if any, cancelled with a note), or taken after all (recorded as a payment and flagged for a refund).
   */
  async cancel(charge: ChargeRecord, settings: ShopSettings, because?: ChargeCancelledBecause): Promise<CancelOutcome> {
    const outcome = await this.deps.ledger.cancel(charge);
    const now = this.deps.clock();
    const { payments, orderWrites, recorder, log } = this.deps;
    switch (outcome.kind) {
      case 'cancelled': {
        if (charge.paymentId === null) break;
        const payment = await payments.findById(charge.paymentId);
        if (!payment || payment.status !== null) break;
        await this.deps.unwantedCharges.recordCancelled(payment, because ?? await this.cancelledBecause(charge, settings), settings);
        break;
      }
      case 'taken':
        // Taken although the service had asked to cancel it (or before the cancel arrived): the money is the
        // customer's to get back. Recorded as the payment it is, so the order's payments show it and staff refund it.
        await this.recordTaken(charge, outcome.status, settings, true, outcome.transaction);
        break;
      case 'declined':
        await orderWrites.transaction((db) => this.deps.ledger.repository.close(db, charge, 'DECLINED', `declined at the provider: ${outcome.failure.code ?? ''}`, now));
        break;
      case 'canceling':
      case 'unreachable':
        log.warn('open_charge_not_cancelled_yet', { orderId: charge.orderId, provider: charge.provider, externalId: charge.externalId, state: outcome.kind });
        break;
    }
    return outcome;
  }
}
