import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { PaymentRetry, type PaymentRetryStatus } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { write, type Executor } from './transaction';
import { gmtDateTime } from '../shop/shop-time';

export interface RetryRecord {
  id: number;
  orderId: number;
  subscriptionId: number;
  paymentId: number;
  attempt: number;
  status: PaymentRetryStatus;
  scheduledAt: string;
  idempotencyKey: string;
  result: string | null;
}

const toRetry = (row: RowDataPacket): RetryRecord => ({
  id: Number(row.id),
  orderId: Number(row.order_id),
  subscriptionId: Number(row.subscription_id),
  paymentId: Number(row.payment_id),
  attempt: Number(row.attempt),
  status: row.status,
  scheduledAt: row.scheduled_at,
  idempotencyKey: row.idempotency_key,
  result: row.result,
});

export type ScheduleOutcome = { kind: 'scheduled'; retry: RetryRecord } | { kind: 'already_scheduled' } | { kind: 'plan_used_up' };

/** The dunning plan's attempts, one row per attempt per renewal order. */
export class RetryRepository {
  readonly pool: Pool;
  private readonly table: string;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.table = tableOf(dataSource, PaymentRetry);
  }

  /**
   * Plans the order's next attempt after `planSeconds[n]`, n being the attempts planned so far.
   * The unique (order, attempt) key keeps two deliveries of one failure from planning two attempts.
   */
  async scheduleNext(db: Executor, input: { orderId: number; subscriptionId: number; paymentId: number; planSeconds: number[]; now: Date }): Promise<ScheduleOutcome> {
    const [rows] = await db.query<RowDataPacket[]>(`SELECT attempt, status FROM ${this.table} WHERE order_id = ? FOR UPDATE`, [input.orderId]);
    if (rows.some((row) => row.status === 'PENDING' || row.status === 'PROCESSING')) return { kind: 'already_scheduled' };
    const planned = rows.length;
    if (planned >= input.planSeconds.length) return { kind: 'plan_used_up' };
    const attempt = planned + 1;
    const scheduledAt = gmtDateTime(new Date(input.now.getTime() + input.planSeconds[planned] * 1000));
    const key = `retry-${input.orderId}-${attempt}`;
    const [result] = await db.query<ResultSetHeader>(
      `INSERT IGNORE INTO ${this.table} (order_id, subscription_id, payment_id, attempt, status, scheduled_at, idempotency_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'PENDING', ?, ?, ?, ?)`,
      [input.orderId, input.subscriptionId, input.paymentId, attempt, scheduledAt, key, gmtDateTime(input.now), gmtDateTime(input.now)],
    );
    if (!result.affectedRows) return { kind: 'already_scheduled' };
    return { kind: 'scheduled', retry: (await this.find(result.insertId, db))! };
  }

  /** Takes the due attempts (PENDING → PROCESSING), each by one worker only. */
  async claimDue(now: Date, limit: number): Promise<RetryRecord[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.table} WHERE status = 'PENDING' AND scheduled_at <= ? ORDER BY scheduled_at LIMIT ?`, [gmtDateTime(now), limit]);
    const claimed: RetryRecord[] = [];
    for (const row of rows) {
      const [result] = await this.pool.query<ResultSetHeader>(
        `UPDATE ${this.table} SET status = 'PROCESSING', updated_at = ? WHERE id = ? AND status = 'PENDING'`, [gmtDateTime(now), row.id]);
      // The row read above is the claimed attempt: what identifies it (order, payment, attempt, key) never changes.
      if (result.affectedRows) claimed.push({ ...toRetry(row), status: 'PROCESSING' });
    }
    return claimed;
  }

  async finish(db: Executor, id: number, status: Exclude<PaymentRetryStatus, 'PENDING' | 'PROCESSING'>, result: string, now: Date): Promise<void> {
    await write(db, `UPDATE ${this.table} SET status = ?, result = ?, updated_at = ? WHERE id = ?`, [status, result.slice(0, 255), gmtDateTime(now), id]);
  }

  /** The provider could not be reached: the same attempt (same idempotency key) runs again later. */
  async postpone(id: number, until: Date, result: string, now: Date): Promise<void> {
    await this.pool.query(`UPDATE ${this.table} SET status = 'PENDING', scheduled_at = ?, result = ?, updated_at = ? WHERE id = ?`,
      [gmtDateTime(until), result.slice(0, 255), gmtDateTime(now), id]);
  }

  /** Attempts that were taken but whose worker died before finishing go back to PENDING. */
  async releaseStale(olderThanSeconds: number, now: Date): Promise<number> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE ${this.table} SET status = 'PENDING' WHERE status = 'PROCESSING' AND updated_at < ?`,
      [gmtDateTime(new Date(now.getTime() - olderThanSeconds * 1000))]);
    return result.affectedRows;
  }

  /** Whether a dunning attempt of `orderId` has `key` as its idempotency key. */
  /** How many dunning attempts are in each status, for the metrics; covered by the status_scheduled index. */
  async countsByStatus(): Promise<{ status: string; count: number }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT status, COUNT(*) AS n FROM ${this.table} GROUP BY status`);
    return rows.map((row) => ({ status: String(row.status), count: Number(row.n) }));
  }

  async hasKey(orderId: number, key: string): Promise<boolean> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT 1 FROM ${this.table} WHERE order_id = ? AND idempotency_key = ? LIMIT 1`, [orderId, key]);
    return rows.length > 0;
  }

  async find(id: number, db: Executor = this.pool): Promise<RetryRecord | null> {
    const [rows] = await db.query<RowDataPacket[]>(`SELECT * FROM ${this.table} WHERE id = ?`, [id]);
    return rows.length ? toRetry(rows[0]) : null;
  }

  async list(filter: { status?: PaymentRetryStatus; orderId?: number } = {}): Promise<RetryRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.status) { where.push('status = ?'); values.push(filter.status); }
    if (filter.orderId) { where.push('order_id = ?'); values.push(filter.orderId); }
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY scheduled_at, id`, values);
    return rows.map(toRetry);
  }
}
