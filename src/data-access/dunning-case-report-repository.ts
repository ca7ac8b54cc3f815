import type { DataSource, SelectQueryBuilder } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { DunningCase } from '../../entities';
import { rawPool } from './data-source';
import { inOneRoundTrip, PreparedStatement, slots, sqlNames, type Bindable } from './prepared-statement';
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
  /** Cases in the holdout's baseline arm. */
  baseline: number;
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
  /** Cases by provider, and the recovered of them. */
  byProvider: { provider: string; failed: number; recovered: number }[];
  recoveries: DunningRecoveryGroup[];
  /** How long each recovered case took from its first failure to its payment, in milliseconds, shortest first. */
  recoveryDurationsMs: number[];
  /** Each recovered case (shortest first, as recoveryDurationsMs): its groups, charges and duration, for the figures per group. */
  recoveredCases: RecoveredCase[];
  /** The sums behind the recovered share of each holdout arm with cases counted in it (see ArmShareSums). */
  armShares: ArmShareSums[];
}

/** A recovered case, for attempts per recovery and days to recover by provider, reason and means. */
export interface RecoveredCase {
  provider: string;
  reason: string;
  means: string;
  attempts: number;
  ms: number;
}

/** Days after each failure within which a payment counts as recovered for the recovered share (CONTRACT `window_days`). */
export const SHARE_WINDOW_DAYS = 28;

/**
 * One arm's sums over the cases counted in its recovered share: each case's failed amount w (the renewal's total,
 * minor units) and what was recovered of it within SHARE_WINDOW_DAYS of the failure, r (at most w; 0 for a case
 * lost, cancelled during dunning or paid later). A case opened less than the window before the end of the period
 * that is still OPEN is not counted (its outcome is not known yet); one already RECOVERED or LOST is.
 * The share is R / W; the products are what its variance needs (src/dunning/recovered-share.ts).
 */
export interface ArmShareSums {
  arm: string;
  n: number;
  w: number;
  r: number;
  ww: number;
  wr: number;
  rr: number;
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
/** Counted in the recovered share: the case's outcome within the window is known (ArmShareSums). */
const SHARE_COUNTED = `(c.status <> 'OPEN' OR c.openedAt < DATE_SUB(:until, INTERVAL ${SHARE_WINDOW_DAYS} DAY))`;
/** What a case brought back within the window, in minor units, at most its failed amount. */
const RECOVERED_IN_WINDOW = `(CASE WHEN c.status = 'RECOVERED' AND c.closedAt <= DATE_ADD(c.openedAt, INTERVAL ${SHARE_WINDOW_DAYS} DAY)
  THEN LEAST(${RECOVERED_AMOUNT}, c.amountMinor) ELSE 0 END)`;
/** The bounds of DATETIME: an open end of a range of `opened_at`. */
const EARLIEST = '1000-01-01 00:00:00.000';
const LATEST = '9999-12-31 23:59:59.999';
/** Cases read per round trip when counting. */
const COUNTS_PAGE = 5000;

/**
 * Reads `sidecar_dunning_cases` for `payment-hub dunning report` and the dunning metrics. The report counts
 * the cases opened in a period, found through the `opened_at` index; each figure is one GROUP BY, and the
 * four statements go in one round trip. Only the median reads rows one by one: the recovered cases' durations.
 */
export class DunningCaseReportRepository {
  private readonly pool: Pool;
  private readonly period: Bindable<'since' | 'until'>;
  private readonly counts: Bindable<'from' | 'afterId' | 'until'>;
  private readonly oldestOpen: PreparedStatement<never>;
  private readonly shares: PreparedStatement<'since' | 'until'>;

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
      .addSelect("COALESCE(SUM(c.arm = 'baseline'), 0)", 'baseline')
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
      .addSelect('c.provider', 'provider').addSelect('c.firstReason', 'reason').addSelect('c.recoveredBy', 'means').addSelect('c.attempts', 'attempts')
      .where(IN_PERIOD).andWhere("c.status = 'RECOVERED' AND c.closedAt IS NOT NULL").orderBy('ms').setParameters(s);
    const byProvider = query()
      .select('c.provider', 'provider')
      .addSelect('COUNT(*)', 'failed')
      .addSelect("SUM(c.status = 'RECOVERED')", 'recovered')
      .where(IN_PERIOD).groupBy('c.provider').setParameters(s);
    const shares = this.shareQuery(query().where(IN_PERIOD).setParameters(s));
    this.period = inOneRoundTrip(
      PreparedStatement.from<'since' | 'until'>(totals),
      PreparedStatement.from<'since' | 'until'>(byReason),
      PreparedStatement.from<'since' | 'until'>(recoveries),
      PreparedStatement.from<'since' | 'until'>(durations),
      PreparedStatement.from<'since' | 'until'>(byProvider),
      PreparedStatement.from<'since' | 'until'>(shares),
    );
    this.shares = PreparedStatement.from<'since' | 'until'>(this.shareQuery(query().where(IN_PERIOD).setParameters(s)));
    // The cases themselves, a page at a time in the order of the opened_at index (its entries end with the id),
    // grouped by the caller: a GROUP BY over these five columns would need a temporary table and a sort. The
    // index is named: a page that covers most of a small table would otherwise be read by a scan and sorted.
    const cases = sqlNames(dataSource, DunningCase);
    const c = cases.column;
    this.counts = {
      sql: `SELECT ${c.id} AS id, ${c.openedAt} AS openedAt, ${c.provider} AS provider, ${c.firstReason} AS reason, ${c.status} AS status,
        ${c.recoveredBy} AS means, ${c.currency} AS currency, ${c.attempts} AS charges,
        CASE WHEN ${c.status} = 'RECOVERED' THEN COALESCE(${c.recoveredAmountMinor}, ${c.amountMinor}) ELSE 0 END AS recoveredMinor
        FROM ${cases.table} FORCE INDEX (${cases.indexOn('openedAt')})
        WHERE (${c.openedAt} > ? OR (${c.openedAt} = ? AND ${c.id} > ?)) AND ${c.openedAt} < ?
        ORDER BY ${c.openedAt}, ${c.id} LIMIT ${COUNTS_PAGE}`,
      with: ({ from, afterId, until }) => ({ sql: this.counts.sql, values: [from, from, afterId, until] }),
    };
    this.oldestOpen = PreparedStatement.from(query().select('MIN(c.openedAt)', 'openedAt').where("c.status = 'OPEN'"));
  }

