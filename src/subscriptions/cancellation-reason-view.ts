import type { RecordedCancellationReason } from '../data-access/cancellation-reason-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { isoInZone, localDateTime, parseGmtDateTime } from '../shop/shop-time';

/**
 * SPEC 2.3: a recorded reason. `date` is in the site's local time, as WordPress shows dates (SPEC fixes it without
 * a zone); `date_gmt` in UTC; `recorded_at` the same moment in ISO 8601 with the shop's offset, which a browser in
 * any zone reads right.
 */
export interface CancellationReasonEntry {
  id: number;
  subscription_id: number;
  date: string;
  date_gmt: string;
  recorded_at: string | null;
  reason_id: number;
  title: string;
  slug: string;
}

export function cancellationReasonEntry(recorded: RecordedCancellationReason, settings: ShopSettings): CancellationReasonEntry {
  const instant = parseGmtDateTime(recorded.dateGmt);
  return {
    id: recorded.id,
    subscription_id: recorded.subscriptionId,
    date: instant ? localDateTime(instant, settings.timeZone) : recorded.dateGmt,
    date_gmt: recorded.dateGmt,
    recorded_at: instant ? isoInZone(instant, settings.timeZone) : null,
    reason_id: recorded.reasonId,
    title: recorded.title,
    slug: recorded.slug,
  };
}
