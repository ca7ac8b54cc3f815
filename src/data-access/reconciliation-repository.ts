import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { AgreementDisableReason } from '../../entities';
import {
  Agreement, HposOrder, HposOrderMeta, Payment, PaymentMeta, PaymentRetry, Post, PostMeta, ReconcileCount, ReconcileItem,
  type AgreementStatus, type PaymentStatus, type Provider, type ReconcileItemStatus, type ReconcileKind,
} from '../../entities';
import { rawPool } from './data-source';
import { PassMarks, type PassMark } from './pass-marks';
import { page, PreparedStatement, selectEntity, slots, sqlNames } from './prepared-statement';
import type { Statement } from './transaction';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTime, gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';
import { CARD_GATEWAY_METHOD_PREFIX } from '../shop/payment-gateways';

export interface ReconcileItemRecord {
  id: number;
  kind: ReconcileKind;
  refId: number;
  provider: Provider;
  status: ReconcileItemStatus;
  openedAt: Date;
  nextAt: string | null;
  checks: number;
  failures: number;
}

/** A payment as reconciliation sees it: what it is, where it links, and whether a dunning attempt is planned for its order. */
export interface PaymentTarget {
  id: number;
  provider: Provider;
  externalId: string;
  status: PaymentStatus | null;
  orderId: number | null;
  /** The wallet agreement the charge was made on (meta `agreement_id`, else the linked agreement). */
  agreementExternalId: string | null;
  retryPlanned: boolean;
  updatedAt: Date;
}

export interface AgreementTarget {
  id: number;
  provider: Provider;
  externalId: string;
  status: AgreementStatus;
  /** Why a DISABLED agreement is: a card the gateway FAILED may become active again. */
  disableReason: AgreementDisableReason | null;
  customerHandle: string | null;
  updatedAt: Date;
}

/** What the schedule already holds for a ref: when its item opened (or last changed), and its status. */
export interface ScheduledItem {
  openedAt: Date;
  status: ReconcileItemStatus;
}

/** A row discovery read, with the item the schedule already has for it (null: none). */
export type Seen<T> = T & { item: ScheduledItem | null };

/** A WooCommerce order discovery read among those changed since its mark. */
export interface ChangedOrder {
  id: number;
  /** When it last changed (GMT): the column the scan goes along, and the item's opening. */
  modifiedAt: Date;
  /**
   * Whether it is to be put on the schedule: awaiting the card gateway (see `ordersAwaitingGateway`), created
   * since the floor, and with no item that opened at or after this change.
   */
  wanted: boolean;
}

export interface OrderCandidate {
  id: number;
  /** When the order last changed (GMT). */
  modifiedAt: Date;
}

export interface ReconcileMetrics {
  counts: { provider: string; kind: string; outcome: string; count: number }[];
  open: { provider: string; kind: string; count: number }[];
  oldestOpenSeconds: number;
}

/** Open payment statuses: none yet (created, pending at the provider) and reserved; FAILED only while a retry is planned. */
export function paymentIsOpen(status: PaymentStatus | null, retryPlanned: boolean): boolean {
  return status === null || status === 'AUTHORIZED' || (status === 'FAILED' && retryPlanned);
}

/**
 * Agreements reconciliation asks about: pending or active ones, and a card the gateway failed, which it may
 * report active again (`customer_payment_method_reactivated`, a webhook that can be lost like any other).
 */
export function agreementIsOpen(status: AgreementStatus, provider?: Provider, disableReason?: AgreementDisableReason | null): boolean {
  return status === 'PENDING' || status === 'ACTIVE' || (status === 'DISABLED' && provider === 'card_gateway' && disableReason === 'FAILED');
}

/** The same as agreementIsOpen's last case, in SQL over alias `a`. */
const FAILED_CARD = "(a.status = 'DISABLED' AND a.provider = 'card_gateway' AND a.disableReason = 'FAILED')";

export const AWAITING_STATUSES = ['pending', 'on-hold'];

/** The item joined to a row discovery read (`itemOpenedAt`, `itemStatus`), or null when it has none. */
const scheduled = (row: RowDataPacket): ScheduledItem | null => (row.itemStatus === null || row.itemStatus === undefined
  ? null : { openedAt: parseGmtDateTime(row.itemOpenedAt)!, status: row.itemStatus });

