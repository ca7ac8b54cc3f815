import type { Logger } from '../logger';
import {
  type ContactEntry, type ContactIndexState, type ContactSource, type CustomerContactIndex, type OrderStore, type SweepState,
} from '../data-access/customer-contact-index';
import { HIDDEN_STATUSES } from '../data-access/order-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { gmtDateTime } from '../shop/shop-time';
import { storedContactKeys } from './contact-keys';

/** Sources read per query. */
const CHUNK = 2000;
/** Legacy storage has no index on the modified date: this many of the newest IDs are re-checked for edits each pass. */
const RECENT_WINDOW_IDS = 5000;
/** Changes are re-read this far back, so a write committed late (after newer ones were seen) is not missed. */
const CHANGE_OVERLAP_MS = 120_000;
/**
 * The sweep reads a batch about this often: a batch is the orders counted at the pass's start times this over
 * the pass's time (a 1,000,000-order store swept daily: 695 orders a minute), within the bounds below.
 */
export const SWEEP_BATCH_EVERY_SECONDS = 60;
/** The smallest batch (a small store is read in a few batches a pass, not one order at a time) and the largest. */
export const SWEEP_MIN_BATCH = 100;
export const SWEEP_MAX_BATCH = 2000;
/**
 * A batch due longer ago than this (the worker was stopped, a statement was slow) is not made up for by reading
 * faster: the pace goes on from now, and the pass ends that much later. Longer than the worker's loop (5 s), so
 * the batches due between two runs of the loop are all read.
 */
export const SWEEP_CATCH_UP_MS = 15_000;

export interface RefreshOptions {
  /** Wall time one call may spend (the first build of a large shop continues on later calls). Default 2 s. */
  budgetMs?: number;
  /**
   * CUSTOMER_INDEX_SWEEP_SECONDS (the worker gives it): a whole pass of the rolling sweep over the store takes this
   * long, its batches spread evenly over it and never read faster; a pass starts at most this often. 0 or not
   * given (`npm run migrate`, the bench): no sweep in this call.
   */
  sweepSeconds?: number;
}

/** How many orders the sweep reads in one batch when a pass over `orders` is to take `passMs`. */
export function sweepBatchSize(orders: number, passMs: number): number {
  const wanted = Math.ceil((orders * SWEEP_BATCH_EVERY_SECONDS * 1000) / Math.max(1, passMs));
  return Math.min(SWEEP_MAX_BATCH, Math.max(SWEEP_MIN_BATCH, wanted));
}

/**
 * Keeps the customer lookup's contact index current from the authoritative store. The first run builds it
 * (resumable, in ID order). After that each run indexes new IDs (ID high-water mark) and re-reads changed rows
 * (HPOS: the orders' update time, through its index, as high-water mark; legacy: the newest IDs' modified dates),
 * which is how an edit reaches the index within a run. Apart from that, a rolling sweep re-reads the whole store
 * at the operator's pace (`sweepSeconds`), for what leaves no trace to follow: an order deleted for good, and in
 * posts storage an edit to an order older than the newest RECENT_WINDOW_IDS. Returns the index rows written or removed.
 *
 * The sweep's pass counts the store's orders and subscriptions up to the highest ID at its start (one index entry
 * each) and reads them in ID order, in batches sized and spaced so the pass takes `sweepSeconds`: a batch is read
 * only once the time for it has come (`sweep.dueAt`), so by any moment of a pass it has read at most its share of
 * the orders counted, and never catches up by reading faster. The next pass starts `sweepSeconds` after this one
 * started. Where a pass stands, and the rows every pass read, are kept in the index's state row.
 */
export class RefreshCustomerContacts {
  constructor(private readonly deps: {
    index: CustomerContactIndex;
    settings: ShopSettingsRepository;
    log: Logger;
    clock?: () => Date;
  }) {}

