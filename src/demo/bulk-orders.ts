import mysql from 'mysql2/promise';
import type { DataSource, ObjectLiteral } from 'typeorm';
import { checkPrefix, getOption, WOOCOMMERCE_VERSION, type Db } from './woocommerce-schema';
import { gmtDateTime, offsetMinutesAt } from '../shop/shop-time';
import { sqlNames } from '../data-access/prepared-statement';
import { HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta, Post, PostMeta } from '../../entities';
import { shopTables } from './shop-seeder';

/**
 * Generates many WooCommerce orders fast, set-based: each batch of orders is computed once into a temporary
 * table from MariaDB's Sequence engine (`seq_1_to_N`), then every target table is filled with one
 * `INSERT ... SELECT` per batch. IDs are assigned explicitly above the current maximum, so the item and meta
 * rows need no lookups. Every value is a pure function of the order ID (see `bulkOrderIdentity()`), except the
 * dates, which spread the orders evenly over the two years before `now`.
 */

export interface BulkOptions {
  /** Write HPOS storage (placeholder posts, the orders with their addresses, operational data and meta) instead of posts storage. */
  hpos?: boolean;
  onProgress?(done: number): void;
  /** Orders per INSERT ... SELECT round (default 50,000). */
  batchSize?: number;
  /** The newest order is created just before this (default: now). */
  now?: Date;
  /** Site time zone for the local date columns (default: the `timezone_string` option, else Europe/Copenhagen). */
  timezone?: string;
  /** Also write `_order_number` = `bulkOrderIdentity(id).orderNumber`, as a sequential numbering plugin would. */
  orderNumbers?: boolean;
}

/** Order numbers written with `orderNumbers` are the ID plus this, so they never collide with IDs. */
export const BULK_ORDER_NUMBER_OFFSET = 5_000_000;

const STATUS_SQL = `CASE WHEN id % 100 < 70 THEN 'completed' WHEN id % 100 < 82 THEN 'processing' WHEN id % 100 < 86 THEN 'on-hold'
  WHEN id % 100 < 90 THEN 'pending' WHEN id % 100 < 94 THEN 'cancelled' WHEN id % 100 < 97 THEN 'refunded' ELSE 'failed' END`;

/** The billing email, phone (as stored) and `_order_number` the generator gives order `id`. */
export function bulkOrderIdentity(id: number): { email: string; phone: string; orderNumber: string; country: string } {
  const country = countryOf(id);
  const national = String(20_000_000 + ((id * 7919) % 10_000_000));
  const pairs = national.match(/../g)!;
  const phone = {
    DK: [`+45 ${pairs.join(' ')}`, national, pairs.join('-')][id % 3],
    SE: `+46 70 ${national.slice(1, 4)} ${national.slice(4, 6)} ${national.slice(6)}`,
    NO: `+47 9${national.slice(1, 3)} ${national.slice(3, 5)} ${national.slice(5)}`,
    DE: `+49 151 ${national}`,
  }[country];
  return { email: `customer${id}@example.dk`, phone, orderNumber: String(id + BULK_ORDER_NUMBER_OFFSET), country };
}

function countryOf(id: number): 'DK' | 'SE' | 'NO' | 'DE' {
  const slot = id % 20;
  return slot === 7 ? 'SE' : slot === 13 ? 'NO' : slot === 17 ? 'DE' : 'DK';
}

