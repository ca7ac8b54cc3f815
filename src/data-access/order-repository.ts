import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Executor, Statement } from './transaction';
import { HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta, Post, PostMeta, WooCommerceChange } from '../../entities';
import { rawPool } from './data-source';
import { inOneRoundTrip, PreparedStatement, slots, sqlNames, type Bindable } from './prepared-statement';
import { TurnBatch } from './turn-batch';
import { BoundedMemo } from '../shared/bounded-memo';
import type { ShopSettings } from './shop-settings-repository';
import { emptyAddress, plainStatus, type OrderAddress, type OrderLineItem, type ShopOrder } from '../shop/order';
import { parseGmtDateTime, parseLocalDateTime, type ShopTimeZone } from '../shop/shop-time';

/** Orders read together at most; a busier turn starts another batch. */
const LOOKUP_BATCH_LIMIT = 100;

/** Statuses of rows that are not real orders to a customer: drafts and the bin. */
export const HIDDEN_STATUSES = ['trash', 'auto-draft', 'draft', 'wc-checkout-draft'];
const NUMBER_META_KEYS = ['_order_number_formatted', '_order_number'];
/** Meta keys by which an order names the subscription it renews, switches or resubscribes to. */
const SUBSCRIPTION_RELATIONS = ['_subscription_renewal', '_subscription_switch', '_subscription_resubscribe'];
/** Each address field and how posts storage names it in the order's meta (`_billing_first_name`). */
const ADDRESS_FIELDS: [keyof OrderAddress, string][] = [
  ['firstName', 'first_name'], ['lastName', 'last_name'], ['company', 'company'], ['address1', 'address_1'],
  ['address2', 'address_2'], ['city', 'city'], ['state', 'state'], ['postcode', 'postcode'], ['country', 'country'],
  ['email', 'email'], ['phone', 'phone'],
];

/**
 * Each address field with where an order read finds it: its meta key in posts storage (`_billing_first_name`),
 * its column's name in an HPOS lookup's rows (`billing_firstName`). Written once, not for every order read.
 */
const addressKeys = (type: 'billing' | 'shipping') => ADDRESS_FIELDS.map(([field, metaName]) => ({ field, metaKey: `_${type}_${metaName}`, hposColumn: `${type}_${field}` }));
const ADDRESS_KEYS = { billing: addressKeys('billing'), shipping: addressKeys('shipping') };

type Mode = 'legacy' | 'hpos';

/** Where a storage mode keeps orders, refunds and subscriptions (an order is `o` in every statement). */
interface Store {
  order: typeof Post | typeof HposOrder;
  meta: typeof PostMeta | typeof HposOrderMeta;
  /** The meta's property holding its order's ID. */
  metaOrderId: string;
  /** The order's property holding its parent's ID: a refund's order, a subscription's first order. */
  parentId: string;
  /** The order's own columns a lookup reads. */
  selectOrders(query: SelectQueryBuilder<ObjectLiteral>): SelectQueryBuilder<ObjectLiteral>;
}

const STORES: Record<Mode, Store> = {
  legacy: {
    order: Post, meta: PostMeta, metaOrderId: 'postId', parentId: 'parentId',
    // The rest of such an order is in its meta.
    selectOrders: (query) => query.select('o.id', 'id').addSelect('o.type', 'type').addSelect('o.status', 'status')
      .addSelect('o.dateGmt', 'dateCreatedGmt').from(Post, 'o'),
  },
  hpos: {
    order: HposOrder, meta: HposOrderMeta, metaOrderId: 'orderId', parentId: 'parentOrderId',
    selectOrders: (query) => {
      const orders = query.select('o.id', 'id').from(HposOrder, 'o')
        .leftJoin(HposOrderOperationalData, 'op', 'op.orderId = o.id')
        .leftJoin(HposOrderAddress, 'billing', "billing.orderId = o.id AND billing.addressType = 'billing'")
        .leftJoin(HposOrderAddress, 'shipping', "shipping.orderId = o.id AND shipping.addressType = 'shipping'");
      for (const property of ['type', 'status', 'currency', 'totalAmount', 'customerId', 'billingEmail', 'dateCreatedGmt', 'paymentMethod', 'paymentMethodTitle']) {
        orders.addSelect(`o.${property}`, property);
      }
      for (const property of ['createdVia', 'datePaidGmt', 'dateCompletedGmt']) orders.addSelect(`op.${property}`, property);
      for (const address of ['billing', 'shipping']) {
        for (const [field] of ADDRESS_FIELDS) orders.addSelect(`${address}.${field}`, `${address}_${field}`);
      }
      return orders;
    },
  },
};

