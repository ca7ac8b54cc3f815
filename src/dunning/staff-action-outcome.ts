import type { DunningCaseRecord, DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { isoInZone } from '../shop/shop-time';
import type { DunningView } from './dunning-story';
import { notAllowedMessage, type NotAllowedReason, type Permission, type StaffActionName } from './staff-actions';

/** What a staff action on a failed renewal came to; the HTTP layer maps each to its answer. */
export type StaffActionOutcome<Result> =
  | { kind: 'done'; result: Result; dunning: DunningView }
  | { kind: 'order_not_found' }
  /** `notBefore`: ISO 8601 in the shop's zone, with its offset. */
  | { kind: 'not_allowed'; reason: NotAllowedReason; notBefore?: string; message: string };

export type Refused = Extract<StaffActionOutcome<never>, { kind: 'not_allowed' }>;

/** The order has no failed renewal followed up (found so under the case's lock too). */
export const NO_DUNNING_CASE = { allowed: false, reason: 'no_dunning_case' } as const satisfies Permission;

export function notAllowed(action: StaffActionName, permission: Extract<Permission, { allowed: false }>, settings: ShopSettings): Refused {
  return { kind: 'not_allowed', reason: permission.reason, ...(permission.notBefore ? { notBefore: isoInZone(permission.notBefore, settings.timeZone) } : {}), message: notAllowedMessage(action, permission, settings.timeZone) };
}

/** The order's case, or why there is nothing to act on: the order is unknown, or it has no failed renewal followed up. */
export async function caseToActOn(
  deps: { orders: OrderRepository; cases: DunningCaseRepository; settings: ShopSettingsRepository }, action: StaffActionName, orderId: number,
): Promise<{ kind: 'case'; found: DunningCaseRecord; settings: ShopSettings } | { kind: 'order_not_found' } | Refused> {
  const settings = await deps.settings.current();
  if (!(await deps.orders.exists(orderId, settings))) return { kind: 'order_not_found' };
  const found = await deps.cases.ofOrderUnlocked(orderId);
  if (!found) return notAllowed(action, NO_DUNNING_CASE, settings);
  return { kind: 'case', found, settings };
}
