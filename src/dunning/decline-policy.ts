import type { DunningPolicy, Provider, RetryPlan } from '../../entities';
import type { PaymentMethodNeededReason } from '../data-access/woocommerce-change-repository';
import { FAILED_PAYMENT_METHOD_CODE } from '../payments/providers/card-gateway/client';

/** A failed payment as the provider described it (the card gateway's `error` and `error_state`, the wallet's `failureReason`). */
export interface Decline {
  code: string | null;
  state: string | null;
}

/**
 * The `state` of a wallet decline that is the wallet's refusal to create the charge at all: problem
 * `charge-amount-too-high` ("Amount limits", vippsas/vipps-recurring-api recurring-api-guide.md: a VARIABLE agreement's
 * charge "can not be higher than the suggestedMaxAmount or maxAmount field, depending on which is highest"; a LEGACY
 * agreement's are held to 5 times its price; recurring-api-problems.md). No charge exists, so nothing is shown to the
 * customer in the app and the wallet retries nothing: until the agreement or the amount changes, the same request
 * meets the same refusal.
 */
export const WALLET_CREATION_REFUSED = 'creation_refused';

/** What dunning does after a decline: retry on a plan, or stop charging this payment method and ask the customer. */
export interface DeclineDecision {
  policy: Exclude<DunningPolicy, 'provider_retrying'>;
  /** The plan the next attempt belongs to; null when the payment method is not charged again. */
  plan: Exclude<RetryPlan, 'new_method' | 'staff'> | null;
  /** The decline's reason as the dunning report groups it: the card gateway's error_state or the wallet's failureReason. */
  reason: string;
  /** Why the customer is asked, when they are. */
  customerReason: PaymentMethodNeededReason | null;
}

/**
 * Card gateway `error` codes by the `error_state` they belong to, for a decline that names only its code.
 * Those of the billwerk SDK whose state is not documented (fraud_block, emv_token_*) count as hard: the
 * token or card is gone or blocked, so only the customer can give another.
 */
const CARD_CODES: Record<string, 'soft_declined' | 'hard_declined' | 'processing_error'> = {
  insufficient_funds: 'soft_declined',
  settle_blocked: 'soft_declined',
  credit_card_expired: 'hard_declined',
  declined_by_acquirer: 'hard_declined',
  credit_card_lost_or_stolen: 'hard_declined',
  credit_card_suspected_fraud: 'hard_declined',
  authorization_expired: 'hard_declined',
  authorization_amount_exceeded: 'hard_declined',
  authorization_voided: 'hard_declined',
  sca_required: 'hard_declined',
  risk_filter_block: 'hard_declined',
  fraud_block: 'hard_declined',
  emv_token_deleted: 'hard_declined',
  emv_token_suspended: 'hard_declined',
  acquirer_communication_error: 'processing_error',
  acquirer_error: 'processing_error',
  acquirer_integration_error: 'processing_error',
  acquirer_authentication_error: 'processing_error',
  acquirer_configuration_error: 'processing_error',
  acquirer_rejected_error: 'processing_error',
};


const retry = (reason: string): DeclineDecision => ({ policy: 'retry', plan: 'soft', reason, customerReason: null });
const retrySoon = (reason: string): DeclineDecision => ({ policy: 'retry_soon', plan: 'processing', reason, customerReason: null });
const askCustomer = (reason: string, customerReason: PaymentMethodNeededReason): DeclineDecision => (
  { policy: 'ask_customer', plan: null, reason, customerReason });

/**
 * The decline policy, the one place that says which failures are retried and on which plan:
 * - `soft_declined` (e.g. insufficient funds): the dunning plan (DUNNING_PLAN);
 * - `processing_error` (the chain between gateway and bank failed, not the card) and the wallet's
 *   `technical_error`: the short processing plan (DUNNING_PROCESSING_PLAN);
 * - `hard_declined` whatever its `error`, and error 147 (the method is in failed state): never again on
 *   that card; the customer is asked for a new one;
 * - the wallet's `user_action_required`, `charge_amount_too_high` and `non_technical_error`: the customer
 *   fixes them in the app on the same agreement, so that agreement is charged again on the dunning plan; the
 *   customer is asked for another payment method only when the plan is used up or the agreement has ended;
 * - but a wallet charge that the wallet had retried itself (state `wallet_retried`) is final: the customer is asked;
 * - and a charge the wallet refused to create as above the agreement's maximum (state `creation_refused`) was never
 *   shown to the customer: the customer is asked at once, and the agreement is not charged that amount again until
 *   something changed (`waitsForAmountChange`).
 * A decline that says nothing the policy knows goes on the dunning plan: the plan and the schemes' caps
 * bound what it costs.
 */
