import os from 'node:os';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import { buildPaymentHub } from '../composition/payment-hub';
import { buildStaffServices } from '../composition/staff-services';
import { buildShopData } from '../composition/shop-data';
import type { Logger } from '../../logger';
import { poolState } from '../../data-access/data-source';
import { providerCallsInFlight } from '../../payments/providers/http-request';
import { providerCallsWaitingAtLimits } from '../../payments/providers/request-limits';
import { within } from '../../shared/within';
import { JobsInHand } from './jobs-in-hand';
import { WorkerLoops, type StalledLoop } from './worker-loops';
import { companionTakesHandOver } from '../../data-access/woocommerce-change-repository';

/**
 * How long a graceful stop waits for jobs in progress. With the bounded steps after it (STOP_STEP_MS each)
 * it stays inside PM2's kill_timeout for the worker (40 s, ecosystem.config.js); a job still running then
 * is let go, its webhook left PENDING and free for the next worker.
 */
export const QUEUE_CLOSE_TIMEOUT_MS = 25_000;
/** The bound of each step of a stop or a stall after the wait for jobs (releasing claims, the last report). */
export const STOP_STEP_MS = 2000;
/** How often the worker reports itself, renews the claims of its jobs in hand and asks the watchdog. */
export const HEARTBEAT_INTERVAL_MS = 5000;

/**
 * Webhook jobs processed at once. A job spends most of its time waiting for the provider (150 ms is
 * common), not on the CPU, so this follows the provider's latency and limits, not the cores. Under the
 * card gateway's documented limits (25 reads a second) the last of 200 jobs waits some 8 s for its
 * call, well inside the 30 s a call may wait (LIMIT_WAIT_MS); where an account's limits are raised,
 * each of the 200 places may have its call in flight (PROVIDER_MAX_IN_FLIGHT is as many), up to some
 * 1,300 events a second at 150 ms where the CPU allows. Each call has a deadline (8 s), so calls that
 * hang hold a few places a while, never all.
 */
export const WEBHOOK_JOB_CONCURRENCY = 200;

/** A change stored longer ago than this and still waiting for WooCommerce is handed over again by the worker. */
export const HANDOVER_SWEEP_GRACE_SECONDS = 5;

/** Changes WooCommerce has applied are deleted this many days after they were made. */
export const APPLIED_CHANGES_KEPT_DAYS = 31;

export interface WorkerOptions {
  config: Config;
  dataSource: DataSource;
  log: Logger;
  concurrency?: number;
  sweepIntervalMs?: number;
  /** PENDING webhooks younger than this are left to their queued job. */
  sweepGraceSeconds?: number;
  dunningIntervalMs?: number;
  customerIndexIntervalMs?: number;
  pauseEndsIntervalMs?: number;
  changesPruneIntervalMs?: number;
  handOverIntervalMs?: number;
  /** How often the card expiry reminders' loop looks whether a pass is due or under way (a pass itself starts at most once per CARD_EXPIRY_REMINDER_INTERVAL_SECONDS). */
  cardExpiryRemindersIntervalMs?: number;
  /** How often the pre-renewal check's loop looks whether a pass is due (a pass itself starts at most once per PRE_RENEWAL_CHECK_INTERVAL_SECONDS). */
  preRenewalCheckIntervalMs?: number;
  heartbeatIntervalMs?: number;
  /** How often the sweep for second captures of one order runs (a minute: each is flagged within a few). */
  secondCapturesIntervalMs?: number;
  /** Called once when the watchdog finds the worker stuck, after it logged why and let go of its claims (main exits). */
  onStall?: (report: StallReport) => void;
  clock?: () => Date;
}

/**
 * A loop's pass (see WorkerLoops) that makes no progress for this many times WORKER_STALL_SECONDS is stuck:
 * longer than a job's, as a pass may ask the providers about a hundred items one after another.
 */
export const LOOP_STALL_FACTOR = 2;

