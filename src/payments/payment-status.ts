import type { PaymentStatus } from '../../entities';

/**
 * Moves a payment may make. A payment never goes back: a late or repeated event asking for an
 * earlier state is ignored. A failed payment may still succeed later (a retried charge), and a
 * captured one may only be refunded.
 */
const NEXT: Record<PaymentStatus | 'NEW', PaymentStatus[]> = {
  NEW: ['AUTHORIZED', 'CAPTURED', 'FAILED', 'REFUNDED', 'CANCELED'],
  AUTHORIZED: ['CAPTURED', 'FAILED', 'CANCELED'],
  FAILED: ['AUTHORIZED', 'CAPTURED', 'CANCELED'],
  CAPTURED: ['REFUNDED'],
  REFUNDED: [],
  CANCELED: [],
};

export function paymentCanMove(from: PaymentStatus | null, to: PaymentStatus): boolean {
  return NEXT[from ?? 'NEW'].includes(to);
}
