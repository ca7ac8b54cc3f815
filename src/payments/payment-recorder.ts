import type { PaymentStatus } from '../../entities';
import type { Executor } from '../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { FailedPaymentHandling, PaymentFailure } from './failed-payment-handling';
import type { RenewalPaymentCompletion } from './payment-completion';
import { paymentCanMove } from './payment-status';
import { gmtDateTimeMs } from '../shop/shop-time';

export type MoveOutcome = { moved: true; note: string } | { moved: false; note: string };

const PAID: readonly (PaymentStatus | null)[] = ['AUTHORIZED', 'CAPTURED'];

/**
 * The one place a payment changes status, with the failure meta and the failed-payment handling, and the
 * completion of a failed renewal when a payment of it goes through, whether the provider says so in its
 * answer to a dunning attempt or later by webhook (the mobile wallet always does it later).
 */
export class PaymentRecorder {
  constructor(
    private readonly payments: PaymentRepository,
    private readonly failed: FailedPaymentHandling,
    private readonly renewals: RenewalPaymentCompletion,
  ) {}

  async move(db: Executor, payment: PaymentRecord, to: PaymentStatus, settings: ShopSettings, now: Date, failure?: PaymentFailure): Promise<MoveOutcome> {
    if (payment.status === to) return { moved: false, note: `payment already ${to}` };
    if (!paymentCanMove(payment.status, to)) return { moved: false, note: `payment is ${payment.status}; not moved back to ${to}` };
    const wasPaid = PAID.includes(payment.status);
    await this.payments.setStatus(db, payment.id, to, gmtDateTimeMs(now));
    payment.status = to;
    if (PAID.includes(to) && !wasPaid && payment.orderId !== null) {
      const completion = await this.renewals.complete(db, { orderId: payment.orderId, reference: payment.externalId, settings, now });
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
}
