import type { PaymentStatus, Provider } from '../../entities';
import type { CaptureRecord } from '../data-access/second-capture-repository';
import { minorUnitsToDecimal } from '../shop/money';
import { takenForNobody } from './renewal-wants-money';

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

/**
 * A charge the service withdrew because its renewal no longer wanted money (paid or closed in the shop, its
 * subscription ended: renewal-wants-money.ts) and that the provider took all the same is a second capture of
 * something outside the service's payments, to refund.
 */
export const paidOutsideBefore = takenForNobody;

/** What the sweep flags on one order. */
export interface UnflaggedSecondCaptures {
  /** The payment that paid the order first, with the later captures not flagged yet. */
  kept: CaptureRecord | null;
  later: CaptureRecord[];
  /** Captures taken after the order was paid or closed in the shop, not flagged yet. */
  outside: CaptureRecord[];
}

/** Of an order's captured payments (first captured first), the second captures not flagged yet; null when none. */
export function unflaggedSecondCaptures(captures: CaptureRecord[]): UnflaggedSecondCaptures | null {
  const unflagged = (capture: CaptureRecord) => capture.secondCaptureOf === null;
  const outside = captures.filter((capture) => unflagged(capture) && paidOutsideBefore(capture.withdrawnBecause));
  const inside = captures.filter((capture) => !outside.includes(capture));
  const [kept = null, ...others] = inside;
  const later = others.filter(unflagged);
  return later.length || outside.length ? { kept: later.length ? kept : null, later, outside } : null;
}

/** A flagged second capture waits for a refund while both it and the payment it duplicates are still captured. */
export function secondCaptureUnresolved(status: PaymentStatus | null, keptStatus: PaymentStatus | null, paidOutside = false): boolean {
  // What the shop took outside the service is not the service's to see refunded: the flagged capture decides.
  return status === 'CAPTURED' && (paidOutside || keptStatus === 'CAPTURED');
}

const amount = (payment: CapturedPayment) => (payment.amountMinor === null
  ? 'amount unknown' : `${minorUnitsToDecimal(payment.amountMinor, payment.currency)} ${payment.currency ?? ''}`.trim());

/** The same warning when what had paid the order is outside the service's payments. */
export function secondCaptureOutsideMessage(refund: CapturedPayment, withdrawnBecause: string | null): string {
  if (withdrawnBecause?.startsWith('subscription_')) {
    return `Taken for a subscription that had ended: payment ${refund.externalId} (${refund.provider}, ${amount(refund)}) was captured after the `
      + `subscription was ${withdrawnBecause.slice('subscription_'.length)} (${withdrawnBecause}), when the renewal no longer wanted money. Refund `
      + `${refund.externalId} from the order screen or at ${refund.provider}, unless the customer should keep the renewal; nothing is refunded automatically.`;
  }
  return `Second capture: payment ${refund.externalId} (${refund.provider}, ${amount(refund)}) was captured after the service had withdrawn it `
    + `(${withdrawnBecause ?? 'unwanted'}): the order was already paid or closed in the shop. Refund ${refund.externalId} at ${refund.provider}, `
    + 'unless the order should keep this payment instead; nothing is refunded automatically.';
}

/** The payments route's warning, for the route's readers in English (the order note says it in the shop's language: src/shop/order-note-words.ts). */
export function secondCaptureMessage(refund: CapturedPayment, kept: CapturedPayment): string {
  return `Second capture: payment ${refund.externalId} (${refund.provider}, ${amount(refund)}) was captured after payment ${kept.externalId} `
    + `(${kept.provider}, ${amount(kept)}) had already paid this order. Refund ${refund.externalId}, the later capture, at ${refund.provider}; `
    + 'nothing is refunded automatically.';
}
