import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Executor, Statement } from './transaction';
import { HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta, Post, PostMeta, WooCommerceChange } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { TurnBatch } from './turn-batch';
import type { ShopSettings } from './shop-settings-repository';
import { emptyAddress, PAYMENT_HAND_OVER_OPS, plainStatus, type OrderAddress, type OrderLineItem, type ShopOrder } from '../shop/order';
import { parseGmtDateTime, parseLocalDateTime, type ShopTimeZone } from '../shop/shop-time';

/** Orders read together at most; a busier turn starts another batch. */
const LOOKUP_BATCH_LIMIT = 100;

/** Statuses of rows that are not real orders to a customer: drafts and the bin. */
export const HIDDEN_STATUSES = ['trash', 'auto-draft', 'draft', 'wc-checkout-draft'];
const NUMBER_META_KEYS = ['_order_number_formatted', '_order_number'];
const ADDRESS_FIELDS: [keyof OrderAddress, string][] = [
  ['firstName', 'first_name'], ['lastName', 'last_name'], ['company', 'company'], ['address1', 'address_1'],
  ['address2', 'address_2'], ['city', 'city'], ['state', 'state'], ['postcode', 'postcode'], ['country', 'country'],
  ['email', 'email'], ['phone', 'phone'],
];

/**
 * Reads orders from the store WooCommerce treats as authoritative: the posts tables, or the HPOS
 * tables when `woocommerce_custom_orders_table_enabled` is `yes`. Each read is three statements in
 * one round trip (the orders, their meta, and their items and refunds), whichever store, and costs
 * the same when nothing is found.
 */
