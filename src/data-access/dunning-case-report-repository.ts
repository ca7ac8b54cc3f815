import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { DunningCase } from '../../entities';
import { rawPool } from './data-source';
import { inOneRoundTrip, PreparedStatement, slots, type Bindable } from './prepared-statement';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';

/** The period's cases, all of them: counted, recovered, charges of the recovered, lost subscriptions. */
export interface DunningPeriodTotals {
  failed: number;
  recovered: number;
  lost: number;
  open: number;
  /** Charges made for the recovered renewals, the first included. */
  recoveredCharges: number;
  lostSubscriptions: number;
}

/** Recovered cases and what they brought in, per means and currency (minor units). */
export interface DunningRecoveryGroup {
  means: string;
  currency: string;
  count: number;
  amountMinor: number;
}

export interface DunningPeriodFigures {
  totals: DunningPeriodTotals;
  byReason: { reason: string; failed: number; recovered: number }[];
  recoveries: DunningRecoveryGroup[];
  /** How long each recovered case took from its first failure to its payment, in milliseconds, shortest first. */
  recoveryDurationsMs: number[];
}

/** Cases by provider, first reason, status, means and currency: what the dunning counters count. */
export interface DunningCaseCount {
  provider: string;
  reason: string;
  status: string;
  /** `recovered_by`; null unless RECOVERED. */
  means: string | null;
  currency: string;
  count: number;
  /** Charges made for these renewals, the first included. */
  charges: number;
  /** What the RECOVERED ones brought in, minor units; 0 for the others. */
  recoveredMinor: number;
}

/** What a RECOVERED case brought in: the payment's amount, or the renewal's total when none was recorded. */
const RECOVERED_AMOUNT = 'COALESCE(c.recoveredAmountMinor, c.amountMinor)';
const IN_PERIOD = 'c.openedAt >= :since AND c.openedAt < :until';
/** The bounds of DATETIME: an open end of a range of `opened_at`. */
const EARLIEST = '1000-01-01 00:00:00.000';
const LATEST = '9999-12-31 23:59:59.999';

/**
 * Reads `sidecar_dunning_cases` for `payment-hub dunning report` and the dunning metrics. The report counts
 * the cases opened in a period, found through the `opened_at` index; each figure is one GROUP BY, and the
 * four statements go in one round trip. Only the median reads rows one by one: the recovered cases' durations.
 */
