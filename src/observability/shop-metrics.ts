import { Counter, Gauge, Registry } from 'prom-client';
import type { PaymentRetryStatus, Provider, WebhookStatus } from '../../entities';
import { within } from '../shared/within';
import { WORKER_GONE_AFTER_SECONDS, type WorkerRecord } from '../data-access/worker-repository';
import type { ReconcileMetrics } from '../data-access/reconciliation-repository';
import type { ArmShareSums, DunningCaseCount } from '../data-access/dunning-case-report-repository';
import { addDunningMetrics, addDunningShareMetrics } from './dunning-metrics';
import type { SweepFigures } from '../data-access/customer-contact-index';
import { addCustomerIndexMetrics } from './customer-index-metrics';
import type { FlaggedCapture } from '../data-access/second-capture-repository';
import { addSecondCaptureMetrics } from './second-capture-metrics';

/** Where the shop-wide numbers come from; each read is one index-only query (or one Redis round trip). */
export interface ShopMetricSources {
  webhookCounts(): Promise<{ provider: string; status: string; count: number }[]>;
  oldestPendingWebhookAgeSeconds(): Promise<number>;
  retryCounts(): Promise<{ status: string; count: number }[]>;
  changeBacklog(): Promise<{ waiting: number; failed: number; oldestWaitingSeconds: number }>;
  queueCounts(): Promise<{ waiting: number; active: number; delayed: number }>;
  workers(): Promise<WorkerRecord[]>;
  /** Reconciliation's running totals, open items and the oldest open one's age (src/reconciliation). */
  reconciliation?(): Promise<ReconcileMetrics>;
  /** Every dunning case counted by provider, reason, status, means and currency (DunningCounts: only the recent ones are read each time). */
  dunning?(): Promise<DunningCaseCount[]>;
  /** The recovered share's sums per holdout arm over the failed renewals of the last 28 days (DunningCaseReportRepository.armShares). */
  dunningShares?(): Promise<ArmShareSums[]>;
  /** The customer index's rolling sweep: each store's totals and pass, from the index's state row (at most two rows). */
  customerIndexSweep?(): Promise<SweepFigures[]>;
  /** Charge requests the providers refused for a reason of the service's own: all of them by provider, and the attempts still held by one. */
  providerRefusals?(): Promise<{ counts: { provider: Provider; status: number | null; count: number }[]; held: number }>;
  /** The payments flagged as second captures of an order, with their status and that of the payment they duplicate. */
  secondCaptures?(): Promise<FlaggedCapture[]>;
}

// Listed so that a status with no rows is a 0, not a missing series.
const PROVIDERS: Provider[] = ['card_gateway', 'mobile_wallet'];
/** The HTTP statuses of a provider's refusal of a request the service made wrong (a field, a key, a conflict). */
const REFUSAL_STATUSES = ['400', '401', '403', '404', '409', '422'];
const WEBHOOK_STATUSES: WebhookStatus[] = ['PENDING', 'PROCESSED', 'SKIPPED', 'FAILED'];
const RETRY_STATUSES: PaymentRetryStatus[] = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELED'];

/**
 * The shop-wide state, read when /metrics is scraped (the same for every API process, so read once per
 * scrape, not kept per process): webhooks by provider and status, the oldest PENDING one's age, the
 * queue, dunning attempts by status and the WooCommerce hand-over backlog. A source that does not answer
 * within `timeoutMs` leaves its series out and `sidecar_source_up{source}` at 0.
 */
