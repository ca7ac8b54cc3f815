import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { Transaction, type Executor } from '../data-access/transaction';
import type { Logger } from '../logger';
import { orderNoteWords, type ChargeCancelledBecause } from '../shop/order-note-words';
import { gmtDateTimeMs } from '../shop/shop-time';
import type { CardGatewayClient } from './providers/card-gateway/client';
import type { MobileWalletClient } from './providers/mobile-wallet/client';
import type { PaymentRecorder } from './payment-recorder';
import { cancelKey } from './charge-ledger';
import { unanswered } from './providers/http-request';

/**
 * Payment meta of a charge of the service's that staff no longer want, set when they stop dunning of its renewal:
 * who stopped it. Reconciliation cancels it like an unwanted charge when the call right after could not be made.
 */
export const DUNNING_STOPPED_META = 'dunning_stopped_by';

/** Order statuses in which the shop holds the renewal as paid, whichever way it was paid. */
const PAID_ORDER_STATUSES = ['processing', 'completed'];

/** What became of a charge the renewal no longer needs. */
export type CancelOutcome =
  | { kind: 'cancelled'; note: string }
  | { kind: 'still_wanted' }
  | { kind: 'unreachable'; message: string }
  | { kind: 'refused'; message: string };

/**
 * One renewal, one payment: a charge the service created for a renewal that the provider still holds (the
 * wallet's PENDING or DUE charge, which it takes on its due date unless cancelled; a card charge still
 * pending) is cancelled at the provider as soon as the renewal is paid another way. The wish is stored with
 * the payment that paid (payment meta `cancel_wanted`), so reconciliation carries it out if the call right
 * after the commit could not be made.
 */
export class UnwantedCharges {
  constructor(private readonly deps: {
    payments: PaymentRepository;
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    settings: ShopSettingsRepository;
    cardGateway: CardGatewayClient;
    mobileWallet: MobileWalletClient;
    log: Logger;
    clock: () => Date;
    recorder: Pick<PaymentRecorder, 'move'>;
  }) {}

  /**
   * Inside the transaction that records `paid` as paid: each other charge of its order still open at the
   * provider is marked unwanted, and cancelled right after the commit.
   */
  async onOrderPaid(db: Executor, paid: PaymentRecord, now: Date): Promise<void> {
    if (paid.orderId === null) return;
    // One statement when nothing else of the order is open (the usual case); the meta only of what is.
    for (const payment of await this.deps.payments.ofOrder(paid.orderId, db)) {
      if (payment.id === paid.id || payment.status !== null) continue;
      const other = { ...payment, meta: await this.deps.payments.meta(payment.id, db) };
      if (other.meta.cancel_wanted || !cancellable(other)) continue;
      await this.deps.payments.setMeta(db, other.id, { cancel_wanted: gmtDateTimeMs(now), cancel_because: paid.externalId });
      if (db instanceof Transaction) {
        db.afterCommit(() => {
          void this.cancelIfUnwanted(other.id).then((outcome) => {
            if (outcome.kind === 'unreachable') this.deps.log.warn('unwanted_charge_not_cancelled_yet', { paymentId: other.id, reason: outcome.message });
          }, (error: unknown) => this.deps.log.error('unwanted_charge_cancel_failed', { paymentId: other.id, error }));
        });
      }
    }
  }

  /** Every open charge of the order that it no longer needs (it is paid), cancelled at the provider. */
  async cancelOpenOfOrder(orderId: number): Promise<CancelOutcome[]> {
    return this.cancelOpenOf(orderId, () => true);
  }

  /** The charges of the service still open for the order that staff no longer want (they stopped its dunning), cancelled at the provider. */
  async cancelStoppedOfOrder(orderId: number): Promise<CancelOutcome[]> {
    return this.cancelOpenOf(orderId, (payment) => Boolean(payment.meta[DUNNING_STOPPED_META]));
  }

  private async cancelOpenOf(orderId: number, which: (payment: PaymentRecord & { meta: Record<string, string> }) => boolean): Promise<CancelOutcome[]> {
    const outcomes: CancelOutcome[] = [];
    for (const payment of await this.deps.payments.listByOrder(orderId)) {
      if (payment.status === null && which(payment) && cancellable(payment)) outcomes.push(await this.cancelIfUnwanted(payment.id));
    }
    return outcomes;
  }

