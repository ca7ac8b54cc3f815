import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import {
  CustomerContact, CustomerContactIndexState, HposOrder, HposOrderAddress, Post, PostMeta,
} from '../../entities';
import { gmtDateTimeMs } from '../shop/shop-time';
import { rawPool } from './data-source';
import { page, PreparedStatement, slots, sqlNames } from './prepared-statement';
import type { Statement } from './transaction';

export type OrderStore = 'legacy' | 'hpos';
export type ContactOrderType = 'shop_order' | 'shop_subscription';

export const CONTACT_ORDER_TYPES: ContactOrderType[] = ['shop_order', 'shop_subscription'];

/** An order or subscription as its store holds the fields the index is made from. */
export interface ContactSource {
  id: number;
  type: ContactOrderType;
  /** As stored (`wc-processing`, `trash`, `draft`, ...). */
  status: string;
  customerId: number;
  email: string;
  phone: string;
  billingCountry: string;
  shippingCountry: string;
  dateCreatedGmt: string | null;
  /** When the order last changed (GMT), as its store records it. */
  modifiedGmt: string | null;
}

/** One row of the index. */
export interface ContactEntry {
  orderId: number;
  orderType: ContactOrderType;
  customerId: number;
  email: string | null;
  phone: string | null;
  dateCreatedGmt: string | null;
}

export interface ContactIndexState {
  store: OrderStore;
  built: boolean;
  buildCursor: number;
  maxId: number;
  changedSince: string | null;
  changedAfterId: number;
  sweepCursor: number;
  /** The rolling sweep's pass under way, or the last one (see RefreshCustomerContacts). */
  sweep: SweepState;
}

/** Where the rolling sweep stands in one store; times in epoch milliseconds. */
export interface SweepState {
  /** When the pass under way (or the last one) started; null before the first. */
  startedAt: number | null;
  /** When that pass ended; null while it is under way. */
  finishedAt: number | null;
  /** When the pass's next batch may be read. */
  dueAt: number | null;
  /** The highest ID the pass covers (newer ones are indexed as new IDs). */
  endId: number;
  /** Orders and subscriptions counted up to `endId` when the pass started: what it reads, and its pace. */
  orders: number;
  /** Of those, read so far. */
  ordersRead: number;
  /** Rows the pass has read so far. */
  passRows: number;
  /** Passes completed, and rows read by every pass (running totals). */
  passes: number;
  rowsRead: number;
  /** The last whole pass: how long it took and the rows it read. */
  lastPassMs: number;
  lastPassRows: number;
}

/** The sweep's figures of one store, for /metrics. */
export interface SweepFigures extends SweepState {
  store: OrderStore;
}

/** Sources read by the sweep, and the rows of the shop's tables that made them (see `sweepSources`). */
export interface SweptSources {
  sources: ContactSource[];
  rows: number;
}

export type ContactKey = { email: string } | { phone: string } | { customerId: number };

export interface ContactHits {
  orders: number[];
  subscriptions: number[];
}

/** The sweep's columns of the index's state row (SweepState, each prefixed `sweep`). */
const SWEEP_COLUMNS = [
  'sweepStartedAt', 'sweepFinishedAt', 'sweepDueAt', 'sweepEndId', 'sweepOrders', 'sweepOrdersRead', 'sweepPassRows',
  'sweepPasses', 'sweepRowsRead', 'sweepLastPassMs', 'sweepLastPassRows',
] as const;

const LEGACY_META_KEYS = ['_billing_email', '_billing_phone', '_billing_country', '_shipping_country', '_customer_user'];

/**
 * The customer lookup's own index and its reading of the shop's stores. Sources are read by primary key
 * ranges (and the HPOS orders' date-updated index), never by meta values.
 */
export class CustomerContactIndex {
  private readonly pool: Pool;
  private readonly newestBy: Record<'email' | 'phone' | 'customerId', string>;
  private readonly hposAfter: PreparedStatement<'afterId'>;
  private readonly hposBetween: PreparedStatement<'afterId' | 'upToId'>;
  private readonly hposCount: PreparedStatement<'upToId'>;
  private readonly hposChanged: PreparedStatement<'since' | 'afterId'>;
  private readonly legacyAfter: PreparedStatement<'afterId'>;
  private readonly legacyBetween: PreparedStatement<'afterId' | 'upToId'>;
  private readonly legacyCount: PreparedStatement<'upToId'>;
  private readonly legacyChanged: PreparedStatement<'minId' | 'since'>;
  private readonly legacyMeta: PreparedStatement<'ids'>;
  private readonly entries: PreparedStatement<'ids'>;
  private readonly idsAfter: PreparedStatement<'afterId'>;
  private readonly idsBetween: PreparedStatement<'afterId' | 'upToId'>;
  private readonly upsertSql: string;
  private readonly removal: PreparedStatement<'ids'>;
  private readonly stateOf: PreparedStatement<'store'>;
  private readonly maxIdAdvance: PreparedStatement<'maxId' | 'store'>;
  private readonly stateSave: PreparedStatement<keyof CustomerContactIndexState>;
  private readonly sweepRows: string;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const types = { types: CONTACT_ORDER_TYPES };