export async function sampleShopMetrics(sources: ShopMetricSources, processes: number, timeoutMs = 2000): Promise<Registry> {
  const registry = new Registry();
  const registers = [registry];
  const [webhooks, oldest, retries, backlog, queue, workers] = await Promise.allSettled([
    within(sources.webhookCounts(), timeoutMs),
    within(sources.oldestPendingWebhookAgeSeconds(), timeoutMs),
    within(sources.retryCounts(), timeoutMs),
    within(sources.changeBacklog(), timeoutMs),
    within(sources.queueCounts(), timeoutMs),
    within(sources.workers(), timeoutMs),
  ]);
  const [reconciliation, dunning, customerIndexSweep, refusals, secondCaptures, dunningShares] = await Promise.allSettled([
    sources.reconciliation ? within(sources.reconciliation(), timeoutMs) : Promise.reject(new Error('not wired')),
    sources.dunning ? within(sources.dunning(), timeoutMs) : Promise.reject(new Error('not wired')),
    sources.customerIndexSweep ? within(sources.customerIndexSweep(), timeoutMs) : Promise.reject(new Error('not wired')),
    sources.providerRefusals ? within(sources.providerRefusals(), timeoutMs) : Promise.reject(new Error('not wired')),
    sources.secondCaptures ? within(sources.secondCaptures(), timeoutMs) : Promise.reject(new Error('not wired')),
    sources.dunningShares ? within(sources.dunningShares(), timeoutMs) : Promise.reject(new Error('not wired')),
  ]);

  const up = new Gauge({ name: 'sidecar_source_up', help: '1 when the scrape could read the source: database (the counts below) or queue (Redis).', labelNames: ['source'], registers });
  const databaseUp = [webhooks, oldest, retries, backlog, workers].every((result) => result.status === 'fulfilled');
  up.set({ source: 'database' }, databaseUp ? 1 : 0);
  up.set({ source: 'queue' }, queue.status === 'fulfilled' ? 1 : 0);
  new Gauge({ name: 'sidecar_metrics_processes', help: 'API processes whose metrics this answer holds.', registers }).set(processes);

  if (webhooks.status === 'fulfilled') {
    const gauge = new Gauge({ name: 'sidecar_webhooks', help: 'Stored webhooks by provider and status (PENDING, PROCESSED, SKIPPED, FAILED).', labelNames: ['provider', 'status'], registers });
    for (const provider of PROVIDERS) for (const status of WEBHOOK_STATUSES) gauge.set({ provider, status }, 0);
    for (const row of webhooks.value) gauge.set({ provider: row.provider, status: row.status }, row.count);
  }
  if (oldest.status === 'fulfilled') {
    new Gauge({ name: 'sidecar_webhook_oldest_pending_age_seconds', help: 'Age of the oldest PENDING webhook; 0 when none waits.', registers }).set(oldest.value);
  }
  if (queue.status === 'fulfilled') {
    const gauge = new Gauge({ name: 'sidecar_webhook_queue_jobs', help: 'Jobs in the webhook queue (bee-queue) by state.', labelNames: ['state'], registers });
    for (const [state, count] of Object.entries(queue.value)) gauge.set({ state }, count);
  }
  if (retries.status === 'fulfilled') {
    const gauge = new Gauge({ name: 'sidecar_dunning_attempts', help: 'Dunning attempts (planned renewal payment retries) by status.', labelNames: ['status'], registers });
    for (const status of RETRY_STATUSES) gauge.set({ status }, 0);
    for (const row of retries.value) gauge.set({ status: row.status }, row.count);
  }
  if (backlog.status === 'fulfilled') {
    const gauge = new Gauge({ name: 'sidecar_woocommerce_changes', help: 'Changes handed to WooCommerce that wait for its queue, or failed there.', labelNames: ['state'], registers });
    gauge.set({ state: 'waiting' }, backlog.value.waiting);
    gauge.set({ state: 'failed' }, backlog.value.failed);
    new Gauge({
      name: 'sidecar_woocommerce_handover_lag_seconds',
      help: 'How long the oldest change still waiting for WooCommerce has waited: how far the shop lags behind the service; 0 when none waits.',
      registers,
    }).set(backlog.value.oldestWaitingSeconds);
  }
  if (workers.status === 'fulfilled') {
    // One series per worker process heard from lately (named by host, pid and its claim-token prefix).
    const labelNames = ['worker'];
    const inFlight = new Gauge({ name: 'sidecar_worker_jobs_in_flight', help: 'Webhook jobs a worker has in hand.', labelNames, registers });
    const sinceProgress = new Gauge({ name: 'sidecar_worker_seconds_since_progress', help: 'Seconds since a worker last finished a job (or took jobs up after a quiet spell); grows while it is stuck.', labelNames, registers });
    const sinceSeen = new Gauge({ name: 'sidecar_worker_seconds_since_seen', help: 'Seconds since a worker last reported itself (every 5 s while it runs).', labelNames, registers });
    const stalledGauge = new Gauge({ name: 'sidecar_worker_stalled', help: '1 for a worker the watchdog found stuck (it then exits to be replaced); kept for a day.', labelNames, registers });
    const alive = new Gauge({ name: 'sidecar_workers_alive', help: `Worker processes that reported within ${WORKER_GONE_AFTER_SECONDS} s and have not stalled.`, registers });
    alive.set(workers.value.filter((worker) => worker.seenSecondsAgo < WORKER_GONE_AFTER_SECONDS && !worker.stalledAt).length);
    for (const worker of workers.value) {
      const labels = { worker: `${worker.host}/${worker.pid}/${worker.name}` };
      inFlight.set(labels, worker.jobsInFlight);
      sinceProgress.set(labels, worker.jobsInFlight ? worker.secondsSinceProgress : 0);
      sinceSeen.set(labels, worker.seenSecondsAgo);
      stalledGauge.set(labels, worker.stalledAt ? 1 : 0);
    }
  }
  if (reconciliation.status === 'fulfilled') addReconcileMetrics(registers, reconciliation.value);
  if (dunning.status === 'fulfilled') addDunningMetrics(registers, dunning.value);
  if (dunningShares.status === 'fulfilled') addDunningShareMetrics(registers, dunningShares.value);
  if (customerIndexSweep.status === 'fulfilled') addCustomerIndexMetrics(registers, customerIndexSweep.value);
  if (refusals.status === 'fulfilled') {
    const total = new Counter({
      name: 'sidecar_provider_refusals_total',
      help: 'Charge requests a provider refused for a reason of the service\'s own (a 4xx that is not a decline: a field, a key, a conflict), by provider. Never a customer\'s decline.',
      labelNames: ['provider', 'status'], registers,
    });
    // The statuses a refusal of the service's own request comes with start at 0, so the first one is an increase
    // Prometheus sees (the alert fires on any increase); another status appears with its first count.
    for (const provider of PROVIDERS) for (const status of REFUSAL_STATUSES) total.inc({ provider, status }, 0);
    for (const row of refusals.value.counts) total.inc({ provider: row.provider, status: row.status === null ? 'none' : String(row.status) }, row.count);
    new Gauge({
      name: 'sidecar_dunning_attempts_held',
      help: 'Dunning attempts held because a provider refused the service\'s request; each goes ahead once the cause is fixed (`payment-hub doctor` names it).',
      registers,
    }).set(refusals.value.held);
  }
  if (secondCaptures.status === 'fulfilled') addSecondCaptureMetrics(registers, secondCaptures.value);
  return registry;
}