export function decideOnDecline(provider: Provider, decline: Decline): DeclineDecision {
  const code = decline.code?.trim() || null;
  if (provider === 'mobile_wallet') {
    // The wallet tells the customer in its app why a charge failed, and the customer fixes it there, on the
    // same agreement (vipps-recurring-api recurring-api-guide.md, "Charge failure reasons"): the agreement is
    // charged again on the plan, and nobody guesses the reason to the customer.
    // A charge the wallet had retried itself for its retryDays (state `wallet_retried`, walletFailureState) FAILED
    // after days of its own tries, each told to the customer in the app: its documents ask merchants not to build a
    // retry loop of their own for RECURRING charges (vippsas/agent-toolkit plugins/vipps/skills/recurring/SKILL.md;
    // "Charge retries", vipps-recurring-api recurring-api-guide.md), so the same agreement is not charged again for
    // the same reason: the customer is asked, and the case's deadline follows. A technical error is the wallet's own.
    // Refused at creation as above the agreement's maximum: no charge exists, so the wallet told the customer nothing
    // and retries nothing, and the same charge would meet the same refusal. Only the customer (a higher maximum in the
    // app, another payment method) or the shop (the agreement's price) can change that: the customer is asked at once.
    if (waitsForAmountChange(provider, decline)) return askCustomer('charge_amount_too_high', 'wallet_amount_too_high');
    if (decline.state === 'wallet_retried') {
      switch (code) {
        case 'user_action_required':
          return askCustomer(code, 'wallet_action_required');
        case 'charge_amount_too_high':
          return askCustomer(code, 'wallet_amount_too_high');
        case 'technical_error':
          return retrySoon(code);
        default:
          return askCustomer(code ?? 'unknown', 'wallet_unavailable');
      }
    }
    switch (code) {
      case 'user_action_required':
      case 'charge_amount_too_high':
      case 'non_technical_error':
        return retry(code);
      case 'no_agreement':
        return askCustomer(code, 'wallet_unavailable');
      case 'technical_error':
        // A technical fault at the wallet, which it had already retried itself.
        return retrySoon(code);
      default:
        return retry(code ?? 'unknown');
    }
  }
  if (code === FAILED_PAYMENT_METHOD_CODE) {
    return askCustomer(decline.state === 'hard_declined' ? 'hard_declined' : 'payment_method_failed', 'card_declined');
  }
  const state = decline.state && ['soft_declined', 'hard_declined', 'processing_error'].includes(decline.state)
    ? decline.state : (code && CARD_CODES[code]) ?? null;
  const reason = decline.state?.trim() || state || 'unknown';
  switch (state) {
    case 'hard_declined':
      // Another charge on this card cannot succeed.
      return askCustomer(reason, code === 'credit_card_expired' ? 'card_expired' : 'card_declined');
    case 'processing_error':
      // The chain between gateway and bank failed, not the card: tried again soon.
      return retrySoon(reason);
    default:
      // A soft decline may pass later, and so may one the policy does not know.
      return retry(reason);
  }
}

/**
 * Whether a decline leaves the renewal waiting for a change before its payment method is charged again: the wallet
 * refused to create the charge as above the agreement's maximum (`charge_amount_too_high`, state `creation_refused`).
 * The same amount on the same agreement is charged again only once the agreement's terms or the renewal's amount
 * changed (SwitchedPaymentMethods), the customer chose another payment method, or staff charge it.
 */
export function waitsForAmountChange(provider: Provider, decline: Decline): boolean {
  return provider === 'mobile_wallet' && decline.state === WALLET_CREATION_REFUSED && decline.code?.trim() === 'charge_amount_too_high';
}

/**
 * Whether a decline is for lack of funds, which money arriving on payday may cure (DUNNING_PAYDAYS): the card gateway's
 * `insufficient_funds`, or a `soft_declined` naming no code ("usually insufficient funds", its error-state reference);
 * the wallet's `user_action_required` (lack of funds first among its causes, "add funds to the card", its
 * Recurring API guide) and its deprecated `insufficient_funds`. A hard decline never is.
 */
export function isLackOfFunds(provider: Provider, decline: Decline): boolean {
  const code = decline.code?.trim() || null;
  if (provider === 'mobile_wallet') return code === 'user_action_required' || code === 'insufficient_funds';
  if (decline.state === 'hard_declined' || decline.state === 'processing_error') return false;
  return code === 'insufficient_funds' || (code === null && decline.state === 'soft_declined');
}

/** How many charges one payment method may take: the card schemes' caps (Visa: 20 in 30 days; the gateway: 3 a day). */
export interface ChargeCaps {
  perDay: number;
  per30Days: number;
}

const DAY_MS = 86_400_000;

/** The caps as the attempt results say them (the order notes say them in the shop's language: src/shop/order-note-words.ts). */
export function capsInWords(caps: ChargeCaps): string {
  return `at most ${caps.perDay} charges a day and ${caps.per30Days} in 30 days on one payment method`;
}

/**
 * The earliest moment at or after `at` at which one more charge on a payment method stays within `caps`,
 * given the moments of the charges already made on it (from any source). A window's count includes
 * charges later than its start, so a charge leaves the day's count exactly 24 h after it was made.
 */
export function earliestWithinCaps(at: Date, charges: readonly Date[], caps: ChargeCaps): Date {
  const times = charges.map((charge) => charge.getTime()).sort((a, b) => a - b);
  let t = at.getTime();
  for (;;) {
    const later = [tooMany(t, times, DAY_MS, caps.perDay), tooMany(t, times, 30 * DAY_MS, caps.per30Days)].filter((x): x is number => x !== null);
    if (!later.length) return new Date(t);
    t = Math.max(...later);
  }
}

/** When `times` hold `cap` or more charges in the window of `windowMs` ending at `t`: the moment enough of them have left it. */
function tooMany(t: number, times: number[], windowMs: number, cap: number): number | null {
  const inWindow = times.filter((time) => time > t - windowMs && time <= t);
  if (inWindow.length < Math.max(1, cap)) return null;
  // The oldest charges leave the window first; one place is free once (count - cap + 1) of them have.
  return inWindow[inWindow.length - Math.max(1, cap)]! + windowMs;
}