const FIRST_NAMES = ['Anne', 'Mette', 'Hanne', 'Susanne', 'Kirsten', 'Camilla', 'Louise', 'Sofie', 'Ida', 'Freja', 'Peter', 'Jens', 'Lars', 'Michael', 'Henrik', 'Søren', 'Thomas', 'Rasmus', 'Mads', 'Frederik', 'Niels', 'Jørgen', 'Birthe', 'Åse'];
const LAST_NAMES = ['Jensen', 'Nielsen', 'Hansen', 'Pedersen', 'Andersen', 'Christensen', 'Larsen', 'Sørensen', 'Rasmussen', 'Jørgensen', 'Petersen', 'Madsen', 'Kristensen', 'Olsen', 'Thomsen', 'Møller', 'Poulsen', 'Østergaard', 'Kjær', 'Lund'];
const STREETS = ['Vestergade', 'Nørregade', 'Østergade', 'Søndergade', 'Algade', 'Strandvejen', 'Kongensgade', 'Skovvej', 'Bøgevej', 'Havnegade'];
const CITIES: Record<string, [string, string][]> = {
  DK: [['1050', 'København K'], ['2100', 'København Ø'], ['8000', 'Aarhus C'], ['5000', 'Odense C'], ['9000', 'Aalborg'], ['6700', 'Esbjerg'], ['7100', 'Vejle'], ['4000', 'Roskilde']],
  SE: [['211 22', 'Malmö'], ['111 52', 'Stockholm']],
  NO: [['0154', 'Oslo'], ['5003', 'Bergen']],
  DE: [['24937', 'Flensburg'], ['20095', 'Hamburg']],
};
const PRODUCTS: [number, string, number][] = [
  [101, 'Kaffeabonnement – Husets blanding 500 g', 119], [102, 'Kaffeabonnement – Økologisk espresso 1 kg', 229],
  [103, 'Teabonnement – Grøn te 250 g', 89], [104, 'Chokoladeboks', 149], [105, 'Kaffefilter nr. 4', 25], [106, 'Termokop', 199],
];
const CARRIERS: [string, string, string, number][] = [
  ['dao', 'DAO Pakkeshop', '3', 39], ['dhl', 'DHL Express', '5', 79], ['bladkompagniet', 'Bladkompagniet – morgenlevering', '7', 29],
  ['flat_rate', 'Fragt', '1', 49], ['local_pickup', 'Afhentning i butikken', '2', 0],
];
const PAYMENT: [string, string][] = [['reepay_checkout', 'Betalingskort'], ['vipps_mobilepay_recurring', 'MobilePay']];

/** `GROSS / 1.25` rounded to cents: the VAT-exclusive part of a 25 % VAT-inclusive price. */
const net = (gross: string) => `ROUND((${gross}) / 1.25, 2)`;

/**
 * Writes `count` orders (1,000,000 legacy orders: about 5 minutes on a 2-core machine). Uses one connection,
 * whose session settings are restored afterwards. Returns the ID range written (consecutive).
 */
export async function generateBulkOrders(db: Db, prefix: string, count: number, opts: BulkOptions = {}): Promise<{ firstId: number; lastId: number }> {
  const p = checkPrefix(prefix);
  if (!Number.isInteger(count) || count < 1) throw new Error(`count must be a positive integer, got ${count}`);
  const conn = 'getConnection' in db ? await db.getConnection() : db;
  let saved: mysql.RowDataPacket | undefined;
  try {
    [[saved]] = await conn.query<mysql.RowDataPacket[]>('SELECT @@SESSION.unique_checks AS u, @@SESSION.foreign_key_checks AS f');
    await conn.query('SET SESSION unique_checks = 0, foreign_key_checks = 0');
    await conn.query('SELECT COUNT(*) FROM seq_1_to_3').catch(() => {
      throw new Error('generateBulkOrders needs MariaDB\'s Sequence engine (seq_1_to_N tables)');
    });
    const tables = bulkTables(await shopTables(conn, p));
    const highest = (names: { table: string; column: { id: string } }) => `(SELECT COALESCE(MAX(${names.column.id}), 0) FROM ${names.table})`;
    const [[maxima]] = await conn.query<mysql.RowDataPacket[]>(
      `SELECT GREATEST(${highest(tables.posts)}, ${highest(tables.orders)}) AS post, ${highest(tables.items)} AS item`,
    );
    const now = opts.now ?? new Date();
    const start = new Date(now.getTime() - 730 * 86_400_000);
    const zone = opts.timezone ?? ((await getOption(conn, p, 'timezone_string')) || 'Europe/Copenhagen');
    const context: GenerationContext = {
      tables,
      firstId: Number(maxima.post) + 1,
      firstItemId: Number(maxima.item) + 1,
      count,
      home: ((await getOption(conn, p, 'home')) ?? 'https://shop.example.dk').replace(/\/+$/, ''),
      start,
      spanSeconds: 730 * 86_400 - 3600,
      local: offsetSql(zone, start, new Date(now.getTime() + 10 * 86_400_000)),
      orderNumbers: opts.orderNumbers ?? false,
      hpos: opts.hpos ?? false,
      escape: (value: string) => conn.escape(value),
    };
    const batchSize = opts.batchSize ?? 50_000;
    for (let from = 1; from <= count; from += batchSize) {
      const to = Math.min(count, from + batchSize - 1);
      await writeBatch(conn, context, from, to);
      opts.onProgress?.(to);
    }
    return { firstId: context.firstId, lastId: context.firstId + count - 1 };
  } finally {
    if (saved) await conn.query('SET SESSION unique_checks = ?, foreign_key_checks = ?', [saved.u, saved.f]).catch(() => undefined);
    await conn.query('DROP TEMPORARY TABLE IF EXISTS bulk_orders').catch(() => undefined);
    if ('release' in conn && typeof conn.release === 'function') conn.release();
  }
}

