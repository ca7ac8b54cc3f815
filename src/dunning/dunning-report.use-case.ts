import type { RecoveryMeans } from '../../entities';
import type { DunningCaseReportRepository, DunningPeriodFigures } from '../data-access/dunning-case-report-repository';
import { minorUnitsToDecimal } from '../shop/money';

/** The means a failed renewal can be won back by, in the order the report lists them (each always present). */
export const RECOVERY_MEANS: RecoveryMeans[] = ['service_retry', 'staff_charge', 'new_payment_method', 'provider_retry', 'shop_payment', 'reconciliation'];

/** How far back the report looks when no start is given. */
export const DEFAULT_REPORT_DAYS = 30;

const DAY_MS = 86_400_000;

/** Currency code → the amount in its major unit as a decimal string (`{"DKK": "1234.50"}`). */
export type AmountByCurrency = Record<string, string>;

/** What `payment-hub dunning report --json` prints (CONTRACT "Commands"). */
export interface DunningReportDocument {
  /** The period, ISO 8601 in UTC: the cases opened at or after `since` and before `until`. */
  since: string;
  until: string;
  /** Renewal orders whose payment failed in the period (a case each). */
  failed_renewals: number;
  /** Those paid since, and what was taken for them. */
  recovered: { count: number; amount: AmountByCurrency };
  /** By the first decline's reason (the card gateway's `error_state`, the wallet's `failureReason`, or `unknown`). */
  by_reason: Record<string, { failed: number; recovered: number }>;
  /** By what won the renewal back. */
  by_means: Record<string, { count: number; amount: AmountByCurrency }>;
  /** From the first failure to the payment, the median over the recovered cases, in days with one decimal; null when none. */
  median_days_to_recover: number | null;
  /** Subscriptions whose renewal dunning ended unpaid. */
  lost_subscriptions: number;
  /** Charges per recovered renewal, the first failed one included, with two decimals; null when none. */
  attempts_per_recovery: number | null;
}

export interface DunningReport {
  document: DunningReportDocument;
  /** Cases of the period still in dunning (neither paid nor lost yet): for the text form, not part of the JSON. */
  stillOpen: number;
  /** Lost cases (renewals), beside `lost_subscriptions`: for the text form. */
  lostRenewals: number;
}

/**
 * What dunning won back: the cases (sidecar_dunning_cases) opened in [since, until), counted by the
 * repository's GROUP BYs, put in the shape CONTRACT gives `payment-hub dunning report`. Amounts are summed
 * per currency in minor units and written with that currency's decimals; currencies are never added together.
 */
export class ReportDunning {
  constructor(private readonly cases: DunningCaseReportRepository, private readonly clock: () => Date = () => new Date()) {}

  async execute(options: { since?: Date } = {}): Promise<DunningReport> {
    const until = this.clock();
    const since = options.since ?? new Date(until.getTime() - DEFAULT_REPORT_DAYS * DAY_MS);
    const figures = await this.cases.figures(since, until);
    return {
      document: reportDocument(since, until, figures),
      stillOpen: figures.totals.open,
      lostRenewals: figures.totals.lost,
    };
  }
}

/** The report from the repository's figures (pure, so it can be checked without a database). */
export function reportDocument(since: Date, until: Date, figures: DunningPeriodFigures): DunningReportDocument {
  const amountMinor = new Map<string, number>();
  const byMeans = new Map<string, { count: number; amountMinor: Map<string, number> }>(
    RECOVERY_MEANS.map((means) => [means, { count: 0, amountMinor: new Map() }]),
  );
  for (const group of figures.recoveries) {
    add(amountMinor, group.currency, group.amountMinor);
    const means = byMeans.get(group.means) ?? byMeans.set(group.means, { count: 0, amountMinor: new Map() }).get(group.means)!;
    means.count += group.count;
    add(means.amountMinor, group.currency, group.amountMinor);
  }
  const byReason = [...figures.byReason].sort((a, b) => b.failed - a.failed || a.reason.localeCompare(b.reason));
  const { totals } = figures;
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    failed_renewals: totals.failed,
    recovered: { count: totals.recovered, amount: decimals(amountMinor) },
    by_reason: Object.fromEntries(byReason.map((row) => [row.reason, { failed: row.failed, recovered: row.recovered }])),
    by_means: Object.fromEntries([...byMeans].map(([means, value]) => [means, { count: value.count, amount: decimals(value.amountMinor) }])),
    median_days_to_recover: figures.recoveryDurationsMs.length ? round(median([...figures.recoveryDurationsMs].sort((a, b) => a - b)) / DAY_MS, 1) : null,
    lost_subscriptions: totals.lostSubscriptions,
    attempts_per_recovery: totals.recovered ? round(totals.recoveredCharges / totals.recovered, 2) : null,
  };
}

function add(sums: Map<string, number>, currency: string, minor: number): void {
  sums.set(currency, (sums.get(currency) ?? 0) + minor);
}

/** Each currency's sum as a decimal string, currencies in alphabetical order. */
function decimals(sums: Map<string, number>): AmountByCurrency {
  return Object.fromEntries([...sums.keys()].sort().map((currency) => [currency, minorUnitsToDecimal(sums.get(currency)!, currency)]));
}

/** The middle value of numbers sorted ascending (the mean of the two middle ones for an even count). */
export function median(sorted: number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Rounded half away from zero to `digits` decimals, as a number (`2.25` → `2.3`). */
export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round((value + Number.EPSILON) * scale) / scale;
}