export class OrderRepository {
  private readonly pool: Pool;
  private readonly t: { posts: string; postmeta: string; orders: string; ordersMeta: string };
  private readonly sql: Record<'legacy' | 'hpos', { byNumber: string; orders: string; metaOf: string; itemsOf: string }>;
  /** Payment decisions waiting for WooCommerce, read with the orders (the `object_status` index). */
  private readonly handOversOf: string;
  private readonly lookups = new TurnBatch<{ id: number; settings: ShopSettings }, ShopOrder | null>(LOOKUP_BATCH_LIMIT, (items) => this.readLookups(items));

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const t = (entity: Parameters<typeof tableOf>[1]) => tableOf(dataSource, entity);
    this.t = { posts: t(Post), postmeta: t(PostMeta), orders: t(HposOrder), ordersMeta: t(HposOrderMeta) };
    // The batch reads: the orders, their meta, and their items with the orders' refunds appended (refund
    // rows have no item ID), so a whole page of orders costs one round trip. No ORDER BY: rows come through
    // the order_id / post_id indexes in ID order already, and sorting cost a temporary table per request.
    // Refunds are found through the parent index by name; the planner otherwise walks every refund.
    const itemsAndRefundsOf = (refunds: string) => `SELECT i.order_id, i.order_item_id, i.order_item_name, i.order_item_type, im.meta_key, im.meta_value
      FROM ${t(OrderItem)} i LEFT JOIN ${t(OrderItemMeta)} im ON im.order_item_id = i.order_item_id
      WHERE i.order_id IN (?)
      UNION ALL ${refunds}`;
    const addressColumns = (alias: string) => ADDRESS_FIELDS.map(([, column]) => `${alias}.${column} AS ${alias}_${column}`).join(', ');
    this.handOversOf = `SELECT object_id, op, payload, created_at FROM ${t(WooCommerceChange)}
      WHERE object_id IN (?) AND status IN ('pending', 'applying') AND op IN (?) ORDER BY id`;
    this.sql = {
      legacy: {
        byNumber: `SELECT m.post_id AS id, 0 AS preference FROM ${t(PostMeta)} m JOIN ${t(Post)} p ON p.ID = m.post_id AND p.post_type = 'shop_order'
          WHERE m.meta_key IN (?) AND m.meta_value = ? LIMIT 1`,
        orders: `SELECT p.ID AS id, p.post_type AS type, p.post_status AS status, p.post_date_gmt AS date_created_gmt
          FROM ${t(Post)} p WHERE p.ID IN (?) AND p.post_type = ? AND p.post_status NOT IN (?)`,
        metaOf: `SELECT m.post_id AS id, m.meta_key, m.meta_value FROM ${t(PostMeta)} m WHERE m.post_id IN (?)`,
        itemsOf: itemsAndRefundsOf(`SELECT r.post_parent, NULL, NULL, NULL, NULL, r.ID FROM ${t(Post)} r FORCE INDEX (post_parent)
          WHERE r.post_parent IN (?) AND r.post_type = 'shop_order_refund'`),
      },
      hpos: {
        byNumber: `SELECT m.order_id AS id, 0 AS preference FROM ${t(HposOrderMeta)} m JOIN ${t(HposOrder)} o ON o.id = m.order_id AND o.type = 'shop_order'
          WHERE m.meta_key IN (?) AND m.meta_value = ? LIMIT 1`,
        orders: `SELECT o.id, o.type, o.status, o.currency, o.total_amount, o.customer_id, o.billing_email, o.date_created_gmt,
            o.payment_method, o.payment_method_title, op.created_via, op.date_paid_gmt, op.date_completed_gmt,
            ${addressColumns('b')}, ${addressColumns('s')}
          FROM ${t(HposOrder)} o
          LEFT JOIN ${t(HposOrderOperationalData)} op ON op.order_id = o.id
          LEFT JOIN ${t(HposOrderAddress)} b ON b.order_id = o.id AND b.address_type = 'billing'
          LEFT JOIN ${t(HposOrderAddress)} s ON s.order_id = o.id AND s.address_type = 'shipping'
          WHERE o.id IN (?) AND o.type = ? AND o.status NOT IN (?)`,
        metaOf: `SELECT m.order_id AS id, m.meta_key, m.meta_value FROM ${t(HposOrderMeta)} m WHERE m.order_id IN (?)`,
        itemsOf: itemsAndRefundsOf(`SELECT r.parent_order_id, NULL, NULL, NULL, NULL, r.id FROM ${t(HposOrder)} r FORCE INDEX (parent_order_id)
          WHERE r.parent_order_id IN (?) AND r.type = 'shop_order_refund'`),
      },
    };
  }

  /**
   * The order a customer knows by this number: its ID, or with a sequential numbering plugin its
   * `_order_number_formatted` / `_order_number`, or, as the plugins fall back, the ID of an order that has
   * no number of its own (placed while the plugin was off). Null when there is none.
   */
  async findByOrderNumber(orderNumber: string, settings: ShopSettings): Promise<ShopOrder | null> {
    const sql = this.sql[settings.hpos ? 'hpos' : 'legacy'];
    const asId = /^[1-9]\d{0,18}$/.test(orderNumber) ? Number(orderNumber) : 0;
    if (settings.orderNumbers !== 'sequential') return this.findById(asId, settings);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql.byNumber, [NUMBER_META_KEYS, orderNumber]);
    if (rows.length) return this.findById(Number(rows[0].id), settings);
    // Every path makes the same two reads (ID 0 never exists), so a missing order costs what a present one does.
    const order = await this.findById(asId, settings);
    return order && !NUMBER_META_KEYS.some((key) => order.meta[key]) ? order : null;
  }

  /**
   * `findByOrderNumber`'s search as one statement giving the order's `id` (no row when there is none), to
   * send with others on whichever connection needs it (a transaction's own, say).
   */
  orderNumberSearch(orderNumber: string, settings: ShopSettings): Statement {
    const [orders, meta, idColumn, metaIdColumn, typeColumn, statusColumn] = settings.hpos
      ? [this.t.orders, this.t.ordersMeta, 'id', 'order_id', 'type', 'status']
      : [this.t.posts, this.t.postmeta, 'ID', 'post_id', 'post_type', 'post_status'];
    const asId = /^[1-9]\d{0,18}$/.test(orderNumber) ? Number(orderNumber) : 0;
    const visible = (search: string, values: unknown[]): Statement => ({
      sql: `SELECT o.${idColumn} AS id FROM (${search}) n JOIN ${orders} o ON o.${idColumn} = n.id AND o.${typeColumn} = 'shop_order' AND o.${statusColumn} NOT IN (?)`,
      values: [...values, HIDDEN_STATUSES],
    });
    if (settings.orderNumbers !== 'sequential') return visible('SELECT ? AS id', [asId]);
    // A number of its own first; else, as the plugins fall back, the ID of an order that has none.
    return visible(
      `SELECT id FROM ((${this.sql[settings.hpos ? 'hpos' : 'legacy'].byNumber}) UNION ALL
          (SELECT o.${idColumn}, 1 FROM ${orders} o WHERE o.${idColumn} = ?
             AND NOT EXISTS (SELECT 1 FROM ${meta} m WHERE m.${metaIdColumn} = o.${idColumn} AND m.meta_key IN (?) AND m.meta_value <> ''))
        ) candidates ORDER BY preference LIMIT 1`,
      [NUMBER_META_KEYS, orderNumber, asId, NUMBER_META_KEYS],
    );
  }

  /** One order, outside any transaction; lookups that arrive in the same turn are read together (`TurnBatch`). */
  findById(id: number, settings: ShopSettings): Promise<ShopOrder | null> {
    return this.lookups.add({ id, settings });
  }

  private async readLookups(items: { id: number; settings: ShopSettings }[]): Promise<(ShopOrder | null)[]> {
    const found = new Map<ShopSettings, Map<number, ShopOrder>>();
    // Settings change rarely, so a batch nearly always holds one kind; each kind is read on its own.
    for (const settings of new Set(items.map((item) => item.settings))) {
      const ids = [...new Set(items.filter((item) => item.settings === settings).map((item) => item.id))];
      found.set(settings, new Map((await this.findManyByIds(ids, settings)).map((order) => [order.id, order])));
    }
    const given = new Set<ShopOrder>();
    return items.map(({ id, settings }) => {
      const order = found.get(settings)?.get(id) ?? null;
      if (!order) return null;
      // Each caller gets its own copy: site extensions receive the order and may change it.
      if (given.has(order)) return structuredClone(order);
      given.add(order);
      return order;
    });
  }

  /**
   * Whether order `orderId` belongs to subscription `subscriptionId` as WooCommerce Subscriptions relates
   * them: the subscription's parent order, or an order carrying `_subscription_renewal` (or `_switch`,
   * `_resubscribe`) = the subscription's ID.
   */
  /** Whether an order with this ID exists in the authoritative store (drafts and the bin do not count, as in every lookup). */
  async exists(orderId: number, settings: ShopSettings): Promise<boolean> {
    const sql = settings.hpos
      ? `SELECT 1 FROM ${this.t.orders} WHERE id = ? AND type = 'shop_order' AND status NOT IN (?)`
      : `SELECT 1 FROM ${this.t.posts} WHERE ID = ? AND post_type = 'shop_order' AND post_status NOT IN (?)`;
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, [orderId, HIDDEN_STATUSES]);
    return rows.length > 0;
  }

  async relatesToSubscription(orderId: number, subscriptionId: number, settings: ShopSettings): Promise<boolean> {
    const relations = ['_subscription_renewal', '_subscription_switch', '_subscription_resubscribe'];
    const sql = settings.hpos
      ? `SELECT 1 FROM ${this.t.orders} o WHERE o.id = ? AND o.type = 'shop_order' AND o.status NOT IN (?) AND (
           EXISTS (SELECT 1 FROM ${this.t.orders} s WHERE s.id = ? AND s.type = 'shop_subscription' AND s.parent_order_id = o.id)
           OR EXISTS (SELECT 1 FROM ${this.t.ordersMeta} m WHERE m.order_id = o.id AND m.meta_key IN (?) AND m.meta_value = ?))`
      : `SELECT 1 FROM ${this.t.posts} o WHERE o.ID = ? AND o.post_type = 'shop_order' AND o.post_status NOT IN (?) AND (
           EXISTS (SELECT 1 FROM ${this.t.posts} s WHERE s.ID = ? AND s.post_type = 'shop_subscription' AND s.post_parent = o.ID)
           OR EXISTS (SELECT 1 FROM ${this.t.postmeta} m WHERE m.post_id = o.ID AND m.meta_key IN (?) AND m.meta_value = ?))`;
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, [orderId, HIDDEN_STATUSES, subscriptionId, relations, String(subscriptionId)]);
    return rows.length > 0;
  }

  /**
   * Several orders (or subscriptions: `type` 'shop_subscription') in one round trip, whichever store; drafts,
   * the bin and IDs of another type are left out. In the order of `ids`. Inside a transaction, pass its
   * connection as `db` (never wait for a second connection while holding one).
   */
  async findManyByIds(ids: number[], settings: ShopSettings, type: 'shop_order' | 'shop_subscription' = 'shop_order', db: Executor = this.pool): Promise<ShopOrder[]> {
    if (!ids.length) return [];
    const mode = settings.hpos ? 'hpos' : 'legacy';
    const sql = this.sql[mode];
    // All four statements in one round trip. The meta is a statement of its own rather than joined, so the order's columns come once, not once per meta row.
    const [[orderRows, metaRows, itemRows, handOverRows]] = await db.query<RowDataPacket[][]>(
      `${sql.orders};\n${sql.metaOf};\n${sql.itemsOf};\n${this.handOversOf}`, [ids, type, HIDDEN_STATUSES, ids, ids, ids, ids, PAYMENT_HAND_OVER_OPS]);
    const byId = (rows: RowDataPacket[], column: string) => {
      const groups = new Map<number, RowDataPacket[]>();
      for (const row of rows) {
        const id = Number(row[column]);
        const group = groups.get(id);
        if (group) group.push(row); else groups.set(id, [row]);
      }
      return groups;
    };
    const orders = new Map(orderRows.map((row) => [Number(row.id), row]));
    const meta = byId(metaRows, 'id');
    const items = byId(itemRows, 'order_id');
    const handOvers = byId(handOverRows, 'object_id');
    const found: ShopOrder[] = [];
    for (const id of ids) {
      const row = orders.get(id);
      if (!row) continue;
      const itemRowsOf = items.get(id) ?? [];
      row.refund_count = itemRowsOf.filter((item) => item.order_item_id === null).length;
      const lines = itemsFrom(itemRowsOf.filter((item) => item.order_item_id !== null)).sort((a, b) => a.id - b.id);
      const metaOf = metaFrom(meta.get(id) ?? []);
      const order = mode === 'hpos' ? fromHposRow(row, metaOf, lines) : fromLegacyRow(row, metaOf, lines, settings.timeZone);
      order.paymentsNotYetInShop = (handOvers.get(id) ?? []).map((handOver) => ({ op: handOver.op, at: handOverTime(handOver) }));
      found.push(order);
    }
    return found;
  }
}