    // Two newest-first index descents (orders, subscriptions), each with its own limit, in one statement.
    const c = sqlNames(dataSource, CustomerContact);
    const newest = (key: string) => `(SELECT ${c.column.orderId} AS orderId, ${c.column.orderType} AS orderType FROM ${c.table}
      WHERE ${key} = ? AND ${c.column.orderType} = ? ORDER BY ${c.column.dateCreatedGmt} DESC, ${c.column.orderId} DESC LIMIT ?)`;
    const byKey = (key: string) => `${newest(key)} UNION ALL ${newest(key)}`;
    this.newestBy = { email: byKey(c.column.email), phone: byKey(c.column.phone), customerId: byKey(c.column.customerId) };

    const hposSources = () => query()
      .select('o.id', 'id').addSelect('o.type', 'type').addSelect('o.status', 'status').addSelect('o.customerId', 'customerId')
      .addSelect('o.billingEmail', 'orderEmail').addSelect('o.dateCreatedGmt', 'dateCreatedGmt').addSelect('o.dateUpdatedGmt', 'modifiedGmt')
      .addSelect('b.email', 'email').addSelect('b.phone', 'phone').addSelect('b.country', 'billingCountry').addSelect('s.country', 'shippingCountry')
      .addSelect('b.id', 'billingRow').addSelect('s.id', 'shippingRow')
      .from(HposOrder, 'o')
      .leftJoin(HposOrderAddress, 'b', "b.orderId = o.id AND b.addressType = 'billing'")
      .leftJoin(HposOrderAddress, 's', "s.orderId = o.id AND s.addressType = 'shipping'");
    this.hposAfter = PreparedStatement.from(hposSources().where('o.id > :afterId AND o.type IN (:types)').orderBy('o.id')
      .setParameters({ ...slots('afterId'), ...types }));
    this.hposBetween = PreparedStatement.from(hposSources().where('o.id > :afterId AND o.id <= :upToId AND o.type IN (:types)').orderBy('o.id')
      .setParameters({ ...slots('afterId', 'upToId'), ...types }));
    // Counted in the (type, status, date) index, which holds the ID too: no table rows read.
    this.hposCount = PreparedStatement.from(query().select('COUNT(*)', 'count').addSelect('MAX(o.id)', 'last').from(HposOrder, 'o')
      .where('o.type IN (:types) AND o.id <= :upToId').setParameters({ ...slots('upToId'), ...types }));
    this.hposChanged = PreparedStatement.from(hposSources()
      .where('o.dateUpdatedGmt >= :since AND (o.dateUpdatedGmt > :since OR o.id > :afterId) AND o.type IN (:types)')
      .orderBy('o.dateUpdatedGmt').addOrderBy('o.id').setParameters({ ...slots('since', 'afterId'), ...types }));

    const legacySources = () => query()
      .select('p.id', 'id').addSelect('p.type', 'type').addSelect('p.status', 'status')
      .addSelect('p.dateGmt', 'dateCreatedGmt').addSelect('p.modifiedGmt', 'modifiedGmt')
      .from(Post, 'p');
    this.legacyAfter = PreparedStatement.from(legacySources().where('p.id > :afterId AND p.type IN (:types)').orderBy('p.id')
      .setParameters({ ...slots('afterId'), ...types }));
    this.legacyBetween = PreparedStatement.from(legacySources().where('p.id > :afterId AND p.id <= :upToId AND p.type IN (:types)').orderBy('p.id')
      .setParameters({ ...slots('afterId', 'upToId'), ...types }));
    this.legacyCount = PreparedStatement.from(query().select('COUNT(*)', 'count').addSelect('MAX(p.id)', 'last').from(Post, 'p')
      .where('p.type IN (:types) AND p.id <= :upToId').setParameters({ ...slots('upToId'), ...types }));
    this.legacyChanged = PreparedStatement.from(legacySources().where('p.id > :minId AND p.type IN (:types) AND p.modifiedGmt >= :since').orderBy('p.id')
      .setParameters({ ...slots('minId', 'since'), ...types }));
    this.legacyMeta = PreparedStatement.from(query().select('m.postId', 'id').addSelect('m.key', 'key').addSelect('m.value', 'value')
      .from(PostMeta, 'm').where('m.postId IN (:ids) AND m.key IN (:keys)').orderBy('m.id')
      .setParameters({ ...slots('ids'), keys: LEGACY_META_KEYS }));

