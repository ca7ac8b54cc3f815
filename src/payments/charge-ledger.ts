import crypto from 'node:crypto';
import type { PaymentStatus } from '../../entities';
import { ChargeLedgerRepository, SEND_WINDOW_MS, type ChargeRecord, type NewCharge } from '../data-access/charge-ledger-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Executor, Transaction } from '../data-access/transaction';
import type { Logger } from '../logger';
import type { PaymentFailure } from './failed-payment-handling';
import { FAILED_PAYMENT_METHOD_CODE, type CardGatewayCharge, type CardGatewayClient, type ProviderFailure } from './providers/card-gateway/client';
import { walletFailureState, type CreateMobileWalletChargeInput, type MobileWalletCharge, type MobileWalletClient } from './providers/mobile-wallet/client';
import { unanswered } from './providers/http-request';
import type { RenewalFacts } from './renewal-facts';
import { takenForNobody, type UnwantedReason } from './renewal-wants-money';

export { CHARGEABLE_ORDER_STATUSES } from './renewal-wants-money';

/**
 * How long after its last request an open charge the provider does not know may still appear there (a request
 * still on its way, or one the provider is still working on): the providers' calls end within a minute.
 */
const NEVER_MADE_AFTER_MS = 2 * 60_000;

/**
 * What a charge's request came to, in the service's terms. `paid` and `declined` are final at the provider; `pending`:
 * the provider holds the charge and tells later (the wallet's, a card's asynchronous method); `unreachable`: no
 * answer, so the charge stays open and the same request goes again; `refused`: the provider refused the request
 * itself and made nothing (the charge is closed REFUSED); `cancelled`: the provider says the charge was cancelled.
 */
export type ChargeAnswer =
  /** `transaction`: the provider's own ID of the step that took the money, when it names one (the card gateway's settle). */
  | { kind: 'paid'; charge: ChargeRecord; status: 'CAPTURED' | 'AUTHORIZED'; transaction?: string }
  | { kind: 'pending'; charge: ChargeRecord }
  | { kind: 'declined'; charge: ChargeRecord; failure: PaymentFailure }
  | { kind: 'cancelled'; charge: ChargeRecord }
  | { kind: 'unreachable'; charge: ChargeRecord; message: string }
  | { kind: 'refused'; charge: ChargeRecord; status: number | null; code: string | null; message: string }
  /** Not sent: the charge was withdrawn (its renewal paid, cancelled, dunning stopped) before its request left. */
  | { kind: 'withdrawn'; charge: ChargeRecord };

/** Why a charge could not open for its renewal. */
export type NotOpened<Refusal> =
  /** Another charge of the renewal is open: nothing is charged on top of it. */
  | { kind: 'under_way'; charge: ChargeRecord }
  /** A charge of the ledger took the renewal's money. */
  | { kind: 'taken'; charge: ChargeRecord | null }
  /** The order no longer awaits payment (paid in the shop, cancelled, trashed) or is gone. */
  | { kind: 'order_moved_on'; status: string | null }
  /** The renewal wants no money any more for another reason (renewal-wants-money.ts): its subscription ended, its dunning ended, the method moved. */
  | { kind: 'unwanted'; reason: UnwantedReason }
  /** What the caller checks under the same locks said no. */
  | { kind: 'guarded'; refusal: Refusal };

/** What became of an open charge the renewal no longer wants. */
export type CancelOutcome =
  | { kind: 'cancelled'; charge: ChargeRecord }
  /** The provider accepted the cancel and has not enacted it yet (the wallet's 202): read back later. */
  | { kind: 'canceling'; charge: ChargeRecord }
  | { kind: 'taken'; charge: ChargeRecord; status: 'CAPTURED' | 'AUTHORIZED'; transaction?: string }
  | { kind: 'declined'; charge: ChargeRecord; failure: PaymentFailure }
  | { kind: 'unreachable'; charge: ChargeRecord; message: string };

/**
 * The charge ledger: one renewal, one payment, held by the database. Every charge the service asks a provider for
 * is written and committed before it is asked, with the identifiers each repeat reuses; opening it claims the
 * renewal's one slot (ChargeLedgerRepository.openCharge), so no two paths (the worker's plan on any number of
 * processes, staff's Charge now, a new payment method) can have two charges of one renewal open at once, or open
 * one after a charge took the money. A charge closes only on the provider's word: taken, declined, cancelled (and
 * read back as cancelled), or its request refused with nothing made. No answer leaves it open.
 *
 * Payments owns this; dunning decides when to charge and on what, and asks here.
 */
