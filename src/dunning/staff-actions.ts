import { localDateTime, offsetMinutesAt, type ShopTimeZone } from '../shop/shop-time';
import { earliestWithinCaps, type ChargeCaps } from './decline-policy';

/**
 * What staff may do now on a failed renewal, the one place that says it: the order screen's view of the case
 * shows it, and the routes that act refuse by it. Pure: the caller gathers the facts (see DunningStory).
 */

export type StaffActionName = 'charge_now' | 'payment_link' | 'stop_dunning';

/** Why an action is not possible now; stable codes the panel words for people. */
export type NotAllowedReason =
  | 'case_closed'
  | 'charge_under_way'
  | 'wallet_charge_under_way'
  | 'order_not_awaiting_payment'
  | 'subscription_not_on_hold'
  | 'provider_not_configured'
  | 'provider_unreachable'
  | 'no_payment_method'
  | 'daily_cap'
  | 'monthly_cap'
  | 'companion_required'
  | 'link_just_sent'
  | 'charge_just_made'
  | 'no_dunning_case';

export type Permission = { allowed: true } | { allowed: false; reason: NotAllowedReason; notBefore?: Date };

/** A charge for the renewal already at the provider, which nothing is charged on top of (the engine's `chargeUnderWay`). */
export type ChargeUnderWay =
  /** A wallet charge the wallet still retries itself, until its window ends. */
  | { kind: 'wallet_retrying'; until: Date }
  /** A charge taken or still pending at the provider, not yet shown in the shop. */
  | { kind: 'pending'; until: Date }
  /** The provider could not be asked. */
  | { kind: 'unreadable' };

export interface StaffActionFacts {
  now: Date;
  caseOpen: boolean;
  /** A dunning attempt of the order is being made right now (the worker's, or another click's). */
  attemptInProgress: boolean;
  orderAwaitsPayment: boolean;
  subscriptionOnHold: boolean;
  providerConfigured: boolean;
  /** Whether the subscription has a payment method a charge can be made on (a gateway customer or card, a wallet agreement). */
  hasPaymentMethod: boolean;
  chargeUnderWay: ChargeUnderWay | null;
  /** When the payment method was charged in the last 30 days, whoever charged it: what the caps count. */
  chargesOnMethod: readonly Date[];
  caps: ChargeCaps;
  /** Whether WooCommerce can send the "payment method needed" e-mail (the companion plugin, version 3 or newer). */
  companionSendsEmail: boolean;
  /** When staff last sent the customer the payment link for this renewal. */
  lastLinkSentAt: Date | null;
  /** When staff last charged this renewal now. */
  lastChargeAt: Date | null;
}

/** A second payment link within this time is taken for the same click twice, not a new wish. */
export const LINK_RESEND_WAIT_MS = 5 * 60_000;
/**
 * A second Charge now within this time is the same click twice: a decline answered at once would otherwise let
 * the second click charge the card again.
 */
export const CHARGE_REPEAT_WAIT_MS = 60_000;

const refuse = (reason: NotAllowedReason, notBefore?: Date): Permission => (notBefore ? { allowed: false, reason, notBefore } : { allowed: false, reason });
const ALLOWED: Permission = { allowed: true };

/** One attempt now, with the subscription's own payment method, within the card schemes' caps. */
export function mayChargeNow(facts: StaffActionFacts): Permission {
  if (!facts.caseOpen) return refuse('case_closed');
  if (facts.attemptInProgress) return refuse('charge_under_way');
  if (facts.lastChargeAt) {
    const again = new Date(facts.lastChargeAt.getTime() + CHARGE_REPEAT_WAIT_MS);
    if (again.getTime() > facts.now.getTime()) return refuse('charge_just_made', again);
  }
  if (!facts.providerConfigured) return refuse('provider_not_configured');
  if (!facts.orderAwaitsPayment) return refuse('order_not_awaiting_payment');
  // As the engine: a renewal is charged again only while its subscription is on hold.
  if (!facts.subscriptionOnHold) return refuse('subscription_not_on_hold');
  if (!facts.hasPaymentMethod) return refuse('no_payment_method');
  const underWay = facts.chargeUnderWay;
  if (underWay?.kind === 'wallet_retrying') return refuse('wallet_charge_under_way', underWay.until);
  if (underWay?.kind === 'pending') return refuse('charge_under_way', underWay.until);
  if (underWay?.kind === 'unreadable') return refuse('provider_unreachable');
  const now = facts.now.getTime();
  const allowedAt = earliestWithinCaps(facts.now, facts.chargesOnMethod, facts.caps);
  if (allowedAt.getTime() <= now) return ALLOWED;
  // Which cap holds it now: the day's, when the day's alone would; otherwise the 30 days'.
  const dayAlone = earliestWithinCaps(facts.now, facts.chargesOnMethod, { perDay: facts.caps.perDay, per30Days: Number.MAX_SAFE_INTEGER });
  return refuse(dayAlone.getTime() > now ? 'daily_cap' : 'monthly_cap', allowedAt);
}