/** Values every statement of this file may name and none is given per call. */
const FIXED = { hidden: HIDDEN_STATUSES, numberKeys: NUMBER_META_KEYS, relations: SUBSCRIPTION_RELATIONS };

/** A storage mode's statements, each written once. */
class StoreStatements {
  /** The order carrying this number of its own (`id`, `preference` 0); no row when there is none. */
  readonly byNumber: PreparedStatement<'number'>;
  /** `findByOrderNumber`'s search as one statement, by the shop's kind of order numbers. */
  readonly numberSearch: Record<ShopSettings['orderNumbers'], PreparedStatement<'number' | 'asId'>>;
  /**
   * A lookup's reads: the orders, each with the payment decisions waiting for WooCommerce joined (through
   * the changes' `open_payment_of` index, which holds only decisions still open: nearly always none, so one row per order), their meta, and
   * their items with the orders' refunds appended (refund rows have no item ID). The meta is a statement
   * of its own rather than joined, so the order's columns come once, not once per meta row. No ORDER BY:
   * rows come through the indexes on the order's ID in ID order already, and sorting cost a temporary
   * table per request.
   */
  readonly lookup: Bindable<'ids' | 'type'>;
  readonly exists: PreparedStatement<'id'>;
  readonly relatesToSubscription: PreparedStatement<'orderId' | 'subscriptionId' | 'subscription'>;

  constructor(dataSource: DataSource, store: Store) {
    const query = () => dataSource.createQueryBuilder().setParameters(FIXED);
    const metaOrderId = `m.${store.metaOrderId}`;
    const visibleOrder = "o.type = 'shop_order' AND o.status NOT IN (:hidden)";

    const byNumber = query().select(metaOrderId, 'id').addSelect('0', 'preference').from(store.meta, 'm')
      .innerJoin(store.order, 'o', `o.id = ${metaOrderId} AND o.type = 'shop_order'`)
      .where('m.key IN (:numberKeys) AND m.value = :number').limit(1)
      .setParameters(slots('number'));
    this.byNumber = PreparedStatement.from(byNumber);

    // As the plugins fall back: the ID of an order that has no number of its own.
    const hasNumber = query().select('1').from(store.meta, 'm').where(`${metaOrderId} = o.id AND m.key IN (:numberKeys) AND m.value <> ''`);
    const withoutNumber = query().select('o.id', 'id').addSelect('1', 'preference').from(store.order, 'o')
      .where(`o.id = :asId AND NOT EXISTS (${hasNumber.getQuery()})`);
    const visible = (candidate: string) => PreparedStatement.from<'number' | 'asId'>(query()
      .select('o.id', 'id').from(`(${candidate})`, 'n')
      .innerJoin(store.order, 'o', `o.id = n.id AND ${visibleOrder}`)
      .setParameters(slots('number', 'asId')));
    this.numberSearch = {
      id: visible('SELECT :asId AS id'),
      // A number of its own first.
      sequential: visible(`SELECT id FROM ((${byNumber.getQuery()}) UNION ALL (${withoutNumber.getQuery()})) candidates ORDER BY preference LIMIT 1`),
    };

    const orders = PreparedStatement.from<'ids' | 'type'>(store.selectOrders(query())
      .leftJoin(WooCommerceChange, 'c', 'c.openPaymentOf = o.id')
      .addSelect('c.id', 'handOverId').addSelect('c.op', 'handOverOp').addSelect('c.payload', 'handOverPayload').addSelect('c.createdAt', 'handOverCreatedAt')
      .where('o.id IN (:ids) AND o.type = :type AND o.status NOT IN (:hidden)')
      .setParameters(slots('ids', 'type')));
    const meta = PreparedStatement.from<'ids'>(query()
      .select(metaOrderId, 'orderId').addSelect('m.key', 'key').addSelect('m.value', 'value').from(store.meta, 'm')
      .where(`${metaOrderId} IN (:ids)`)
      .setParameters(slots('ids')));
    this.lookup = inOneRoundTrip(orders, meta, itemsAndRefunds(dataSource, store));

    this.exists = PreparedStatement.from(query().select('1').from(store.order, 'o')
      .where(`o.id = :id AND ${visibleOrder}`)
      .setParameters(slots('id')));
    const itsParent = query().select('1').from(store.order, 's')
      .where(`s.id = :subscriptionId AND s.type = 'shop_subscription' AND s.${store.parentId} = o.id`);
    const namesIt = query().select('1').from(store.meta, 'm').where(`${metaOrderId} = o.id AND m.key IN (:relations) AND m.value = :subscription`);
    this.relatesToSubscription = PreparedStatement.from(query().select('1').from(store.order, 'o')
      .where(`o.id = :orderId AND ${visibleOrder} AND (EXISTS (${itsParent.getQuery()}) OR EXISTS (${namesIt.getQuery()}))`)
      .setParameters(slots('orderId', 'subscriptionId', 'subscription')));
  }
}

