import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import {
  Agreement, HposOrder, HposOrderMeta, Payment, PaymentMeta, PaymentRetry, Post, PostMeta, ReconcileCount, ReconcileItem, ReconcileState,
  type AgreementStatus, type PaymentStatus, type Provider, type ReconcileItemStatus, type ReconcileKind,
} from '../../entities';
import { rawPool, tableOf } from './data-source';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTime, gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';

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
  customerHandle: string | null;
  updatedAt: Date;
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

export function agreementIsOpen(status: AgreementStatus): boolean {
  return status === 'PENDING' || status === 'ACTIVE';
}

/** The card gateway's WooCommerce gateways are all `reepay_...` (reepay_checkout, reepay_mobilepay, ...). */
export const CARD_GATEWAY_METHOD_PREFIX = 'reepay';
export const AWAITING_STATUSES = ['pending', 'on-hold'];

const toItem = (row: RowDataPacket): ReconcileItemRecord => ({
  id: Number(row.id),
  kind: row.kind,
  refId: Number(row.ref_id),
  provider: row.provider,
  status: row.status,
  openedAt: parseGmtDateTime(row.opened_at)!,
  nextAt: row.next_at,
  checks: Number(row.checks),
  failures: Number(row.failures),
});

/**
 * The reconciliation's own tables (what is open and when to ask next, totals, how far the payments and
 * agreements tables have been looked through) and the reads of the payments, agreements and WooCommerce
 * orders it asks the providers about.
 */
