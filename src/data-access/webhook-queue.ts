import BeeQueue from 'bee-queue';
import type { Logger } from '../logger';

/** The background job of SPEC 6.3: one stored card-gateway webhook to process. */
export const WEBHOOK_JOB = 'paymenthub/webhook/process';

export interface WebhookJob {
  webhookId: number;
}

/**
 * bee-queue carrying webhook ids. It only speeds processing up: the webhook rows in MySQL are the
 * truth, and the worker's sweep picks up any row whose job was never queued or was lost. Commands
 * fail at once while Redis is away instead of queueing in memory.
 */
export class WebhookQueue {
  private readonly queue: BeeQueue<WebhookJob>;
  private closing = false;

  constructor(redisUrl: string, namespace: string, role: 'producer' | 'worker', private readonly log: Logger) {
    this.queue = new BeeQueue<WebhookJob>(WEBHOOK_JOB, {
      prefix: `bq:${namespace}`,
      redis: {
        url: redisUrl,
        enable_offline_queue: false,
        // Reconnect for as long as the queue is open; once closing, give up so no timer outlives it.
        retry_strategy: (options: { attempt: number }) => (this.closing ? new Error('queue closed') : Math.min(options.attempt * 200, 2000)),
      },
      isWorker: role === 'worker',
      getEvents: false,
      sendEvents: false,
      storeJobs: false,
      removeOnSuccess: true,
      removeOnFailure: true,
      stallInterval: 5000,
      activateDelayedJobs: false,
    });
    let down = false;
    this.queue.on('error', (error) => {
      if (!down) log.warn('queue_unavailable', { error: error.message });
      down = true;
    });
    this.queue.on('ready', () => {
      if (down) log.info('queue_available');
      down = false;
    });
  }

  /** Queues the webhook; false when Redis did not take it within `timeoutMs` (the sweep will). */
  async enqueue(webhookId: number, timeoutMs = 500): Promise<boolean> {
    const job = this.queue.createJob({ webhookId }).setId(String(webhookId)).timeout(60_000);
    const saved = job.save().then(() => true, () => false);
    const late = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
    return Promise.race([saved, late]);
  }

  process(concurrency: number, handler: (job: WebhookJob) => Promise<unknown>): void {
    this.queue.process(concurrency, async (job) => handler(job.data));
  }

  /** Re-queues jobs whose worker stopped reporting (a crashed or stuck process). */
  checkStalled(intervalMs: number): void {
    this.queue.checkStalledJobs(intervalMs, (error, stalled) => {
      if (error) this.log.warn('stalled_check_failed', { error: error.message });
      else if (stalled) this.log.warn('stalled_jobs_requeued', { count: stalled });
    });
  }

  /** Waits up to `timeoutMs` for jobs in progress, then lets go of Redis even if it is unreachable. */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    const closed = this.queue.close(timeoutMs).catch((error) => this.log.warn('queue_close_timeout', { error: error.message }));
    // A client that never reached Redis would wait for it forever to accept QUIT.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, timeoutMs + 500).unref())]);
    const clients = this.queue as unknown as Record<'client' | 'bclient' | 'eclient', { end?(flush: boolean): void } | undefined>;
    for (const client of [clients.client, clients.bclient, clients.eclient]) client?.end?.(true);
  }
}
