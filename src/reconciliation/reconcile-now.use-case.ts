import type { Provider } from '../../entities';
import type { ProviderSetup } from '../payments/providers/configured';
import type { Finding, Reconciler, ReconcileTarget } from './reconciler';

export type ReconcileScope = 'all' | { orderId: number };

/** What an operator's (or staff's) reconcile came to, as `payment-hub reconcile --json` prints it and the REST route answers. */
export interface ReconcileDocument {
  dry_run: boolean;
  scope: 'all' | { order_id: number };
  summary: ReconcileSummary;
  items: ReconcileItem[];
  /** Open items of a provider that is not configured: not asked about, and why. */
  skipped: SkippedProvider[];
}

export interface SkippedProvider {
  provider: Provider;
  /** What is unset, e.g. `CARD_GATEWAY_API_KEY unset`. */
  reason: string;
  /** Open items of this provider left as they are. */
  items: number;
}

export interface ReconcileSummary {
  checked: number;
  found: number;
  changed: number;
  would_change: number;
  unreachable: number;
}

export interface ReconcileItem {
  kind: Finding['kind'];
  provider: Finding['provider'];
  id: number;
  external_id: string;
  order_id: number | null;
  local_status: string | null;
  provider_state: string | null;
  outcome: Finding['outcome'];
  events: string[];
  notes: string[];
  error: string | null;
}

export type ReconcileOutcome =
  /** `findings` as asked; `document` is what to print or answer. `unreachable` is true when a provider could not be asked. */
  | { kind: 'done'; findings: Finding[]; document: ReconcileDocument; unreachable: boolean; skipped: SkippedProvider[] }
  /** The order named does not exist (and nothing is open about it). */
  | { kind: 'order_not_found' }
  /** `confirm` said no: nothing was changed. `findings` are the dry run's. */
  | { kind: 'declined'; findings: Finding[] };

export interface ReconcileOptions {
  /** Only read (GETs to the providers) and say what would change; write nothing anywhere. */
  dryRun: boolean;
  /** Asked, with the dry run's findings, before anything changes; without it the changes are made. */
  confirm?: (findings: Finding[]) => Promise<boolean>;
  /** Told after each item asked about (for a progress bar). */
  progress?: (done: number, total: number) => void;
}

/**
 * Asks the providers about everything open about one order (or everything open) now and makes the shop agree
 * with them, through the same handlers as their webhooks: first a dry run over every target, then, unless
 * `dryRun`, the ones that would change are asked again and handed to the handlers (which read the provider back
 * themselves before they act), and the run is counted in the totals /metrics shows. The CLI's
 * `payment-hub reconcile` and the staff route `POST /payment-hub/v1/orders/{id}/reconcile` are this one flow.
 */
export class ReconcileNow {
  constructor(private readonly reconciliation: Reconciler, private readonly providers: ProviderSetup) {}

  async execute(scope: ReconcileScope, options: ReconcileOptions): Promise<ReconcileOutcome> {
    const open = await this.reconciliation.targets(scope);
    if (scope !== 'all' && !open.length && !(await this.reconciliation.orderExists(scope.orderId))) return { kind: 'order_not_found' };
    // A provider without credentials is not asked (the worker does not ask it either): its items are counted, not looked up.
    const targets = open.filter((target) => this.providers[target.provider].configured);
    const skipped = skippedProviders(open, this.providers);
    let findings = await this.checkAll(targets, true, options.progress);
    if (!options.dryRun && findings.some((finding) => finding.outcome === 'would_change')) {
      const changing = targets.filter((_, index) => findings[index].outcome === 'would_change');
      if (options.confirm && !(await options.confirm(findings))) return { kind: 'declined', findings };
      const done = await this.checkAll(changing, false, options.progress);
      findings = findings.map((finding) => (finding.outcome === 'would_change' ? done.shift()! : finding));
      await this.reconciliation.countFindings(findings);
    }
    return {
      // `dry_run` says what was asked for: a run that found nothing to change still was no dry run.
      kind: 'done', findings, document: reconcileDocument(findings, scope, options.dryRun, skipped),
      unreachable: findings.some((finding) => finding.outcome === 'unreachable'), skipped,
    };
  }

  private async checkAll(targets: ReconcileTarget[], dryRun: boolean, progress?: (done: number, total: number) => void): Promise<Finding[]> {
    const findings: Finding[] = [];
    for (const target of targets) {
      findings.push(await this.reconciliation.check(target, { dryRun }));
      progress?.(findings.length, targets.length);
    }
    return findings;
  }
}

function skippedProviders(open: ReconcileTarget[], providers: ProviderSetup): SkippedProvider[] {
  const skipped: SkippedProvider[] = [];
  for (const [provider, setup] of Object.entries(providers) as [Provider, ProviderSetup[Provider]][]) {
    const items = open.filter((target) => target.provider === provider).length;
    if (!setup.configured && items) skipped.push({ provider, reason: setup.unset, items });
  }
  return skipped;
}

export function reconcileSummary(findings: Finding[]): ReconcileSummary {
  const count = (outcome: Finding['outcome']) => findings.filter((finding) => finding.outcome === outcome).length;
  return {
    checked: findings.length,
    found: findings.filter((finding) => finding.events.length > 0).length,
    changed: count('changed'),
    would_change: count('would_change'),
    unreachable: count('unreachable'),
  };
}

/** One JSON document, snake_case as the other commands and the REST answers. */
export function reconcileDocument(findings: Finding[], scope: ReconcileScope, dryRun: boolean, skipped: SkippedProvider[]): ReconcileDocument {
  return {
    dry_run: dryRun,
    scope: scope === 'all' ? 'all' : { order_id: scope.orderId },
    summary: reconcileSummary(findings),
    items: findings.map((finding) => ({
      kind: finding.kind,
      provider: finding.provider,
      id: finding.id,
      external_id: finding.externalId,
      order_id: finding.orderId,
      local_status: finding.localStatus,
      provider_state: finding.providerState,
      outcome: finding.outcome,
      events: finding.events,
      notes: finding.notes,
      error: finding.error,
    })),
    skipped,
  };
}