/** What a stuck worker was waiting for, as far as it can tell. */
export interface StallReport {
  /** The loops whose pass was stuck, when they were why. */
  loops: StalledLoop[];
  jobsInFlight: number;
  oldestJobSeconds: number;
  secondsSinceProgress: number;
  database: ReturnType<typeof poolState>;
  providerCalls: ReturnType<typeof providerCallsInFlight> & { waitingAtLimits: number };
}

export interface RunningWorker {
  /** How the worker is known in `payment-hub workers` and the metrics (the prefix of its claim tokens). */
  name: string;
  /** One pass of the sweep and the dunning step, now (tests and the CLI use it). */
  tick(): Promise<void>;
  /** One pass of the pre-renewal check (its loop's work), now (tests). */
  preRenewalPass?(): Promise<void>;
  /**
   * Stops taking work, waits for jobs in progress (`graceMs`, QUEUE_CLOSE_TIMEOUT_MS by default), lets go of
   * those still running and closes the data source.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The background worker: processes queued card-gateway webhooks; sweeps the webhook table for rows
 * whose job never reached Redis or failed for a while (processing them itself while Redis is away);
 * runs the dunning attempts that are due; keeps the customer lookup index current; reactivates
 * paused subscriptions whose pause has ended; has customers e-mailed before their stored cards expire;
 * flags an order captured twice; and deletes the changes WooCommerce applied long ago.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { config, dataSource, log } = options;
  const clock = options.clock ?? (() => new Date());
  const concurrency = options.concurrency ?? WEBHOOK_JOB_CONCURRENCY;
  const shop = buildShopData(config, dataSource, log);
  const hub = buildPaymentHub(config, dataSource, log, 'worker', clock, shop);
  const staff = buildStaffServices(config, dataSource, log, clock, shop);
  const { workers } = hub;
  const jobs = new JobsInHand();
  const processWebhook = (webhookId: number) => jobs.run(webhookId, () => hub.processCardGatewayWebhook.execute(webhookId));
  hub.queue.process(concurrency, (job) => processWebhook(job.webhookId));
  hub.queue.checkStalled(5000);

  let stopping = false;
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>) => {
    running.add(work);
    work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  };

  /**
   * Webhooks no job will bring (Redis lost them or never had them, a worker was killed holding them) and
   * FAILED ones whose retry is due, taken here directly from the table, as many at once as the worker has
   * free places, batch after batch while there are more: the table is the truth, Redis only a shortcut.
   */
  const sweep = async (progress: () => void = () => undefined) => {
    const graceSeconds = options.sweepGraceSeconds ?? 10;
    for (;; progress()) {
      const free = Math.min(200, concurrency - jobs.size);
      if (stopping || free <= 0) return;
      const ids = await hub.webhooks.dueIds(graceSeconds, free);
      if (!ids.length) return;
      const outcomes = await Promise.all(ids.map(processWebhook));
      const processed = outcomes.filter((outcome) => outcome.kind !== 'not_claimed').length;
      if (processed) log.info('webhooks_swept', { count: ids.length, processed });
      if (ids.length < free) return;
    }
  };
  const dunning = async (progress: () => void = () => undefined) => {
    // Open charges whose renewal no longer wants them (paid in the shop, cancelled, dunning stopped, the subscription
    // moved to the other provider) are cancelled first: the renewal's one open charge is then free for what follows.
    const settled = await hub.settleOpenCharges.pass();
    if (settled.cancelled || settled.takenAfterCancel) log.info('open_charges_settled', { ...settled });
    progress();
    // A card charge of the service's that the gateway only authorised: settled now if the settle after its commit was not made.
    const authorisations = await hub.settleOwnAuthorisations.pass();
    if (authorisations.looked) log.info('authorisations_settle_pass', { ...authorisations });
    progress();
    // A payment method the customer switched to since the failure (whatever the provider told, or did not): charged first.
    const switched = await hub.switchedPaymentMethods.pass();
    if (switched) log.info('dunning_switched_payment_methods', { charged: switched });
    progress();
    const summary = await hub.runDueRetries.execute();
    if (summary.attempted) log.info('dunning_attempts', { ...summary });
    progress();
    const deadlines = await hub.dunningDeadlines.execute();
    if (deadlines.reminded || deadlines.lost) log.info('dunning_deadlines', { ...deadlines });
  };
  const customerIndex = async () => {
    const changed = await staff.refreshCustomerContacts.execute({ sweepSeconds: config.customerIndex.sweepSeconds });
    if (changed) log.info('customer_index_refreshed', { changed });
  };
  const pauseEnds = async () => {
    const reactivated = await staff.reactivatePausedSubscriptions.execute(clock());
    if (reactivated) log.info('paused_subscriptions_reactivated', { count: reactivated });
  };
  /** Asks the providers about what is still open on their side (src/reconciliation). */
  const reconcile = async (progress?: () => void) => {
    const summary = await hub.reconciliation.pass(progress);
    if (summary.checked || summary.closed || summary.expired) log.info('reconcile_pass', { ...summary });
  };
  /**
   * E-mails before subscriptions' cards expire (src/dunning/card-expiry-reminders.use-case.ts): a pass over the
   * subscriptions at most once per CARD_EXPIRY_REMINDER_INTERVAL_SECONDS, paced, told to the watchdog batch by
   * batch, and left where it stands when the worker stops (the next run goes on from there).
   */
  const cardExpiryReminders = async (progress: () => void) => {
    await hub.cardExpiryReminders.execute({ progress, stopRequested: () => stopping });
  };
  /**
   * Before the renewal (src/dunning/pre-renewal-check.use-case.ts): the payment methods of the renewals due within
   * PRE_RENEWAL_CHECK_DAYS read at the providers, paced, and a customer whose method will not work asked once.
   */
  const preRenewalCheck = async (progress: () => void) => {
    await hub.preRenewalCheck.execute({ progress, stopRequested: () => stopping });
  };
  /** One renewal, one payment: a second capture of an order is flagged for a refund by staff (src/payments/second-captures.ts). */
  const secondCaptures = async (progress: () => void) => {
    const summary = await hub.secondCaptures.pass(progress);
    if (summary.flagged) log.info('second_captures_pass', { ...summary });
  };
  const loops = new WorkerLoops();
  const loop = (name: string, work: (progress: () => void) => Promise<void>, intervalMs: number) => setInterval(() => {
    if (stopping) return;
    const pass = loops.run(name, work);
    if (pass) track(pass).catch((error) => log.error(`${name}_failed`, { error }));
  }, intervalMs);
  /**
   * Changes still waiting a while after they were stored (a hand-over cut short by a restart, made by the
   * CLI or the API while WordPress was away) are asked for again; the hand-over itself keeps its backoff.
   */
  const handOverWaiting = async () => {
    if (!companionTakesHandOver(await shop.settings.current())) return;
    const ids = await shop.changes.waitingIds(HANDOVER_SWEEP_GRACE_SECONDS, 200, clock());
    for (const id of ids) shop.handOver.notify(id);
  };
  const changesPrune = async () => {
    // Kept as long as Action Scheduler keeps the actions that applied them (a month by default).
    const pruned = await shop.changes.pruneApplied(new Date(clock().getTime() - APPLIED_CHANGES_KEPT_DAYS * 86_400_000), 1000);
    if (pruned) log.info('woocommerce_changes_pruned', { count: pruned });
    await workers.prune();
  };