export class ChargeLedger {
  constructor(private readonly deps: {
    charges: ChargeLedgerRepository;
    orderWrites: OrderWriteRepository;
    cardGateway: CardGatewayClient;
    mobileWallet: MobileWalletClient;
    /** Whether the renewal still wants money: asked as a charge opens and again just before its request leaves. */
    renewals: RenewalFacts;
    settings: Pick<ShopSettingsRepository, 'current'>;
    log: Logger;
    clock: () => Date;
  }) {}

  get repository(): ChargeLedgerRepository {
    return this.deps.charges;
  }

  /**
   * Opens `charge` for its renewal, or finds what stands in the way: under the order's row lock, the order must still
   * await payment, `guard` (the caller's own rule, such as the caps, under the same transaction) must allow it, and
   * the renewal's slot must be free. An open charge of the same dunning attempt (`charge.retryId`) is that attempt's
   * charge, whose answer never came: it is returned to be asked again with its own identifiers.
   */
  async open<Refusal>(charge: NewCharge, settings: ShopSettings, guard: (db: Transaction) => Promise<Refusal | null>): Promise<
    { kind: 'opened' | 'resumed'; charge: ChargeRecord } | NotOpened<Refusal>> {
    return this.deps.orderWrites.transaction(async (db) => {
      // Under the order's and the case's row locks: a payment or a case closing at this moment comes first or waits.
      const wants = await this.deps.renewals.wants(db, charge, settings, { locked: true });
      if (!wants.wants) {
        if (wants.reason.startsWith('order_')) return { kind: 'order_moved_on' as const, status: wants.reason === 'order_gone' ? null : wants.reason.slice('order_'.length) };
        return { kind: 'unwanted' as const, reason: wants.reason };
      }
      const refusal = await guard(db);
      if (refusal !== null) return { kind: 'guarded' as const, refusal };
      const opened = await this.deps.charges.openCharge(db, charge, this.deps.clock());
      if (opened.kind === 'opened') return { kind: 'opened' as const, charge: opened.charge };
      if (opened.kind === 'taken') return { kind: 'taken' as const, charge: opened.charge };
      const resumable = opened.charge.retryId !== null && opened.charge.retryId === charge.retryId && opened.charge.state === 'OPEN' && !opened.charge.cancelWantedAt;
      return resumable ? { kind: 'resumed' as const, charge: opened.charge } : { kind: 'under_way' as const, charge: opened.charge };
    });
  }

  /**
   * Sends the open charge's request, exactly as written (handle, key, body), and reads its answer. No answer: the
   * charge stays open and counts one more unanswered request. A refusal closes it REFUSED only when the provider
   * can have made nothing: the first request refused, or the charge read back and not there.
   */
  async send(charge: ChargeRecord): Promise<ChargeAnswer> {
    const now = this.deps.clock();
    const settings = await this.deps.settings.current();
    // The rule asked again just before the request leaves, under the same locks as the opening: the customer may have
    // cancelled, the order been paid or trashed, the deadline come, since the charge opened. Whoever withdrew the
    // charge first (Stop dunning, the settle pass, this) wins: its cancel never races a create.
    const marked = await this.deps.orderWrites.transaction(async (db) => {
      const wants = await this.deps.renewals.wants(db, charge, settings, { locked: true });
      if (!wants.wants) {
        await this.deps.charges.wantCancelled(db, charge.id, wants.reason, now);
        return false;
      }
      return this.deps.charges.markSent(charge.id, now, db);
    });
    if (!marked) return { kind: 'withdrawn', charge: (await this.deps.charges.find(charge.id)) ?? charge };
    const sent = { ...charge, sends: charge.sends + 1 };
    // It leaves within SEND_WINDOW_MS or never (request-limits.ts), so it cannot arrive after the ledger's in-flight bound.
    const leaveBy = Date.now() + SEND_WINDOW_MS;
    try {
      if (charge.provider === 'card_gateway') {
        const result = await this.deps.cardGateway.createCharge({
          handle: charge.externalId, key: charge.idempotencyKey, amount: charge.amountMinor, currency: charge.currency, source: charge.paymentMethod,
          customerHandle: charge.customerHandle ?? undefined, settle: true, recurring: true, ordertext: charge.description, leaveBy,
        });
        if (result.ok) return cardAnswer(sent, result.value);
        return await this.failed(sent, result);
      }
      const result = await this.deps.mobileWallet.createCharge(charge.paymentMethod, walletChargeBody(charge), charge.idempotencyKey, leaveBy);
      if (result.ok) return { kind: 'pending', charge: sent };
      return await this.failed(sent, result);
    } finally {
      await this.deps.charges.sendEnded(charge.id);
    }
  }