  /** The figures of the cases opened in [since, until). */
  async figures(since: Date, until: Date): Promise<DunningPeriodFigures> {
    const { sql, values } = this.period.with({ since: gmtDateTimeMs(since), until: gmtDateTimeMs(until) });
    const [results] = await this.pool.query<RowDataPacket[][]>(sql, values);
    const [[totals], byReason, recoveries, durations, byProvider, shares] = results;
    return {
      totals: {
        failed: Number(totals.failed),
        recovered: Number(totals.recovered),
        lost: Number(totals.lost),
        open: Number(totals.open),
        recoveredCharges: Number(totals.recoveredCharges),
        lostSubscriptions: Number(totals.lostSubscriptions),
        baseline: Number(totals.baseline),
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
      byProvider: byProvider.map((row) => ({ provider: String(row.provider), failed: Number(row.failed), recovered: Number(row.recovered) })),
      recoveredCases: durations.map((row) => ({
        provider: String(row.provider), reason: String(row.reason), means: row.means === null ? 'unknown' : String(row.means), attempts: Number(row.attempts), ms: Math.max(0, Number(row.ms)),
      })),
      armShares: shares.map(toArmShareSums),
    };
  }

  /** The recovered share's sums of each holdout arm over the cases opened in [since, until) (the metrics' 28-day window). */
  async armShares(since: Date, until: Date): Promise<ArmShareSums[]> {
    const { sql, values } = this.shares.with({ since: gmtDateTimeMs(since), until: gmtDateTimeMs(until) });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toArmShareSums);
  }

  /** ArmShareSums of the cases `where` selects, by arm. */
  private shareQuery(where: SelectQueryBuilder<DunningCase>): SelectQueryBuilder<DunningCase> {
    const w = 'c.amountMinor';
    const r = RECOVERED_IN_WINDOW;
    return where
      .select('c.arm', 'arm')
      .addSelect('COUNT(*)', 'n')
      .addSelect(`SUM(${w})`, 'w')
      .addSelect(`SUM(${r})`, 'r')
      .addSelect(`SUM(${w} * ${w})`, 'ww')
      .addSelect(`SUM(${w} * ${r})`, 'wr')
      .addSelect(`SUM(${r} * ${r})`, 'rr')
      .andWhere(SHARE_COUNTED).groupBy('c.arm').orderBy('c.arm');
  }

  /**
   * The cases opened in [from, until) (each bound open when null), grouped by provider, reason, status, means
   * and currency: what the dunning counters count (see DunningCounts, which asks for the recent ones only).
   */
  async countsOpenedIn(from: Date | null, until: Date | null): Promise<DunningCaseCount[]> {
    const groups = new Map<string, DunningCaseCount>();
    let after = { openedAt: from ? gmtDateTimeMs(from) : EARLIEST, id: 0 };
    // The lower end is inclusive: the first page starts just before it.
    let first = true;
    for (;;) {
      const { sql, values } = this.counts.with({ from: after.openedAt, afterId: first ? -1 : after.id, until: until ? gmtDateTimeMs(until) : LATEST });
      const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
      for (const row of rows) {
        const group = { provider: String(row.provider), reason: String(row.reason), status: String(row.status), means: row.means === null ? null : String(row.means), currency: String(row.currency) };
        const key = JSON.stringify(Object.values(group));
        const counted = groups.get(key) ?? { ...group, count: 0, charges: 0, recoveredMinor: 0 };
        counted.count += 1;
        counted.charges += Number(row.charges);
        counted.recoveredMinor += Number(row.recoveredMinor);
        groups.set(key, counted);
      }
      if (rows.length < COUNTS_PAGE) return [...groups.values()];
      const last = rows[rows.length - 1]!;
      after = { openedAt: String(last.openedAt), id: Number(last.id) };
      first = false;
    }
  }

  /** When the oldest case still OPEN was opened (the OPEN ones found through the status_deadline index); null when none is. */
  async oldestOpenOpenedAt(): Promise<Date | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.oldestOpen.sql);
    return parseGmtDateTime(rows[0]?.openedAt ?? null);
  }
}

const toArmShareSums = (row: RowDataPacket): ArmShareSums => ({
  arm: String(row.arm), n: Number(row.n), w: Number(row.w), r: Number(row.r), ww: Number(row.ww), wr: Number(row.wr), rr: Number(row.rr),
});