  const name = hub.webhooks.holder;
  const startedAt = Date.now();
  let stalled = false;
  const report = () => ({
    name, host: os.hostname(), pid: process.pid, upMs: Date.now() - startedAt,
    jobsInFlight: jobs.size, jobsFinished: jobs.finished, sinceProgressMs: jobs.sinceProgressMs(),
  });
  /**
   * Tells the database this worker is alive and how it does, renewing the claims of its jobs in hand in
   * the same round trip; then the watchdog: jobs in hand and none finished for WORKER_STALL_SECONDS means a
   * wait nothing bounded, so the worker says what it waits for, lets go of its claims and asks to be
   * replaced (main exits, PM2 starts a fresh process).
   */
  const heartbeat = async () => {
    const held = jobs.ids();
    await within(workers.report(report(), held.length ? hub.webhooks.renewClaimsStatement(held) : undefined), STOP_STEP_MS)
      .catch((error: unknown) => log.warn('worker_report_failed', { error }));
    if (stalled) return;
    const stuckLoops = loops.stalled(LOOP_STALL_FACTOR * config.workerStallSeconds * 1000);
    if (!stuckLoops.length && !jobs.stalled(config.workerStallSeconds * 1000)) return;
    stalled = true;
    const waitingFor: StallReport = {
      loops: stuckLoops,
      jobsInFlight: jobs.size,
      oldestJobSeconds: Math.round(jobs.oldestMs() / 1000),
      secondsSinceProgress: Math.round(jobs.sinceProgressMs() / 1000),
      database: poolState(dataSource),
      providerCalls: { ...providerCallsInFlight(), waitingAtLimits: providerCallsWaitingAtLimits() },
    };
    log.error('worker_stalled', { ...waitingFor });
    await workers.markStalled(name, JSON.stringify(waitingFor), hub.webhooks.releaseClaimsStatement(jobs.ids()), STOP_STEP_MS)
      .catch((error: unknown) => log.warn('worker_stall_record_failed', { error }));
    options.onStall?.(waitingFor);
  };