  /** A request the provider did not answer with a charge. */
  private async failed(charge: ChargeRecord, failure: ProviderFailure): Promise<ChargeAnswer> {
    const status = failure.status ?? (failure.kind === 'not_found' ? 404 : undefined);
    const message = `${failure.kind} ${failure.status ?? ''} ${failure.message}`.replace(/\s+/g, ' ').trim();
    if (unanswered(failure)) {
      await this.deps.charges.markUnanswered(charge.id, `no answer: ${message}`, this.deps.clock());
      return { kind: 'unreachable', charge: { ...charge, unanswered: charge.unanswered + 1 }, message };
    }
    const code = failure.code === undefined ? null : String(failure.code);
    // The card gateway's 147: the payment method is in failed state, a decline of the customer's card.
    if (charge.provider === 'card_gateway' && code === FAILED_PAYMENT_METHOD_CODE) {
      return { kind: 'declined', charge, failure: { code, description: failure.message, state: 'hard_declined' } };
    }
    // The wallet refuses a charge above the agreement's maximum: the customer must raise it (or the price change).
    if (charge.provider === 'mobile_wallet' && /amount-too-high|amount_too_high/.test(`${code ?? ''} ${failure.message}`)) {
      return { kind: 'declined', charge, failure: { code: 'charge_amount_too_high', description: failure.message, state: null } };
    }
    // The same key with another body (409), or a refusal after a request whose answer was lost: the charge may exist.
    if (status === 409 || charge.unanswered > 0) {
      const read = await this.readBack(charge);
      if (read.kind !== 'absent') return read.answer;
    }
    await this.closeRefused(charge, `refused: ${message}`);
    return { kind: 'refused', charge, status: status ?? null, code, message: failure.message };
  }

  private async closeRefused(charge: ChargeRecord, why: string): Promise<void> {
    await this.deps.orderWrites.transaction((db) => this.deps.charges.close(db, charge, 'REFUSED', why, this.deps.clock()));
  }

  /** What the provider holds under the charge's identifiers. */
  private async readBack(charge: ChargeRecord): Promise<{ kind: 'answer'; answer: ChargeAnswer } | { kind: 'absent' }> {
    const read = charge.provider === 'card_gateway'
      ? await this.deps.cardGateway.getCharge(charge.externalId)
      : await this.deps.mobileWallet.getCharge(charge.paymentMethod, charge.externalId);
    if (!read.ok) {
      if (read.kind === 'not_found') return { kind: 'absent' };
      const message = `reading charge ${charge.externalId}: ${read.kind} ${read.status ?? ''} ${read.message}`.replace(/\s+/g, ' ').trim();
      return { kind: 'answer', answer: { kind: 'unreachable', charge, message } };
    }
    return { kind: 'answer', answer: charge.provider === 'card_gateway' ? cardAnswer(charge, read.value as CardGatewayCharge) : walletAnswer(charge, read.value as MobileWalletCharge) };
  }

  /** Whether the provider took the money on an open charge, read back now: its status then (and the step's transaction), else null (not yet, declined, unknown). */
  async takenAtProvider(charge: ChargeRecord): Promise<{ status: 'CAPTURED' | 'AUTHORIZED'; transaction?: string } | null> {
    const read = await this.readBack(charge);
    return read.kind === 'answer' && read.answer.kind === 'paid' ? { status: read.answer.status, transaction: read.answer.transaction } : null;
  }

