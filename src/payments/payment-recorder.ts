import type { PaymentStatus } from '../../entities';
import type { Executor } from '../data-access/transaction';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { SavedCardRepository } from '../data-access/saved-card-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { FailedPaymentHandling, PaymentFailure } from './failed-payment-handling';
import type { RenewalPaymentCompletion } from './payment-completion';
import { RENEWAL_PAID, type PaymentEvents } from './payment-events';
import type { ChargeLedger } from './charge-ledger';
import { paymentCanMove } from './payment-status';
import { gmtDateTimeMs } from '../shop/shop-time';
import { orderNoteWords } from '../shop/order-note-words';
import { pluginPaymentMetas, type PluginPaymentMetas } from './plugin-payment-metas';
import { minorToShopAmount } from '../shared/currency';

export type MoveOutcome = { moved: true; note: string } | { moved: false; note: string };

/** What the provider said besides the new status. */
export interface MoveDetails {
  /** Why a payment failed (a move to FAILED). */
  failure?: PaymentFailure;
  /** When the provider reserved or took the money, as it says; the order's date_paid and its note carry it. */
  providerTime?: Date | null;
  /** Reconciliation found the change by asking the provider (no webhook told of it). */
  via?: 'reconciliation';
  /** The provider's ID of the step that took the money (the card gateway's settle transaction), when it named one. */
  providerTransaction?: string;
}

const PAID: readonly (PaymentStatus | null)[] = ['AUTHORIZED', 'CAPTURED'];

/**
 * The one place a payment changes status, with the failure meta and the failed-payment handling, and what
 * the order hears when money comes in, whether the provider says so in its answer to a dunning attempt or
 * later by webhook (the mobile wallet always does it later). With the companion plugin WooCommerce is told
 * of every order's payment: reserved money puts an order awaiting payment on hold, taken money completes
 * it (`payment_complete()`, and for a renewal Subscriptions reactivates its subscription). Without it the
 * service completes what it must itself: a renewal whose payment had failed.
 */
export class PaymentRecorder {
  constructor(
    private readonly payments: PaymentRepository,
    private readonly failed: FailedPaymentHandling,
    private readonly renewals: RenewalPaymentCompletion,
    private readonly changes: WooCommerceChangeRepository,
    private readonly retries: Pick<RetryRepository, 'cancelPendingOfOrder'>,
    private readonly events: Pick<PaymentEvents, 'emit'>,
    private readonly ledger?: Pick<ChargeLedger, 'onPaymentMoved' | 'withdraw'> & Partial<Pick<ChargeLedger, 'chargeOfPayment'>>,
    private readonly savedCards?: Pick<SavedCardRepository, 'cardPluginTokenId'>,
  ) {}

