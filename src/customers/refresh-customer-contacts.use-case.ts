import type { Logger } from '../logger';
import {
  type ContactEntry, type ContactIndexState, type ContactSource, type CustomerContactIndex, type OrderStore,
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
/** Sources re-read per pass by the rolling sweep that catches what else changed (older edits, deletions). */
const SWEEP_CHUNK = 2000;

export interface RefreshOptions {
  /** Wall time one call may spend (the first build of a large shop continues on later calls). Default 2 s. */
  budgetMs?: number;
}

/**
 * Keeps the customer lookup's contact index current from the authoritative store. The first run builds it
 * (resumable, in ID order). After that each run indexes new IDs (ID high-water mark), re-reads changed rows
 * (HPOS: the orders' update time as high-water mark; legacy: the newest IDs' modified dates), and sweeps one more
 * slice of the whole store, so older edits and deletions are caught too. Returns the index rows written or removed.
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
    const save = () => this.deps.index.saveState(state, now);
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

    // One slice of the rolling sweep.
    if (!overBudget()) {
      const sources = await this.deps.index.sourcesAfter(store, state.sweepCursor, SWEEP_CHUNK);
      const done = sources.length < SWEEP_CHUNK;
      const last = sources.length ? sources[sources.length - 1].id : state.sweepCursor;
      written += await apply(sources, { after: state.sweepCursor, upTo: done ? null : last });
      state.sweepCursor = done ? 0 : last;
    }
    await save();
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
  private async apply(sources: ContactSource[], shopCountry: string, range?: { after: number; upTo: number | null }): Promise<number> {
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
    const toWrite = [...wanted.values()].filter((entry) => !sameEntry(existing.get(entry.orderId), entry));
    const toRemove = sources.filter((source) => !wanted.has(source.id) && existing.has(source.id)).map((source) => source.id);
    if (range) {
      const present = new Set(sources.map((source) => source.id));
      for (const id of await this.deps.index.entryIdsInRange(range.after, range.upTo)) if (!present.has(id)) toRemove.push(id);
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
