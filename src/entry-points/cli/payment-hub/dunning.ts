import type { Argv } from 'yargs';
import { loadConfigOrExit } from '../../../config';
import { DunningCaseReportRepository } from '../../../data-access/dunning-case-report-repository';
import { SavedBeforeFailureRecord } from '../../../data-access/saved-before-failure-record';
import { ReportDunning, type AmountByCurrency, type DunningReport, type RecoveryPace } from '../../../dunning/dunning-report.use-case';
import { renderFields, renderTable } from './format';
import { formatOf, outputOptions, RESULT_FORMATS } from './output';
import { action, printJson, printText, withHub } from './runtime';

/** `YYYY-MM-DD` as the start of that day in UTC (the service stores its times in UTC); null for anything else or a day that does not exist. */
function utcDay(text: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  return date && date.toISOString().slice(0, 10) === text ? date : null;
}

/** Checks `--since` for yargs, which reports what this throws as a usage error: a malformed date, or a day after today (UTC). */
export function checkSince(raw: unknown, now: Date = new Date()): true {
  const text = String(raw ?? '');
  if (!utcDay(text)) throw new Error(`--since takes a date as YYYY-MM-DD (e.g. 2026-11-01), not "${text}"`);
  if (text > now.toISOString().slice(0, 10)) throw new Error(`--since ${text} is in the future: give today's date or an earlier one`);
  return true;
}

/** `payment-hub dunning report [--since=YYYY-MM-DD] [--json]`: what dunning won back (CONTRACT "Commands"). */
export function dunningCommands(y: Argv): Argv {
  return y
    .command('report', 'what dunning won back: the renewals that failed in the period (default the last 30 days), how many were paid after all, by which means and for how much, and how many subscriptions were lost',
      (c) => outputOptions(c
        .option('since', { type: 'string', describe: 'count the renewals that failed from this day on (YYYY-MM-DD, UTC); default 30 days ago' })
        .check((argv) => argv.since === undefined || checkSince(argv.since)), RESULT_FORMATS),
      action(async (argv) => {
        const since = argv.since === undefined ? undefined : utcDay(argv.since)!;
        const config = loadConfigOrExit();
        const report = await withHub(config, (_hub, dataSource) => new ReportDunning(new DunningCaseReportRepository(dataSource), undefined, new SavedBeforeFailureRecord(dataSource)).execute({ since }));
        if (formatOf(argv) === 'json') printJson(report.document);
        else printText(describe(report));
      }))
    .demandCommand(1, 'name a dunning command: report');
}

/** The report for an operator: the figures, then the reasons and the means as two short tables. */
export function describe({ document: d, stillOpen, lostRenewals }: DunningReport): string {
  const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
  const share = (part: number, whole: number) => (whole ? ` (${Math.round((part / whole) * 100)}%)` : '');
  const head = `Dunning of the renewals that failed from ${when(d.since)} to ${when(d.until)}`;
  if (!d.failed_renewals) return `${head}\n\nNo renewal payment failed in the period.`;
  const fields = renderFields([
    ['Failed renewals', d.failed_renewals],
    ['Recovered', `${d.recovered.count}${share(d.recovered.count, d.failed_renewals)}`],
    ['Recovered amount', amounts(d.recovered.amount)],
    ['Still in dunning', stillOpen],
    ['Lost', `${lostRenewals} renewal(s), ${d.lost_subscriptions} subscription(s)`],
    ['Median days to recover', d.median_days_to_recover === null ? '-' : d.median_days_to_recover.toFixed(1)],
    ['Attempts per recovery', d.attempts_per_recovery === null ? '-' : d.attempts_per_recovery.toFixed(2)],
    [`Recovered share (${d.window_days} days)`, percent(d.recovered_share)],
    ['Saved before failure', d.saved_before_failure],
  ]);
  const pace = (row: RecoveryPace) => [row.attempts_per_recovery === null ? '-' : row.attempts_per_recovery.toFixed(2), row.median_days_to_recover === null ? '-' : row.median_days_to_recover.toFixed(1)];
  const providers = renderTable([{ header: 'PROVIDER' }, { header: 'FAILED', align: 'right' }, { header: 'RECOVERED', align: 'right' }, { header: 'ATTEMPTS', align: 'right' }, { header: 'DAYS', align: 'right' }],
    Object.entries(d.by_provider).map(([provider, row]) => [provider, row.failed, row.recovered, ...pace(row)]));
  const holdout = d.arms ? renderFields([
    ['Service plan', `${percent(d.arms.service.recovered_share)} of ${d.arms.service.failed_renewals} renewal(s)`],
    ['Baseline plan', `${percent(d.arms.baseline.recovered_share)} of ${d.arms.baseline.failed_renewals} renewal(s)`],
    ['Difference', d.difference == null ? '-' : `${points(d.difference)} points`],
    ['95% interval', d.interval ? `${points(d.interval[0])} to ${points(d.interval[1])} points` : '- (too few renewals yet)'],
  ]) : null;
  const reasons = renderTable([{ header: 'REASON', maxWidth: 40 }, { header: 'FAILED', align: 'right' }, { header: 'RECOVERED', align: 'right' }, { header: 'RATE', align: 'right' },
    { header: 'ATTEMPTS', align: 'right' }, { header: 'DAYS', align: 'right' }],
    Object.entries(d.by_reason).map(([reason, row]) => [reason, row.failed, row.recovered, share(row.recovered, row.failed).slice(2, -1), ...pace(row)]));
  const means = renderTable([{ header: 'RECOVERED BY' }, { header: 'COUNT', align: 'right' }, { header: 'AMOUNT' }, { header: 'ATTEMPTS', align: 'right' }, { header: 'DAYS', align: 'right' }],
    Object.entries(d.by_means).map(([name, row]) => [name, row.count, amounts(row.amount), ...pace(row)]));
  return [head, '', fields, '', reasons, '', means, '', providers, ...(holdout ? ['', 'Holdout (recovered share)', holdout] : [])].join('\n');
}

/** A share (`"0.7312"`) as a percentage with one decimal (`73.1%`); `-` when there is none. */
function percent(share: string | null): string {
  return share === null ? '-' : `${(Number(share) * 100).toFixed(1)}%`;
}

/** A difference of shares (`"-0.0450"`) in percentage points with a sign (`-4.5`). */
function points(share: string): string {
  const value = Number(share) * 100;
  return `${value > 0 ? '+' : ''}${value.toFixed(1)}`;
}

/** `1234.50 DKK, 99.00 EUR`; `0` when nothing came in. */
function amounts(byCurrency: AmountByCurrency): string {
  const entries = Object.entries(byCurrency);
  return entries.length ? entries.map(([currency, amount]) => `${amount} ${currency}`).join(', ') : '0';
}