    this.entries = PreparedStatement.from(query()
      .select('c.orderId', 'orderId').addSelect('c.orderType', 'orderType').addSelect('c.customerId', 'customerId')
      .addSelect('c.email', 'email').addSelect('c.phone', 'phone').addSelect('c.dateCreatedGmt', 'dateCreatedGmt')
      .from(CustomerContact, 'c').where('c.orderId IN (:ids)').setParameters(slots('ids')));
    const ids = () => query().select('c.orderId', 'orderId').from(CustomerContact, 'c').where('c.orderId > :afterId');
    this.idsAfter = PreparedStatement.from(ids().setParameters(slots('afterId')));
    this.idsBetween = PreparedStatement.from(ids().andWhere('c.orderId <= :upToId').setParameters(slots('afterId', 'upToId')));
    // Many rows in one statement (mysql2 expands the nested array), each replacing the entry it finds.
    const written = [c.column.orderType, c.column.customerId, c.column.email, c.column.phone, c.column.dateCreatedGmt];
    this.upsertSql = `INSERT INTO ${c.table} (${c.column.orderId}, ${written.join(', ')}) VALUES ?
      ON DUPLICATE KEY UPDATE ${written.map((column) => `${column} = VALUES(${column})`).join(', ')}`;
    this.removal = PreparedStatement.from(query().delete().from(CustomerContact).where('orderId IN (:ids)').setParameters(slots('ids')));

    const state = dataSource.getMetadata(CustomerContactIndexState);
    const withSweep = (select: SelectQueryBuilder<ObjectLiteral>) => SWEEP_COLUMNS.reduce((built, column) => built.addSelect(`s.${column}`, column), select);
    this.stateOf = PreparedStatement.from(withSweep(query()
      .select('s.built', 'built').addSelect('s.buildCursor', 'buildCursor').addSelect('s.maxId', 'maxId').addSelect('s.changedSince', 'changedSince')
      .addSelect('s.changedAfterId', 'changedAfterId').addSelect('s.sweepCursor', 'sweepCursor'))
      .from(CustomerContactIndexState, 's').where('s.store = :store').setParameters(slots('store')));
    this.sweepRows = withSweep(query().select('s.store', 'store')).from(CustomerContactIndexState, 's').getQuery();
    this.maxIdAdvance = PreparedStatement.from(query().update(CustomerContactIndexState)
      .set({ maxId: () => `GREATEST(${sqlNames(dataSource, CustomerContactIndexState).column.maxId}, :maxId)` })
      .where('store = :store').setParameters(slots('maxId', 'store')));
    // The store's row, new or with every other column replaced.
    this.stateSave = PreparedStatement.from(query().insert().into(CustomerContactIndexState)
      .values(slots(...state.columns.map((column) => column.propertyName as keyof CustomerContactIndexState)) as never)
      .orUpdate(state.columns.filter((column) => !column.isPrimary).map((column) => column.databaseName), state.primaryColumns.map((column) => column.databaseName)));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Lookup

  /**
   * IDs of the newest orders and subscriptions with this key: up to `limits.orders` and `limits.subscriptions`.
   * Only columns of the key's own index are read, so a lookup is one index descent and no table rows.
   */
  async find(key: ContactKey, limits: { orders: number; subscriptions: number }): Promise<ContactHits> {
    const [sql, value] = 'email' in key ? [this.newestBy.email, key.email] : 'phone' in key ? [this.newestBy.phone, key.phone] : [this.newestBy.customerId, key.customerId];
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, [value, 'shop_order', limits.orders, value, 'shop_subscription', limits.subscriptions]);
    const ids = (type: ContactOrderType) => rows.filter((row) => row.orderType === type).map((row) => Number(row.orderId));
    return { orders: ids('shop_order'), subscriptions: ids('shop_subscription') };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading the shop's stores