/** When the provider took the money (`paid_at` of the change), else when the service decided. */
function handOverTime(row: RowDataPacket): Date {
  let paidAt: unknown;
  try {
    paidAt = (JSON.parse(String(row.payload)) as { paid_at?: unknown }).paid_at;
  } catch {
    paidAt = undefined;
  }
  if (typeof paidAt === 'number' && Number.isFinite(paidAt)) return new Date(paidAt * 1000);
  return parseGmtDateTime(String(row.created_at)) ?? new Date();
}

function metaFrom(rows: RowDataPacket[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const row of rows) {
    if (row.meta_key !== null && !(row.meta_key in meta)) meta[row.meta_key] = row.meta_value ?? '';
  }
  return meta;
}

function itemsFrom(rows: RowDataPacket[]): OrderLineItem[] {
  const items = new Map<number, OrderLineItem>();
  for (const row of rows) {
    const id = Number(row.order_item_id);
    let item = items.get(id);
    if (!item) {
      item = { id, name: row.order_item_name, type: row.order_item_type, meta: {} };
      items.set(id, item);
    }
    if (row.meta_key !== null && !(row.meta_key in item.meta)) item.meta[row.meta_key] = row.meta_value ?? '';
  }
  return [...items.values()];
}


/** Legacy dates: the Unix timestamp keys win; the older local-time copies are the fallback, as in WooCommerce. */
function legacyDate(meta: Record<string, string>, timestampKey: string, localKey: string, zone: ShopTimeZone): Date | null {
  const timestamp = meta[timestampKey];
  if (timestamp && /^\d+$/.test(timestamp)) return new Date(Number(timestamp) * 1000);
  const local = meta[localKey];
  return local ? parseLocalDateTime(local, zone) : null;
}

