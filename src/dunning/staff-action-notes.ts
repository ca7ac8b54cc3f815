/**
 * The order notes of staff's actions on a failed renewal: plain sentences, one function per note, so that each
 * can be translated later. The note's author is the staff member; the text names them too, as a note is read
 * alone in WooCommerce's list.
 */

export function chargedNowPaidNote(by: string, attempt: number): string {
  return `${by} charged the renewal now (attempt ${attempt}), and the payment went through.`;
}

export function chargedNowPendingNote(by: string, attempt: number): string {
  return `${by} charged the renewal now (attempt ${attempt}). The payment provider has the charge and confirms it later.`;
}

export function chargedNowDeclinedNote(by: string, attempt: number, reason: string | null): string {
  const why = reason ? ` (${reason})` : '';
  return `${by} charged the renewal now (attempt ${attempt}), and the payment was declined${why}. The planned attempts stay as they were.`;
}

export function chargedNowHeldNote(by: string, attempt: number): string {
  return `${by} charged the renewal now (attempt ${attempt}), but the payment provider refused the service's request. Nothing was charged; the service asks again once the problem is fixed.`;
}

export function chargedNowUnansweredNote(by: string, attempt: number): string {
  return `${by} charged the renewal now (attempt ${attempt}), but the payment provider did not answer. The service asks again shortly, without charging twice.`;
}

export function paymentLinkSentNote(by: string): string {
  return `${by} sent the customer an e-mail with the link to add a new payment method.`;
}

export function dunningStoppedNote(by: string): string {
  return `${by} stopped dunning of this renewal: no more payment attempts are made, and the subscription is not cancelled for it. The subscription is left as it is.`;
}

export function stoppedChargeCancelledNote(charge: string, by: string): string {
  return `The payment provider's charge ${charge} was cancelled before it was taken, because ${by} stopped dunning of this renewal.`;
}