/**
 * The orders' items with their meta and, a union the query builder cannot write, the orders' refunds,
 * found through the index on their parent by name: the planner otherwise walks every refund.
 */
function itemsAndRefunds(dataSource: DataSource, store: Store): Bindable<'ids'> {
  const item = sqlNames(dataSource, OrderItem);
  const itemMeta = sqlNames(dataSource, OrderItemMeta);
  const refund = sqlNames<ObjectLiteral>(dataSource, store.order);
  const sql = `SELECT i.${item.column.orderId} AS orderId, i.${item.column.id} AS itemId, i.${item.column.name} AS name, i.${item.column.type} AS type,
      im.${itemMeta.column.key} AS metaKey, im.${itemMeta.column.value} AS metaValue
    FROM ${item.table} i LEFT JOIN ${itemMeta.table} im ON im.${itemMeta.column.orderItemId} = i.${item.column.id}
    WHERE i.${item.column.orderId} IN (?)
    UNION ALL SELECT r.${refund.column[store.parentId]}, NULL, NULL, NULL, NULL, r.${refund.column.id} FROM ${refund.table} r FORCE INDEX (${refund.indexOn(store.parentId)})
    WHERE r.${refund.column[store.parentId]} IN (?) AND r.${refund.column.type} = 'shop_order_refund'`;
  return { sql, with: ({ ids }) => ({ sql, values: [ids, ids] }) };
}

/**
 * Reads orders from the store WooCommerce treats as authoritative: the posts tables, or the HPOS
 * tables when `woocommerce_custom_orders_table_enabled` is `yes`. Each read is three statements in
 * one round trip (the orders with the payments not yet in the shop, their meta, their items and
 * refunds), whichever store, and costs the same when nothing is found.
 */