  async execute(options: RefreshOptions = {}): Promise<number> {
    const deadline = Date.now() + (options.budgetMs ?? 2000);
    const overBudget = () => Date.now() > deadline;
    const now = (this.deps.clock ?? (() => new Date()))();
    const settings = await this.deps.settings.current();
    const store: OrderStore = settings.hpos ? 'hpos' : 'legacy';
    const state = await this.deps.index.state(store);
    const apply = (sources: ContactSource[], range?: { after: number; upTo: number | null }) => this.apply(sources, settings.baseCountry, range);
    let saved = JSON.stringify(state);
    const save = async () => {
      await this.deps.index.saveState(state, now);
      saved = JSON.stringify(state);
    };
    let written = 0;

    if (!state.built) {
      // Edits made while the build runs are picked up by the change scan from here on.
      state.changedSince ??= gmtDateTime(new Date(now.getTime() - CHANGE_OVERLAP_MS));
      for (;;) {
        const sources = await this.deps.index.sourcesAfter(store, state.buildCursor, CHUNK);
        const done = sources.length < CHUNK;
        const last = sources.length ? sources[sources.length - 1].id : state.buildCursor;
        written += await apply(sources, { after: state.buildCursor, upTo: done ? null : last });
        state.buildCursor = last;
        state.maxId = Math.max(state.maxId, last);
        if (done) {
          state.built = true;
          state.sweepCursor = 0;
          // The build has read the whole store: the sweep's first pass starts one pass time from now.
          Object.assign(state.sweep, { startedAt: now.getTime(), finishedAt: now.getTime(), dueAt: null, endId: state.maxId });
          this.deps.log.info('customer_contacts_built', { store, maxId: state.maxId });
        }
        await save();
        if (done) break;
        if (overBudget()) return written;
      }
    }

    // New orders and subscriptions.
    for (;;) {
      const sources = await this.deps.index.sourcesAfter(store, state.maxId, CHUNK);
      if (!sources.length) break;
      written += await apply(sources);
      state.maxId = sources[sources.length - 1].id;
      await save();
      if (sources.length < CHUNK || overBudget()) break;
    }

    // Changed ones.
    const since = state.changedSince ? new Date(Date.parse(`${state.changedSince.replace(' ', 'T')}Z`) - CHANGE_OVERLAP_MS) : new Date(now.getTime() - CHANGE_OVERLAP_MS);
    let newest = state.changedSince;
    if (store === 'hpos') {
      let cursor = { since: gmtDateTime(since), afterId: 0 };
      for (;;) {
        const sources = await this.deps.index.hposChangedSince(cursor.since, cursor.afterId, CHUNK);
        if (!sources.length) break;
        written += await apply(sources);
        const last = sources[sources.length - 1];
        cursor = { since: last.modifiedGmt ?? cursor.since, afterId: last.id };
        if (!newest || cursor.since > newest) newest = cursor.since;
        if (sources.length < CHUNK || overBudget()) break;
      }
    } else {
      const sources = await this.deps.index.legacyChangedSince(Math.max(0, state.maxId - RECENT_WINDOW_IDS), gmtDateTime(since));
      written += await apply(sources);
      for (const source of sources) if (source.modifiedGmt && (!newest || source.modifiedGmt > newest)) newest = source.modifiedGmt;
    }
    state.changedSince = newest;
    state.changedAfterId = 0;

    if (options.sweepSeconds) written += await this.sweep(store, state, now.getTime(), options.sweepSeconds * 1000, settings.baseCountry, overBudget);
    // Nothing written when nothing moved, so a shop at rest costs reads only.
    if (JSON.stringify(state) !== saved) await save();
    return written;
  }

  /** The batches of the rolling sweep that are due (see the class's comment); returns the index rows written or removed. */
  private async sweep(store: OrderStore, state: ContactIndexState, nowMs: number, passMs: number, shopCountry: string, overBudget: () => boolean): Promise<number> {
    const pass: SweepState = state.sweep;
    let written = 0;
    while (!overBudget()) {
      if (pass.startedAt === null || pass.finishedAt !== null) {
        // The next pass, once the last started a pass time ago (at once after a pass that took longer).
        if (pass.startedAt !== null && nowMs < pass.startedAt + passMs) break;
        const { count, lastId } = await this.deps.index.countSources(store, state.maxId);
        Object.assign(pass, {
          startedAt: nowMs, finishedAt: null, dueAt: nowMs, endId: lastId, orders: count, ordersRead: 0, passRows: count, rowsRead: pass.rowsRead + count,
        });
        state.sweepCursor = 0;
      }
      // As estimated, the last batch reads what is left; past the estimate (orders appeared below the pass's end) the pace stays.
      const limit = pass.ordersRead < pass.orders ? Math.min(sweepBatchSize(pass.orders, passMs), pass.orders - pass.ordersRead) : sweepBatchSize(pass.orders, passMs);
      // Its time: the last batch's plus this one's share of the pass (whole milliseconds, as stored, that add up to
      // the pass time), never further back than the catch-up allows.
      const share = (read: number) => (pass.orders ? Math.ceil((passMs * read) / pass.orders) : 0);
      const dueAt = Math.max((pass.dueAt ?? nowMs) + share(pass.ordersRead + limit) - share(pass.ordersRead), nowMs - SWEEP_CATCH_UP_MS);
      if (dueAt > nowMs) break;
      const { sources, rows } = await this.deps.index.sweepSources(store, state.sweepCursor, pass.endId, limit);
      const last = sources.length ? sources[sources.length - 1].id : state.sweepCursor;
      const done = sources.length < limit || last >= pass.endId;
      const tally = { rows };
      written += await this.apply(sources, shopCountry, { after: state.sweepCursor, upTo: done ? pass.endId : last }, tally);
      Object.assign(pass, {
        dueAt, ordersRead: pass.ordersRead + sources.length, passRows: pass.passRows + tally.rows, rowsRead: pass.rowsRead + tally.rows,
      });
      state.sweepCursor = done ? 0 : last;
      if (done) {
        Object.assign(pass, { finishedAt: nowMs, passes: pass.passes + 1, lastPassMs: nowMs - pass.startedAt!, lastPassRows: pass.passRows });
        this.deps.log.info('customer_index_sweep_pass', { store, orders: pass.ordersRead, rows: pass.passRows, seconds: Math.round(pass.lastPassMs / 1000) });
      }
    }
    return written;
  }