  async move(db: Executor, payment: PaymentRecord, to: PaymentStatus, settings: ShopSettings, now: Date, details: MoveDetails = {}): Promise<MoveOutcome> {
    const { failure, providerTime } = details;
    if (payment.status === to) return { moved: false, note: `payment already ${to}` };
    if (!paymentCanMove(payment.status, to)) return { moved: false, note: `payment is ${payment.status}; not moved back to ${to}` };
    const was = payment.status;
    const wasPaid = PAID.includes(was);
    await this.payments.setStatus(db, payment.id, to, gmtDateTimeMs(now));
    payment.status = to;
    // The ledger's charge of this payment closes on the provider's word the payment now carries.
    if (to !== 'REFUNDED') await this.ledger?.onPaymentMoved(db, payment, to, now, settings);
    if (PAID.includes(to) && payment.orderId !== null) {
      // As Subscriptions drops its retries once the order is paid: no attempt waits to charge a paid order.
      await this.retries.cancelPendingOfOrder(db, payment.orderId, `order paid: payment ${payment.externalId} is ${to}`, now);
      await this.events.emit(RENEWAL_PAID, { payment, meta: () => this.payments.meta(payment.id, db), via: details.via, now }, db);
      // One renewal, one payment: what else the service asked the providers to take for it is cancelled (the ledger's
      // open charge here; the payments still open, by UnwantedCharges, which hears RENEWAL_PAID).
      await this.ledger?.withdraw(db, payment.orderId, 'order_paid', now);
    }
    // A charge of the service's own pays the order as the provider's plugin would have: with the metas the plugin
    // reads to refund, capture or check it (plugin-payment-metas.ts), in the same change as the payment.
    const own = PAID.includes(to) && was !== 'CAPTURED' ? await this.ledger?.chargeOfPayment?.(db, payment) : null;
    const savedCardId = own?.provider === 'card_gateway' ? (await this.savedCards?.cardPluginTokenId(db, own.paymentMethod)) ?? null : null;
    const meta = own
      ? pluginPaymentMetas(own, to as 'CAPTURED' | 'AUTHORIZED', savedCardId, details.providerTransaction ?? null)
      : to === 'CAPTURED' && was !== 'CAPTURED' ? await this.laterCaptureMetas(db, payment, details.providerTransaction ?? null) : undefined;
    if (settings.companion && PAID.includes(to) && was !== 'CAPTURED' && payment.orderId !== null) {
      const captured = to === 'CAPTURED';
      const note = orderNoteWords(settings).paymentReceived({ reference: payment.externalId, captured, at: providerTime ?? null });
      await this.changes.enqueue(db, captured
        ? {
          op: 'order_payment_complete', objectId: payment.orderId,
          payload: { transaction_id: payment.externalId, note, ...(providerTime ? { paid_at: Math.floor(providerTime.getTime() / 1000) } : {}), ...(meta ? { meta } : {}) },
        }
        : { op: 'order_payment_authorized', objectId: payment.orderId, payload: { transaction_id: payment.externalId, note, ...(meta ? { meta } : {}) } },
      settings, now);
      return { moved: true, note: `payment ${to}; handed to WooCommerce` };
    }
    if (PAID.includes(to) && !wasPaid && payment.orderId !== null) {
      const completion = await this.renewals.complete(db, { orderId: payment.orderId, reference: payment.externalId, settings, now, paidAt: providerTime, meta });
      if (completion) return { moved: true, note: `payment ${to}; ${completion}` };
    }
    if (to !== 'FAILED') return { moved: true, note: `payment ${to}` };
    await this.payments.setMeta(db, payment.id, {
      failure_code: failure?.code ?? '',
      failure_description: failure?.description ?? '',
      failure_state: failure?.state ?? '',
    });
    const consequence = await this.failed.apply(db, payment, failure ?? { code: null, description: null, state: null }, settings, now);
    return { moved: true, note: `payment FAILED; ${consequence}` };
  }

  /**
   * Money the provider returned on this payment, shown refunded in WooCommerce however it was refunded: from the order
   * screen by the provider's plugin (whose answer may have been lost, leaving WooCommerce without the refund), in the
   * provider's administration or portal, or by another system. The payment's refunded total at the provider is handed
   * over, so a later partial refund is heard though the payment is REFUNDED already; WooCommerce refunds only what the
   * order does not have yet. Only with the companion, for a payment of an order, and money refunded. True when handed.
   */
  async handOverRefund(
    db: Executor, payment: PaymentRecord, refund: { refundedMinor: number; currency: string; reason: string; creditNoteIds?: string[] }, settings: ShopSettings, now: Date,
  ): Promise<boolean> {
    if (!settings.companion || payment.orderId === null || refund.refundedMinor <= 0) return false;
    await this.changes.enqueue(db, {
      op: 'order_refunded',
      objectId: payment.orderId,
      payload: {
        refunded_total: minorToShopAmount(payment.provider, refund.currency, refund.refundedMinor, settings.priceDecimals),
        reason: refund.reason,
        ...(refund.creditNoteIds?.length ? { credit_note_ids: refund.creditNoteIds } : {}),
      },
    }, settings, now);
    return true;
  }

  /**
   * A capture the service did not ask for (the failed invoice settled at the gateway after all, a charge of the
   * wallet's own) on an order another payment of which was captured already: paid twice. The later capture is the
   * one to refund, so the order names it where the provider's plugin looks for the money (its Refund button refunds
   * what these metas name); the first is left as it was paid. Nothing when the order was not paid before.
   */
  private async laterCaptureMetas(db: Executor, payment: PaymentRecord, captureTransaction: string | null): Promise<PluginPaymentMetas | undefined> {
    if (payment.orderId === null) return undefined;
    const paidBefore = (await this.payments.ofOrder(payment.orderId, db)).some((other) => other.id !== payment.id && other.status === 'CAPTURED');
    if (!paidBefore) return undefined;
    // A wallet charge is refunded through its agreement: without it, the plugin could not refund it either.
    const paymentMethod = payment.provider === 'mobile_wallet' ? (await this.payments.meta(payment.id, db)).agreement_id ?? '' : '';
    if (payment.provider === 'mobile_wallet' && paymentMethod === '') return undefined;
    return pluginPaymentMetas({ provider: payment.provider, externalId: payment.externalId, paymentMethod }, 'CAPTURED', null, captureTransaction);
  }
}