const RECONCILE_KINDS = ['payment', 'agreement', 'order'];
const RECONCILE_OUTCOMES: [string, string, string][] = [
  ['checked', 'sidecar_reconcile_checks_total', 'Open items reconciliation asked a provider about, by provider and kind (payment, agreement, order).'],
  ['found', 'sidecar_reconcile_found_total', 'Checks where the provider said something the service did not know (a webhook that never came).'],
  ['fixed', 'sidecar_reconcile_fixed_total', 'Checks whose events changed the service and the shop (as the missing webhook would have).'],
  ['unreachable', 'sidecar_reconcile_unreachable_total', 'Checks the provider could not answer (timeout, 5xx, rate limit); the item is asked again later.'],
];

/**
 * Reconciliation (the worker's, and the operator's `reconcile`): totals kept in the database, so every API
 * process shows the same counters whichever process did the work; the open items; the oldest open item's age.
 */
function addReconcileMetrics(registers: Registry[], value: ReconcileMetrics): void {
  const labelNames = ['provider', 'kind'];
  for (const [outcome, name, help] of RECONCILE_OUTCOMES) {
    const counter = new Counter({ name, help, labelNames, registers });
    for (const provider of PROVIDERS) for (const kind of RECONCILE_KINDS) counter.inc({ provider, kind }, 0);
    for (const row of value.counts.filter((entry) => entry.outcome === outcome)) counter.inc({ provider: row.provider, kind: row.kind }, row.count);
  }
  const open = new Gauge({ name: 'sidecar_reconcile_open_items', help: 'Items reconciliation still asks the providers about, by provider and kind.', labelNames, registers });
  for (const provider of PROVIDERS) for (const kind of RECONCILE_KINDS) open.set({ provider, kind }, 0);
  for (const row of value.open) open.set({ provider: row.provider, kind: row.kind }, row.count);
  new Gauge({
    name: 'sidecar_reconcile_oldest_open_age_seconds',
    help: 'Age of the oldest item reconciliation still asks about, counted from when it opened or last changed; 0 when none is open.',
    registers,
  }).set(value.oldestOpenSeconds);
}
