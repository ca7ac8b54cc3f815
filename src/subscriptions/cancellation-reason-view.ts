import type { RecordedCancellationReason } from '../data-access/cancellation-reason-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import { localDateTime, parseGmtDateTime } from '../shop/shop-time';

/** SPEC 2.3: a recorded reason. `date` is in the site's local time, as WordPress shows dates; `date_gmt` in UTC. */
export interface CancellationReasonEntry {
  id: number;
  subscription_id: number;
  date: string;
  date_gmt: string;
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
    reason_id: recorded.reasonId,
    title: recorded.title,
    slug: recorded.slug,
  };
}