function fromLegacyRow(first: RowDataPacket, meta: Record<string, string>, items: OrderLineItem[], zone: ShopTimeZone): ShopOrder {
  const address = (type: 'billing' | 'shipping'): OrderAddress => {
    const result = emptyAddress();
    for (const [field, column] of ADDRESS_FIELDS) result[field] = meta[`_${type}_${column}`] ?? '';
    return result;
  };
  return {
    id: Number(first.id),
    type: first.type,
    status: plainStatus(first.status),
    currency: meta._order_currency ?? '',
    total: meta._order_total || '0',
    customerId: Number(meta._customer_user) || 0,
    paymentMethod: meta._payment_method ?? '',
    paymentMethodTitle: meta._payment_method_title ?? '',
    createdVia: meta._created_via ?? '',
    dateCreated: parseGmtDateTime(first.date_created_gmt),
    datePaid: legacyDate(meta, '_date_paid', '_paid_date', zone),
    dateCompleted: legacyDate(meta, '_date_completed', '_completed_date', zone),
    billing: address('billing'),
    shipping: address('shipping'),
    meta,
    items,
    refundCount: Number(first.refund_count),
    paymentsNotYetInShop: [],
  };
}

function fromHposRow(first: RowDataPacket, meta: Record<string, string>, items: OrderLineItem[]): ShopOrder {
  const address = (alias: 'b' | 's'): OrderAddress => {
    const result = emptyAddress();
    for (const [field, column] of ADDRESS_FIELDS) result[field] = first[`${alias}_${column}`] ?? '';
    return result;
  };
  const billing = address('b');
  billing.email ||= first.billing_email ?? '';
  return {
    id: Number(first.id),
    type: first.type,
    status: plainStatus(first.status ?? ''),
    currency: first.currency ?? '',
    total: first.total_amount ?? '0',
    customerId: Number(first.customer_id) || 0,
    paymentMethod: first.payment_method ?? '',
    paymentMethodTitle: first.payment_method_title ?? '',
    createdVia: first.created_via ?? '',
    dateCreated: parseGmtDateTime(first.date_created_gmt),
    datePaid: parseGmtDateTime(first.date_paid_gmt),
    dateCompleted: parseGmtDateTime(first.date_completed_gmt),
    billing,
    shipping: address('s'),
    meta,
    items,
    refundCount: Number(first.refund_count),
    paymentsNotYetInShop: [],
  };
}