  /** The highest ID `indexNew` knows to be indexed, per store, so a lookup costs one read when nothing is new. */
  private readonly indexedUpTo = new Map<OrderStore, number>();

  /**
   * Indexes the orders and subscriptions created since the index last looked, so a lookup finds an order
   * as soon as it exists instead of on the worker's next pass. One chunk per call; it only moves the
   * high-water mark forward, so it can run beside the worker's refresh. Nothing before the first build.
   */
  async indexNew(): Promise<number> {
    const settings = await this.deps.settings.current();
    const store: OrderStore = settings.hpos ? 'hpos' : 'legacy';
    let after = this.indexedUpTo.get(store);
    if (after === undefined) {
      const state = await this.deps.index.state(store);
      if (!state.built) return 0;
      after = state.maxId;
      this.indexedUpTo.set(store, after);
    }
    // What the worker indexed meanwhile comes back here once, and is found unchanged.
    const sources = await this.deps.index.sourcesAfter(store, after, CHUNK);
    if (!sources.length) return 0;
    const written = await this.apply(sources, settings.baseCountry);
    const last = sources[sources.length - 1].id;
    await this.deps.index.advanceMaxId(store, last);
    this.indexedUpTo.set(store, last);
    return written;
  }

  /**
   * Brings the index in line with `sources`: visible ones written when they differ, hidden ones (drafts,
   * the bin) removed, and within `range` any index row whose source no longer exists removed too.
   */
  private async apply(sources: ContactSource[], shopCountry: string, range?: { after: number; upTo: number | null }, tally?: { rows: number }): Promise<number> {
    const wanted = new Map<number, ContactEntry>();
    for (const source of sources) {
      if (HIDDEN_STATUSES.includes(source.status)) continue;
      const keys = storedContactKeys(source, shopCountry);
      wanted.set(source.id, {
        orderId: source.id, orderType: source.type, customerId: source.customerId, email: keys.email, phone: keys.phone,
        dateCreatedGmt: validDate(source.dateCreatedGmt),
      });
    }
    const existing = await this.deps.index.entriesByIds(sources.map((source) => source.id));
    if (tally) tally.rows += existing.size;
    const toWrite = [...wanted.values()].filter((entry) => !sameEntry(existing.get(entry.orderId), entry));
    const toRemove = sources.filter((source) => !wanted.has(source.id) && existing.has(source.id)).map((source) => source.id);
    if (range) {
      const present = new Set(sources.map((source) => source.id));
      const indexed = await this.deps.index.entryIdsInRange(range.after, range.upTo);
      if (tally) tally.rows += indexed.length;
      for (const id of indexed) if (!present.has(id)) toRemove.push(id);
    }
    await this.deps.index.upsert(toWrite);
    await this.deps.index.remove(toRemove);
    return toWrite.length + toRemove.length;
  }

  /** Where the index stands for the store in use (for the CLI and tests). */
  async status(): Promise<ContactIndexState> {
    const settings = await this.deps.settings.current();
    return this.deps.index.state(settings.hpos ? 'hpos' : 'legacy');
  }
}

function validDate(value: string | null): string | null {
  return value && !value.startsWith('0000-00-00') ? value : null;
}

function sameEntry(a: ContactEntry | undefined, b: ContactEntry): boolean {
  return a !== undefined && a.orderType === b.orderType && a.customerId === b.customerId && a.email === b.email
    && a.phone === b.phone && a.dateCreatedGmt === b.dateCreatedGmt;
}