const toItem = (row: RowDataPacket): ReconcileItemRecord => ({
  id: Number(row.id),
  kind: row.kind,
  refId: Number(row.refId),
  provider: row.provider,
  status: row.status,
  openedAt: parseGmtDateTime(row.openedAt)!,
  nextAt: row.nextAt,
  checks: Number(row.checks),
  failures: Number(row.failures),
});

/**
 * The statements of `ordersAwaitingGateway` for each store, for all orders and for one, newest first (the
 * caller adds the page's limit).
 */
function awaitingGateway(dataSource: DataSource) {
  const query = () => dataSource.createQueryBuilder();
  const parameters = {
    ...slots('sinceGmt', 'sinceLocal', 'orderId'),
    statuses: AWAITING_STATUSES.map((status) => `wc-${status}`), method: `${CARD_GATEWAY_METHOD_PREFIX}%`,
  };
  const noPayment = (orderId: string) => `NOT EXISTS (${query().select('1').from(Payment, 'y').where(`y.orderId = ${orderId}`).getQuery()})`;
  const hposHandle = query().select('1').from(HposOrderMeta, 'm').where("m.orderId = o.id AND m.key = '_reepay_order'");
  const hpos = () => query().select('o.id', 'id').addSelect('COALESCE(o.dateUpdatedGmt, o.dateCreatedGmt)', 'modified').from(HposOrder, 'o')
    .where("o.type = 'shop_order' AND o.status IN (:statuses) AND o.dateCreatedGmt >= :sinceGmt")
    .andWhere(`(o.paymentMethod LIKE :method OR EXISTS (${hposHandle.getQuery()}))`)
    .andWhere(noPayment('o.id'))
    .orderBy('o.dateCreatedGmt', 'DESC').setParameters(parameters);
  const legacyGateway = query().select('1').from(PostMeta, 'm')
    .where("m.postId = p.id AND ((m.key = '_payment_method' AND m.value LIKE :method) OR m.key = '_reepay_order')");
  const legacy = () => query().select('p.id', 'id').addSelect('p.modifiedGmt', 'modified').from(Post, 'p')
    .where("p.type = 'shop_order' AND p.status IN (:statuses) AND p.dateLocal >= :sinceLocal AND p.dateGmt >= :sinceGmt")
    .andWhere(`EXISTS (${legacyGateway.getQuery()})`)
    .andWhere(noPayment('p.id'))
    .orderBy('p.dateLocal', 'DESC').setParameters(parameters);
  type Since = 'sinceGmt' | 'sinceLocal';
  return {
    hpos: { all: PreparedStatement.from<Since>(hpos()), one: PreparedStatement.from<Since | 'orderId'>(hpos().andWhere('o.id = :orderId')) },
    legacy: { all: PreparedStatement.from<Since>(legacy()), one: PreparedStatement.from<Since | 'orderId'>(legacy().andWhere('p.id = :orderId')) },
  };
}

/**
 * Discovery of WooCommerce orders: those changed since the mark (`since`, `afterId`) in the order of their
 * change, each with whether it is to be put on the schedule (`wanted`), so that the scan's position moves past
 * every row it read and an order already on the schedule since its last change costs no write. On HPOS the scan
 * goes along WooCommerce's `date_updated` index; on posts storage, where WooCommerce indexes no modified date,
 * along its `type_status_date` index over the pending and on-hold orders since the floor, taking only those
 * modified since the mark. The caller adds the page's limit.
 */
