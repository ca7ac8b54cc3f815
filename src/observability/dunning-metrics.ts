import { Counter, Gauge, type Registry } from 'prom-client';
import type { Provider, RecoveryMeans } from '../../entities';
import { SHARE_WINDOW_DAYS, type ArmShareSums, type DunningCaseCount } from '../data-access/dunning-case-report-repository';
import { armShare, shareDifference } from '../dunning/recovered-share';
import { currencyDecimals } from '../shop/money';

/**
 * The dunning counters of GET /metrics, from `sidecar_dunning_cases` (one row per failed renewal, from its
 * first decline until it is paid or lost). A case only ever adds to them (it is opened once, closed once, and
 * its charges only grow), so they are counters although they are read from a table, the same whichever API
 * process is scraped. Every provider's reasons (and every means of each reason and currency seen) start at 0,
 * so the first case of a kind is an increase Prometheus sees rather than a series that appears at 1.
 */

const REASONS: Record<Provider, string[]> = {
  card_gateway: ['soft_declined', 'hard_declined', 'processing_error', 'unknown'],
  mobile_wallet: ['user_action_required', 'charge_amount_too_high', 'non_technical_error', 'technical_error', 'unknown'],
};
const MEANS: RecoveryMeans[] = ['service_retry', 'staff_charge', 'new_payment_method', 'provider_retry', 'shop_payment', 'reconciliation'];

export function addDunningMetrics(registers: Registry[], counts: DunningCaseCount[]): void {
  const failed = new Counter({
    name: 'sidecar_dunning_failed_renewals_total',
    help: 'Renewal orders whose payment failed (a dunning case each), by provider and the first decline\'s reason.',
    labelNames: ['provider', 'reason'], registers,
  });
  const recovered = new Counter({
    name: 'sidecar_dunning_recovered_total',
    help: 'Failed renewals paid in the end, by provider, first reason and means (service_retry, staff_charge, new_payment_method, provider_retry, shop_payment, reconciliation).',
    labelNames: ['provider', 'reason', 'means'], registers,
  });
  const lost = new Counter({
    name: 'sidecar_dunning_lost_total',
    help: 'Failed renewals whose dunning ended unpaid (the subscription cancelled at the deadline, or ended another way), by provider and first reason.',
    labelNames: ['provider', 'reason'], registers,
  });
  const amount = new Counter({
    name: 'sidecar_dunning_recovered_amount_total',
    help: 'What the recovered renewals brought in, in the currency\'s major unit (99.00 DKK is 99), by currency and means.',
    labelNames: ['currency', 'means'], registers,
  });
  const charges = new Counter({
    name: 'sidecar_dunning_recovered_charges_total',
    help: 'Charges it took to recover the recovered renewals, the first failed one included (divided by sidecar_dunning_recovered_total: attempts per recovery).',
    labelNames: ['provider', 'means'], registers,
  });
  const open = new Gauge({ name: 'sidecar_dunning_open_cases', help: 'Failed renewals still in dunning: neither paid nor lost yet.', labelNames: ['provider'], registers });

  const reasons = new Map<string, Set<string>>(Object.entries(REASONS).map(([provider, known]) => [provider, new Set(known)]));
  for (const row of counts) (reasons.get(row.provider) ?? reasons.set(row.provider, new Set()).get(row.provider)!).add(row.reason);
  for (const [provider, names] of reasons) {
    open.set({ provider }, 0);
    for (const means of MEANS) charges.inc({ provider, means }, 0);
    for (const reason of names) {
      failed.inc({ provider, reason }, 0);
      lost.inc({ provider, reason }, 0);
      for (const means of MEANS) recovered.inc({ provider, reason, means }, 0);
    }
  }
  for (const currency of new Set(counts.map((row) => row.currency))) for (const means of MEANS) amount.inc({ currency, means }, 0);

  for (const row of counts) {
    const { provider, reason } = row;
    failed.inc({ provider, reason }, row.count);
    if (row.status === 'OPEN') open.inc({ provider }, row.count);
    if (row.status === 'LOST') lost.inc({ provider, reason }, row.count);
    if (row.status === 'RECOVERED') {
      // A RECOVERED case names its means; one that does not is still counted, as `unknown`.
      const means = row.means ?? 'unknown';
      recovered.inc({ provider, reason, means }, row.count);
      charges.inc({ provider, means }, row.charges);
      amount.inc({ currency: row.currency, means }, row.recoveredMinor / 10 ** currencyDecimals(row.currency));
    }
  }
}

/**
 * The recovered share of the failed renewals of the last SHARE_WINDOW_DAYS (28) days, per holdout arm, as
 * `payment-hub dunning report --since=<28 days ago>` computes it (src/dunning/recovered-share.ts): the same cases
 * counted, the same difference and 95% interval. Gauges: the window moves, so the figures go up and down.
 * An arm with no renewal counted has no share series; the difference and interval only when both arms have one.
 */
