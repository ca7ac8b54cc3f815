import type { RecoveryMeans } from '../../entities';
import { SHARE_WINDOW_DAYS, type DunningCaseReportRepository, type DunningPeriodFigures, type RecoveredCase } from '../data-access/dunning-case-report-repository';
import { minorUnitsToDecimal } from '../shop/money';
import { addSums, armShare, shareDifference, shareText } from './recovered-share';

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
  by_reason: Record<string, { failed: number; recovered: number } & RecoveryPace>;
  /** By what won the renewal back. */
  by_means: Record<string, { count: number; amount: AmountByCurrency } & RecoveryPace>;
  /** From the first failure to the payment, the median over the recovered cases, in days with one decimal; null when none. */
  median_days_to_recover: number | null;
  /** Subscriptions whose renewal dunning ended unpaid. */
  lost_subscriptions: number;
  /** Charges per recovered renewal, the first failed one included, with two decimals; null when none. */
  attempts_per_recovery: number | null;
  /** The days after each failure within which a payment counts for `recovered_share` (28). */
  window_days: number;
  /**
   * The amount recovered within `window_days` of each failure over the amount that failed, a decimal string with 4
   * decimals (`"0.7312"`); a renewal lost or cancelled during dunning, or paid later, brought back 0. A renewal still in
   * dunning that failed less than `window_days` before `until` is not counted yet. Null when none is counted.
   */
  recovered_share: string | null;
  /** Renewals due in the period whose payment method was fixed after a pre-renewal notice, before they were due (see SavedBeforeFailure). */
  saved_before_failure: number;
  /** By provider: as `by_reason`. */
  by_provider: Record<string, { failed: number; recovered: number } & RecoveryPace>;
  /** Present when the holdout has members in the period: each arm's counted renewals and share. */
  arms?: { service: ArmFigures; baseline: ArmFigures };
  /** The service's share minus the baseline's (decimal string); with `arms`, null when an arm has no renewal counted. */
  difference?: string | null;
  /** The 95% interval of `difference` [low, high] (decimal strings, normal approximation); with `arms`, null when an arm has fewer than 2. */
  interval?: [string, string] | null;
}

/** How recoveries went in a group: charges per recovery (2 decimals) and the median days from failure to payment (1 decimal); null when none. */
export interface RecoveryPace {
  attempts_per_recovery: number | null;
  median_days_to_recover: number | null;
}

/** One holdout arm in the report: the renewals counted in its share, and the share. */
export interface ArmFigures {
  failed_renewals: number;
  recovered_share: string | null;
}

/**
 * Renewals saved before they failed: the customer fixed the payment method after the pre-renewal check's notice
 * (PRE_RENEWAL_CHECK_DAYS). The CLI counts them from the check's record (SavedBeforeFailureRecord,
 * `sidecar_pre_renewal_checks.fixed_at`); without a source the report counts NO_PRE_RENEWAL_RECORD's 0.
 */
export interface SavedBeforeFailure {
  countSaved(since: Date, until: Date): Promise<number>;
}

/** The source of `saved_before_failure` when no pre-renewal record is given: always 0. */
export const NO_PRE_RENEWAL_RECORD: SavedBeforeFailure = { countSaved: async () => 0 };

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
  constructor(
    private readonly cases: DunningCaseReportRepository,
    private readonly clock: () => Date = () => new Date(),
    private readonly saved: SavedBeforeFailure = NO_PRE_RENEWAL_RECORD,
  ) {}

  async execute(options: { since?: Date } = {}): Promise<DunningReport> {
    const until = this.clock();
    const since = options.since ?? new Date(until.getTime() - DEFAULT_REPORT_DAYS * DAY_MS);
    const [figures, saved] = await Promise.all([this.cases.figures(since, until), this.saved.countSaved(since, until)]);
    return {
      document: reportDocument(since, until, figures, saved),
      stillOpen: figures.totals.open,
      lostRenewals: figures.totals.lost,
    };
  }
}

/** The report from the repository's figures (pure, so it can be checked without a database). */
export function reportDocument(since: Date, until: Date, figures: DunningPeriodFigures, savedBeforeFailure = 0): DunningReportDocument {
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
  const pace = (pick: (c: RecoveredCase) => string) => {
    const groups = new Map<string, RecoveredCase[]>();
    for (const c of figures.recoveredCases) (groups.get(pick(c)) ?? groups.set(pick(c), []).get(pick(c))!).push(c);
    return (name: string): RecoveryPace => recoveryPace(groups.get(name) ?? []);
  };
  const reasonPace = pace((c) => c.reason);
  const meansPace = pace((c) => c.means);
  const providerPace = pace((c) => c.provider);
  const shareOf = (value: number | null) => (value === null ? null : shareText(value));
  const all = armShare(addSums(figures.armShares));
  const byArm = new Map(figures.armShares.map((sums) => [sums.arm, sums]));
  const holdout: Pick<DunningReportDocument, 'arms' | 'difference' | 'interval'> = {};
  if (totals.baseline > 0) {
    const service = armShare(byArm.get('service'));
    const baseline = armShare(byArm.get('baseline'));
    const { difference, interval } = shareDifference(service, baseline);
    holdout.arms = {
      service: { failed_renewals: service.n, recovered_share: shareOf(service.share) },
      baseline: { failed_renewals: baseline.n, recovered_share: shareOf(baseline.share) },
    };
    holdout.difference = shareOf(difference);
    holdout.interval = interval ? [shareText(interval[0]), shareText(interval[1])] : null;
  }
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    failed_renewals: totals.failed,
    recovered: { count: totals.recovered, amount: decimals(amountMinor) },
    by_reason: Object.fromEntries(byReason.map((row) => [row.reason, { failed: row.failed, recovered: row.recovered, ...reasonPace(row.reason) }])),
    by_means: Object.fromEntries([...byMeans].map(([means, value]) => [means, { count: value.count, amount: decimals(value.amountMinor), ...meansPace(means) }])),
    median_days_to_recover: figures.recoveryDurationsMs.length ? round(median([...figures.recoveryDurationsMs].sort((a, b) => a - b)) / DAY_MS, 1) : null,
    lost_subscriptions: totals.lostSubscriptions,
    attempts_per_recovery: totals.recovered ? round(totals.recoveredCharges / totals.recovered, 2) : null,
    window_days: SHARE_WINDOW_DAYS,
    recovered_share: shareOf(all.share),
    saved_before_failure: savedBeforeFailure,
    by_provider: Object.fromEntries([...figures.byProvider].sort((a, b) => a.provider.localeCompare(b.provider))
      .map((row) => [row.provider, { failed: row.failed, recovered: row.recovered, ...providerPace(row.provider) }])),
    ...holdout,
  };
}

/** Attempts per recovery and the median days to recover of some recovered cases. */
function recoveryPace(cases: RecoveredCase[]): RecoveryPace {
  if (!cases.length) return { attempts_per_recovery: null, median_days_to_recover: null };
  const attempts = cases.reduce((sum, c) => sum + c.attempts, 0);
  return {
    attempts_per_recovery: round(attempts / cases.length, 2),
    median_days_to_recover: round(median(cases.map((c) => c.ms).sort((a, b) => a - b)) / DAY_MS, 1),
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