function changedOrderStatements(dataSource: DataSource) {
  const query = () => dataSource.createQueryBuilder();
  const parameters = {
    ...slots('since', 'afterId', 'floorGmt', 'floorLocal'),
    statuses: AWAITING_STATUSES.map((status) => `wc-${status}`), method: `${CARD_GATEWAY_METHOD_PREFIX}%`,
  };
  const noPayment = (orderId: string) => `NOT EXISTS (${query().select('1').from(Payment, 'y').where(`y.orderId = ${orderId}`).getQuery()})`;
  // First, as it is the cheapest: one look in the items' unique (kind, ref_id) index.
  const unscheduled = (orderId: string, modified: string) => `NOT EXISTS (${query().select('1').from(ReconcileItem, 'i')
    .where(`i.kind = 'order' AND i.refId = ${orderId} AND i.openedAt >= ${modified}`).getQuery()})`;
  const hposHandle = query().select('1').from(HposOrderMeta, 'm').where("m.orderId = o.id AND m.key = '_reepay_order'");
  const hpos = query().select('o.id', 'id').addSelect('o.dateUpdatedGmt', 'modified')
    .addSelect(`(o.type = 'shop_order' AND o.status IN (:statuses) AND o.dateCreatedGmt >= :floorGmt AND ${unscheduled('o.id', 'o.dateUpdatedGmt')}
      AND ${noPayment('o.id')} AND (o.paymentMethod LIKE :method OR EXISTS (${hposHandle.getQuery()})))`, 'wanted')
    .from(HposOrder, 'o')
    .where('o.dateUpdatedGmt >= :since AND (o.dateUpdatedGmt > :since OR o.id > :afterId)')
    .orderBy('o.dateUpdatedGmt').addOrderBy('o.id').setParameters(parameters);
  const legacyGateway = query().select('1').from(PostMeta, 'm')
    .where("m.postId = p.id AND ((m.key = '_payment_method' AND m.value LIKE :method) OR m.key = '_reepay_order')");
  // The order's local date is the index's column: a day earlier covers any zone; the GMT date then decides.
  const legacy = query().select('p.id', 'id').addSelect('p.modifiedGmt', 'modified')
    .addSelect(`(p.dateGmt >= :floorGmt AND ${unscheduled('p.id', 'p.modifiedGmt')} AND ${noPayment('p.id')} AND EXISTS (${legacyGateway.getQuery()}))`, 'wanted')
    .from(Post, 'p')
    .where("p.type = 'shop_order' AND p.status IN (:statuses) AND p.dateLocal >= :floorLocal")
    .andWhere('p.modifiedGmt >= :since AND (p.modifiedGmt > :since OR p.id > :afterId)')
    .orderBy('p.modifiedGmt').addOrderBy('p.id').setParameters(parameters);
  type Names = 'since' | 'afterId' | 'floorGmt' | 'floorLocal';
  return { hpos: PreparedStatement.from<Names>(hpos), legacy: PreparedStatement.from<Names>(legacy) };
}

/** The reads of payments and agreements, as their targets: a payment with its agreement and whether a retry is planned. */
function targetReads(dataSource: DataSource) {
  const query = () => dataSource.createQueryBuilder();
  // Subqueries of the payment `p`: the wallet agreement it was charged on (its meta, else its linked agreement).
  const metaAgreement = query().select('m.value').from(PaymentMeta, 'm').where("m.paymentId = p.id AND m.key = 'agreement_id'").limit(1);
  const linkedAgreement = query().select('a.externalId').from(Agreement, 'a').where('a.id = p.agreementId');
  const plannedRetry = query().select('1').from(PaymentRetry, 'r').where("r.orderId = p.orderId AND r.status IN ('PENDING', 'PROCESSING')");
  const payments = () => query()
    .select('p.id', 'id').addSelect('p.provider', 'provider').addSelect('p.externalId', 'externalId').addSelect('p.status', 'status')
    .addSelect('p.orderId', 'orderId').addSelect('p.updatedAt', 'updatedAt')
    .addSelect(`COALESCE((${metaAgreement.getQuery()}), (${linkedAgreement.getQuery()}))`, 'agreementExternalId')
    .addSelect(`(p.orderId IS NOT NULL AND EXISTS (${plannedRetry.getQuery()}))`, 'retryPlanned')
    .from(Payment, 'p');
  const openPayment = "(p.status IS NULL OR p.status IN ('AUTHORIZED', 'FAILED'))";
  const agreements = () => query()
    .select('a.id', 'id').addSelect('a.provider', 'provider').addSelect('a.externalId', 'externalId').addSelect('a.status', 'status')
    .addSelect('a.customerHandle', 'customerHandle').addSelect('a.disableReason', 'disableReason').addSelect('a.updatedAt', 'updatedAt')
    .from(Agreement, 'a');
  const openAgreements = () => agreements().where(`(a.status IN ('PENDING', 'ACTIVE') OR ${FAILED_CARD})`).orderBy('a.id');
  // The item the schedule has for the row, through the items' unique (kind, ref_id) index.
  const withItem = (builder: ReturnType<typeof query>, kind: ReconcileKind, alias: string) => builder
    .leftJoin(ReconcileItem, 'i', `i.kind = '${kind}' AND i.refId = ${alias}.id`)
    .addSelect('i.openedAt', 'itemOpenedAt').addSelect('i.status', 'itemStatus');
  const orderAgreements = query().select('y.agreementId').from(Payment, 'y').where('y.orderId = :orderId AND y.agreementId IS NOT NULL');
  return {
    payment: PreparedStatement.from<'id'>(payments().where('p.id = :id').setParameters(slots('id'))),
    changedPayments: PreparedStatement.from<'since' | 'afterId'>(withItem(payments(), 'payment', 'p')
      .where('(p.updatedAt > :since OR (p.updatedAt = :since AND p.id > :afterId))').orderBy('p.updatedAt').addOrderBy('p.id')
      .setParameters(slots('since', 'afterId'))),
    openPayments: PreparedStatement.from<never>(payments().where(openPayment).orderBy('p.id')),
    openPaymentsOf: PreparedStatement.from<'orderId'>(payments().where(`p.orderId = :orderId AND ${openPayment}`).orderBy('p.id')
      .setParameters(slots('orderId'))),
    agreement: PreparedStatement.from<'id'>(agreements().where('a.id = :id').setParameters(slots('id'))),
    changedAgreements: PreparedStatement.from<'since' | 'afterId'>(withItem(agreements(), 'agreement', 'a')
      .where('(a.updatedAt > :since OR (a.updatedAt = :since AND a.id > :afterId))').orderBy('a.updatedAt').addOrderBy('a.id')
      .setParameters(slots('since', 'afterId'))),
    openAgreements: PreparedStatement.from<never>(openAgreements()),
    openAgreementsOf: PreparedStatement.from<'orderId' | 'subscriptionId' | 'walletAgreement'>(openAgreements()
      .andWhere(`(a.id IN (${orderAgreements.getQuery()})
        OR (:subscriptionId IS NOT NULL AND a.subscriptionId = :subscriptionId)
        OR (a.provider = 'mobile_wallet' AND a.externalId = :walletAgreement))`)
      .setParameters(slots('orderId', 'subscriptionId', 'walletAgreement'))),
    orderPayment: PreparedStatement.from<'orderId'>(query().select('1').from(Payment, 'y').where('y.orderId = :orderId').limit(1)
      .setParameters(slots('orderId'))),
  };
}

