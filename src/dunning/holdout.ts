import { createHash } from 'node:crypto';
import type { DunningArm } from '../../entities';

export type { DunningArm };

/**
 * The baseline plan's waits between a failed renewal payment and each next attempt, in seconds: WooCommerce
 * Subscriptions' default retry rules, read from its source (woocommerce-subscriptions 7.9.0,
 * includes/payment-retry/class-wcs-retry-rules.php, `WCS_Retry_Rules::__construct`'s `wcs_default_retry_rules`):
 * five retries, `retry_after_interval` DAY_IN_SECONDS / 2, DAY_IN_SECONDS / 2, DAY_IN_SECONDS,
 * DAY_IN_SECONDS * 2, DAY_IN_SECONDS * 3, i.e. 12 h, 12 h, 1 d, 2 d, 3 d (not the 12 h, 1 d, 2 d, 4 d, 7 d the
 * issue remembered). The baseline takes only this timing: caps, e-mails and the hard-decline rules stay the service's.
 */
export const BASELINE_PLAN_SECONDS: number[] = [12 * 3600, 12 * 3600, 86_400, 2 * 86_400, 3 * 86_400];

/**
 * Where a renewal falls in [0, 100): the first 48 bits of sha256(site URL, NUL, renewal order id) as a fraction
 * of 2^48, times 100. The same renewal of the same shop always falls at the same place (a case that fails again,
 * a restarted worker, another worker), and different renewals fall uniformly.
 */
export function holdoutPosition(siteUrl: string, orderId: number): number {
  const digest = createHash('sha256').update(`${siteUrl.trim().replace(/\/+$/, '').toLowerCase()}\u0000${orderId}`).digest();
  return (digest.readUIntBE(0, 6) / 2 ** 48) * 100;
}

/**
 * The arm of a failed renewal with DUNNING_HOLDOUT_PERCENT `percent`: `baseline` when its position is below the
 * percent, `service` otherwise (always `service` at 0). Decided once, when the renewal's case opens, and stored on it.
 */
export function holdoutArm(siteUrl: string, orderId: number, percent: number): DunningArm {
  if (!(percent > 0)) return 'service';
  return holdoutPosition(siteUrl, orderId) < percent ? 'baseline' : 'service';
}
