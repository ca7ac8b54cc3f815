import type { DataSource } from 'typeorm';
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
}

export type ContactKey = { email: string } | { phone: string } | { customerId: number };

export interface ContactHits {
  orders: number[];
  subscriptions: number[];
}

const LEGACY_META_KEYS = ['_billing_email', '_billing_phone', '_billing_country', '_shipping_country', '_customer_user'];

/**
 * The customer lookup's own index and its reading of the shop's stores. Sources are read by primary key
 * ranges (and the HPOS orders' date-updated index), never by meta values.
 */
export class CustomerContactIndex {
  private readonly pool: Pool;
  private readonly newestBy: Record<'email' | 'phone' | 'customerId', string>;
  private readonly hposAfter: PreparedStatement<'afterId'>;
  private readonly hposChanged: PreparedStatement<'since' | 'afterId'>;
  private readonly legacyAfter: PreparedStatement<'afterId'>;
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
      .from(HposOrder, 'o')
      .leftJoin(HposOrderAddress, 'b', "b.orderId = o.id AND b.addressType = 'billing'")
      .leftJoin(HposOrderAddress, 's', "s.orderId = o.id AND s.addressType = 'shipping'");
    this.hposAfter = PreparedStatement.from(hposSources().where('o.id > :afterId AND o.type IN (:types)').orderBy('o.id')
      .setParameters({ ...slots('afterId'), ...types }));
    this.hposChanged = PreparedStatement.from(hposSources()
      .where('o.dateUpdatedGmt >= :since AND (o.dateUpdatedGmt > :since OR o.id > :afterId) AND o.type IN (:types)')
      .orderBy('o.dateUpdatedGmt').addOrderBy('o.id').setParameters({ ...slots('since', 'afterId'), ...types }));

    const legacySources = () => query()
      .select('p.id', 'id').addSelect('p.type', 'type').addSelect('p.status', 'status')
      .addSelect('p.dateGmt', 'dateCreatedGmt').addSelect('p.modifiedGmt', 'modifiedGmt')
      .from(Post, 'p');
    this.legacyAfter = PreparedStatement.from(legacySources().where('p.id > :afterId AND p.type IN (:types)').orderBy('p.id')
      .setParameters({ ...slots('afterId'), ...types }));
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
    this.stateOf = PreparedStatement.from(query()
      .select('s.built', 'built').addSelect('s.buildCursor', 'buildCursor').addSelect('s.maxId', 'maxId').addSelect('s.changedSince', 'changedSince')
      .addSelect('s.changedAfterId', 'changedAfterId').addSelect('s.sweepCursor', 'sweepCursor')
      .from(CustomerContactIndexState, 's').where('s.store = :store').setParameters(slots('store')));
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
    if (store === 'hpos') return this.hposSources(page(this.hposAfter.with({ afterId }), limit));
    return this.legacySources(page(this.legacyAfter.with({ afterId }), limit));
  }

  /**
   * HPOS rows updated at or after `since` (after `afterId` within that same second), in (date updated, id)
   * order: the keyset walks the orders' own date-updated index.
   */
  async hposChangedSince(since: string, afterId: number, limit: number): Promise<ContactSource[]> {
    return this.hposSources(page(this.hposChanged.with({ since, afterId }), limit));
  }

  /**
   * Legacy orders above `minId` modified at or after `since`, in id order. The posts table has no index on
   * the modified date, so this only ever reads a primary-key range of recent posts.
   */
  async legacyChangedSince(minId: number, since: string): Promise<ContactSource[]> {
    return this.legacySources(this.legacyChanged.with({ minId, since }));
  }

  private async hposSources(statement: Statement): Promise<ContactSource[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(statement.sql, statement.values);
    return rows.map((row) => ({
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
  }

  private async legacySources(statement: Statement): Promise<ContactSource[]> {
    const [posts] = await this.pool.query<RowDataPacket[]>(statement.sql, statement.values);
    if (!posts.length) return [];
    const { sql, values } = this.legacyMeta.with({ ids: posts.map((post) => post.id) });
    const [metaRows] = await this.pool.query<RowDataPacket[]>(sql, values);
    const meta = new Map<number, Record<string, string>>();
    for (const row of metaRows) {
      const id = Number(row.id);
      const values = meta.get(id) ?? {};
      if (!(row.key in values)) values[row.key] = String(row.value ?? '');
      meta.set(id, values);
    }
    return posts.map((post) => {
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
    };
  }

  /** Moves the id high-water mark forward only, so writers beside the worker's refresh never move it back. */
  async advanceMaxId(store: OrderStore, maxId: number): Promise<void> {
    const { sql, values } = this.maxIdAdvance.with({ maxId, store });
    await this.pool.query(sql, values);
  }

  async saveState(state: ContactIndexState, refreshedAt: Date): Promise<void> {
    const { sql, values } = this.stateSave.with({ ...state, built: state.built ? 1 : 0, refreshedAt: gmtDateTimeMs(refreshedAt) });
    await this.pool.query(sql, values);
  }
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