  /**
   * An open charge read back at its provider, and closed when the provider's record is final without money taken:
   * declined, cancelled, or never made there (not found, its last request long enough ago). True when it closed.
   * A charge the provider took stays open for its webhook or reconciliation to record as the payment it is.
   */
  async closeIfFinal(charge: ChargeRecord): Promise<boolean> {
    const now = this.deps.clock();
    const read = await this.readBack(charge);
    let state: 'DECLINED' | 'CANCELED' | null = null;
    let why = '';
    if (read.kind === 'absent') {
      if (!neverMade(charge, now)) return false;
      return this.deps.orderWrites.transaction((db) => this.deps.charges.closeNeverMade(db, charge, 'never made at the provider', now));
    } else if (read.answer.kind === 'declined') {
      [state, why] = ['DECLINED', `declined at the provider: ${read.answer.failure.code ?? ''}`];
    } else if (read.answer.kind === 'cancelled') {
      [state, why] = ['CANCELED', 'cancelled at the provider'];
    }
    if (!state) return false;
    const closing = state;
    return this.deps.orderWrites.transaction((db) => this.deps.charges.close(db, charge, closing, why, now));
  }

  /**
   * Inside the transaction that moves a payment: the open charge of the ledger with the payment's provider ID is
   * closed by the provider's word that the payment carries, and linked to it.
   */
  async onPaymentMoved(db: Executor, payment: { id: number; provider: ChargeRecord['provider']; externalId: string }, to: PaymentStatus, now: Date, settings: ShopSettings): Promise<void> {
    const open = await this.deps.charges.openOf(db, payment.provider, payment.externalId);
    if (!open) return;
    if (open.paymentId === null) await this.deps.charges.attachPayment(db, open.id, payment.id, now);
    const state = to === 'FAILED' ? 'DECLINED' : to === 'CANCELED' ? 'CANCELED' : 'TAKEN';
    const forNobody = state === 'TAKEN' ? await this.takenForNobody(db, open, now, settings) : null;
    const takenAfterCancel = state === 'TAKEN' && (open.cancelWantedAt !== null || forNobody !== null);
    const closed = await this.deps.charges.close(db, open, state, takenAfterCancel ? `payment ${to} after its cancel was asked (${open.cancelReason ?? 'unwanted'})` : `payment ${to}`, now);
    // The second-capture sweep flags it for staff when the renewal had been paid in the shop (second-captures.ts).
    if (closed && takenAfterCancel) {
      this.deps.log.error('charge_taken_after_cancel', { orderId: open.orderId, provider: open.provider, externalId: open.externalId, reason: open.cancelReason });
    }
  }

  /**
   * The ledger's charge (in any state) that is this payment, if the service made it: its own retries, staff's
   * Charge now, the charge after a new payment method. Null for a payment the service did not ask for (the shop's
   * checkout, the plugins' own charges).
   */
  async chargeOfPayment(db: Executor, payment: { provider: ChargeRecord['provider']; externalId: string; orderId: number | null }): Promise<ChargeRecord | null> {
    if (payment.orderId === null) return null;
    const charges = await this.deps.charges.chargesOfOrder(payment.orderId, db);
    return charges.find((charge) => charge.provider === payment.provider && charge.externalId === payment.externalId) ?? null;
  }

  /**
   * Money taken on `charge`, inside the transaction that records it and before the order is completed, asked of the
   * rule. Wanted: nothing to say. Not wanted, the charge says why (the reason it was withdrawn for, or the rule's),
   * and the operator is told (`charge_taken_unwanted`). When its renewal wanted no money at all any more (the order
   * paid or closed in the shop, the subscription ended), the charge names that reason, for the second-capture sweep
   * to flag it on the order and in the Payments panel and the operator's alert (SidecarSecondCapture) to fire: that
   * reason is returned. Otherwise (the subscription had moved to the other provider, staff had stopped dunning) the
   * money paid an order that was still unpaid, once: recorded and completed, logged as a warning, not flagged; null.
   */
  async takenForNobody(db: Executor, charge: ChargeRecord, now: Date, settings: ShopSettings): Promise<UnwantedReason | null> {
    // The caller's settings, read before its transaction: read here they could ask the pool inside it.
    const wants = await this.deps.renewals.wants(db, charge, settings, { locked: true });
    if (wants.wants) return null;
    const nobody = takenForNobody(wants.reason);
    if (nobody || charge.cancelReason === null) await this.deps.charges.markTakenFor(db, charge.id, nobody ? wants.reason : (charge.cancelReason ?? wants.reason), now);
    const line = { orderId: charge.orderId, provider: charge.provider, externalId: charge.externalId, reason: wants.reason, flagged: nobody };
    if (nobody) this.deps.log.error('charge_taken_unwanted', line);
    else this.deps.log.warn('charge_taken_unwanted', line);
    return nobody ? wants.reason : null;
  }