export class OrderRepository {
  private readonly pool: Pool;
  private readonly statements: Record<Mode, StoreStatements>;
  private readonly lookups = new TurnBatch<{ id: number; settings: ShopSettings }, ShopOrder | null>(LOOKUP_BATCH_LIMIT, (items) => this.readLookups(items), { startAlone: true });

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.statements = { legacy: new StoreStatements(dataSource, STORES.legacy), hpos: new StoreStatements(dataSource, STORES.hpos) };
  }

  /**
   * The order a customer knows by this number: its ID, or with a sequential numbering plugin its
   * `_order_number_formatted` / `_order_number`, or, as the plugins fall back, the ID of an order that has
   * no number of its own (placed while the plugin was off). Null when there is none.
   */
  async findByOrderNumber(orderNumber: string, settings: ShopSettings): Promise<ShopOrder | null> {
    const asId = /^[1-9]\d{0,18}$/.test(orderNumber) ? Number(orderNumber) : 0;
    if (settings.orderNumbers !== 'sequential') return this.findById(asId, settings);
    const { sql, values } = this.statementsFor(settings).byNumber.with({ number: orderNumber });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
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
    const asId = /^[1-9]\d{0,18}$/.test(orderNumber) ? Number(orderNumber) : 0;
    return this.statementsFor(settings).numberSearch[settings.orderNumbers].with({ number: orderNumber, asId });
  }

  /**
   * One order, outside any transaction; lookups that arrive in the same turn are read together (`TurnBatch`). One
   * that comes while no other is waiting or being read is read at once.
   */
  findById(id: number, settings: ShopSettings): Promise<ShopOrder | null> {
    return this.lookups.add({ id, settings });
  }

  private async readLookups(items: { id: number; settings: ShopSettings }[]): Promise<(ShopOrder | null)[]> {
    // A lookup alone in its turn (every one, at one request at a time) has nothing to share or group.
    if (items.length === 1) {
      const [order] = await this.findManyByIds([items[0].id], items[0].settings);
      return [order ?? null];
    }
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

  /** Whether an order with this ID exists in the authoritative store (drafts and the bin do not count, as in every lookup). */
  async exists(orderId: number, settings: ShopSettings): Promise<boolean> {
    const { sql, values } = this.statementsFor(settings).exists.with({ id: orderId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length > 0;
  }

  /**
   * Whether order `orderId` belongs to subscription `subscriptionId` as WooCommerce Subscriptions relates
   * them: the subscription's parent order, or an order carrying `_subscription_renewal` (or `_switch`,
   * `_resubscribe`) = the subscription's ID.
   */
  async relatesToSubscription(orderId: number, subscriptionId: number, settings: ShopSettings): Promise<boolean> {
    const { sql, values } = this.statementsFor(settings).relatesToSubscription.with({ orderId, subscriptionId, subscription: String(subscriptionId) });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length > 0;
  }

  /**
   * Several orders (or subscriptions: `type` 'shop_subscription') in one round trip, whichever store; drafts,
   * the bin and IDs of another type are left out. In the order of `ids`. Inside a transaction, pass its
   * connection as `db` (never wait for a second connection while holding one).
   */
  async findManyByIds(ids: number[], settings: ShopSettings, type: 'shop_order' | 'shop_subscription' = 'shop_order', db: Executor = this.pool): Promise<ShopOrder[]> {
    if (!ids.length) return [];
    const { sql, values } = this.statementsFor(settings).lookup.with({ ids, type });
    const [[orderRows, metaRows, itemRows]] = await db.query<RowDataPacket[][]>(sql, values);
    const byOrder = (rows: RowDataPacket[], property: string) => {
      // Every row is of the one order asked for (each statement selects by `IN (:ids)`): no grouping needed.
      if (ids.length === 1) return new Map([[ids[0], rows]]);
      const groups = new Map<number, RowDataPacket[]>();
      for (const row of rows) {
        const id = Number(row[property]);
        const group = groups.get(id);
        if (group) group.push(row); else groups.set(id, [row]);
      }
      return groups;
    };
    // An order's rows all carry its columns; each row with a hand-over brings one.
    const orders = new Map(orderRows.map((row) => [Number(row.id), row]));
    const handOvers = byOrder(orderRows.filter((row) => row.handOverId !== null), 'id');
    const meta = byOrder(metaRows, 'orderId');
    const items = byOrder(itemRows, 'orderId');
    const found: ShopOrder[] = [];
    for (const id of ids) {
      const row = orders.get(id);
      if (!row) continue;
      const itemRowsOf = items.get(id) ?? [];
      row.refundCount = itemRowsOf.filter((item) => item.itemId === null).length;
      const lines = itemsFrom(itemRowsOf.filter((item) => item.itemId !== null)).sort((a, b) => a.id - b.id);
      const metaOf = metaFrom(meta.get(id) ?? []);
      const order = settings.hpos ? fromHposRow(row, metaOf, lines) : fromLegacyRow(row, metaOf, lines, settings.timeZone);
      order.paymentsNotYetInShop = (handOvers.get(id) ?? []).sort((a, b) => Number(a.handOverId) - Number(b.handOverId))
        .map((handOver) => ({ op: handOver.handOverOp, at: handOverTime(handOver) }));
      found.push(order);
    }
    return found;
  }

  private statementsFor(settings: ShopSettings): StoreStatements {
    return this.statements[settings.hpos ? 'hpos' : 'legacy'];
  }
}

/** When the provider took the money (`paid_at` of the change), else when the service decided. */
function handOverTime(row: RowDataPacket): Date {
  let paidAt: unknown;
  try {
    paidAt = (JSON.parse(String(row.handOverPayload)) as { paid_at?: unknown }).paid_at;
  } catch {
    paidAt = undefined;
  }
  if (typeof paidAt === 'number' && Number.isFinite(paidAt)) return new Date(paidAt * 1000);
  return parseGmtDateTime(String(row.handOverCreatedAt)) ?? new Date();
}

/** Meta keys kept as property names at most; a shop has a few hundred. */
const propertyNames = new BoundedMemo<string>(10_000);
const internalName = (key: string): string => Object.keys({ [key]: 0 })[0];

/**
 * Meta keys as the property names V8 already keeps for them. Each row brings its key as a new string, which V8
 * looks up in its table of every name the process knows before it can use it on an object: in the API, with that
 * table large and out of the cache between requests, those lookups were half the building of an order. Orders of
 * one shop bring their meta keys in much the same sequence (the checkout writes them in its order), so a row's key
 * is first compared with the name found at its place in the last rows read: a comparison of two strings, without
 * hashing either. Only a key that differs is looked up in a small map of the names seen.
 */
class MetaKeyNames {
  private readonly lastRead: string[] = [];

  /** The kept name of `key`, the key of the row at `position` of an order's rows. */
  name(key: string, position: number): string {
    const atPlace = this.lastRead[position];
    if (atPlace === key) return atPlace;
    const name = propertyNames.get(key, internalName);
    if (position < MAX_PLACES) this.lastRead[position] = name;
    return name;
  }
}

/** Rows whose places are remembered; an order with more meta than this looks the rest up by name. */
const MAX_PLACES = 1000;
const orderMetaNames = new MetaKeyNames();
const itemMetaNames = new MetaKeyNames();

/**
 * An order's meta by key, the first row of a key winning. `Object.hasOwn`, not `in`: a key named like a member of
 * every object (`constructor`) is the order's too.
 */
function metaFrom(rows: RowDataPacket[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (let position = 0; position < rows.length; position += 1) {
    const row = rows[position];
    if (row.key === null) continue;
    const key = orderMetaNames.name(row.key, position);
    if (!Object.hasOwn(meta, key)) meta[key] = row.value ?? '';
  }
  return meta;
}

function itemsFrom(rows: RowDataPacket[]): OrderLineItem[] {
  const items = new Map<number, OrderLineItem>();
  for (let position = 0; position < rows.length; position += 1) {
    const row = rows[position];
    const id = Number(row.itemId);
    let item = items.get(id);
    if (!item) {
      item = { id, name: row.name, type: row.type, meta: {} };
      items.set(id, item);
    }
    if (row.metaKey === null) continue;
    const key = itemMetaNames.name(row.metaKey, position);
    if (!Object.hasOwn(item.meta, key)) item.meta[key] = row.metaValue ?? '';
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
    for (const { field, metaKey } of ADDRESS_KEYS[type]) result[field] = meta[metaKey] ?? '';
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
    dateCreated: parseGmtDateTime(first.dateCreatedGmt),
    datePaid: legacyDate(meta, '_date_paid', '_paid_date', zone),
    dateCompleted: legacyDate(meta, '_date_completed', '_completed_date', zone),
    billing: address('billing'),
    shipping: address('shipping'),
    meta,
    items,
    refundCount: Number(first.refundCount),
    paymentsNotYetInShop: [],
  };
}

function fromHposRow(first: RowDataPacket, meta: Record<string, string>, items: OrderLineItem[]): ShopOrder {
  const address = (type: 'billing' | 'shipping'): OrderAddress => {
    const result = emptyAddress();
    for (const { field, hposColumn } of ADDRESS_KEYS[type]) result[field] = first[hposColumn] ?? '';
    return result;
  };
  const billing = address('billing');
  billing.email ||= first.billingEmail ?? '';
  return {
    id: Number(first.id),
    type: first.type,
    status: plainStatus(first.status ?? ''),
    currency: first.currency ?? '',
    total: first.totalAmount ?? '0',
    customerId: Number(first.customerId) || 0,
    paymentMethod: first.paymentMethod ?? '',
    paymentMethodTitle: first.paymentMethodTitle ?? '',
    createdVia: first.createdVia ?? '',
    dateCreated: parseGmtDateTime(first.dateCreatedGmt),
    datePaid: parseGmtDateTime(first.datePaidGmt),
    dateCompleted: parseGmtDateTime(first.dateCompletedGmt),
    billing,
    shipping: address('shipping'),
    meta,
    items,
    refundCount: Number(first.refundCount),
    paymentsNotYetInShop: [],
  };
}
