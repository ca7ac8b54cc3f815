import crypto from 'node:crypto';
import { DataSource, type EntityTarget, type ObjectLiteral, type QueryDeepPartialEntity } from 'typeorm';
import { hashPasswordLikeWordPress } from '../wordpress/passwords';
import { generateApiKey } from '../wordpress/woocommerce-api-key';
import mysql from 'mysql2/promise';
import { storedStatus } from '../shop/order';
import { gmtDateTime, localDateTime as localDateTimeInZone } from '../shop/shop-time';
import type { Config } from '../config';
import { createShopDataSource } from '../data-access/data-source';
import { PreparedStatement, slots, sqlNames } from '../data-access/prepared-statement';
import type { Statement } from '../data-access/transaction';
import {
  HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta, Post, PostMeta,
  WooCommerceApiKey, WpComment, WpCommentMeta, WpUser, WpUserMeta,
} from '../../entities';
import { checkPrefix, getOption, phpSerialize, userLevelOf, WOOCOMMERCE_VERSION, type Db, type PhpValue } from './woocommerce-schema';

/**
 * Writes orders, refunds, subscriptions and users the way WooCommerce 9.x / WCS / WordPress 6.x store them,
 * in legacy (posts) storage, HPOS, or both when compatibility sync is on. Used by tests, the demo and benchmarks.
 */

export interface Address {
  first_name: string;
  last_name: string;
  company: string;
  address_1: string;
  address_2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
}

export interface LineItemSpec {
  name: string;
  qty: number;
  /** `_line_total`: the line after discounts, without tax. */
  total: string;
  /** `_line_tax` (tax rate 1); none when absent. */
  tax?: string;
  productId?: number;
}

export interface ShippingLineSpec {
  /** `dao`, `dhl`, `bladkompagniet`, `flat_rate`, `local_pickup`... */
  methodId: string;
  title: string;
  /** `cost`, without tax. */
  total?: string;
  tax?: string;
  instanceId?: string;
}

export interface OrderSpec {
  /** Without `wc-`. Default `pending` (orders) or `active` (subscriptions). */
  status?: string;
  type?: 'shop_order' | 'shop_subscription';
  parentId?: number;
  createdGmt?: Date;
  /** Default: 2 minutes after creation for paid statuses (processing, completed, refunded), otherwise none. */
  paidGmt?: Date | null;
  /** Default: a day after creation for completed and refunded orders, otherwise none. */
  completedGmt?: Date | null;
  /** Default: the latest of the created, paid and completed dates. */
  modifiedGmt?: Date;
  currency?: string;
  /** Default: the sum of the lines, their taxes and shipping. */
  total?: string;
  paymentMethod?: string;
  paymentMethodTitle?: string;
  transactionId?: string;
  customerId?: number;
  customerNote?: string;
  createdVia?: string;
  orderKey?: string;
  billing?: Partial<Address & { email: string; phone: string }>;
  shipping?: Partial<Address & { phone: string }>;
  lineItems?: LineItemSpec[];
  shipping_lines?: ShippingLineSpec[];
  /** `_order_number` (sequential order numbers plugins). */
  orderNumber?: string;
  /** `_order_number_formatted` (Sequential Order Numbers Pro). */
  orderNumberFormatted?: string;
  /** Extra meta. A key WooCommerce keeps in its own columns/props (e.g. `_paid_date`) overrides that value in the posts storage's meta. */
  meta?: Record<string, string>;
}

export interface SubscriptionSpec extends Omit<OrderSpec, 'type'> {
  billingPeriod?: 'day' | 'week' | 'month' | 'year';
  billingInterval?: number;
  /** Default: the created date. */
  startGmt?: Date;
  trialEndGmt?: Date | null;
  nextPaymentGmt?: Date | null;
  endGmt?: Date | null;
  cancelledGmt?: Date | null;
  requiresManualRenewal?: boolean;
}

export interface RefundOptions {
  reason?: string;
  fullyRefunded?: boolean;
  createdGmt?: Date;
  refundedBy?: number;
  refundedPayment?: boolean;
}

export interface UserSpec {
  login: string;
  email: string;
  pass?: string;
  roles: string[];
  displayName?: string;
  registeredGmt?: Date;
  billing?: Partial<Address & { email: string; phone: string }>;
}

type OrderType = 'shop_order' | 'shop_subscription' | 'shop_order_refund';
type FullAddress = Address & { email: string; phone: string };
type Flags = { recordedSales: boolean; couponCounts: boolean; downloads: boolean; emailSent: boolean; stockReduced: boolean };