  /**
   * The renewal's open charge is no longer wanted (paid another way, cancelled, dunning stopped, a new method): marked,
   * to be cancelled, as stored; `first` for the one withdrawal that marked it (by one conditional update), so that of
   * two callers at once only one asks the provider to cancel.
   */
  async withdraw(db: Executor, orderId: number, reason: string, now: Date): Promise<{ charge: ChargeRecord; first: boolean } | null> {
    // A locking read: the latest open charge, even one opened after this transaction's first read.
    const open = await this.deps.charges.lockOpenOfOrder(db, orderId);
    if (!open) return null;
    const first = await this.deps.charges.wantCancelled(db, open.id, reason, now);
    const charge = await this.deps.charges.find(open.id, db);
    return charge ? { charge, first } : null;
  }

  /**
   * Cancels an open charge at its provider and confirms it: cancelled there (or never made there) closes it
   * CANCELED; a cancel accepted but not enacted (202) leaves it CANCELING until read back final; a charge the
   * provider took or declined before the cancel is closed by that word, and told to the caller to record.
   */
  async cancel(charge: ChargeRecord, key: 'first' | 'found' = 'first'): Promise<CancelOutcome> {
    const now = this.deps.clock();
    if (charge.state === 'CANCELING') return this.confirmCancel(charge);
    const answer: { ok: true; status?: number; state?: string } | ProviderFailure = charge.provider === 'mobile_wallet'
      ? await this.deps.mobileWallet.cancelCharge(charge.paymentMethod, charge.externalId, cancelKey(charge.externalId, key))
      : await this.deps.cardGateway.cancelCharge(charge.externalId).then((read) => (read.ok ? { ok: true as const, state: read.value?.state } : read));
    if (answer.ok) {
      if (charge.provider === 'card_gateway') {
        if (answer.state && answer.state !== 'cancelled') return this.confirmCancel(charge);
      } else if (answer.status === 202) {
        // CancelChargeV3: 202 "accepted, will likely succeed but has not yet been enacted".
        await this.deps.charges.markCanceling(charge.id, 'cancel accepted (202), not yet enacted', now);
        return { kind: 'canceling', charge: { ...charge, state: 'CANCELING' } };
      }
      await this.deps.orderWrites.transaction((db) => this.deps.charges.close(db, charge, 'CANCELED', 'cancelled at the provider', now));
      return { kind: 'cancelled', charge };
    }
    if (unanswered(answer)) {
      const message = `cancelling: ${answer.kind} ${answer.status ?? ''} ${answer.message}`.replace(/\s+/g, ' ').trim();
      await this.deps.charges.note(charge.id, message, now);
      return { kind: 'unreachable', charge, message };
    }
    // Refused (already taken or declined, or not there): the provider's record decides.
    const confirmed = await this.confirmCancel(charge);
    if (confirmed.kind === 'canceling' && charge.provider === 'mobile_wallet' && answer.status === 404 && key === 'first') {
      // The wallet keeps its answer to an Idempotency-Key: a first cancel that found no charge (its create request was
      // still on its way) is answered 404 under that key ever after. The charge is there now and still to be taken:
      // it is cancelled under a key of its own, the same for each try of that one.
      return this.cancel(charge, 'found');
    }
    return confirmed;
  }

  /** Reads back a charge whose cancel was asked for: final there closes it; still open stays open. */
  private async confirmCancel(charge: ChargeRecord): Promise<CancelOutcome> {
    const now = this.deps.clock();
    const read = await this.readBack(charge);
    if (read.kind === 'absent') {
      if (!neverMade(charge, now)) {
        return { kind: 'unreachable', charge, message: `charge ${charge.externalId} not at the provider yet; its request may still arrive` };
      }
      const closed = await this.deps.orderWrites.transaction((db) => this.deps.charges.closeNeverMade(db, charge, 'never made at the provider', now));
      if (!closed) return { kind: 'unreachable', charge, message: `charge ${charge.externalId} not at the provider yet; its request may still arrive` };
      return { kind: 'cancelled', charge };
    }
    const answer = read.answer;
    switch (answer.kind) {
      case 'cancelled':
        await this.deps.orderWrites.transaction((db) => this.deps.charges.close(db, charge, 'CANCELED', 'cancelled at the provider', now));
        return { kind: 'cancelled', charge };
      case 'paid':
        return { kind: 'taken', charge, status: answer.status, transaction: answer.transaction };
      case 'declined':
        return { kind: 'declined', charge, failure: answer.failure };
      case 'unreachable':
        return { kind: 'unreachable', charge, message: answer.message };
      default:
        return { kind: 'canceling', charge };
    }
  }

