import type { ShopSettings } from '../data-access/shop-settings-repository';
import { isoInZone } from '../shop/shop-time';

/** Expected refusals of the subscription support flows; the HTTP layer maps each to its status and code. */
export type SubscriptionRefusal =
  | { kind: 'subscription_not_found' }
  | { kind: 'invalid_params'; params: string[]; message: string; data?: Record<string, unknown> }
  | { kind: 'invalid_state'; status: string; message: string };

/** What pause and force-activate answer (CONTRACT.md): the subscription's state after the change. */
export interface SubscriptionStateView {
  id: number;
  status: string;
  next_payment_date: string | null;
  auto_reactivation_date: string | null;
}

export function subscriptionStateView(
  subscription: { id: number; status: string; nextPayment: Date | null; autoReactivation: Date | null },
  settings: ShopSettings,
): SubscriptionStateView {
  const iso = (date: Date | null) => (date ? isoInZone(date, settings.timeZone) : null);
  return {
    id: subscription.id,
    status: subscription.status,
    next_payment_date: iso(subscription.nextPayment),
    auto_reactivation_date: iso(subscription.autoReactivation),
  };
}

/** Who made a change, for the subscription note (WooCommerce notes a manual change in the user's name). */
export interface StaffActor {
  userId: number;
  login: string;
  displayName: string;
  email: string;
  /** Where they did it, when not in WP admin: `Dixa` for the helpdesk card's links; the notes say "via Dixa". */
  via?: string;
}

const viaOf = (actor: StaffActor) => (actor.via ? ` via ${actor.via}` : '');

export function actorLabel(actor: StaffActor): string {
  return `${actor.displayName && actor.displayName !== actor.login ? `${actor.displayName} (${actor.login})` : actor.login}${viaOf(actor)}`;
}

/** The staff member as the author of an order note. */
/** The staff member as notes and the story name them: their display name, else their login. */
export function staffName(actor: StaffActor): string {
  return `${actor.displayName || actor.login}${viaOf(actor)}`;
}

export function actorAuthor(actor: StaffActor): { name: string; email: string } {
  return { name: actor.displayName || actor.login, email: actor.email };
}
