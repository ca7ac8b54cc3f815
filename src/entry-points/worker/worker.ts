import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import { buildPaymentHub } from '../../composition';
import { buildStaffServices } from '../../staff-composition';
import { buildShopData } from '../../shop-data';
import type { Logger } from '../../logger';

/** How long a graceful stop waits for jobs in progress; PM2's kill_timeout for the worker is longer. */
export const QUEUE_CLOSE_TIMEOUT_MS = 30_000;

/**
 * Webhook jobs processed at once. A job spends most of its time waiting for the provider (150 ms is
 * common), not on the CPU, so this follows the provider's latency, not the cores: at 150 ms, 200 places
 * keep the provider's connections (PROVIDER_MAX_IN_FLIGHT, 128) busy, up to some 850 events a second.
 * Each provider call has a deadline (8 s, the wait for a connection included), so calls that hang hold
 * a few of these places for a while, never all of them.
 */
export const WEBHOOK_JOB_CONCURRENCY = 200;

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
  clock?: () => Date;
}

export interface RunningWorker {
  /** One pass of the sweep and the dunning step, now (tests and the CLI use it). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The background worker: processes queued card-gateway webhooks; sweeps the webhook table for rows
 * whose job never reached Redis or failed for a while (processing them itself while Redis is away);
 * runs the dunning attempts that are due; keeps the customer lookup index current; reactivates
 * paused subscriptions whose pause has ended; and deletes the changes WooCommerce applied long ago.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { config, dataSource, log } = options;
  const clock = options.clock ?? (() => new Date());
  const shop = buildShopData(config, dataSource, log);
  const hub = buildPaymentHub(config, dataSource, log, 'worker', clock, shop);
  const staff = buildStaffServices(config, dataSource, log, clock, shop);
  const process = (webhookId: number) => hub.processCardGatewayWebhook.execute(webhookId);
  hub.queue.process(options.concurrency ?? WEBHOOK_JOB_CONCURRENCY, (job) => process(job.webhookId));
  hub.queue.checkStalled(5000);

  let stopping = false;
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>) => {
    running.add(work);
    work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  };

  const sweep = async () => {
    const ids = await hub.webhooks.dueIds(options.sweepGraceSeconds ?? 10, 200);
    let processedHere = 0;
    for (const id of ids) {
      if (stopping) return;
      if (await hub.queue.enqueue(id)) continue;
      await process(id);
      processedHere += 1;
    }
    if (ids.length) log.info('webhooks_swept', { count: ids.length, queued: ids.length - processedHere, processed: processedHere });
  };
  const dunning = async () => {
    const summary = await hub.runDueRetries.execute();
    if (summary.attempted) log.info('dunning_attempts', { ...summary });
  };
  const customerIndex = async () => {
    const changed = await staff.refreshCustomerContacts.execute();
    if (changed) log.info('customer_index_refreshed', { changed });
  };
  const pauseEnds = async () => {
    const reactivated = await staff.reactivatePausedSubscriptions.execute(clock());
    if (reactivated) log.info('paused_subscriptions_reactivated', { count: reactivated });
  };
  const loop = (name: string, work: () => Promise<void>, intervalMs: number) => {
    let busy = false;
    return setInterval(() => {
      if (busy || stopping) return;
      busy = true;
      track(work()).catch((error) => log.error(`${name}_failed`, { error })).finally(() => { busy = false; });
    }, intervalMs);
  };
  const changesPrune = async () => {
    // Kept as long as Action Scheduler keeps the actions that applied them (a month by default).
    const pruned = await shop.changes.pruneApplied(new Date(clock().getTime() - APPLIED_CHANGES_KEPT_DAYS * 86_400_000), 1000);
    if (pruned) log.info('woocommerce_changes_pruned', { count: pruned });
  };
  const timers = [
    loop('sweep', sweep, options.sweepIntervalMs ?? 2000),
    loop('dunning', dunning, options.dunningIntervalMs ?? 5000),
    loop('customer_index', customerIndex, options.customerIndexIntervalMs ?? 5000),
    loop('pause_ends', pauseEnds, options.pauseEndsIntervalMs ?? 60_000),
    loop('woocommerce_changes_prune', changesPrune, options.changesPruneIntervalMs ?? 3_600_000),
  ];

  return {
    async tick() {
      await track(sweep());
      await track(dunning());
      await track(customerIndex());
      await track(pauseEnds());
      await track(changesPrune());
    },
    async stop() {
      stopping = true;
      timers.forEach(clearInterval);
      await hub.queue.close(QUEUE_CLOSE_TIMEOUT_MS);
      await Promise.allSettled([...running]);
    },
  };
}