/** The statements of the reconciliation's own tables: its schedule of items, its totals and its marks. */
function scheduleStatements(dataSource: DataSource) {
  const query = () => dataSource.createQueryBuilder();
  const s = slots('kind', 'refId', 'refIds', 'providers', 'id', 'nextAt', 'leaseUntil', 'status', 'checks', 'failures', 'state', 'error', 'now');

  // Upserts whose updates are expressions, which the query builder cannot write.
  const { table: itemsTable, column: i } = sqlNames(dataSource, ReconcileItem);
  const { table: countsTable, column: counts } = sqlNames(dataSource, ReconcileCount);
  // MariaDB assigns left to right, each seeing the ones before: the opening goes last.
  const later = `VALUES(${i.openedAt}) > ${i.openedAt}`;
  const ifLater = (column: string, value: string) => `${column} = IF(${later}, ${value}, ${column})`;

  const items = () => selectEntity(dataSource, ReconcileItem, 'i');
  return {
    /** A new item, or a known one started again if it opened later. */
    openSql: `INSERT INTO ${itemsTable} (${i.kind}, ${i.refId}, ${i.provider}, ${i.status}, ${i.openedAt}, ${i.nextAt}, ${i.checks}, ${i.failures}, ${i.createdAt}, ${i.updatedAt})
      VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)
      ON DUPLICATE KEY UPDATE
        ${ifLater(i.status, `VALUES(${i.status})`)}, ${ifLater(i.nextAt, `VALUES(${i.nextAt})`)},
        ${ifLater(i.checks, '0')}, ${ifLater(i.failures, '0')}, ${ifLater(i.updatedAt, `VALUES(${i.updatedAt})`)},
        ${i.openedAt} = GREATEST(${i.openedAt}, VALUES(${i.openedAt}))`,
    closeRefs: PreparedStatement.from<'kind' | 'refIds' | 'now'>(query().update(ReconcileItem)
      .set({ status: 'CLOSED', nextAt: () => 'NULL', updatedAt: () => ':now' })
      .where("kind = :kind AND refId IN (:refIds) AND status <> 'CLOSED'").setParameters(s)),
    knownRefs: PreparedStatement.from<'kind' | 'refIds'>(query().select('i.refId', 'refId').from(ReconcileItem, 'i')
      .where('i.kind = :kind AND i.refId IN (:refIds)').setParameters(s)),
    /** Soonest first; the caller adds the limit. */
    due: PreparedStatement.from<'now' | 'providers'>(items().where('i.nextAt <= :now AND i.provider IN (:providers)').orderBy('i.nextAt').setParameters(s)),
    claim: PreparedStatement.from<'id' | 'nextAt' | 'leaseUntil' | 'now'>(query().update(ReconcileItem)
      .set({ nextAt: () => ':leaseUntil', updatedAt: () => ':now' }).where('id = :id AND nextAt = :nextAt').setParameters(s)),
    checked: PreparedStatement.from<'id' | 'status' | 'nextAt' | 'checks' | 'failures' | 'state' | 'error' | 'now'>(query().update(ReconcileItem).set({
      status: () => ':status', nextAt: () => ':nextAt', checks: () => ':checks', failures: () => ':failures',
      lastCheckedAt: () => ':now', lastState: () => ':state', lastError: () => ':error', updatedAt: () => ':now',
    }).where('id = :id').setParameters(s)),
    item: PreparedStatement.from<'kind' | 'refId'>(items().where('i.kind = :kind AND i.refId = :refId').setParameters(s)),
    /** Many rows in one statement (mysql2 expands the nested array), each added to its total. */
    countSql: `INSERT INTO ${countsTable} (${counts.provider}, ${counts.kind}, ${counts.outcome}, ${counts.count}) VALUES ?
      ON DUPLICATE KEY UPDATE ${counts.count} = ${counts.count} + VALUES(${counts.count})`,
    counts: PreparedStatement.from<never>(query().select('c.provider', 'provider').addSelect('c.kind', 'kind').addSelect('c.outcome', 'outcome')
      .addSelect('c.count', 'count').from(ReconcileCount, 'c')),
    open: PreparedStatement.from<never>(query().select('i.provider', 'provider').addSelect('i.kind', 'kind').addSelect('COUNT(*)', 'n')
      .addSelect('MIN(i.openedAt)', 'oldest').from(ReconcileItem, 'i').where("i.status = 'OPEN'").groupBy('i.provider').addGroupBy('i.kind')),
  };
}