  /** Every open charge, oldest first, for the sweep that settles them. */
  openCharges(limit: number): Promise<ChargeRecord[]> {
    return this.deps.charges.openCharges(limit);
  }
}

/** Whether a charge the provider does not know can no longer appear there: never sent, or its last request long ago. */
function neverMade(charge: ChargeRecord, now: Date): boolean {
  if (charge.sends === 0 || !charge.lastSentAt) return true;
  return now.getTime() - Date.parse(`${charge.lastSentAt.replace(' ', 'T')}Z`) >= NEVER_MADE_AFTER_MS;
}

function cardAnswer(charge: ChargeRecord, read: CardGatewayCharge): ChargeAnswer {
  // The charge's `transaction` is its last step's: the settle that took the money.
  if (read.state === 'settled') return { kind: 'paid', charge, status: 'CAPTURED', ...(read.transaction ? { transaction: read.transaction } : {}) };
  if (read.state === 'authorized') return { kind: 'paid', charge, status: 'AUTHORIZED' };
  if (read.state === 'failed') {
    return { kind: 'declined', charge, failure: { code: read.error ?? read.state, description: read.source?.acquirer_message ?? read.error ?? null, state: read.error_state ?? null } };
  }
  if (read.state === 'cancelled') return { kind: 'cancelled', charge };
  return { kind: 'pending', charge };
}

function walletAnswer(charge: ChargeRecord, read: MobileWalletCharge): ChargeAnswer {
  if (['CHARGED', 'PARTIALLY_CAPTURED', 'REFUNDED', 'PARTIALLY_REFUNDED'].includes(read.status)) return { kind: 'paid', charge, status: 'CAPTURED' };
  if (read.status === 'RESERVED') return { kind: 'paid', charge, status: 'AUTHORIZED' };
  if (read.status === 'FAILED') return { kind: 'declined', charge, failure: { code: read.failureReason ?? null, description: read.failureDescription ?? null, state: walletFailureState(read) } };
  if (read.status === 'CANCELLED') return { kind: 'cancelled', charge };
  // PENDING, DUE, PROCESSING, UNKNOWN: the wallet may still take it.
  return { kind: 'pending', charge };
}

/**
 * The body of a wallet charge's request, the same on every repeat (the same Idempotency-Key with another body is
 * 409). A charge with `retryDays` is one RECURRING charge that the wallet retries itself: daily from `due` through
 * `retryDays` days after it, staying DUE meanwhile, then CHARGED or FAILED ("Charge retries", "Charge states",
 * vippsas/vipps-recurring-api recurring-api-guide.md; retryDays 0-14, MULTIPLE_ATTEMPTS the default, vippsas/agent-toolkit
 * plugins/vipps/skills/recurring/SKILL.md: "Do not build your own retry loop for RECURRING charges"). A charge
 * written without them (before the wallet retried the service's charges) is one attempt, as it was first sent.
 */
export function walletChargeBody(charge: Pick<ChargeRecord, 'amountMinor' | 'description' | 'due' | 'retryDays' | 'externalId'>): CreateMobileWalletChargeInput {
  const base = { amount: charge.amountMinor, description: charge.description.slice(0, 45), transactionType: 'DIRECT_CAPTURE' as const, due: charge.due ?? undefined, type: 'RECURRING' as const, orderId: charge.externalId };
  return charge.retryDays === null || charge.retryDays === undefined
    ? { ...base, retryDays: 0, processingMode: 'SINGLE_ATTEMPT' }
    : { ...base, retryDays: charge.retryDays, processingMode: 'MULTIPLE_ATTEMPTS' };
}

/**
 * The wallet's Idempotency-Key of a cancellation: 1-40 characters, the same for each try of the same one. `found`: the
 * cancellation of a charge found at the wallet after a first cancel had found none (whose 404 the wallet keeps for its key).
 */
export function cancelKey(chargeId: string, which: 'first' | 'found' = 'first'): string {
  const prefix = which === 'first' ? 'cancel-' : 'cancel-found-';
  const key = `${prefix}${chargeId}`;
  return key.length <= 40 ? key : `${prefix}${crypto.createHash('sha256').update(chargeId).digest('hex').slice(0, 40 - prefix.length)}`;
}
