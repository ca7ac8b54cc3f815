import type { PaymentStatus, Provider } from '../../entities';
import type { CaptureRecord } from '../data-access/second-capture-repository';
import { minorUnitsToDecimal } from '../shop/money';

/**
 * One renewal, one payment. Should an order still be captured twice (a wallet charge the service made that the
 * wallet took after the card had paid the order; the gateway plugin charging an order the service charged too;
 * found by webhook or by reconciliation), the later capture is the one to refund. Nothing is refunded: the worker's
 * sweep (flag-second-captures.use-case.ts) flags each second capture once (the payment's meta `second_capture_of`),
 * with a note on the order and a log line, and staff's payments route and /metrics show it until one of the two is
 * refunded. The rules they share are here.
 */

/** A payment as the rule names it to people. */
export interface CapturedPayment {
  id: number;
  provider: Provider;
  externalId: string;
  amountMinor: number | null;
  currency: string | null;
}

/** Of an order's captured payments (first captured first), the one that paid it and the later ones not flagged yet. */
export function unflaggedSecondCaptures(captures: CaptureRecord[]): { kept: CaptureRecord; later: CaptureRecord[] } | null {
  if (captures.length < 2) return null;
  const [kept, ...others] = captures;
  const later = others.filter((capture) => capture.secondCaptureOf === null);
  return later.length ? { kept, later } : null;
}

/** A flagged second capture waits for a refund while both it and the payment it duplicates are still captured. */
export function secondCaptureUnresolved(status: PaymentStatus | null, keptStatus: PaymentStatus | null): boolean {
  return status === 'CAPTURED' && keptStatus === 'CAPTURED';
}

const amount = (payment: CapturedPayment) => (payment.amountMinor === null
  ? 'amount unknown' : `${minorUnitsToDecimal(payment.amountMinor, payment.currency)} ${payment.currency ?? ''}`.trim());

/** The payments route's warning, for the route's readers in English (the order note says it in the shop's language: src/shop/order-note-words.ts). */
export function secondCaptureMessage(refund: CapturedPayment, kept: CapturedPayment): string {
  return `Second capture: payment ${refund.externalId} (${refund.provider}, ${amount(refund)}) was captured after payment ${kept.externalId} `
    + `(${kept.provider}, ${amount(kept)}) had already paid this order. Refund ${refund.externalId}, the later capture, at ${refund.provider}; `
    + 'nothing is refunded automatically.';
}