/**
 * The reconciliation's own tables (what is open and when to ask next, totals, how far the payments and
 * agreements tables have been looked through) and the reads of the payments, agreements and WooCommerce
 * orders it asks the providers about.
 */
export class ReconciliationRepository {
  readonly pool: Pool;
  private readonly schedule: ReturnType<typeof scheduleStatements>;
  private readonly reads: ReturnType<typeof targetReads>;
  private readonly awaiting: ReturnType<typeof awaitingGateway>;
  private readonly changedOrderReads: ReturnType<typeof changedOrderStatements>;
  private readonly marks: PassMarks;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.marks = new PassMarks(dataSource);
    this.schedule = scheduleStatements(dataSource);
    this.reads = targetReads(dataSource);
    this.awaiting = awaitingGateway(dataSource);
    this.changedOrderReads = changedOrderStatements(dataSource);
  }

  // ------------------------------------------------------------------------------------------------------------
  // Payments, agreements and orders as reconciliation reads them

  private toPayment(row: RowDataPacket): PaymentTarget {
    return {
      id: Number(row.id), provider: row.provider, externalId: row.externalId, status: row.status,
      orderId: row.orderId === null ? null : Number(row.orderId),
      agreementExternalId: row.agreementExternalId || null,
      retryPlanned: Number(row.retryPlanned) === 1,
      updatedAt: parseGmtDateTime(row.updatedAt)!,
    };
  }

  private toAgreement(row: RowDataPacket): AgreementTarget {
    return {
      id: Number(row.id), provider: row.provider, externalId: row.externalId, status: row.status, disableReason: row.disableReason ?? null,
      customerHandle: row.customerHandle, updatedAt: parseGmtDateTime(row.updatedAt)!,
    };
  }

  private async rows(statement: Statement): Promise<RowDataPacket[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(statement.sql, statement.values);
    return rows;
  }

  async payment(id: number): Promise<PaymentTarget | null> {
    const rows = await this.rows(this.reads.payment.with({ id }));
    return rows.length ? this.toPayment(rows[0]) : null;
  }

  async agreement(id: number): Promise<AgreementTarget | null> {
    const rows = await this.rows(this.reads.agreement.with({ id }));
    return rows.length ? this.toAgreement(rows[0]) : null;
  }

  /**
   * Payments changed after (`since`, `afterId`) in the order of their change, through the `updatedAt` index,
   * each with the item the schedule has for it.
   */
  async changedPayments(since: string, afterId: number, limit: number): Promise<Seen<PaymentTarget>[]> {
    return (await this.rows(page(this.reads.changedPayments.with({ since, afterId }), limit))).map((row) => ({ ...this.toPayment(row), item: scheduled(row) }));
  }

  async changedAgreements(since: string, afterId: number, limit: number): Promise<Seen<AgreementTarget>[]> {
    return (await this.rows(page(this.reads.changedAgreements.with({ since, afterId }), limit))).map((row) => ({ ...this.toAgreement(row), item: scheduled(row) }));
  }

  /**
   * WooCommerce orders of the authoritative store changed after (`since`, `afterId`), in the order of their
   * change, each with whether it is to be put on the schedule (created since `floor`, awaiting the card
   * gateway, not on the schedule since this change).
   */
  async changedOrders(settings: ShopSettings, since: string, afterId: number, floor: Date, limit: number): Promise<ChangedOrder[]> {
    const statement = this.changedOrderReads[settings.hpos ? 'hpos' : 'legacy'];
    const floorLocal = gmtDateTime(new Date(floor.getTime() - 86_400_000));
    const rows = await this.rows(page(statement.with({ since, afterId, floorGmt: gmtDateTime(floor), floorLocal }), limit));
    return rows.map((row) => ({ id: Number(row.id), modifiedAt: parseGmtDateTime(row.modified) ?? new Date(0), wanted: Number(row.wanted) === 1 }));
  }

  /** Every open payment (of one order, or all): for the operator's `reconcile`. */
  async openPayments(orderId?: number): Promise<PaymentTarget[]> {
    const rows = await this.rows(orderId === undefined ? this.reads.openPayments.with({}) : this.reads.openPaymentsOf.with({ orderId }));
    return rows.map((row) => this.toPayment(row)).filter((payment) => paymentIsOpen(payment.status, payment.retryPlanned));
  }

  /** Every open agreement, or those an order's payments were made on or its subscription has. */
  async openAgreements(scope?: { orderId: number; subscriptionId: number | null; walletAgreement: string | null }): Promise<AgreementTarget[]> {
    const rows = await this.rows(scope
      ? this.reads.openAgreementsOf.with({ orderId: scope.orderId, subscriptionId: scope.subscriptionId, walletAgreement: scope.walletAgreement ?? '' })
      : this.reads.openAgreements.with({}));
    return rows.map((row) => this.toAgreement(row));
  }

  /**
   * WooCommerce orders awaiting the card gateway's answer: pending or on hold, paid with one of its gateways (or
   * carrying its `_reepay_order` handle), with no payment recorded yet; created since `createdSince` (null: any
   * time), newest first. Read from the authoritative store through its type/status/date index.
   */
  async ordersAwaitingGateway(settings: ShopSettings, createdSince: Date | null, limit: number, orderId?: number): Promise<OrderCandidate[]> {
    const awaiting = this.awaiting[settings.hpos ? 'hpos' : 'legacy'];
    const sinceGmt = createdSince ? gmtDateTime(createdSince) : '0000-00-00 00:00:00';
    // The order's local date is the index's column: a day earlier covers any zone; the GMT date then decides.
    const sinceLocal = createdSince ? gmtDateTime(new Date(createdSince.getTime() - 86_400_000)) : '0000-00-00 00:00:00';
    const statement = orderId === undefined ? awaiting.all.with({ sinceGmt, sinceLocal }) : awaiting.one.with({ sinceGmt, sinceLocal, orderId });
    const { sql, values } = page(statement, limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({ id: Number(row.id), modifiedAt: parseGmtDateTime(row.modified) ?? new Date(0) }));
  }

  async orderHasPayment(orderId: number): Promise<boolean> {
    return (await this.rows(this.reads.orderPayment.with({ orderId }))).length > 0;
  }

  // ------------------------------------------------------------------------------------------------------------
  // The schedule: what is open, when it is asked about next

  watermark(name: string): Promise<PassMark | null> {
    return this.marks.get(name);
  }

  /** Moves the mark forward only (two workers may look at once); the caller writes only a mark that moved. */
  advanceWatermark(name: string, mark: PassMark, now: Date): Promise<void> {
    return this.marks.advance(name, mark, now);
  }

  /**
   * The item is open since `openedAt` and first asked about at `nextAt`. An item already known keeps its
   * schedule unless it opened (changed) later than the item's own opening, which starts the schedule again.
   */
  async open(kind: ReconcileKind, refId: number, provider: Provider, openedAt: Date, nextAt: Date | null, now: Date): Promise<void> {
    await this.pool.query(this.schedule.openSql,
      [kind, refId, provider, nextAt ? 'OPEN' : 'EXPIRED', gmtDateTimeMs(openedAt), nextAt ? gmtDateTimeMs(nextAt) : null, gmtDateTimeMs(now), gmtDateTimeMs(now)]);
  }

  /** Items of these refs that are open no longer (their payment or agreement became final). */
  async closeRefs(kind: ReconcileKind, refIds: number[], now: Date): Promise<void> {
    if (!refIds.length) return;
    const { sql, values } = this.schedule.closeRefs.with({ kind, refIds, now: gmtDateTimeMs(now) });
    await this.pool.query(sql, values);
  }

  /** Which of these refs already have an item (of any status). */
  async knownRefs(kind: ReconcileKind, refIds: number[]): Promise<Set<number>> {
    if (!refIds.length) return new Set();
    const rows = await this.rows(this.schedule.knownRefs.with({ kind, refIds }));
    return new Set(rows.map((row) => Number(row.refId)));
  }

  /** Items due now for these providers, soonest first: a range scan of the next-time index. */
  async due(now: Date, providers: Provider[], limit: number): Promise<ReconcileItemRecord[]> {
    if (!providers.length) return [];
    return (await this.rows(page(this.schedule.due.with({ now: gmtDateTimeMs(now), providers }), limit))).map(toItem);
  }

  /** Takes a due item for this pass (another worker's pass then skips it); it is due again at `leaseUntil` if this one dies. */
  async claim(item: ReconcileItemRecord, leaseUntil: Date, now: Date): Promise<boolean> {
    const { sql, values } = this.schedule.claim.with({ id: item.id, nextAt: item.nextAt, leaseUntil: gmtDateTimeMs(leaseUntil), now: gmtDateTimeMs(now) });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows === 1;
  }

  /** What a check came to: the item's next time (null with its final status), and what the provider said. */
  async checked(id: number, fields: { status: ReconcileItemStatus; nextAt: Date | null; checks: number; failures: number; state: string | null; error: string | null }, now: Date): Promise<void> {
    const { sql, values } = this.schedule.checked.with({
      id, status: fields.status, nextAt: fields.nextAt ? gmtDateTimeMs(fields.nextAt) : null, checks: fields.checks, failures: fields.failures,
      state: fields.state?.slice(0, 64) ?? null, error: fields.error?.slice(0, 255) ?? null, now: gmtDateTimeMs(now),
    });
    await this.pool.query(sql, values);
  }

  async item(kind: ReconcileKind, refId: number): Promise<(ReconcileItemRecord & { lastState: string | null; lastError: string | null }) | null> {
    const rows = await this.rows(this.schedule.item.with({ kind, refId }));
    return rows.length ? { ...toItem(rows[0]), lastState: rows[0].lastState, lastError: rows[0].lastError } : null;
  }

  // ------------------------------------------------------------------------------------------------------------
  // Totals for /metrics

  async count(rows: { provider: string; kind: string; outcome: string; count: number }[]): Promise<void> {
    const nonZero = rows.filter((row) => row.count > 0);
    if (!nonZero.length) return;
    await this.pool.query(this.schedule.countSql, [nonZero.map((row) => [row.provider, row.kind, row.outcome, row.count])]);
  }

  async metrics(now: Date): Promise<ReconcileMetrics> {
    const [counts] = await this.pool.query<RowDataPacket[]>(this.schedule.counts.sql);
    const [open] = await this.pool.query<RowDataPacket[]>(this.schedule.open.sql);
    const oldest = open.map((row) => parseGmtDateTime(row.oldest)?.getTime() ?? now.getTime()).reduce((a, b) => Math.min(a, b), now.getTime());
    return {
      counts: counts.map((row) => ({ provider: String(row.provider), kind: String(row.kind), outcome: String(row.outcome), count: Number(row.count) })),
      open: open.map((row) => ({ provider: String(row.provider), kind: String(row.kind), count: Number(row.n) })),
      oldestOpenSeconds: Math.max(0, Math.round((now.getTime() - oldest) / 1000)),
    };
  }
}
