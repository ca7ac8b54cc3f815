import type { PassMark, PassMarks } from '../data-access/pass-marks';
import type { PaymentRepository } from '../data-access/payment-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import { PAID_OUTSIDE, SECOND_CAPTURE_META, type SecondCaptureRepository } from '../data-access/second-capture-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';
import { orderNoteWords } from '../shop/order-note-words';
import { paidOutsideBefore, unflaggedSecondCaptures } from './second-captures';

/** The sweep's mark among the pass marks. */
const MARK = 'second_captures';
/**
 * A payment's row is stamped with the moment its transaction worked on it, which may commit some seconds later:
 * each pass looks this far back before the previous one began.
 */
const COMMIT_MARGIN_MS = 5 * 60_000;
/** With no mark yet (the sweep's first pass on a shop), the captures of the week before are looked at. */
const FIRST_LOOK_BACK_MS = 7 * 86_400_000;
const PAGE = 500;
const MAX_PAGES = 20;

export interface SecondCaptureSummary {
  /** Captured payments looked at. */
  looked: number;
  /** Payments flagged as second captures in this pass. */
  flagged: number;
}

/**
 * The worker's sweep, every minute: the payments captured since the previous pass (along the `updated_at` index;
 * nothing read when nothing was captured) whose order has another captured payment. Each such order is decided in
 * its own transaction, under the lock of its captured payments, so two workers flag a payment once.
 */
export class FlagSecondCaptures {
  /** Where the next pass reads from: just before the last whole pass began, or where an unfinished one stopped. */
  private next: { since: string; afterId: number } | null = null;
  /** The mark as stored, so that only a mark that moved is written. */
  private stored: PassMark | null = null;

  constructor(private readonly deps: {
    captures: SecondCaptureRepository;
    payments: PaymentRepository;
    orders: OrderWriteRepository;
    settings: ShopSettingsRepository;
    marks: PassMarks;
    log: Logger;
    clock: () => Date;
  }) {}

  async pass(progress: () => void = () => undefined): Promise<SecondCaptureSummary> {
    const now = this.deps.clock();
    const nowAt = gmtDateTimeMs(now);
    let { since, afterId } = this.next ?? await this.resume(now);
    const summary: SecondCaptureSummary = { looked: 0, flagged: 0 };
    const orders = new Set<number>();
    let seen: PassMark | null = null;
    let whole = false;
    for (let pages = 0; pages < MAX_PAGES && !whole; pages += 1) {
      const rows = await this.deps.captures.changedCaptures(since, afterId, PAGE);
      for (const row of rows) {
        if (row.captures > 1 || paidOutsideBefore(row.withdrawnBecause)) orders.add(row.orderId);
        ({ updatedAt: since, id: afterId } = row);
        // A row stamped ahead of this clock does not take the mark past now (see Reconciler.sweep).
        if (since <= nowAt) seen = { at: since, id: afterId };
      }
      summary.looked += rows.length;
      whole = rows.length < PAGE;
      progress();
    }
    for (const orderId of orders) {
      summary.flagged += await this.flagOrder(orderId, now);
      progress();
    }
    this.next = whole ? { since: gmtDateTimeMs(new Date(now.getTime() - COMMIT_MARGIN_MS)), afterId: 0 } : { since, afterId };
    const stored = this.stored;
    if (seen && (!stored || seen.at > stored.at || (seen.at === stored.at && seen.id > stored.id))) {
      await this.deps.marks.advance(MARK, seen, now);
      this.stored = seen;
    }
    return summary;
  }

  /** Where a new worker starts: a margin before the stored mark, or a week back on a shop never swept. */
  private async resume(now: Date): Promise<{ since: string; afterId: number }> {
    this.stored = await this.deps.marks.get(MARK);
    const marked = parseGmtDateTime(this.stored?.at);
    const from = marked ? marked.getTime() - COMMIT_MARGIN_MS : now.getTime() - FIRST_LOOK_BACK_MS;
    return { since: gmtDateTimeMs(new Date(from)), afterId: 0 };
  }

  /** Flags the order's second captures not flagged yet, each with its note; how many. */
  private async flagOrder(orderId: number, now: Date): Promise<number> {
    // Most orders seen again within the margin were flagged by an earlier pass: a plain read, no transaction.
    if (!unflaggedSecondCaptures(await this.deps.captures.capturesOfOrder(orderId))) return 0;
    const settings = await this.deps.settings.current();
    const flagged = await this.deps.orders.transaction(async (db) => {
      const found = unflaggedSecondCaptures(await this.deps.captures.lockCapturesOfOrder(db, orderId));
      if (!found) return null;
      for (const refund of found.later) {
        await this.deps.payments.setMeta(db, refund.id, { [SECOND_CAPTURE_META]: String(found.kept!.id) });
        await this.deps.orders.addNote(db, orderId, orderNoteWords(settings).secondCapture({ refund, kept: found.kept! }), settings, now);
      }
      for (const refund of found.outside) {
        await this.deps.payments.setMeta(db, refund.id, { [SECOND_CAPTURE_META]: PAID_OUTSIDE });
        await this.deps.orders.addNote(db, orderId, orderNoteWords(settings).secondCaptureOutside({ refund, withdrawnBecause: refund.withdrawnBecause }), settings, now);
      }
      return found;
    });
    if (!flagged) return 0;
    for (const refund of [...flagged.later, ...flagged.outside]) {
      const kept = flagged.later.includes(refund) ? flagged.kept : null;
      this.deps.log.warn('second_capture_flagged', {
        orderId, refundPaymentId: refund.id, refundExternalId: refund.externalId, provider: refund.provider, amountMinor: refund.amountMinor,
        currency: refund.currency, keptPaymentId: kept?.id ?? null, keptExternalId: kept?.externalId ?? null, keptProvider: kept?.provider ?? null,
        paidOutside: kept === null, withdrawnBecause: refund.withdrawnBecause,
      });
    }
    return flagged.later.length + flagged.outside.length;
  }
}