  /** Orders and subscriptions with an id above `afterId`, in id order. */
  async sourcesAfter(store: OrderStore, afterId: number, limit: number): Promise<ContactSource[]> {
    if (store === 'hpos') return (await this.hposSources(page(this.hposAfter.with({ afterId }), limit))).sources;
    return (await this.legacySources(page(this.legacyAfter.with({ afterId }), limit))).sources;
  }

  /**
   * The rolling sweep's batch: up to `limit` orders and subscriptions in (`afterId`, `upToId`], in ID order, with
   * the rows of the shop's tables read for them (HPOS: the order and its billing and shipping address rows;
   * posts: the post and its meta rows of the keys the index needs).
   */
  async sweepSources(store: OrderStore, afterId: number, upToId: number, limit: number): Promise<SweptSources> {
    if (store === 'hpos') return this.hposSources(page(this.hposBetween.with({ afterId, upToId }), limit));
    return this.legacySources(page(this.legacyBetween.with({ afterId, upToId }), limit));
  }

  /**
   * How many orders and subscriptions have an ID up to `upToId`, and the highest such ID: counted in the
   * store's (type, status, date) index, one index entry read per order, no table rows.
   */
  async countSources(store: OrderStore, upToId: number): Promise<{ count: number; lastId: number }> {
    const { sql, values } = (store === 'hpos' ? this.hposCount : this.legacyCount).with({ upToId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return { count: Number(rows[0]?.count ?? 0), lastId: Number(rows[0]?.last ?? 0) };
  }

  /**
   * HPOS rows updated at or after `since` (after `afterId` within that same second), in (date updated, id)
   * order: the keyset walks the orders' own date-updated index.
   */
  async hposChangedSince(since: string, afterId: number, limit: number): Promise<ContactSource[]> {
    return (await this.hposSources(page(this.hposChanged.with({ since, afterId }), limit))).sources;
  }

  /**
   * Legacy orders above `minId` modified at or after `since`, in id order. The posts table has no index on
   * the modified date, so this only ever reads a primary-key range of recent posts.
   */
  async legacyChangedSince(minId: number, since: string): Promise<ContactSource[]> {
    return (await this.legacySources(this.legacyChanged.with({ minId, since }))).sources;
  }

  private async hposSources(statement: Statement): Promise<SweptSources> {
    const [rows] = await this.pool.query<RowDataPacket[]>(statement.sql, statement.values);
    const read = rows.reduce((sum, row) => sum + 1 + (row.billingRow === null ? 0 : 1) + (row.shippingRow === null ? 0 : 1), 0);
    const sources = rows.map((row) => ({
      id: Number(row.id),
      type: row.type as ContactOrderType,
      status: String(row.status ?? ''),
      customerId: Number(row.customerId) || 0,
      email: String(row.email || row.orderEmail || ''),
      phone: String(row.phone ?? ''),
      billingCountry: String(row.billingCountry ?? ''),
      shippingCountry: String(row.shippingCountry ?? ''),
      dateCreatedGmt: row.dateCreatedGmt ?? null,
      modifiedGmt: row.modifiedGmt ?? null,
    }));
    return { sources, rows: read };
  }

  private async legacySources(statement: Statement): Promise<SweptSources> {
    const [posts] = await this.pool.query<RowDataPacket[]>(statement.sql, statement.values);
    if (!posts.length) return { sources: [], rows: 0 };
    const { sql, values } = this.legacyMeta.with({ ids: posts.map((post) => post.id) });
    const [metaRows] = await this.pool.query<RowDataPacket[]>(sql, values);
    const meta = new Map<number, Record<string, string>>();
    for (const row of metaRows) {
      const id = Number(row.id);
      const values = meta.get(id) ?? {};
      if (!(row.key in values)) values[row.key] = String(row.value ?? '');
      meta.set(id, values);
    }
    const sources = posts.map((post) => {
      const values = meta.get(Number(post.id)) ?? {};
      return {
        id: Number(post.id),
        type: post.type as ContactOrderType,
        status: String(post.status),
        customerId: Number(values._customer_user) || 0,
        email: values._billing_email ?? '',
        phone: values._billing_phone ?? '',
        billingCountry: values._billing_country ?? '',
        shippingCountry: values._shipping_country ?? '',
        dateCreatedGmt: post.dateCreatedGmt ?? null,
        modifiedGmt: post.modifiedGmt ?? null,
      };
    });
    return { sources, rows: posts.length + metaRows.length };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Writing the index

  async entriesByIds(ids: number[]): Promise<Map<number, ContactEntry>> {
    if (!ids.length) return new Map();
    const { sql, values } = this.entries.with({ ids });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return new Map(rows.map((row) => [Number(row.orderId), entryFrom(row)]));
  }

  /** Index IDs in (`afterId`, `upToId`] (no upper bound when null). */
  async entryIdsInRange(afterId: number, upToId: number | null): Promise<number[]> {
    const { sql, values } = upToId === null ? this.idsAfter.with({ afterId }) : this.idsBetween.with({ afterId, upToId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => Number(row.orderId));
  }

  async upsert(entries: ContactEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.pool.query(this.upsertSql, [entries.map((e) => [e.orderId, e.orderType, e.customerId, e.email, e.phone, e.dateCreatedGmt])]);
  }

  async remove(ids: number[]): Promise<void> {
    if (!ids.length) return;
    const { sql, values } = this.removal.with({ ids });
    await this.pool.query(sql, values);
  }

  async state(store: OrderStore): Promise<ContactIndexState> {
    const { sql, values } = this.stateOf.with({ store });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    const row = rows[0];
    return {
      store,
      built: Boolean(Number(row?.built ?? 0)),
      buildCursor: Number(row?.buildCursor ?? 0),
      maxId: Number(row?.maxId ?? 0),
      changedSince: row?.changedSince ?? null,
      changedAfterId: Number(row?.changedAfterId ?? 0),
      sweepCursor: Number(row?.sweepCursor ?? 0),
      sweep: sweepFrom(row),
    };
  }

  /** The sweep's figures of each store the index has a row for (one read of a table of at most two rows). */
  async sweepFigures(): Promise<SweepFigures[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.sweepRows);
    return rows.map((row) => ({ store: row.store as OrderStore, ...sweepFrom(row) }));
  }

  /** Moves the id high-water mark forward only, so writers beside the worker's refresh never move it back. */
  async advanceMaxId(store: OrderStore, maxId: number): Promise<void> {
    const { sql, values } = this.maxIdAdvance.with({ maxId, store });
    await this.pool.query(sql, values);
  }

  async saveState(state: ContactIndexState, refreshedAt: Date): Promise<void> {
    const { sweep, ...rest } = state;
    const time = (ms: number | null) => (ms === null ? null : gmtDateTimeMs(new Date(ms)));
    const { sql, values } = this.stateSave.with({
      ...rest, built: state.built ? 1 : 0, refreshedAt: gmtDateTimeMs(refreshedAt),
      sweepStartedAt: time(sweep.startedAt), sweepFinishedAt: time(sweep.finishedAt), sweepDueAt: time(sweep.dueAt),
      sweepEndId: sweep.endId, sweepOrders: sweep.orders, sweepOrdersRead: sweep.ordersRead, sweepPassRows: sweep.passRows,
      sweepPasses: sweep.passes, sweepRowsRead: sweep.rowsRead, sweepLastPassMs: sweep.lastPassMs, sweepLastPassRows: sweep.lastPassRows,
    });
    await this.pool.query(sql, values);
  }
}

/** The sweep's columns of a state row (none yet: no pass so far). */
function sweepFrom(row: RowDataPacket | undefined): SweepState {
  const time = (text: unknown) => (typeof text === 'string' && text ? Date.parse(`${text.replace(' ', 'T')}Z`) : null);
  const number = (value: unknown) => Number(value ?? 0) || 0;
  return {
    startedAt: time(row?.sweepStartedAt),
    finishedAt: time(row?.sweepFinishedAt),
    dueAt: time(row?.sweepDueAt),
    endId: number(row?.sweepEndId),
    orders: number(row?.sweepOrders),
    ordersRead: number(row?.sweepOrdersRead),
    passRows: number(row?.sweepPassRows),
    passes: number(row?.sweepPasses),
    rowsRead: number(row?.sweepRowsRead),
    lastPassMs: number(row?.sweepLastPassMs),
    lastPassRows: number(row?.sweepLastPassRows),
  };
}

function entryFrom(row: RowDataPacket): ContactEntry {
  return {
    orderId: Number(row.orderId),
    orderType: row.orderType as ContactOrderType,
    customerId: Number(row.customerId) || 0,
    email: row.email ?? null,
    phone: row.phone ?? null,
    dateCreatedGmt: row.dateCreatedGmt ?? null,
  };
}