/** Everything one order row set is made of, independent of the store it goes to. */
interface OrderRecord {
  type: OrderType;
  status: string;
  parentId: number;
  created: Date;
  modified: Date;
  paid: Date | null;
  completed: Date | null;
  currency: string;
  total: string;
  cartTax: string;
  shippingTotal: string;
  shippingTax: string;
  customerId: number;
  paymentMethod: string;
  paymentMethodTitle: string;
  transactionId: string;
  ip: string;
  userAgent: string;
  customerNote: string;
  createdVia: string;
  cartHash: string;
  orderKey: string;
  billing: FullAddress | null;
  shipping: FullAddress | null;
  /** Operational flags; null for subscriptions and refunds, which do not use them. */
  flags: Flags | null;
  /** Meta rows that are real meta in both stores (HPOS's order meta too). */
  meta: [string, string][];
  /** Values for keys WooCommerce keeps as columns under HPOS, overriding the computed meta in posts storage. */
  legacyOverrides: [string, string][];
}

/** Keys HPOS keeps in its own columns (OrdersTableDataStore::$internal_meta_keys minus the address indexes). */
const HPOS_INTERNAL_KEYS = new Set([
  '_customer_user', '_order_key', '_order_currency', '_billing_first_name', '_billing_last_name', '_billing_company',
  '_billing_address_1', '_billing_address_2', '_billing_city', '_billing_state', '_billing_postcode', '_billing_country',
  '_billing_email', '_billing_phone', '_shipping_first_name', '_shipping_last_name', '_shipping_company',
  '_shipping_address_1', '_shipping_address_2', '_shipping_city', '_shipping_state', '_shipping_postcode',
  '_shipping_country', '_shipping_phone', '_completed_date', '_paid_date', '_edit_last', '_cart_discount',
  '_cart_discount_tax', '_order_shipping', '_order_shipping_tax', '_order_tax', '_order_total', '_payment_method',
  '_payment_method_title', '_transaction_id', '_customer_ip_address', '_customer_user_agent', '_created_via',
  '_order_version', '_prices_include_tax', '_date_completed', '_date_paid', '_payment_tokens', '_recorded_sales',
  '_recorded_coupon_usage_counts', '_download_permissions_granted', '_order_stock_reduced', '_new_order_email_sent',
]);

/** Each address field, and where HPOS keeps it. */
const ADDRESS_COLUMNS: Record<keyof Address, keyof HposOrderAddress & string> = {
  first_name: 'firstName', last_name: 'lastName', company: 'company', address_1: 'address1', address_2: 'address2',
  city: 'city', state: 'state', postcode: 'postcode', country: 'country',
};
const ADDRESS_FIELDS = Object.keys(ADDRESS_COLUMNS) as (keyof Address)[];
const PAID_STATUSES = ['processing', 'completed', 'refunded'];
const FULFILLED_STATUSES = ['processing', 'completed', 'on-hold', 'refunded'];
const COMPLETED_STATUSES = ['completed', 'refunded'];

const MINUTE = 60_000;
const DAY = 86_400_000;

const pad = (n: number) => String(n).padStart(2, '0');

/** MySQL `Y-m-d H:i:s` of an instant in the site's time zone (an IANA name), as WordPress's local columns hold it. */
export const localDateTime = (date: Date, timeZone: string): string => localDateTimeInZone(date, { kind: 'iana', name: timeZone });

const unixSeconds = (date: Date) => String(Math.floor(date.getTime() / 1000));

/** WordPress's `sanitize_title()` for the ASCII titles used here. */
function slugOf(title: string): string {
  return title.toLowerCase().replace(/&[^;\s]+;/g, '').replace(/\./g, '-').replace(/[^a-z0-9 _-]/g, '').trim().replace(/[\s_]+/g, '-').replace(/-+/g, '-');
}

/** The `M d, Y @ h:i A` stamp WooCommerce puts in order post titles. */
function titleStamp(date: Date): string {
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const hours = date.getUTCHours() % 12 || 12;
  return `${month} ${pad(date.getUTCDate())}, ${date.getUTCFullYear()} @ ${pad(hours)}:${pad(date.getUTCMinutes())} ${date.getUTCHours() < 12 ? 'AM' : 'PM'}`;
}

/** `wc_format_decimal()`-like sum of decimal strings, to two places. */
function sumAmounts(amounts: (string | undefined)[]): string {
  const cents = amounts.reduce((total, amount) => total + Math.round(Number(amount ?? 0) * 100), 0);
  return (cents / 100).toFixed(2);
}

/** A tax amount the way WC keeps it inside `_line_tax_data` / `taxes` (PHP float to string). */
const taxArray = (tax: string | undefined): PhpValue => (tax && Number(tax) !== 0 ? { 1: String(Number(tax)) } : []);