/** The "payment method needed" e-mail now, through WooCommerce. */
export function maySendPaymentLink(facts: Pick<StaffActionFacts, 'now' | 'caseOpen' | 'companionSendsEmail' | 'lastLinkSentAt'>): Permission {
  if (!facts.caseOpen) return refuse('case_closed');
  if (!facts.companionSendsEmail) return refuse('companion_required');
  if (facts.lastLinkSentAt) {
    const again = new Date(facts.lastLinkSentAt.getTime() + LINK_RESEND_WAIT_MS);
    if (again.getTime() > facts.now.getTime()) return refuse('link_just_sent', again);
  }
  return ALLOWED;
}

/** No more attempts, the case closed as lost; not while an attempt is being made, whose charge could still be taken. */
export function mayStopDunning(facts: Pick<StaffActionFacts, 'caseOpen' | 'attemptInProgress'>): Permission {
  if (!facts.caseOpen) return refuse('case_closed');
  if (facts.attemptInProgress) return refuse('charge_under_way');
  return ALLOWED;
}

export function staffActions(facts: StaffActionFacts): Record<StaffActionName, Permission> {
  return { charge_now: mayChargeNow(facts), payment_link: maySendPaymentLink(facts), stop_dunning: mayStopDunning(facts) };
}

const ACTION_WORDS: Record<StaffActionName, string> = {
  charge_now: 'The renewal cannot be charged now',
  payment_link: 'The payment link cannot be sent now',
  stop_dunning: 'Dunning cannot be stopped now',
};

const REASON_WORDS: Record<NotAllowedReason, string> = {
  case_closed: 'the failed renewal has been dealt with already (paid, or dunning has ended)',
  charge_under_way: 'a charge for this renewal is being made or is still pending at the payment provider',
  wallet_charge_under_way: 'the mobile wallet is still trying its own charge for this renewal, and nothing is charged on top of it',
  order_not_awaiting_payment: 'the renewal order no longer awaits payment',
  subscription_not_on_hold: 'the subscription is not on hold, and only a held subscription\'s renewal is charged again',
  provider_not_configured: 'the payment provider is not set up in the service',
  provider_unreachable: 'the payment provider could not be asked whether a charge is already under way',
  no_payment_method: 'the subscription has no stored payment method to charge',
  daily_cap: 'the payment method has been charged as often today as the card schemes allow',
  monthly_cap: 'the payment method has been charged as often in 30 days as the card schemes allow',
  companion_required: 'sending it through WooCommerce takes the shop-sidecar companion plugin, version 3 or newer',
  link_just_sent: 'the customer was sent the link only minutes ago',
  charge_just_made: 'the renewal was charged by staff less than a minute ago',
  no_dunning_case: 'the order has no failed renewal payment being followed up',
};

/** A time as staff read it: the shop's local time with its offset from UTC. */
export function shopTimeInWords(date: Date, zone: ShopTimeZone): string {
  const offset = offsetMinutesAt(date, zone);
  const sign = offset < 0 ? '-' : '+';
  const hours = String(Math.trunc(Math.abs(offset) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offset) % 60).padStart(2, '0');
  return `${localDateTime(date, zone).slice(0, 16)} (UTC${sign}${hours}:${minutes})`;
}

/** Why an action is refused, and from when it is possible, in plain English. */
export function notAllowedMessage(action: StaffActionName, permission: Extract<Permission, { allowed: false }>, zone: ShopTimeZone): string {
  const when = permission.notBefore ? ` It is possible from ${shopTimeInWords(permission.notBefore, zone)}.` : '';
  return `${ACTION_WORDS[action]}: ${REASON_WORDS[permission.reason]}.${when}`;
}
