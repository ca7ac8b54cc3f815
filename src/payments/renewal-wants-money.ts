import type { Provider } from '../../entities';
import { providerOfGateway } from '../shop/payment-gateways';
import { ENDED_STATUSES } from '../shop/subscription';

/**
 * One renewal, one payment, and money only while the renewal wants it: the one rule every path asks (planning an
 * attempt, opening a charge, sending its request, the open-charge pass, the deadline, staff's actions, a payment
 * heard). WooCommerce Subscriptions' own retries are the twin: WCS_Retry_Manager::maybe_cancel_retry drops a
 * pending retry when its subscription's status moves on, maybe_cancel_retry_for_order when the renewal order is
 * trashed or deleted, and a retry is only charged while the order still needs payment.
 */

/** A renewal order that still waits for its money; in any other status (paid, cancelled, trashed) it moved on. */
export const CHARGEABLE_ORDER_STATUSES = ['failed', 'pending'];

/**
 * A subscription in one of the ENDED_STATUSES wants none of its renewals paid any more: ended by the customer (My
 * Account), staff, its end date or a switch, or in the trash. `active` is not among them: staff may activate a
 * subscription while its renewal is still owed, and WooCommerce itself completes the renewal when it is paid.
 */
const SUBSCRIPTION_ENDED: readonly string[] = ENDED_STATUSES;

/** What the rule reads: the renewal order, its subscription, its dunning case, and the provider a charge is on. */
export interface RenewalFacts {
  /** Null: deleted. Statuses without `wc-` (`trash` for an order in the bin, in both storage modes). */
  order: { status: string } | null;
  /** Null: deleted. */
  subscription: { status: string; paymentMethod: string | null } | null;
  /** Null: no case (the service has not heard the failure yet); a case LOST or RECOVERED ended the renewal's dunning. */
  dunningCase: { status: string } | null;
  /** The provider the charge is (or would be) made on. */
  provider: Provider;
}

/**
 * Why a renewal no longer wants money, as stored with a withdrawn charge (`cancel_reason`, at most 64 characters):
 * `order_<status>` (paid or closed in the shop, `order_trash`, `order_gone`), `subscription_<status>`,
 * `dunning_ended` (its case was closed: lost at the deadline), `method_switched`. Callers add their own:
 * `dunning_stopped` (staff), `attempt_ended`, `deadline`.
 */
export type UnwantedReason = `order_${string}` | `subscription_${string}` | 'dunning_ended' | 'method_switched';

export type RenewalWants = { wants: true } | { wants: false; reason: UnwantedReason };

export function renewalWantsMoney(facts: RenewalFacts): RenewalWants {
  const { order, subscription, dunningCase } = facts;
  if (!order) return { wants: false, reason: 'order_gone' };
  if (!CHARGEABLE_ORDER_STATUSES.includes(order.status)) return { wants: false, reason: `order_${order.status}` };
  if (!subscription) return { wants: false, reason: 'subscription_gone' };
  if (SUBSCRIPTION_ENDED.includes(subscription.status)) return { wants: false, reason: `subscription_${subscription.status}` };
  if (dunningCase && dunningCase.status !== 'OPEN') return { wants: false, reason: 'dunning_ended' };
  // The customer moved the subscription to the other provider's gateway: the renewal is charged there now.
  const named = providerOfGateway(subscription.paymentMethod);
  if (named !== null && named !== facts.provider) return { wants: false, reason: 'method_switched' };
  return { wants: true };
}

/**
 * Money a provider took on a charge withdrawn for this reason belongs to nobody's renewal: the order had been paid or
 * closed in the shop, or the subscription had ended. Flagged for a refund (the second-capture sweep). A charge
 * withdrawn because staff stopped dunning, its attempt ended, the method switched or the deadline came pays an order
 * that was still unpaid; `order_paid` (another payment of the service's) is found by comparing the two.
 */
export function takenForNobody(withdrawnBecause: string | null): boolean {
  if (withdrawnBecause === null) return false;
  if (withdrawnBecause.startsWith('subscription_')) return true;
  return withdrawnBecause.startsWith('order_') && withdrawnBecause !== 'order_paid';
}