function randomToken(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return Array.from(crypto.randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('');
}

// -------------------------------------------------------------------------------------------------------------
// Statements, written from the entities

const tablesOf = new Map<string, Promise<DataSource>>();

/**
 * The entities mapped to the tables of the site `prefix` names in the database `db` works on, to write
 * statements with. One per database and prefix, kept for the life of the process.
 */
export async function shopTables(db: Db, prefix: string): Promise<DataSource> {
  const [[{ name }]] = await db.query<mysql.RowDataPacket[]>('SELECT DATABASE() AS name');
  const key = `${name}.${checkPrefix(prefix)}`;
  let tables = tablesOf.get(key);
  if (!tables) tablesOf.set(key, tables = SiteTables.of(String(name), prefix));
  return tables;
}

/**
 * A data source configured as the service's, with TypeORM's metadata built but no connection: the seeding
 * runs on the caller's own connection or pool, and a pool of its own would outlive the callers' databases.
 */
class SiteTables extends DataSource {
  static async of(database: string, prefix: string): Promise<DataSource> {
    // The database and the prefix are all of a configuration it uses: it never connects.
    const tables = new SiteTables(createShopDataSource({ name: database, tablePrefix: prefix } as Config['db']).options);
    await tables.buildMetadatas();
    return tables;
  }
}

/** A one-row insert of `entity`: a slot for each of `names`, and the `fixed` values. */
function insertRow<Entity extends ObjectLiteral, Name extends keyof Entity & string>(
  tables: DataSource, entity: EntityTarget<Entity>, names: Name[], fixed: Partial<Record<keyof Entity, unknown>> = {},
): PreparedStatement<Name> {
  // Slots stand for the values until each use binds them, so they are no entity's values to the compiler.
  const values = { ...slots(...names), ...fixed } as QueryDeepPartialEntity<Entity>;
  return PreparedStatement.from<Name>(tables.createQueryBuilder().insert().into(entity).values(values));
}

/** An insert of `names`' columns whose `VALUES ?` mysql2 expands from a list of rows: one statement for all of them. */
function multiRowInsert<Entity extends ObjectLiteral>(tables: DataSource, entity: EntityTarget<Entity>, names: (keyof Entity & string)[]): string {
  const { table, column } = sqlNames(tables, entity);
  return `INSERT INTO ${table} (${names.map((name) => column[name]).join(', ')}) VALUES ?`;
}

/** An update of the row with ID `:id`, a slot for each of `names`. */
function updateById<Entity extends ObjectLiteral & { id: unknown }, Name extends keyof Entity & string>(
  tables: DataSource, entity: EntityTarget<Entity>, names: Name[],
): PreparedStatement<Name | 'id'> {
  const values = slots(...names) as QueryDeepPartialEntity<Entity>;
  return PreparedStatement.from<Name | 'id'>(tables.createQueryBuilder().update(entity).set(values).where('id = :id').setParameters(slots('id')));
}

/** Every statement the seeder runs. */
function seederStatements(tables: DataSource, mode: { hpos: boolean }) {
  const query = () => tables.createQueryBuilder();
  return {
    post: insertRow(tables, Post, [
      'author', 'dateLocal', 'dateGmt', 'content', 'title', 'excerpt', 'status', 'commentStatus', 'pingStatus', 'password', 'slug',
      'toPing', 'pinged', 'modifiedLocal', 'modifiedGmt', 'contentFiltered', 'parentId', 'guid', 'menuOrder', 'type', 'mimeType', 'commentCount',
    ]),
    postGuid: updateById(tables, Post, ['guid']),
    postBackfill: updateById(tables, Post, ['status', 'excerpt', 'slug', 'modifiedLocal', 'modifiedGmt']),
    postStatus: updateById(tables, Post, ['status', 'modifiedLocal', 'modifiedGmt']),
    postMeta: multiRowInsert(tables, PostMeta, ['postId', 'key', 'value']),
    order: insertRow(tables, HposOrder, [
      'id', 'status', 'currency', 'type', 'taxAmount', 'totalAmount', 'customerId', 'billingEmail', 'dateCreatedGmt', 'dateUpdatedGmt',
      'parentOrderId', 'paymentMethod', 'paymentMethodTitle', 'transactionId', 'ipAddress', 'userAgent', 'customerNote',
    ]),
    orderStatus: updateById(tables, HposOrder, ['status', 'dateUpdatedGmt']),
    orderAddresses: multiRowInsert(tables, HposOrderAddress, ['orderId', 'addressType', ...ADDRESS_FIELDS.map((field) => ADDRESS_COLUMNS[field]), 'email', 'phone']),
    orderOperationalData: insertRow(tables, HposOrderOperationalData, [
      'orderId', 'createdVia', 'woocommerceVersion', 'pricesIncludeTax', 'couponUsagesAreCounted', 'downloadPermissionGranted', 'cartHash',
      'newOrderEmailSent', 'orderKey', 'orderStockReduced', 'datePaidGmt', 'dateCompletedGmt', 'shippingTaxAmount', 'shippingTotalAmount',
      'discountTaxAmount', 'discountTotalAmount', 'recordedSales',
    ]),
    orderMeta: multiRowInsert(tables, HposOrderMeta, ['orderId', 'key', 'value']),
    item: insertRow(tables, OrderItem, ['name', 'type', 'orderId']),
    itemMeta: multiRowInsert(tables, OrderItemMeta, ['orderItemId', 'key', 'value']),
    currency: PreparedStatement.from<'id'>(mode.hpos
      ? query().select('o.currency', 'currency').from(HposOrder, 'o').where('o.id = :id').setParameters(slots('id'))
      : query().select('m.value', 'currency').from(PostMeta, 'm').where('m.postId = :id AND m.key = :key').setParameters({ ...slots('id'), key: '_order_currency' })),
    note: insertRow(tables, WpComment, ['postId', 'dateLocal', 'dateGmt', 'content'], {
      author: 'WooCommerce', authorEmail: 'woocommerce@shop.example.dk', authorUrl: '', authorIp: '', karma: 0, approved: '1',
      agent: 'WooCommerce', type: 'order_note', parentId: 0, userId: 0,
    }),
    customerNoteFlag: insertRow(tables, WpCommentMeta, ['commentId'], { key: 'is_customer_note', value: '1' }),
    user: insertRow(tables, WpUser, ['login', 'passwordHash', 'nicename', 'email', 'registeredGmt', 'displayName'], { url: '', activationKey: '', userStatus: 0 }),
    userMeta: multiRowInsert(tables, WpUserMeta, ['userId', 'key', 'value']),
    apiKey: insertRow(tables, WooCommerceApiKey, ['userId', 'description', 'permissions', 'consumerKey', 'consumerSecret', 'truncatedKey'], { nonces: null, lastAccess: null }),
  };
}

type SeederStatements = ReturnType<typeof seederStatements>;

export class ShopSeeder {
  private readonly p: string;
  private homeUrl?: string;
  private prepared?: Promise<SeederStatements>;

  constructor(
    private readonly db: Db,
    prefix: string,
    private readonly mode: { hpos: boolean; sync: boolean },
    private readonly timezone = 'Europe/Copenhagen',
  ) {
    this.p = checkPrefix(prefix);
  }

  /** Written at the first write, as they need to know the database: a seeder that is never used asks nothing of it. */
  private statements(): Promise<SeederStatements> {
    return this.prepared ??= shopTables(this.db, this.p).then((tables) => seederStatements(tables, this.mode));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Public API

  async createOrder(spec: OrderSpec): Promise<number> {
    const record = this.orderRecord(spec, spec.type ?? 'shop_order');
    const id = await this.persist(record);
    await this.insertItems(id, spec);
    return id;
  }

  async createSubscription(spec: SubscriptionSpec): Promise<number> {
    const record = this.orderRecord({ ...spec, status: spec.status ?? 'active' }, 'shop_subscription');
    const date = (value: Date | null | undefined) => (value ? gmtDateTime(value) : '0');
    record.meta.push(
      ['_billing_period', spec.billingPeriod ?? 'month'],
      ['_billing_interval', String(spec.billingInterval ?? 1)],
      ['_suspension_count', '0'],
      ['_cancelled_email_sent', ''],
      ['_requires_manual_renewal', spec.requiresManualRenewal ? 'true' : 'false'],
      ['_trial_period', ''],
      ['_schedule_trial_end', date(spec.trialEndGmt)],
      ['_schedule_next_payment', date(spec.nextPaymentGmt)],
      ['_schedule_cancelled', date(spec.cancelledGmt)],
      ['_schedule_end', date(spec.endGmt)],
      ['_schedule_payment_retry', '0'],
      ['_schedule_start', date(spec.startGmt ?? record.created)],
      ['_subscription_switch_data', phpSerialize([])],
    );
    const id = await this.persist(record);
    await this.insertItems(id, spec);
    return id;
  }

  /** A `shop_order_refund` of `amount` on `orderId`; with `fullyRefunded` the order also becomes `refunded`. */
  async createRefund(orderId: number, amount: string, opts: RefundOptions = {}): Promise<number> {
    const parent = await this.readParent(orderId);
    const created = opts.createdGmt ?? new Date();
    const value = Number(amount).toFixed(2);
    const record: OrderRecord = {
      type: 'shop_order_refund', status: 'completed', parentId: orderId, created, modified: created, paid: null, completed: null,
      currency: parent.currency, total: `-${value}`, cartTax: '0', shippingTotal: '0', shippingTax: '0', customerId: 0,
      paymentMethod: '', paymentMethodTitle: '', transactionId: '', ip: '', userAgent: '', customerNote: opts.reason ?? '',
      createdVia: '', cartHash: '', orderKey: `wc_order_${randomToken(13)}`, billing: null, shipping: null, flags: null,
      meta: [
        ['_refund_amount', value],
        ['_refunded_by', String(opts.refundedBy ?? 1)],
        ['_refunded_payment', opts.refundedPayment ? '1' : ''],
        ['_refund_reason', opts.reason ?? ''],
      ],
      legacyOverrides: [],
    };
    const id = await this.persist(record);
    if (opts.fullyRefunded) await this.setStatus(orderId, 'refunded', created);
    return id;
  }

  /** An order note: a comment of type `order_note` (with `is_customer_note` meta for notes to the customer). */
  async addOrderNote(orderId: number, content: string, opts: { customerNote?: boolean; dateGmt?: Date } = {}): Promise<number> {
    const date = opts.dateGmt ?? new Date();
    const statements = await this.statements();
    const note = await this.write(statements.note.with({ postId: orderId, dateLocal: localDateTime(date, this.timezone), dateGmt: gmtDateTime(date), content }));
    if (opts.customerNote) await this.write(statements.customerNoteFlag.with({ commentId: note.insertId }));
    return note.insertId;
  }

  /** A WordPress user with its roles in `{prefix}capabilities`; the password hashed as WordPress 6.8 does. */
  async createUser(user: UserSpec): Promise<number> {
    const registered = user.registeredGmt ?? new Date();
    const statements = await this.statements();
    const { insertId: id } = await this.write(statements.user.with({
      login: user.login, passwordHash: await hashPasswordLikeWordPress(user.pass ?? randomToken(24)), nicename: slugOf(user.login).slice(0, 50),
      email: user.email, registeredGmt: gmtDateTime(registered), displayName: user.displayName ?? user.login,
    }));
    const meta: [string, string][] = [
      ['nickname', user.login], ['first_name', user.billing?.first_name ?? ''], ['last_name', user.billing?.last_name ?? ''],
      ['description', ''], ['rich_editing', 'true'], ['syntax_highlighting', 'true'], ['comment_shortcuts', 'false'],
      ['admin_color', 'fresh'], ['use_ssl', '0'], ['show_admin_bar_front', 'true'], ['locale', ''],
      [`${this.p}capabilities`, phpSerialize(Object.fromEntries(user.roles.map((role) => [role, true])))],
      [`${this.p}user_level`, String(userLevelOf(user.roles))],
      ['dismissed_wp_pointers', ''],
    ];
    for (const [field, value] of Object.entries(user.billing ?? {})) meta.push([`billing_${field}`, value]);
    await this.insertRows(statements.userMeta, meta.map(([key, value]) => [id, key, value]));
    return id;
  }

  /** A WooCommerce REST API key (the consumer key stored as HMAC-SHA256 with key `wc-api`, the secret in plain). */
  async createApiKey(userId: number, permissions: 'read' | 'write' | 'read_write' = 'read_write', description = 'Helpdesk'):
    Promise<{ keyId: number; consumerKey: string; consumerSecret: string }> {
    const { consumerKey, consumerSecret, storedKey, truncatedKey } = generateApiKey();
    const statements = await this.statements();
    const { insertId } = await this.write(statements.apiKey.with({ userId, description, permissions, consumerKey: storedKey, consumerSecret, truncatedKey }));
    return { keyId: insertId, consumerKey, consumerSecret };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Building the record

  private orderRecord(spec: OrderSpec, type: OrderType): OrderRecord {
    const status = spec.status ?? 'pending';
    const created = spec.createdGmt ?? new Date();
    const paid = spec.paidGmt !== undefined ? spec.paidGmt : PAID_STATUSES.includes(status) ? new Date(created.getTime() + 2 * MINUTE) : null;
    const completed = spec.completedGmt !== undefined ? spec.completedGmt : COMPLETED_STATUSES.includes(status) ? new Date(created.getTime() + DAY) : null;
    const lines = spec.lineItems ?? [];
    const shippingLines = spec.shipping_lines ?? [];
    const cartTax = sumAmounts(lines.map((line) => line.tax));
    const shippingTotal = sumAmounts(shippingLines.map((line) => line.total));
    const shippingTax = sumAmounts(shippingLines.map((line) => line.tax));
    const billing: FullAddress = { ...emptyAddress(), email: '', phone: '', ...spec.billing };
    const shipping: FullAddress = { ...emptyAddress(), email: '', phone: '', ...spec.shipping };
    const isSubscription = type === 'shop_subscription';
    const fulfilled = FULFILLED_STATUSES.includes(status);
    const meta: [string, string][] = [
      ['_billing_address_index', [...ADDRESS_FIELDS.map((field) => billing[field]), billing.email, billing.phone].join(' ')],
      ['_shipping_address_index', [...ADDRESS_FIELDS.map((field) => shipping[field]), shipping.phone].join(' ')],
    ];
    if ((spec.createdVia ?? 'checkout') === 'checkout') meta.push(['is_vat_exempt', 'no']);
    if (spec.orderNumber !== undefined) meta.push(['_order_number', spec.orderNumber]);
    if (spec.orderNumberFormatted !== undefined) meta.push(['_order_number_formatted', spec.orderNumberFormatted]);
    const legacyOverrides: [string, string][] = [];
    for (const [key, value] of Object.entries(spec.meta ?? {})) (HPOS_INTERNAL_KEYS.has(key) ? legacyOverrides : meta).push([key, value]);
    const latest = Math.max(created.getTime(), paid?.getTime() ?? 0, completed?.getTime() ?? 0);
    return {
      type, status, parentId: spec.parentId ?? 0, created, modified: spec.modifiedGmt ?? new Date(latest),
      paid: isSubscription ? null : paid, completed: isSubscription ? null : completed,
      currency: spec.currency ?? 'DKK',
      total: spec.total ?? sumAmounts([...lines.flatMap((line) => [line.total, line.tax]), shippingTotal, shippingTax]),
      cartTax, shippingTotal, shippingTax,
      customerId: spec.customerId ?? 0,
      paymentMethod: spec.paymentMethod ?? '',
      paymentMethodTitle: spec.paymentMethodTitle ?? '',
      transactionId: spec.transactionId ?? '',
      ip: '192.0.2.10',
      userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
      customerNote: spec.customerNote ?? '',
      createdVia: spec.createdVia ?? 'checkout',
      cartHash: isSubscription ? '' : crypto.randomBytes(16).toString('hex'),
      orderKey: spec.orderKey ?? `wc_order_${randomToken(13)}`,
      billing, shipping,
      flags: isSubscription ? null : { recordedSales: fulfilled, couponCounts: fulfilled, downloads: fulfilled, emailSent: fulfilled, stockReduced: fulfilled },
      meta, legacyOverrides,
    };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Writing per mode

  /** Reserves the ID with a post, then writes the authoritative store and, with sync on, the mirror. */
  private async persist(record: OrderRecord): Promise<number> {
    if (!this.mode.hpos) {
      const id = await this.insertPost(record, 'legacy');
      await this.insertPostMeta(id, record, 'legacy');
      if (this.mode.sync) await this.insertHposRows(id, record);
      return id;
    }
    // HPOS: wp_insert_post() of a draft placeholder (the real type when sync is on) gives the ID.
    const id = await this.insertPost(record, 'placeholder');
    await this.insertHposRows(id, record);
    if (this.mode.sync) {
      await this.backfillPost(id, record);
      await this.insertPostMeta(id, record, 'backfill');
    }
    return id;
  }

  private async insertPost(record: OrderRecord, form: 'legacy' | 'placeholder'): Promise<number> {
    const created = record.created;
    const titles = { shop_order: 'Order', shop_subscription: 'Subscription', shop_order_refund: 'Refund' };
    const title = form === 'legacy' ? `${titles[record.type]} &ndash; ${titleStamp(created)}` : '';
    const placeholder = form === 'placeholder';
    const postType = placeholder && !this.mode.sync ? 'shop_order_placehold' : record.type;
    const commentsOpen = postType === 'shop_order' || postType === 'shop_subscription';
    const modified = placeholder ? created : record.modified;
    const statements = await this.statements();
    const { insertId: id } = await this.write(statements.post.with({
      author: placeholder ? record.customerId : 1,
      dateLocal: localDateTime(created, this.timezone),
      dateGmt: gmtDateTime(created),
      content: '',
      title,
      excerpt: placeholder ? '' : record.customerNote,
      status: placeholder ? 'draft' : storedStatus(record.status),
      commentStatus: commentsOpen ? 'open' : 'closed',
      pingStatus: 'closed',
      password: placeholder ? '' : record.orderKey,
      slug: slugOf(title),
      toPing: '',
      pinged: '',
      modifiedLocal: localDateTime(modified, this.timezone),
      modifiedGmt: gmtDateTime(modified),
      contentFiltered: '',
      parentId: record.parentId,
      guid: '',
      menuOrder: 0,
      type: postType,
      mimeType: '',
      commentCount: 0,
    }));
    await this.write(statements.postGuid.with({ guid: `${await this.home()}/?post_type=${postType}&#038;p=${id}`, id }));
    return id;
  }

  /** What WC's backfill (`update_order_from_object()` through `wp_update_post()`) leaves on the placeholder post. */
  private async backfillPost(id: number, record: OrderRecord): Promise<void> {
    const { postBackfill } = await this.statements();
    await this.write(postBackfill.with({
      status: storedStatus(record.status), excerpt: record.customerNote, slug: String(id),
      modifiedLocal: localDateTime(record.modified, this.timezone), modifiedGmt: gmtDateTime(record.modified), id,
    }));
  }

  /**
   * The order's meta as the CPT data stores write it. Empty values are not stored (`update_or_delete_post_meta()`); the
   * operational flags exist only once set, except after an HPOS backfill, which writes them all.
   */
  private async insertPostMeta(id: number, record: OrderRecord, form: 'legacy' | 'backfill'): Promise<void> {
    const meta = new Map<string, string>();
    const put = (key: string, value: string) => { if (value !== '') meta.set(key, value); };
    if (record.type !== 'shop_order_refund') {
      put('_order_key', record.orderKey);
      put('_customer_user', String(record.customerId));
      put('_payment_method', record.paymentMethod);
      put('_payment_method_title', record.paymentMethodTitle);
      if (record.type === 'shop_order') put('_transaction_id', record.transactionId);
      put('_customer_ip_address', record.ip);
      put('_customer_user_agent', record.userAgent);
      put('_created_via', record.createdVia);
      if (record.completed) put('_date_completed', unixSeconds(record.completed));
      if (record.paid) put('_date_paid', unixSeconds(record.paid));
      put('_cart_hash', record.cartHash);
      for (const kind of ['billing', 'shipping'] as const) {
        const address = record[kind];
        if (!address) continue;
        for (const field of [...ADDRESS_FIELDS, ...(kind === 'billing' ? ['email'] as const : []), 'phone' as const]) put(`_${kind}_${field}`, address[field]);
      }
    }
    put('_order_currency', record.currency);
    put('_cart_discount', '0');
    put('_cart_discount_tax', '0');
    put('_order_shipping', record.shippingTotal);
    put('_order_shipping_tax', record.shippingTax);
    put('_order_tax', record.cartTax);
    put('_order_total', record.total);
    put('_order_version', WOOCOMMERCE_VERSION);
    put('_prices_include_tax', 'yes');
    if (record.paid) put('_paid_date', localDateTime(record.paid, this.timezone));
    if (record.completed) put('_completed_date', localDateTime(record.completed, this.timezone));
    if (record.flags) {
      const flag = (key: string, value: boolean, yes = 'yes', no = 'no') => { if (value || form === 'backfill') put(key, value ? yes : no); };
      flag('_download_permissions_granted', record.flags.downloads);
      flag('_recorded_sales', record.flags.recordedSales);
      flag('_recorded_coupon_usage_counts', record.flags.couponCounts);
      flag('_order_stock_reduced', record.flags.stockReduced);
      flag('_new_order_email_sent', record.flags.emailSent, 'true', 'false');
    }
    for (const [key, value] of record.legacyOverrides) meta.set(key, value);
    const rows = [...meta].map(([key, value]) => [id, key, value]);
    for (const [key, value] of record.meta) rows.push([id, key, value]);
    await this.insertRows((await this.statements()).postMeta, rows);
  }

  /** The order, its addresses, its operational data and its meta, as HPOS writes them. */
  private async insertHposRows(id: number, record: OrderRecord): Promise<void> {
    const statements = await this.statements();
    const isOrder = record.type !== 'shop_order_refund';
    const orderColumn = <T>(value: T) => (isOrder ? value : null);
    await this.write(statements.order.with({
      id, status: storedStatus(record.status), currency: record.currency, type: record.type, taxAmount: record.cartTax, totalAmount: record.total,
      customerId: orderColumn(record.customerId), billingEmail: orderColumn(record.billing?.email ?? ''),
      dateCreatedGmt: gmtDateTime(record.created), dateUpdatedGmt: gmtDateTime(record.modified), parentOrderId: record.parentId,
      paymentMethod: orderColumn(record.paymentMethod), paymentMethodTitle: orderColumn(record.paymentMethodTitle),
      transactionId: record.type === 'shop_order' ? record.transactionId : null, ipAddress: orderColumn(record.ip),
      userAgent: orderColumn(record.userAgent), customerNote: orderColumn(record.customerNote),
    }));

    const addresses = (['billing', 'shipping'] as const).flatMap((kind) => {
      const address = record[kind];
      if (!address) return [];
      return [[id, kind, ...ADDRESS_FIELDS.map((field) => address[field]), kind === 'billing' ? address.email : null, address.phone]];
    });
    await this.insertRows(statements.orderAddresses, addresses);

    const bool = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);
    const flags = record.flags;
    const date = (value: Date | null) => (value ? gmtDateTime(value) : null);
    await this.write(statements.orderOperationalData.with({
      orderId: id, createdVia: orderColumn(record.createdVia), woocommerceVersion: WOOCOMMERCE_VERSION, pricesIncludeTax: 1,
      couponUsagesAreCounted: isOrder ? (bool(flags?.couponCounts) ?? 0) : null, downloadPermissionGranted: isOrder ? (bool(flags?.downloads) ?? 0) : null,
      cartHash: flags ? record.cartHash : null, newOrderEmailSent: bool(flags?.emailSent), orderKey: orderColumn(record.orderKey),
      orderStockReduced: bool(flags?.stockReduced), datePaidGmt: flags ? date(record.paid) : null, dateCompletedGmt: flags ? date(record.completed) : null,
      shippingTaxAmount: record.shippingTax, shippingTotalAmount: record.shippingTotal, discountTaxAmount: '0', discountTotalAmount: '0',
      recordedSales: bool(flags?.recordedSales),
    }));

    await this.insertRows(statements.orderMeta, record.meta.map(([key, value]) => [id, key, value]));
  }

  /** Line items and shipping lines with the item meta WC's order item data stores write. */
  private async insertItems(orderId: number, spec: OrderSpec): Promise<void> {
    const lines = spec.lineItems ?? [];
    for (const line of lines) {
      const tax = line.tax ?? '0';
      await this.insertItem(orderId, line.name, 'line_item', [
        ['_product_id', String(line.productId ?? 0)],
        ['_variation_id', '0'],
        ['_qty', String(line.qty)],
        ['_tax_class', ''],
        ['_line_subtotal', line.total],
        ['_line_subtotal_tax', tax],
        ['_line_total', line.total],
        ['_line_tax', tax],
        ['_line_tax_data', phpSerialize({ total: taxArray(line.tax), subtotal: taxArray(line.tax) })],
      ]);
    }
    for (const shipping of spec.shipping_lines ?? []) {
      await this.insertItem(orderId, shipping.title, 'shipping', [
        ['method_id', shipping.methodId],
        ['instance_id', shipping.instanceId ?? '1'],
        ['cost', shipping.total ?? '0.00'],
        ['total_tax', shipping.tax ?? '0'],
        ['taxes', phpSerialize({ total: taxArray(shipping.tax) })],
        ['Items', lines.map((line) => `${line.name} &times; ${line.qty}`).join(', ')],
      ]);
    }
  }

  private async insertItem(orderId: number, name: string, type: string, meta: [string, string][]): Promise<void> {
    const statements = await this.statements();
    const { insertId } = await this.write(statements.item.with({ name, type, orderId }));
    await this.insertRows(statements.itemMeta, meta.map(([key, value]) => [insertId, key, value]));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading back and status changes

  private async readParent(orderId: number): Promise<{ currency: string }> {
    const { currency } = await this.statements();
    const statement = currency.with({ id: orderId });
    const [rows] = await this.db.query<mysql.RowDataPacket[]>(statement.sql, statement.values);
    if (!rows.length) throw new Error(`order ${orderId} not found`);
    return { currency: String(rows[0].currency) };
  }

  /** Changes the status in the authoritative store and, with sync on, in the mirror; both modified dates move. */
  private async setStatus(orderId: number, status: string, when: Date): Promise<void> {
    const writeHpos = this.mode.hpos || this.mode.sync;
    const writePosts = !this.mode.hpos || this.mode.sync;
    const statements = await this.statements();
    if (writeHpos) await this.write(statements.orderStatus.with({ status: storedStatus(status), dateUpdatedGmt: gmtDateTime(when), id: orderId }));
    if (writePosts) {
      await this.write(statements.postStatus.with({
        status: storedStatus(status), modifiedLocal: localDateTime(when, this.timezone), modifiedGmt: gmtDateTime(when), id: orderId,
      }));
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers

  private async write(statement: Statement): Promise<mysql.ResultSetHeader> {
    const [result] = await this.db.query<mysql.ResultSetHeader>(statement.sql, statement.values);
    return result;
  }

  /** All `rows` in one statement (a multi-row insert). */
  private async insertRows(insert: string, rows: unknown[][]): Promise<void> {
    if (rows.length) await this.db.query(insert, [rows]);
  }

  private async home(): Promise<string> {
    if (this.homeUrl === undefined) {
      const home = await getOption(this.db, this.p, 'home');
      this.homeUrl = home === null ? 'https://shop.example.dk' : home.replace(/\/+$/, '');
    }
    return this.homeUrl;
  }
}

function emptyAddress(): Address {
  return { first_name: '', last_name: '', company: '', address_1: '', address_2: '', city: '', state: '', postcode: '', country: '' };
}
