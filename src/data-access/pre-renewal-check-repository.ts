import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Agreement, PreRenewalCheck } from '../../entities';
import { rawPool } from './data-source';
import { sqlNames } from './prepared-statement';
import type { Executor } from './transaction';
import { gmtDateTime, gmtDateTimeMs } from '../shop/shop-time';

/** A renewal whose customer was asked for another payment method before it (a row of `sidecar_pre_renewal_checks`). */
export interface AskedRenewal {
  subscriptionId: number;
  /** The renewal (the subscription's `_schedule_next_payment` when the customer was asked). */
  nextPayment: Date;
  provider: string;
  paymentMethod: string;
  finding: string;
  fixedAt: Date | null;
}

/** The rows of the check before the renewal: one per subscription and renewal asked about, and whether it was fixed. */
export class PreRenewalCheckRepository {
  readonly pool: Pool;
  private readonly recordSql: string;
  private readonly askedSql: string;
  private readonly fixedSql: string;
  private readonly lostSql: string;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const { table, column: c } = sqlNames(dataSource, PreRenewalCheck);
    this.recordSql = `INSERT IGNORE INTO ${table} (${c.subscriptionId}, ${c.nextPayment}, ${c.provider}, ${c.paymentMethod}, ${c.finding}, ${c.askedAt})
      VALUES (?, ?, ?, ?, ?, ?)`;
    this.askedSql = `SELECT ${c.subscriptionId} AS subscriptionId, ${c.nextPayment} AS nextPayment, ${c.provider} AS provider,
      ${c.paymentMethod} AS paymentMethod, ${c.finding} AS finding, ${c.fixedAt} AS fixedAt FROM ${table} WHERE ${c.subscriptionId} IN (?)`;
    const agreements = sqlNames(dataSource, Agreement);
    // Along the agreements' updated_at index: the rows changed since, few between two passes.
    this.lostSql = `SELECT 1 FROM ${agreements.table} WHERE ${agreements.column.updatedAt} > ? AND ${agreements.column.status} = 'DISABLED' LIMIT 1`;
    this.fixedSql = `UPDATE ${table} SET ${c.fixedAt} = ?, ${c.fixedMethod} = ? WHERE ${c.subscriptionId} = ? AND ${c.nextPayment} = ? AND ${c.fixedAt} IS NULL`;
  }

  /** Whether a card or wallet agreement was disabled (failed, deleted, stopped, expired) after `since`. */
  async methodLostSince(since: Date): Promise<boolean> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.lostSql, [gmtDateTimeMs(since)]);
    return rows.length > 0;
  }

  /** The renewals of these subscriptions whose customers were asked, keyed `subscriptionId@nextPayment`. */
  async asked(subscriptionIds: number[]): Promise<Map<string, AskedRenewal>> {
    const found = new Map<string, AskedRenewal>();
    if (!subscriptionIds.length) return found;
    const [rows] = await this.pool.query<RowDataPacket[]>(this.askedSql, [subscriptionIds]);
    for (const row of rows) {
      const asked: AskedRenewal = {
        subscriptionId: Number(row.subscriptionId), nextPayment: parseStored(row.nextPayment)!, provider: String(row.provider),
        paymentMethod: String(row.paymentMethod), finding: String(row.finding), fixedAt: parseStored(row.fixedAt),
      };
      found.set(renewalKey(asked.subscriptionId, asked.nextPayment), asked);
    }
    return found;
  }

  /** Remembers that the customer was asked about this renewal; false when they were before (the primary key). */
  async record(db: Executor, row: { subscriptionId: number; nextPayment: Date; provider: string; paymentMethod: string; finding: string }, now: Date): Promise<boolean> {
    const [result] = await db.query<ResultSetHeader>(this.recordSql, [row.subscriptionId, gmtDateTime(row.nextPayment), row.provider, row.paymentMethod, row.finding, gmtDateTimeMs(now)]);
    return result.affectedRows > 0;
  }

  /** The subscription names a payment method that works before the renewal: the notice saved it. */
  async markFixed(subscriptionId: number, nextPayment: Date, method: string, now: Date): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(this.fixedSql, [gmtDateTimeMs(now), method, subscriptionId, gmtDateTime(nextPayment)]);
    return result.affectedRows > 0;
  }
}

/** One renewal of one subscription. */
export function renewalKey(subscriptionId: number, nextPayment: Date): string {
  return `${subscriptionId}@${Math.floor(nextPayment.getTime() / 1000)}`;
}

/** A stored `datetime` (UTC). */
function parseStored(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const time = new Date(`${value.replace(' ', 'T')}Z`);
  return Number.isNaN(time.getTime()) ? null : time;
}