/** The tables the generator fills, named from the entities. */
function bulkTables(tables: DataSource) {
  return {
    posts: sqlNames(tables, Post),
    postMeta: sqlNames(tables, PostMeta),
    orders: sqlNames(tables, HposOrder),
    addresses: sqlNames(tables, HposOrderAddress),
    operationalData: sqlNames(tables, HposOrderOperationalData),
    orderMeta: sqlNames(tables, HposOrderMeta),
    items: sqlNames(tables, OrderItem),
    itemMeta: sqlNames(tables, OrderItemMeta),
  };
}

interface TableNames<Entity extends ObjectLiteral> {
  table: string;
  column: Record<keyof Entity & string, string>;
}

/** `INSERT INTO table (columns) SELECT values ...`, each column written beside the value the batch gives it. */
function insertSelect<Entity extends ObjectLiteral>(names: TableNames<Entity>, values: Partial<Record<keyof Entity & string, string>>, from: string): string {
  const columns = Object.keys(values) as (keyof Entity & string)[];
  return `INSERT INTO ${names.table} (${columns.map((column) => names.column[column]).join(', ')})
    SELECT ${columns.map((column) => values[column]).join(', ')}
    ${from}`;
}

interface GenerationContext {
  tables: ReturnType<typeof bulkTables>;
  firstId: number;
  firstItemId: number;
  count: number;
  home: string;
  start: Date;
  spanSeconds: number;
  /** SQL turning a GMT datetime expression into the site's local time. */
  local: (gmtExpression: string) => string;
  orderNumbers: boolean;
  hpos: boolean;
  escape(value: string): string;
}


// ---------------------------------------------------------------------------------------------------------------
// Time zone: the zone's UTC offsets over the generated period as one SQL CASE, found with Intl.

const offsetMinutes = (date: Date, zone: string) => offsetMinutesAt(date, { kind: 'iana', name: zone });