export class ReconciliationRepository {
  readonly pool: Pool;
  private readonly t: Record<'items' | 'counts' | 'state' | 'payments' | 'meta' | 'agreements' | 'retries' | 'posts' | 'postmeta' | 'orders' | 'ordersMeta', string>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const t = (entity: Parameters<typeof tableOf>[1]) => tableOf(dataSource, entity);
    this.t = {
      items: t(ReconcileItem), counts: t(ReconcileCount), state: t(ReconcileState), payments: t(Payment), meta: t(PaymentMeta),
      agreements: t(Agreement), retries: t(PaymentRetry), posts: t(Post), postmeta: t(PostMeta), orders: t(HposOrder), ordersMeta: t(HposOrderMeta),
    };
  }

  // ------------------------------------------------------------------------------------------------------------
  // Payments, agreements and orders as reconciliation reads them

  private paymentSelect(where: string): string {
    return `SELECT p.id, p.provider, p.external_id, p.status, p.order_id, p.updated_at,
        COALESCE((SELECT m.meta_value FROM ${this.t.meta} m WHERE m.payment_id = p.id AND m.meta_key = 'agreement_id' LIMIT 1),
                 (SELECT a.external_id FROM ${this.t.agreements} a WHERE a.id = p.agreement_id)) AS agreement_external_id,
        (p.order_id IS NOT NULL AND EXISTS (SELECT 1 FROM ${this.t.retries} r WHERE r.order_id = p.order_id AND r.status IN ('PENDING', 'PROCESSING'))) AS retry_planned
      FROM ${this.t.payments} p WHERE ${where}`;
  }

  private toPayment(row: RowDataPacket): PaymentTarget {
    return {
      id: Number(row.id), provider: row.provider, externalId: row.external_id, status: row.status,
      orderId: row.order_id === null ? null : Number(row.order_id),
      agreementExternalId: row.agreement_external_id || null,
      retryPlanned: Number(row.retry_planned) === 1,
      updatedAt: parseGmtDateTime(row.updated_at)!,
    };
  }

  private toAgreement(row: RowDataPacket): AgreementTarget {
    return {
      id: Number(row.id), provider: row.provider, externalId: row.external_id, status: row.status,
      customerHandle: row.customer_handle, updatedAt: parseGmtDateTime(row.updated_at)!,
    };
  }

  async payment(id: number): Promise<PaymentTarget | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.paymentSelect('p.id = ?'), [id]);
    return rows.length ? this.toPayment(rows[0]) : null;
  }

  async agreement(id: number): Promise<AgreementTarget | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.agreements} WHERE id = ?`, [id]);
    return rows.length ? this.toAgreement(rows[0]) : null;
  }

  /** Payments changed after (`since`, `afterId`) in the order of their change, through the `updated_at` index. */
  async changedPayments(since: string, afterId: number, limit: number): Promise<PaymentTarget[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `${this.paymentSelect('(p.updated_at > ? OR (p.updated_at = ? AND p.id > ?))')} ORDER BY p.updated_at, p.id LIMIT ?`, [since, since, afterId, limit]);
    return rows.map((row) => this.toPayment(row));
  }

  async changedAgreements(since: string, afterId: number, limit: number): Promise<AgreementTarget[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.t.agreements} WHERE (updated_at > ? OR (updated_at = ? AND id > ?)) ORDER BY updated_at, id LIMIT ?`, [since, since, afterId, limit]);
    return rows.map((row) => this.toAgreement(row));
  }

  /** Every open payment (of one order, or all): for the operator's `reconcile`. */
  async openPayments(orderId?: number): Promise<PaymentTarget[]> {
    const open = `(p.status IS NULL OR p.status IN ('AUTHORIZED', 'FAILED'))`;
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `${this.paymentSelect(orderId === undefined ? open : `p.order_id = ? AND ${open}`)} ORDER BY p.id`, orderId === undefined ? [] : [orderId]);
    return rows.map((row) => this.toPayment(row)).filter((payment) => paymentIsOpen(payment.status, payment.retryPlanned));
  }

  /** Every open agreement, or those an order's payments were made on or its subscription has. */
  async openAgreements(scope?: { orderId: number; subscriptionId: number | null; walletAgreement: string | null }): Promise<AgreementTarget[]> {
    if (!scope) {
      const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.agreements} WHERE status IN ('PENDING', 'ACTIVE') ORDER BY id`);
      return rows.map((row) => this.toAgreement(row));
    }
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.t.agreements} WHERE status IN ('PENDING', 'ACTIVE') AND (
         id IN (SELECT agreement_id FROM ${this.t.payments} WHERE order_id = ? AND agreement_id IS NOT NULL)
         OR (? IS NOT NULL AND subscription_id = ?)
         OR (provider = 'mobile_wallet' AND external_id = ?)) ORDER BY id`,
      [scope.orderId, scope.subscriptionId, scope.subscriptionId, scope.walletAgreement ?? '']);
    return rows.map((row) => this.toAgreement(row));
  }

  /**
   * WooCommerce orders awaiting the card gateway's answer: pending or on hold, paid with one of its gateways (or
   * carrying its `_reepay_order` handle), with no payment recorded yet; created since `createdSince` (null: any
   * time), newest first. Read from the authoritative store through its type/status/date index.
   */
  async ordersAwaitingGateway(settings: ShopSettings, createdSince: Date | null, limit: number, orderId?: number): Promise<OrderCandidate[]> {
    const statuses = AWAITING_STATUSES.map((status) => `wc-${status}`);
    const method = `${CARD_GATEWAY_METHOD_PREFIX}%`;
    const sinceGmt = createdSince ? gmtDateTime(createdSince) : '0000-00-00 00:00:00';
    // post_date is local time (the index's column): a day earlier covers any zone; post_date_gmt then decides.
    const sinceLocal = createdSince ? gmtDateTime(new Date(createdSince.getTime() - 86_400_000)) : '0000-00-00 00:00:00';
    const noPayment = (column: string) => `NOT EXISTS (SELECT 1 FROM ${this.t.payments} y WHERE y.order_id = ${column})`;
    const [sql, values] = settings.hpos
      ? [`SELECT o.id, COALESCE(o.date_updated_gmt, o.date_created_gmt) AS modified FROM ${this.t.orders} o
          WHERE o.type = 'shop_order' AND o.status IN (?) AND o.date_created_gmt >= ? ${orderId === undefined ? '' : 'AND o.id = ?'}
            AND (o.payment_method LIKE ? OR EXISTS (SELECT 1 FROM ${this.t.ordersMeta} m WHERE m.order_id = o.id AND m.meta_key = '_reepay_order'))
            AND ${noPayment('o.id')}
          ORDER BY o.date_created_gmt DESC LIMIT ?`,
      [statuses, sinceGmt, ...(orderId === undefined ? [] : [orderId]), method, limit]]
      : [`SELECT p.ID AS id, p.post_modified_gmt AS modified FROM ${this.t.posts} p
          WHERE p.post_type = 'shop_order' AND p.post_status IN (?) AND p.post_date >= ? AND p.post_date_gmt >= ? ${orderId === undefined ? '' : 'AND p.ID = ?'}
            AND EXISTS (SELECT 1 FROM ${this.t.postmeta} m WHERE m.post_id = p.ID
              AND ((m.meta_key = '_payment_method' AND m.meta_value LIKE ?) OR m.meta_key = '_reepay_order'))
            AND ${noPayment('p.ID')}
          ORDER BY p.post_date DESC LIMIT ?`,
      [statuses, sinceLocal, sinceGmt, ...(orderId === undefined ? [] : [orderId]), method, limit]];
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({ id: Number(row.id), modifiedAt: parseGmtDateTime(row.modified) ?? new Date(0) }));
  }

  async orderHasPayment(orderId: number): Promise<boolean> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT 1 FROM ${this.t.payments} WHERE order_id = ? LIMIT 1`, [orderId]);
    return rows.length > 0;
  }

  // ------------------------------------------------------------------------------------------------------------
  // The schedule: what is open, when it is asked about next

  async watermark(name: string): Promise<{ at: string; id: number } | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT value FROM ${this.t.state} WHERE name = ?`, [name]);
    if (!rows.length) return null;
    const [at, id] = String(rows[0].value).split('|');
    return { at, id: Number(id) || 0 };
  }

  /** Moves the mark forward only (two workers may look at once). */
  async advanceWatermark(name: string, mark: { at: string; id: number }, now: Date): Promise<void> {
    const value = `${mark.at}|${mark.id}`;
    await this.pool.query(
      `INSERT INTO ${this.t.state} (name, value, updated_at) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE updated_at = IF(VALUES(value) > value, VALUES(updated_at), updated_at), value = GREATEST(value, VALUES(value))`,
      [name, value, gmtDateTimeMs(now)]);
  }

  /**
   * The item is open since `openedAt` and first asked about at `nextAt`. An item already known keeps its
   * schedule unless it opened (changed) later than the item's own opening, which starts the schedule again.
   */
  async open(kind: ReconcileKind, refId: number, provider: Provider, openedAt: Date, nextAt: Date | null, now: Date): Promise<void> {
    const opened = gmtDateTimeMs(openedAt);
    // MariaDB assigns left to right, each seeing the ones before: opened_at goes last.
    const later = 'VALUES(opened_at) > opened_at';
    await this.pool.query(
      `INSERT INTO ${this.t.items} (kind, ref_id, provider, status, opened_at, next_at, checks, failures, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?)
       ON DUPLICATE KEY UPDATE
         status = IF(${later}, VALUES(status), status), next_at = IF(${later}, VALUES(next_at), next_at),
         checks = IF(${later}, 0, checks), failures = IF(${later}, 0, failures), updated_at = IF(${later}, VALUES(updated_at), updated_at),
         opened_at = GREATEST(opened_at, VALUES(opened_at))`,
      [kind, refId, provider, nextAt ? 'OPEN' : 'EXPIRED', opened, nextAt ? gmtDateTimeMs(nextAt) : null, gmtDateTimeMs(now), gmtDateTimeMs(now)]);
  }

  /** Items of these refs that are open no longer (their payment or agreement became final). */
  async closeRefs(kind: ReconcileKind, refIds: number[], now: Date): Promise<void> {
    if (!refIds.length) return;
    await this.pool.query(`UPDATE ${this.t.items} SET status = 'CLOSED', next_at = NULL, updated_at = ? WHERE kind = ? AND ref_id IN (?) AND status <> 'CLOSED'`,
      [gmtDateTimeMs(now), kind, refIds]);
  }

  /** Which of these refs already have an item (of any status). */
  async knownRefs(kind: ReconcileKind, refIds: number[]): Promise<Set<number>> {
    if (!refIds.length) return new Set();
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT ref_id FROM ${this.t.items} WHERE kind = ? AND ref_id IN (?)`, [kind, refIds]);
    return new Set(rows.map((row) => Number(row.ref_id)));
  }

  /** Items due now for these providers, soonest first: a range scan of the `next_at` index. */
  async due(now: Date, providers: Provider[], limit: number): Promise<ReconcileItemRecord[]> {
    if (!providers.length) return [];
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.t.items} WHERE next_at <= ? AND provider IN (?) ORDER BY next_at LIMIT ?`, [gmtDateTimeMs(now), providers, limit]);
    return rows.map(toItem);
  }

  /** Takes a due item for this pass (another worker's pass then skips it); it is due again at `leaseUntil` if this one dies. */
  async claim(item: ReconcileItemRecord, leaseUntil: Date, now: Date): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE ${this.t.items} SET next_at = ?, updated_at = ? WHERE id = ? AND next_at = ?`, [gmtDateTimeMs(leaseUntil), gmtDateTimeMs(now), item.id, item.nextAt]);
    return result.affectedRows === 1;
  }

  /** What a check came to: the item's next time (null with its final status), and what the provider said. */
  async checked(id: number, fields: { status: ReconcileItemStatus; nextAt: Date | null; checks: number; failures: number; state: string | null; error: string | null }, now: Date): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.t.items} SET status = ?, next_at = ?, checks = ?, failures = ?, last_checked_at = ?, last_state = ?, last_error = ?, updated_at = ? WHERE id = ?`,
      [fields.status, fields.nextAt ? gmtDateTimeMs(fields.nextAt) : null, fields.checks, fields.failures, gmtDateTimeMs(now),
        fields.state?.slice(0, 64) ?? null, fields.error?.slice(0, 255) ?? null, gmtDateTimeMs(now), id]);
  }

  async item(kind: ReconcileKind, refId: number): Promise<(ReconcileItemRecord & { lastState: string | null; lastError: string | null }) | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.items} WHERE kind = ? AND ref_id = ?`, [kind, refId]);
    return rows.length ? { ...toItem(rows[0]), lastState: rows[0].last_state, lastError: rows[0].last_error } : null;
  }

  // ------------------------------------------------------------------------------------------------------------
  // Totals for /metrics

  async count(rows: { provider: string; kind: string; outcome: string; count: number }[]): Promise<void> {
    const nonZero = rows.filter((row) => row.count > 0);
    if (!nonZero.length) return;
    await this.pool.query(
      `INSERT INTO ${this.t.counts} (provider, kind, outcome, count) VALUES ${nonZero.map(() => '(?, ?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE count = count + VALUES(count)`,
      nonZero.flatMap((row) => [row.provider, row.kind, row.outcome, row.count]));
  }

  async metrics(now: Date): Promise<ReconcileMetrics> {
    const [counts] = await this.pool.query<RowDataPacket[]>(`SELECT provider, kind, outcome, count FROM ${this.t.counts}`);
    const [open] = await this.pool.query<RowDataPacket[]>(`SELECT provider, kind, COUNT(*) AS n, MIN(opened_at) AS oldest FROM ${this.t.items} WHERE status = 'OPEN' GROUP BY provider, kind`);
    const oldest = open.map((row) => parseGmtDateTime(row.oldest)?.getTime() ?? now.getTime()).reduce((a, b) => Math.min(a, b), now.getTime());
    return {
      counts: counts.map((row) => ({ provider: String(row.provider), kind: String(row.kind), outcome: String(row.outcome), count: Number(row.count) })),
      open: open.map((row) => ({ provider: String(row.provider), kind: String(row.kind), count: Number(row.n) })),
      oldestOpenSeconds: Math.max(0, Math.round((now.getTime() - oldest) / 1000)),
    };
  }
}