  const timers = [
    loop('sweep', sweep, options.sweepIntervalMs ?? 2000),
    loop('dunning', dunning, options.dunningIntervalMs ?? 5000),
    loop('customer_index', customerIndex, options.customerIndexIntervalMs ?? 5000),
    loop('pause_ends', pauseEnds, options.pauseEndsIntervalMs ?? 60_000),
    loop('woocommerce_handover', handOverWaiting, options.handOverIntervalMs ?? 5000),
    loop('woocommerce_changes_prune', changesPrune, options.changesPruneIntervalMs ?? 3_600_000),
    loop('reconcile', reconcile, config.reconcile.intervalSeconds * 1000),
    loop('second_captures', secondCaptures, options.secondCapturesIntervalMs ?? 60_000),
    loop('card_expiry_reminders', cardExpiryReminders, options.cardExpiryRemindersIntervalMs ?? Math.min(60, config.cardExpiryReminders.intervalSeconds) * 1000),
    loop('pre_renewal_check', preRenewalCheck, options.preRenewalCheckIntervalMs ?? Math.min(60, config.preRenewalCheck.intervalSeconds) * 1000),
    loop('heartbeat', heartbeat, options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS),
  ];
  void heartbeat();

  return {
    name,
    async tick() {
      await track(sweep());
      await track(dunning());
      await track(customerIndex());
      await track(pauseEnds());
      await track(handOverWaiting());
      await track(changesPrune());
      await track(reconcile());
      await track(secondCaptures(() => undefined));
    },
    async preRenewalPass() {
      await track(preRenewalCheck(() => undefined));
    },
    async stop(graceMs = QUEUE_CLOSE_TIMEOUT_MS) {
      stopping = true;
      timers.forEach(clearInterval);
      shop.handOver.close();
      // Jobs in progress may finish; none is taken up meanwhile.
      const stopped = Promise.all([hub.queue.close(graceMs), jobs.idle(), Promise.allSettled([...running])]);
      await within(stopped, graceMs).catch(() => undefined);
      await within(hub.providerLimits.close(), STOP_STEP_MS).catch(() => undefined);
      const abandoned = jobs.ids();
      if (abandoned.length) log.warn('worker_jobs_abandoned', { count: abandoned.length });
      // Closing the connections ends the abandoned jobs' transactions uncommitted; then their webhooks are
      // freed for the next worker at once (a COMMIT already on its way lands first, and makes it final).
      await within(dataSource.destroy(), STOP_STEP_MS).catch(() => undefined);
      await workers.leave(name, abandoned.length ? hub.webhooks.releaseClaimsStatement(abandoned) : null, STOP_STEP_MS)
        .catch((error: unknown) => log.warn('worker_leave_failed', { error }));
    },
  };
}