  /**
   * The open charge `paymentId`, cancelled at its provider when its order is paid: by another payment, or in
   * the shop (its status). Reconciliation asks this of every open charge it looks at.
   */
  async cancelIfUnwanted(paymentId: number): Promise<CancelOutcome> {
    const { payments, log } = this.deps;
    const payment = await payments.findById(paymentId);
    if (!payment || payment.status !== null || payment.orderId === null) return { kind: 'still_wanted' };
    const ofOrder = await payments.listByOrder(payment.orderId);
    const self = ofOrder.find((p) => p.id === payment.id);
    if (!self || !cancellable(self)) return { kind: 'still_wanted' };
    const paidBy = ofOrder.find((p) => p.id !== payment.id && (p.status === 'CAPTURED' || p.status === 'AUTHORIZED'));
    const settings = await this.deps.settings.current();
    const byPayment = paidBy?.externalId ?? (self.meta.cancel_because || null);
    // Staff stopped dunning of the renewal: a charge of the service's still open for it is not wanted either.
    const stoppedBy = self.meta[DUNNING_STOPPED_META] || null;
    let because: ChargeCancelledBecause;
    if (byPayment) {
      because = { kind: 'payment', reference: byPayment };
    } else if (stoppedBy) {
      because = { kind: 'dunning_stopped', by: stoppedBy };
    } else {
      const order = await this.deps.orders.findById(payment.orderId, settings);
      if (!order || !PAID_ORDER_STATUSES.includes(order.status)) return { kind: 'still_wanted' };
      because = { kind: 'shop', orderStatus: order.status };
    }

    const answer = payment.provider === 'mobile_wallet'
      ? await this.deps.mobileWallet.cancelCharge(self.meta.agreement_id, payment.externalId, cancelKey(payment.externalId))
      : await this.deps.cardGateway.cancelCharge(payment.externalId);
    if (!answer.ok) {
      const message = `${answer.kind}${answer.status ? ` ${answer.status}` : ''} ${answer.message}`.trim();
      if (unanswered(answer)) return { kind: 'unreachable', message };
      // Refused: most likely the provider took it already. Its capture then reaches the order's payments
      // (webhook or reconciliation), where a second capture is flagged for staff to refund.
      log.warn('unwanted_charge_cancel_refused', { paymentId, provider: payment.provider, externalId: payment.externalId, message });
      return { kind: 'refused', message };
    }
    if (payment.provider === 'mobile_wallet' && 'status' in answer && answer.status === 202) {
      // CancelChargeV3's 202: "accepted, will likely succeed but has not yet been enacted". Not cancelled until the
      // wallet says so: the charge stays open, and the worker's pass over open charges reads it back.
      log.info('unwanted_charge_cancel_accepted', { paymentId, provider: payment.provider, externalId: payment.externalId });
      return { kind: 'unreachable', message: 'cancel accepted (202), not yet enacted' };
    }
    const note = await this.recordCancelled(payment, because, settings);
    log.info('unwanted_charge_cancelled', { paymentId, provider: payment.provider, externalId: payment.externalId, orderId: payment.orderId });
    return { kind: 'cancelled', note };
  }

  /**
   * A payment of the service's that its provider confirmed cancelled: moved to CANCELED (what the ledger hears too),
   * stamped, and noted on its order with why it was cancelled, once whoever else confirms it too. The note's text.
   */
  async recordCancelled(payment: PaymentRecord, because: ChargeCancelledBecause, settings: ShopSettings): Promise<string> {
    const { payments, orderWrites, recorder } = this.deps;
    const now = this.deps.clock();
    const note = orderNoteWords(settings).chargeCancelled({ provider: payment.provider, reference: payment.externalId, paidBy: because });
    await orderWrites.transaction(async (db) => {
      const locked = await payments.lock(db, payment.provider, payment.externalId);
      // Under the payment's lock: a second canceller (the settle pass, Stop dunning, reconciliation) that confirmed the
      // same cancellation finds it recorded, and notes nothing twice.
      if (!locked || locked.status !== null) return;
      await recorder.move(db, locked, 'CANCELED', settings, now);
      await payments.setMeta(db, payment.id, { cancelled_at: gmtDateTimeMs(now) });
      await orderWrites.addNote(db, payment.orderId!, note, settings, now);
    });
    return note;
  }
}

/** A charge the service can cancel: a wallet charge on a known agreement, or a card charge it created. */
function cancellable(payment: PaymentRecord & { meta: Record<string, string> }): boolean {
  if (payment.provider === 'mobile_wallet') return Boolean(payment.meta.agreement_id);
  return Boolean(payment.meta.retry_of);
}
