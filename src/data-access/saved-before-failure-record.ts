import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { PreRenewalCheck } from '../../entities';
import { rawPool } from './data-source';
import { sqlNames } from './prepared-statement';
import type { SavedBeforeFailure } from '../dunning/dunning-report.use-case';
import { gmtDateTime } from '../shop/shop-time';

/**
 * `saved_before_failure` of `payment-hub dunning report`, from the pre-renewal check's record
 * (`sidecar_pre_renewal_checks`, src/dunning/pre-renewal-check.use-case.ts): the renewals due in the period whose
 * customer was asked before it for another payment method and whose subscription named one that works before it
 * was due (`fixed_at`). Counted by the renewal's due time, as the failed renewals are by when they failed.
 */
export class SavedBeforeFailureRecord implements SavedBeforeFailure {
  private readonly pool: Pool;
  private readonly sql: string;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const { table, column: c } = sqlNames(dataSource, PreRenewalCheck);
    this.sql = `SELECT COUNT(*) AS n FROM ${table} WHERE ${c.fixedAt} IS NOT NULL AND ${c.fixedAt} <= ${c.nextPayment}
      AND ${c.nextPayment} >= ? AND ${c.nextPayment} < ?`;
  }

  async countSaved(since: Date, until: Date): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.sql, [gmtDateTime(since), gmtDateTime(until)]);
    return Number(rows[0]?.n ?? 0);
  }
}