export function addDunningShareMetrics(registers: Registry[], sums: ArmShareSums[]): void {
  const window = `the failed renewals of the last ${SHARE_WINDOW_DAYS} days`;
  const share = new Gauge({
    name: 'sidecar_dunning_recovered_share',
    help: `Recovered amount within ${SHARE_WINDOW_DAYS} days of each failure over the failed amount (0 to 1), of ${window}, by holdout arm (service, baseline).`,
    labelNames: ['arm'], registers,
  });
  const renewals = new Gauge({
    name: 'sidecar_dunning_share_renewals',
    help: `Failed renewals counted in sidecar_dunning_recovered_share (${window} whose outcome is known), by holdout arm.`,
    labelNames: ['arm'], registers,
  });
  // Labelled, so that it is declared on every scrape but has no sample until there is a figure.
  const difference = new Gauge({
    name: 'sidecar_dunning_holdout_difference',
    help: 'The service arm\'s recovered share minus the baseline arm\'s (DUNNING_HOLDOUT_PERCENT) over the same window (figure="difference"), and its 95% interval (normal approximation; figure="low", "high").',
    labelNames: ['figure'], registers,
  });
  const byArm = new Map(sums.map((row) => [row.arm, row]));
  for (const arm of ['service', 'baseline']) {
    const figures = armShare(byArm.get(arm));
    renewals.set({ arm }, figures.n);
    if (figures.share !== null) share.set({ arm }, figures.share);
  }
  const compared = shareDifference(armShare(byArm.get('service')), armShare(byArm.get('baseline')));
  if (compared.difference !== null) difference.set({ figure: 'difference' }, compared.difference);
  if (compared.interval) {
    difference.set({ figure: 'low' }, compared.interval[0]);
    difference.set({ figure: 'high' }, compared.interval[1]);
  }
}

/** What DunningCounts reads: the repository's two queries. */
export interface DunningCaseCounts {
  countsOpenedIn(from: Date | null, until: Date | null): Promise<DunningCaseCount[]>;
  oldestOpenOpenedAt(): Promise<Date | null>;
}

export interface DunningCountsOptions {
  /** Cases opened this recently are read on every scrape even when closed (one opened a moment late, or in a transaction not yet committed). */
  settleMs?: number;
  /** How often the closed cases are read again whole, in case one was changed after it closed (a day: none is, by the service). */
  rereadMs?: number;
}

const key = (row: DunningCaseCount) => JSON.stringify([row.provider, row.reason, row.status, row.means, row.currency]);

/**
 * Every case's counts, for each scrape, without reading the whole table each time. A case only changes while
 * it is OPEN: once RECOVERED or LOST it stays as it is. So the cases opened before the oldest OPEN one (and
 * more than `settleMs` ago) are read once and kept; each scrape reads the oldest OPEN case (through the
 * `status_deadline` index) and the cases opened since the kept part ends (through the `opened_at` index),
 * which are the ones dunning still works on and a day's worth more. The kept part grows as cases close,
 * and is read whole again every `rereadMs` (a day), or at once when an OPEN case older than its end turns up.
 * Scrapes that arrive while a reading runs share it.
 */
export class DunningCounts {
  private kept: { until: Date; readAt: number; counts: Map<string, DunningCaseCount> } | null = null;
  private reading: Promise<DunningCaseCount[]> | null = null;
  private readonly settleMs: number;
  private readonly rereadMs: number;

  constructor(private readonly cases: DunningCaseCounts, private readonly clock: () => Date = () => new Date(), options: DunningCountsOptions = {}) {
    this.settleMs = options.settleMs ?? 86_400_000;
    this.rereadMs = options.rereadMs ?? 86_400_000;
  }

  read(): Promise<DunningCaseCount[]> {
    this.reading ??= this.readNow().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readNow(): Promise<DunningCaseCount[]> {
    const now = this.clock();
    const oldestOpen = await this.cases.oldestOpenOpenedAt();
    const settled = new Date(Math.min(oldestOpen?.getTime() ?? Infinity, now.getTime() - this.settleMs));
    const kept = this.kept;
    if (!kept || now.getTime() - kept.readAt >= this.rereadMs || settled < kept.until) {
      this.kept = { until: settled, readAt: now.getTime(), counts: merged([], await this.cases.countsOpenedIn(null, settled)) };
    } else if (settled > kept.until) {
      const closedSince = await this.cases.countsOpenedIn(kept.until, settled);
      this.kept = { until: settled, readAt: kept.readAt, counts: merged([...kept.counts.values()], closedSince) };
    }
    const recent = await this.cases.countsOpenedIn(this.kept!.until, null);
    return [...merged([...this.kept!.counts.values()], recent).values()];
  }
}

/** Two lists of counts as one, each group once (new objects: the kept counts are never changed in place). */
function merged(a: DunningCaseCount[], b: DunningCaseCount[]): Map<string, DunningCaseCount> {
  const out = new Map<string, DunningCaseCount>();
  for (const row of [...a, ...b]) {
    const before = out.get(key(row));
    out.set(key(row), before
      ? { ...before, count: before.count + row.count, charges: before.charges + row.charges, recoveredMinor: before.recoveredMinor + row.recoveredMinor }
      : { ...row });
  }
  return out;
}
