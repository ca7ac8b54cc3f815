import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import {
  CustomerContact, CustomerContactIndexState, HposOrder, HposOrderAddress, Post, PostMeta,
} from '../../entities';
import { gmtDateTimeMs } from '../shop/shop-time';
import { rawPool, tableOf } from './data-source';

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
  /** `wc_orders.date_updated_gmt` / `posts.post_modified_gmt`. */
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
 * The customer lookup's own index (`sidecar_customer_contacts`) and its reading of the shop's stores.
 * Sources are read by primary key ranges (and HPOS's `date_updated_gmt` index), never by meta values.
 */
export class CustomerContactIndex {
  private readonly pool: Pool;
  private readonly t: Record<'contacts' | 'state' | 'posts' | 'postmeta' | 'orders' | 'addresses', string>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = {
      contacts: tableOf(dataSource, CustomerContact),
      state: tableOf(dataSource, CustomerContactIndexState),
      posts: tableOf(dataSource, Post),
      postmeta: tableOf(dataSource, PostMeta),
      orders: tableOf(dataSource, HposOrder),
      addresses: tableOf(dataSource, HposOrderAddress),
    };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Lookup

  /**
   * IDs of the newest orders and subscriptions with this key: up to `limits.orders` and `limits.subscriptions`.
   * Only columns of the key's own index are read, so a lookup is one index descent and no table rows.
   */
  async find(key: ContactKey, limits: { orders: number; subscriptions: number }): Promise<ContactHits> {
    const [column, value] = 'email' in key ? ['email', key.email] : 'phone' in key ? ['phone', key.phone] : ['customer_id', key.customerId];
    const part = `(SELECT order_id, order_type FROM ${this.t.contacts}
      WHERE ${column} = ? AND order_type = ? ORDER BY date_created_gmt DESC, order_id DESC LIMIT ?)`;
    const [rows] = await this.pool.query<RowDataPacket[]>(`${part} UNION ALL ${part}`,
      [value, 'shop_order', limits.orders, value, 'shop_subscription', limits.subscriptions]);
    const ids = (type: ContactOrderType) => rows.filter((row) => row.order_type === type).map((row) => Number(row.order_id));
    return { orders: ids('shop_order'), subscriptions: ids('shop_subscription') };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading the shop's stores

  /** Orders and subscriptions with an ID above `afterId`, in ID order. */
  async sourcesAfter(store: OrderStore, afterId: number, limit: number): Promise<ContactSource[]> {
    if (store === 'hpos') {
      return this.hposSources(`o.id > ? AND o.type IN (?) ORDER BY o.id LIMIT ?`, [afterId, CONTACT_ORDER_TYPES, limit]);
    }
    return this.legacySources(`ID > ? AND post_type IN (?) ORDER BY ID LIMIT ?`, [afterId, CONTACT_ORDER_TYPES, limit]);
  }

  /**
   * HPOS rows updated at or after `since` (after `afterId` within that same second), in (date_updated_gmt, id)
   * order: the keyset walks `wc_orders`' own `date_updated` index.
   */
  async hposChangedSince(since: string, afterId: number, limit: number): Promise<ContactSource[]> {
    return this.hposSources(
      `o.date_updated_gmt >= ? AND (o.date_updated_gmt > ? OR o.id > ?) AND o.type IN (?) ORDER BY o.date_updated_gmt, o.id LIMIT ?`,
      [since, since, afterId, CONTACT_ORDER_TYPES, limit]);
  }

  /**
   * Legacy orders above `minId` modified at or after `since`, in ID order. The posts table has no index on
   * the modified date, so this only ever reads a primary-key range of recent posts.
   */
  async legacyChangedSince(minId: number, since: string): Promise<ContactSource[]> {
    return this.legacySources(`ID > ? AND post_type IN (?) AND post_modified_gmt >= ? ORDER BY ID`, [minId, CONTACT_ORDER_TYPES, since]);
  }

  private async hposSources(where: string, params: unknown[]): Promise<ContactSource[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT o.id, o.type, o.status, o.customer_id, o.billing_email, o.date_created_gmt, o.date_updated_gmt,
         b.email AS billing_address_email, b.phone AS billing_phone, b.country AS billing_country, s.country AS shipping_country
       FROM ${this.t.orders} o
       LEFT JOIN ${this.t.addresses} b ON b.order_id = o.id AND b.address_type = 'billing'
       LEFT JOIN ${this.t.addresses} s ON s.order_id = o.id AND s.address_type = 'shipping'
       WHERE ${where}`, params);
    return rows.map((row) => ({
      id: Number(row.id),
      type: row.type as ContactOrderType,
      status: String(row.status ?? ''),
      customerId: Number(row.customer_id) || 0,
      email: String(row.billing_address_email || row.billing_email || ''),
      phone: String(row.billing_phone ?? ''),
      billingCountry: String(row.billing_country ?? ''),
      shippingCountry: String(row.shipping_country ?? ''),
      dateCreatedGmt: row.date_created_gmt ?? null,
      modifiedGmt: row.date_updated_gmt ?? null,
    }));
  }

  private async legacySources(where: string, params: unknown[]): Promise<ContactSource[]> {
    const [posts] = await this.pool.query<RowDataPacket[]>(
      `SELECT ID AS id, post_type AS type, post_status AS status, post_date_gmt AS created, post_modified_gmt AS modified
       FROM ${this.t.posts} WHERE ${where}`, params);
    if (!posts.length) return [];
    const [metaRows] = await this.pool.query<RowDataPacket[]>(
      `SELECT post_id, meta_key, meta_value FROM ${this.t.postmeta} WHERE post_id IN (?) AND meta_key IN (?) ORDER BY meta_id`,
      [posts.map((post) => post.id), LEGACY_META_KEYS]);
    const meta = new Map<number, Record<string, string>>();
    for (const row of metaRows) {
      const id = Number(row.post_id);
      const values = meta.get(id) ?? {};
      if (!(row.meta_key in values)) values[row.meta_key] = String(row.meta_value ?? '');
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
        dateCreatedGmt: post.created ?? null,
        modifiedGmt: post.modified ?? null,
      };
    });
  }

  // -------------------------------------------------------------------------------------------------------------
  // Writing the index

  async entriesByIds(ids: number[]): Promise<Map<number, ContactEntry>> {
    if (!ids.length) return new Map();
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT order_id, order_type, customer_id, email, phone, date_created_gmt FROM ${this.t.contacts} WHERE order_id IN (?)`, [ids]);
    return new Map(rows.map((row) => [Number(row.order_id), entryFrom(row)]));
  }

  /** Index IDs in (`afterId`, `upToId`] (no upper bound when null). */
  async entryIdsInRange(afterId: number, upToId: number | null): Promise<number[]> {
    const [rows] = upToId === null
      ? await this.pool.query<RowDataPacket[]>(`SELECT order_id FROM ${this.t.contacts} WHERE order_id > ?`, [afterId])
      : await this.pool.query<RowDataPacket[]>(`SELECT order_id FROM ${this.t.contacts} WHERE order_id > ? AND order_id <= ?`, [afterId, upToId]);
    return rows.map((row) => Number(row.order_id));
  }

  async upsert(entries: ContactEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.pool.query(
      `INSERT INTO ${this.t.contacts} (order_id, order_type, customer_id, email, phone, date_created_gmt) VALUES ?
       ON DUPLICATE KEY UPDATE order_type = VALUES(order_type), customer_id = VALUES(customer_id), email = VALUES(email),
         phone = VALUES(phone), date_created_gmt = VALUES(date_created_gmt)`,
      [entries.map((e) => [e.orderId, e.orderType, e.customerId, e.email, e.phone, e.dateCreatedGmt])]);
  }

  async remove(ids: number[]): Promise<void> {
    if (ids.length) await this.pool.query(`DELETE FROM ${this.t.contacts} WHERE order_id IN (?)`, [ids]);
  }

  async state(store: OrderStore): Promise<ContactIndexState> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.state} WHERE store = ?`, [store]);
    const row = rows[0];
    return {
      store,
      built: Boolean(Number(row?.built ?? 0)),
      buildCursor: Number(row?.build_cursor ?? 0),
      maxId: Number(row?.max_id ?? 0),
      changedSince: row?.changed_since ?? null,
      changedAfterId: Number(row?.changed_after_id ?? 0),
      sweepCursor: Number(row?.sweep_cursor ?? 0),
    };
  }

  /** Moves the ID high-water mark forward only, so writers beside the worker's refresh never move it back. */
  async advanceMaxId(store: OrderStore, maxId: number): Promise<void> {
    await this.pool.query(`UPDATE ${this.t.state} SET max_id = GREATEST(max_id, ?) WHERE store = ?`, [maxId, store]);
  }

  async saveState(state: ContactIndexState, refreshedAt: Date): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.t.state} (store, built, build_cursor, max_id, changed_since, changed_after_id, sweep_cursor, refreshed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE built = VALUES(built), build_cursor = VALUES(build_cursor), max_id = VALUES(max_id),
         changed_since = VALUES(changed_since), changed_after_id = VALUES(changed_after_id), sweep_cursor = VALUES(sweep_cursor),
         refreshed_at = VALUES(refreshed_at)`,
      [state.store, state.built ? 1 : 0, state.buildCursor, state.maxId, state.changedSince, state.changedAfterId, state.sweepCursor,
        gmtDateTimeMs(refreshedAt)]);
  }
}

function entryFrom(row: RowDataPacket): ContactEntry {
  return {
    orderId: Number(row.order_id),
    orderType: row.order_type as ContactOrderType,
    customerId: Number(row.customer_id) || 0,
    email: row.email ?? null,
    phone: row.phone ?? null,
    dateCreatedGmt: row.date_created_gmt ?? null,
  };
}