export class DunningCaseReportRepository {
  private readonly pool: Pool;
  private readonly period: Bindable<'since' | 'until'>;
  private readonly counts: PreparedStatement<'from' | 'until'>;
  private readonly oldestOpen: PreparedStatement<never>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder().from(DunningCase, 'c');
    const s = slots('since', 'until');
    const totals = query()
      .select('COUNT(*)', 'failed')
      .addSelect("COALESCE(SUM(c.status = 'RECOVERED'), 0)", 'recovered')
      .addSelect("COALESCE(SUM(c.status = 'LOST'), 0)", 'lost')
      .addSelect("COALESCE(SUM(c.status = 'OPEN'), 0)", 'open')
      .addSelect("COALESCE(SUM(CASE WHEN c.status = 'RECOVERED' THEN c.attempts END), 0)", 'recoveredCharges')
      .addSelect("COUNT(DISTINCT CASE WHEN c.status = 'LOST' THEN c.subscriptionId END)", 'lostSubscriptions')
      .where(IN_PERIOD).setParameters(s);
    const byReason = query()
      .select('c.firstReason', 'reason')
      .addSelect('COUNT(*)', 'failed')
      .addSelect("SUM(c.status = 'RECOVERED')", 'recovered')
      .where(IN_PERIOD).groupBy('c.firstReason').setParameters(s);
    const recoveries = query()
      .select('c.recoveredBy', 'means')
      .addSelect('c.currency', 'currency')
      .addSelect('COUNT(*)', 'n')
      .addSelect(`SUM(${RECOVERED_AMOUNT})`, 'amountMinor')
      .where(IN_PERIOD).andWhere("c.status = 'RECOVERED'").groupBy('c.recoveredBy').addGroupBy('c.currency').setParameters(s);
    const durations = query()
      .select('TIMESTAMPDIFF(MICROSECOND, c.openedAt, c.closedAt) DIV 1000', 'ms')
      .where(IN_PERIOD).andWhere("c.status = 'RECOVERED' AND c.closedAt IS NOT NULL").orderBy('ms').setParameters(s);
    this.period = inOneRoundTrip(
      PreparedStatement.from<'since' | 'until'>(totals),
      PreparedStatement.from<'since' | 'until'>(byReason),
      PreparedStatement.from<'since' | 'until'>(recoveries),
      PreparedStatement.from<'since' | 'until'>(durations),
    );
    this.counts = PreparedStatement.from(query()
      .select('c.provider', 'provider').addSelect('c.firstReason', 'reason').addSelect('c.status', 'status')
      .addSelect('c.recoveredBy', 'means').addSelect('c.currency', 'currency')
      .addSelect('COUNT(*)', 'n')
      .addSelect('SUM(c.attempts)', 'charges')
      .addSelect(`SUM(CASE WHEN c.status = 'RECOVERED' THEN ${RECOVERED_AMOUNT} ELSE 0 END)`, 'recoveredMinor')
      .where('c.openedAt >= :from AND c.openedAt < :until').setParameters(slots('from', 'until'))
      .groupBy('c.provider').addGroupBy('c.firstReason').addGroupBy('c.status').addGroupBy('c.recoveredBy').addGroupBy('c.currency'));
    this.oldestOpen = PreparedStatement.from(query().select('MIN(c.openedAt)', 'openedAt').where("c.status = 'OPEN'"));
  }

  /** The figures of the cases opened in [since, until). */
  async figures(since: Date, until: Date): Promise<DunningPeriodFigures> {
    const { sql, values } = this.period.with({ since: gmtDateTimeMs(since), until: gmtDateTimeMs(until) });
    const [results] = await this.pool.query<RowDataPacket[][]>(sql, values);
    const [[totals], byReason, recoveries, durations] = results;
    return {
      totals: {
        failed: Number(totals.failed),
        recovered: Number(totals.recovered),
        lost: Number(totals.lost),
        open: Number(totals.open),
        recoveredCharges: Number(totals.recoveredCharges),
        lostSubscriptions: Number(totals.lostSubscriptions),
      },
      byReason: byReason.map((row) => ({ reason: String(row.reason), failed: Number(row.failed), recovered: Number(row.recovered) })),
      recoveries: recoveries.map((row) => ({
        // A RECOVERED case always names its means; one that does not is shown as such rather than dropped.
        means: row.means === null ? 'unknown' : String(row.means),
        currency: String(row.currency),
        count: Number(row.n),
        amountMinor: Number(row.amountMinor),
      })),
      recoveryDurationsMs: durations.map((row) => Math.max(0, Number(row.ms))),
    };
  }

  /**
   * The cases opened in [from, until) (each bound open when null), grouped by provider, reason, status, means
   * and currency: what the dunning counters count (see DunningCounts, which asks for the recent ones only).
   */
  async countsOpenedIn(from: Date | null, until: Date | null): Promise<DunningCaseCount[]> {
    const { sql, values } = this.counts.with({ from: from ? gmtDateTimeMs(from) : EARLIEST, until: until ? gmtDateTimeMs(until) : LATEST });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({
      provider: String(row.provider),
      reason: String(row.reason),
      status: String(row.status),
      means: row.means === null ? null : String(row.means),
      currency: String(row.currency),
      count: Number(row.n),
      charges: Number(row.charges),
      recoveredMinor: Number(row.recoveredMinor),
    }));
  }

  /** When the oldest case still OPEN was opened (the OPEN ones found through the status_deadline index); null when none is. */
  async oldestOpenOpenedAt(): Promise<Date | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.oldestOpen.sql);
    return parseGmtDateTime(rows[0]?.openedAt ?? null);
  }
}