/** `gmt + INTERVAL offset MINUTE` with the offset switching at each DST transition between `from` and `to`. */
function offsetSql(zone: string, from: Date, to: Date): (gmt: string) => string {
  const HOUR = 3_600_000;
  const ranges: { until: Date | null; offset: number }[] = [];
  let current = offsetMinutes(from, zone);
  // Whole hours, so the search below lands on the whole minute of a change (changes fall on quarter hours);
  // from `from`'s own seconds it stopped up to a minute late and dated orders in that minute with the old offset.
  for (let t = Math.floor(from.getTime() / HOUR) * HOUR; t < to.getTime(); t += HOUR) {
    const next = offsetMinutes(new Date(t + HOUR), zone);
    if (next === current) continue;
    // Narrow the change down to the minute.
    let lo = t;
    let hi = t + HOUR;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (offsetMinutes(new Date(mid), zone) === current) lo = mid; else hi = mid;
    }
    ranges.push({ until: new Date(hi), offset: current });
    current = next;
  }
  ranges.push({ until: null, offset: current });
  const stamp = (date: Date) => `'${gmtDateTime(date)}'`;
  return (gmt) => {
    if (ranges.length === 1) return `(${gmt} + INTERVAL ${ranges[0].offset} MINUTE)`;
    const cases = ranges.map((range) => (range.until ? `WHEN ${gmt} < ${stamp(range.until)} THEN ${range.offset}` : `ELSE ${range.offset}`));
    return `(${gmt} + INTERVAL (CASE ${cases.join(' ')} END) MINUTE)`;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// One batch

const elt = (index: string, values: string[], escape: (value: string) => string) => `ELT(${index}, ${values.map(escape).join(', ')})`;

/** Fills the temporary `bulk_orders` table with every per-order value of orders `from`..`to` (1-based). */
async function prepareBatch(conn: mysql.Connection, c: GenerationContext, from: number, to: number): Promise<void> {
  const e = c.escape;
  const local = c.local;
  await conn.query('DROP TEMPORARY TABLE IF EXISTS bulk_orders');
  const dk = CITIES.DK;
  const cityIndex = (country: string, id: string) => `1 + (${id} * 7) % ${CITIES[country].length}`;
  const citySql = (field: 0 | 1) => `CASE country ${['SE', 'NO', 'DE'].map((country) =>
    `WHEN '${country}' THEN ${elt(cityIndex(country, 'id'), CITIES[country].map((city) => city[field]), e)}`).join(' ')}
    ELSE ${elt(cityIndex('DK', 'id'), dk.map((city) => city[field]), e)} END`;
  const national = 'CAST(20000000 + (id * 7919) % 10000000 AS CHAR)';
  const pairs = `CONCAT_WS(' ', SUBSTRING(${national}, 1, 2), SUBSTRING(${national}, 3, 2), SUBSTRING(${national}, 5, 2), SUBSTRING(${national}, 7, 2))`;
  const phoneSql = `CASE country
    WHEN 'SE' THEN CONCAT('+46 70 ', SUBSTRING(${national}, 2, 3), ' ', SUBSTRING(${national}, 5, 2), ' ', SUBSTRING(${national}, 7))
    WHEN 'NO' THEN CONCAT('+47 9', SUBSTRING(${national}, 2, 2), ' ', SUBSTRING(${national}, 4, 2), ' ', SUBSTRING(${national}, 6))
    WHEN 'DE' THEN CONCAT('+49 151 ', ${national})
    ELSE ELT(1 + id % 3, CONCAT('+45 ', ${pairs}), ${national}, REPLACE(${pairs}, ' ', '-')) END`;
  const product = (slot: string, field: 0 | 1 | 2) => elt(`1 + ${slot}`, PRODUCTS.map((item) => String(item[field])), e);
  const carrier = (field: 0 | 1 | 2 | 3) => elt('1 + id % 5', CARRIERS.map((item) => String(item[field])), e);
  const paidSql = `IF(status IN ('processing', 'completed', 'refunded'), created + INTERVAL (60 + id % 600) SECOND, NULL)`;
  const completedSql = `IF(status IN ('completed', 'refunded'), created + INTERVAL (1 + id % 3) DAY + INTERVAL (id % 7200) SECOND, NULL)`;

  await conn.query(`CREATE TEMPORARY TABLE bulk_orders (
      id bigint unsigned NOT NULL PRIMARY KEY, created datetime NOT NULL, created_local datetime NOT NULL,
      paid datetime NULL, paid_local datetime NULL, completed datetime NULL, completed_local datetime NULL,
      modified datetime NOT NULL, modified_local datetime NOT NULL, status varchar(20) NOT NULL,
      order_token varchar(40) NOT NULL, cart_hash varchar(32) NOT NULL, country varchar(2) NOT NULL,
      first_name varchar(50) NOT NULL, last_name varchar(50) NOT NULL, address_1 varchar(100) NOT NULL,
      city varchar(50) NOT NULL, postcode varchar(10) NOT NULL, email varchar(100) NOT NULL, phone varchar(30) NOT NULL,
      payment_method varchar(40) NOT NULL, payment_title varchar(40) NOT NULL,
      p1_id int NOT NULL, p1_name varchar(100) NOT NULL, p1_qty int NOT NULL, p1_total decimal(12,2) NOT NULL, p1_tax decimal(12,2) NOT NULL,
      p2_id int NOT NULL, p2_name varchar(100) NOT NULL, p2_total decimal(12,2) NOT NULL, p2_tax decimal(12,2) NOT NULL,
      ship_method varchar(40) NOT NULL, ship_title varchar(60) NOT NULL, ship_instance varchar(5) NOT NULL,
      ship_total decimal(12,2) NOT NULL, ship_tax decimal(12,2) NOT NULL, cart_tax decimal(12,2) NOT NULL, total decimal(12,2) NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci`);

  // Three nested steps, each using the columns the previous one computed.
  const base = `SELECT ${c.firstId - 1} + seq AS id,
      ${mysqlDate(c.start)} + INTERVAL FLOOR((seq - 1) * ${c.spanSeconds} / ${c.count}) SECOND AS created
    FROM seq_${from}_to_${to}`;
  const withCustomer = `SELECT b.*, ${STATUS_SQL} AS status,
      CASE id % 20 WHEN 7 THEN 'SE' WHEN 13 THEN 'NO' WHEN 17 THEN 'DE' ELSE 'DK' END AS country,
      1 + id % 2 AS p1_qty, id % 6 AS p1_slot, (id DIV 6 + 3) % 6 AS p2_slot
    FROM (${base}) b`;
  await conn.query(`INSERT INTO bulk_orders
    SELECT id, created, ${local('created')}, paid, ${local('paid')}, completed, ${local('completed')},
      GREATEST(created, COALESCE(paid, created), COALESCE(completed, created)),
      ${local('GREATEST(created, COALESCE(paid, created), COALESCE(completed, created))')},
      status, CONCAT('wc_order_', SUBSTRING(SHA1(CONCAT('key', id)), 1, 13)), MD5(CONCAT('cart', id)), country,
      ${elt('1 + id % 24', FIRST_NAMES, e)}, ${elt('1 + (id DIV 24) % 20', LAST_NAMES, e)},
      CONCAT(${elt('1 + (id DIV 7) % 10', STREETS, e)}, ' ', 1 + id % 97), ${citySql(1)}, ${citySql(0)},
      CONCAT('customer', id, '@example.dk'), ${phoneSql},
      ${elt('1 + id % 2', PAYMENT.map((item) => item[0]), e)}, ${elt('1 + id % 2', PAYMENT.map((item) => item[1]), e)},
      ${product('p1_slot', 0)}, ${product('p1_slot', 1)}, p1_qty, ${net(`${product('p1_slot', 2)} * p1_qty`)},
      ${product('p1_slot', 2)} * p1_qty - ${net(`${product('p1_slot', 2)} * p1_qty`)},
      ${product('p2_slot', 0)}, ${product('p2_slot', 1)}, ${net(product('p2_slot', 2))}, ${product('p2_slot', 2)} - ${net(product('p2_slot', 2))},
      ${carrier(0)}, ${carrier(1)}, ${carrier(2)}, ${net(carrier(3))}, ${carrier(3)} - ${net(carrier(3))},
      (${product('p1_slot', 2)} * p1_qty - ${net(`${product('p1_slot', 2)} * p1_qty`)}) + (${product('p2_slot', 2)} - ${net(product('p2_slot', 2))}),
      ${product('p1_slot', 2)} * p1_qty + ${product('p2_slot', 2)} + ${carrier(3)}
    FROM (SELECT w.*, ${paidSql} AS paid, ${completedSql} AS completed FROM (${withCustomer}) w) x`);
}

const mysqlDate = (date: Date) => `TIMESTAMP'${gmtDateTime(date)}'`;

async function writeBatch(conn: mysql.Connection, c: GenerationContext, from: number, to: number): Promise<void> {
  await prepareBatch(conn, c, from, to);
  if (c.hpos) {
    await insertPosts(conn, c, 'placeholder');
    await insertHpos(conn, c);
  } else {
    await insertPosts(conn, c, 'order');
    await insertPostMeta(conn, c);
  }
  await insertItems(conn, c);
}

async function insertPosts(conn: mysql.Connection, c: GenerationContext, form: 'order' | 'placeholder'): Promise<void> {
  const order = form === 'order';
  const type = order ? 'shop_order' : 'shop_order_placehold';
  // DATE_FORMAT's %b would follow lc_time_names; WooCommerce's title is always English.
  const months = "'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'";
  const title = `CONCAT('Order &ndash; ', ELT(MONTH(created), ${months}), DATE_FORMAT(created, ' %d, %Y @ %h:%i %p'))`;
  const slug = `LOWER(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(${title}, 'Order &ndash; ', 'order-'), ':', ''), ' @ ', '-'), ', ', '-'), ' ', '-'))`;
  await conn.query(insertSelect(c.tables.posts, {
    id: 'id', author: order ? '1' : '0', dateLocal: 'created_local', dateGmt: 'created', content: "''", title: order ? title : "''", excerpt: "''",
    status: order ? "CONCAT('wc-', status)" : "'draft'", commentStatus: order ? "'open'" : "'closed'", pingStatus: "'closed'",
    password: order ? 'order_token' : "''", slug: order ? slug : "''", toPing: "''", pinged: "''",
    modifiedLocal: order ? 'modified_local' : 'created_local', modifiedGmt: order ? 'modified' : 'created', contentFiltered: "''", parentId: '0',
    guid: `CONCAT(${c.escape(`${c.home}/?post_type=${type}&#038;p=`)}, id)`, menuOrder: '0', type: `'${type}'`, mimeType: "''", commentCount: '0',
  }, 'FROM bulk_orders ORDER BY id'));
}

/** [meta key, value expression or NULL when the order has no such row]; about 33 rows for a completed order. */
function orderMeta(c: GenerationContext): [string, string][] {
  // Arithmetic rather than UNIX_TIMESTAMP(), which would read the datetime in the session time zone.
  const unix = (column: string) => `CAST(TIMESTAMPDIFF(SECOND, TIMESTAMP'1970-01-01 00:00:00', ${column}) AS CHAR)`;
  const address = (kind: 'billing' | 'shipping') => (kind === 'billing'
    ? "CONCAT(first_name, ' ', last_name, '  ', address_1, '  ', city, '  ', postcode, ' ', country, ' ', email, ' ', phone)"
    : "CONCAT(first_name, ' ', last_name, '  ', address_1, '  ', city, '  ', postcode, ' ', country, ' ', phone)");
  const meta: [string, string][] = [
    ['_order_key', 'order_token'], ['_customer_user', "'0'"], ['_payment_method', 'payment_method'],
    ['_payment_method_title', 'payment_title'], ['_created_via', "'checkout'"],
    ['_date_completed', unix('completed')], ['_date_paid', unix('paid')],
    ['_billing_first_name', 'first_name'], ['_billing_last_name', 'last_name'], ['_billing_address_1', 'address_1'],
    ['_billing_city', 'city'], ['_billing_postcode', 'postcode'], ['_billing_country', 'country'], ['_billing_email', 'email'],
    ['_billing_phone', 'phone'], ['_shipping_first_name', 'first_name'], ['_shipping_last_name', 'last_name'],
    ['_shipping_address_1', 'address_1'], ['_shipping_city', 'city'], ['_shipping_postcode', 'postcode'],
    ['_shipping_country', 'country'], ['_shipping_phone', 'phone'], ['_order_currency', "'DKK'"], ['_cart_discount', "'0'"],
    ['_order_shipping', 'ship_total'], ['_order_tax', 'cart_tax'], ['_order_total', 'total'], ['_order_version', `'${WOOCOMMERCE_VERSION}'`],
    ['_prices_include_tax', "'yes'"], ['_billing_address_index', address('billing')], ['_shipping_address_index', address('shipping')],
    ['_paid_date', "DATE_FORMAT(paid_local, '%Y-%m-%d %H:%i:%s')"], ['_completed_date', "DATE_FORMAT(completed_local, '%Y-%m-%d %H:%i:%s')"],
  ];
  if (c.orderNumbers) meta.push(['_order_number', `CAST(id + ${BULK_ORDER_NUMBER_OFFSET} AS CHAR)`]);
  return meta;
}

/**
 * Cross-joins the batch (`bulk_orders`, unaliased, so its columns can be named directly) with a list of
 * [kind, meta key, value expression] and inserts the non-NULL values into the meta table `meta`, the object
 * in its column `owner`, ordered by object and key.
 */
async function insertKeyValues(conn: mysql.Connection, c: GenerationContext, meta: TableNames<{ key: unknown; value: unknown }>, owner: string,
  objectIdOf: (kind: string) => string, rows: [string, string, string][]): Promise<void> {
  const keys = rows.map(([kind, key], index) => `SELECT ${index} AS o, ${c.escape(kind)} AS kind, ${c.escape(key)} AS k`).join(' UNION ALL ');
  const kinds = [...new Set(rows.map(([kind]) => kind))];
  const objectId = kinds.length === 1 ? objectIdOf(kinds[0]) : `CASE k.kind ${kinds.map((kind) => `WHEN ${c.escape(kind)} THEN ${objectIdOf(kind)}`).join(' ')} END`;
  const value = `CASE k.o ${rows.map(([, , expression], index) => `WHEN ${index} THEN ${expression}`).join(' ')} END`;
  await conn.query(`INSERT INTO ${meta.table} (${owner}, ${meta.column.key}, ${meta.column.value})
    SELECT object_id, entry_key, entry_value FROM (
      SELECT ${objectId} AS object_id, k.o, k.k AS entry_key, ${value} AS entry_value
      FROM bulk_orders CROSS JOIN (${keys}) k
    ) key_values WHERE entry_value IS NOT NULL ORDER BY object_id, o`);
}

async function insertPostMeta(conn: mysql.Connection, c: GenerationContext): Promise<void> {
  await insertKeyValues(conn, c, c.tables.postMeta, c.tables.postMeta.column.postId, () => 'id', orderMeta(c).map(([key, expression]) => ['order', key, expression]));
}

async function insertHpos(conn: mysql.Connection, c: GenerationContext): Promise<void> {
  await conn.query(insertSelect(c.tables.orders, {
    id: 'id', status: "CONCAT('wc-', status)", currency: "'DKK'", type: "'shop_order'", taxAmount: 'cart_tax', totalAmount: 'total', customerId: '0',
    billingEmail: 'email', dateCreatedGmt: 'created', dateUpdatedGmt: 'modified', parentOrderId: '0', paymentMethod: 'payment_method',
    paymentMethodTitle: 'payment_title', transactionId: "''", ipAddress: "'192.0.2.10'",
    userAgent: "'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'", customerNote: "''",
  }, 'FROM bulk_orders ORDER BY id'));
  await conn.query(insertSelect(c.tables.addresses, {
    orderId: 'b.id', addressType: 't.kind', firstName: 'b.first_name', lastName: 'b.last_name', company: "''", address1: 'b.address_1',
    address2: "''", city: 'b.city', state: "''", postcode: 'b.postcode', country: 'b.country', email: "IF(t.kind = 'billing', b.email, NULL)", phone: 'b.phone',
  }, "FROM bulk_orders b CROSS JOIN (SELECT 1 AS o, 'billing' AS kind UNION ALL SELECT 2, 'shipping') t ORDER BY b.id, t.o"));
  await conn.query(insertSelect(c.tables.operationalData, {
    orderId: 'id', createdVia: "'checkout'", woocommerceVersion: `'${WOOCOMMERCE_VERSION}'`, pricesIncludeTax: '1', couponUsagesAreCounted: 'f',
    downloadPermissionGranted: 'f', cartHash: 'cart_hash', newOrderEmailSent: 'f', orderKey: 'order_token', orderStockReduced: 'f',
    datePaidGmt: 'paid', dateCompletedGmt: 'completed', shippingTaxAmount: 'ship_tax', shippingTotalAmount: 'ship_total',
    discountTaxAmount: '0', discountTotalAmount: '0', recordedSales: 'f',
  }, "FROM (SELECT *, IF(status IN ('processing', 'completed', 'on-hold', 'refunded'), 1, 0) AS f FROM bulk_orders) b ORDER BY id"));
  const meta = orderMeta(c).filter(([key]) => key.endsWith('_address_index') || key === '_order_number');
  await insertKeyValues(conn, c, c.tables.orderMeta, c.tables.orderMeta.column.orderId, () => 'id', meta.map(([key, expression]) => ['order', key, expression]));
}

/** Two line items and one shipping item per order, with the item meta WooCommerce writes for them. */
async function insertItems(conn: mysql.Connection, c: GenerationContext): Promise<void> {
  const itemId = (slot: number | string) => `${c.firstItemId - 1} + (id - ${c.firstId}) * 3 + ${slot}`;
  await conn.query(insertSelect(c.tables.items, {
    id: itemId('t.slot'), name: 'ELT(t.slot, p1_name, p2_name, ship_title)', type: "IF(t.slot = 3, 'shipping', 'line_item')", orderId: 'id',
  }, 'FROM bulk_orders CROSS JOIN (SELECT 1 AS slot UNION ALL SELECT 2 UNION ALL SELECT 3) t ORDER BY 1'));
  const taxData = (tax: string) => `CONCAT('a:2:{s:5:"total";a:1:{i:1;s:', LENGTH(${tax}), ':"', ${tax}, '";}s:8:"subtotal";a:1:{i:1;s:', LENGTH(${tax}), ':"', ${tax}, '";}}')`;
  const phpFloat = (amount: string) => `TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM ${amount}))`;
  const line = (slot: 'p1' | 'p2'): [string, string, string][] => [
    [slot, '_product_id', `${slot}_id`], [slot, '_variation_id', "'0'"], [slot, '_qty', slot === 'p1' ? 'p1_qty' : "'1'"],
    [slot, '_tax_class', "''"], [slot, '_line_subtotal', `${slot}_total`], [slot, '_line_subtotal_tax', `${slot}_tax`],
    [slot, '_line_total', `${slot}_total`], [slot, '_line_tax', `${slot}_tax`], [slot, '_line_tax_data', taxData(phpFloat(`${slot}_tax`))],
  ];
  const shippingTaxes = `IF(ship_tax = 0, 'a:1:{s:5:"total";a:0:{}}', CONCAT('a:1:{s:5:"total";a:1:{i:1;s:', LENGTH(${phpFloat('ship_tax')}), ':"', ${phpFloat('ship_tax')}, '";}}'))`;
  const rows: [string, string, string][] = [
    ...line('p1'), ...line('p2'),
    ['ship', 'method_id', 'ship_method'], ['ship', 'instance_id', 'ship_instance'], ['ship', 'cost', 'ship_total'],
    ['ship', 'total_tax', 'ship_tax'], ['ship', 'taxes', shippingTaxes],
    ['ship', 'Items', "CONCAT(p1_name, ' &times; ', p1_qty, ', ', p2_name, ' &times; 1')"],
  ];
  await insertKeyValues(conn, c, c.tables.itemMeta, c.tables.itemMeta.column.orderItemId, (kind) => itemId(kind === 'p1' ? 1 : kind === 'p2' ? 2 : 3), rows);
}
