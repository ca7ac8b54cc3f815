import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import BeeQueue from 'bee-queue';
import type { Logger } from '../logger';
import { within } from '../shared/within';
import { pingWithin, REDIS_ANSWER_BOUND_MS, REDIS_CHECK_EVERY_MS, REDIS_KEEPALIVE_MS } from './redis';

/**
 * node_redis 3, as bee-queue loads it. The queue's clients are made here rather than by bee-queue, so that
 * each is known from its first moment: bee-queue shows a client only once it is ready, and one whose new
 * connection never answers (Redis vanished behind a firewall) would otherwise never be.
 */
const legacyRedis = createRequire(require.resolve('bee-queue'))('redis') as { createClient(options: object): QueueClient };

/** What the queue uses of a node_redis 3 client. */
interface QueueClient extends EventEmitter {
  ready: boolean;
  stream: Writable | undefined;
  ping(callback: (error: Error | null) => void): void;
  duplicate(): QueueClient;
  end(flush: boolean): void;
}

/** The background job of SPEC 6.3: one stored card-gateway webhook to process. */
export const WEBHOOK_JOB = 'paymenthub/webhook/process';

export interface WebhookJob {
  webhookId: number;
}

/** A queue not connected this long after it was opened counts as unavailable (and is said to be available once it connects). */
const FIRST_CONNECTION_WAIT_MS = 2000;

/** The pause before an instance that failed to start is replaced. */
const RESTART_PAUSE_MS = 500;

/** Long enough for any connection attempt of a replaced instance to have ended one way or the other. */
const LATE_CLIENT_WAIT_MS = 30_000;

/** The longest one job holds one of the worker's places. */
const JOB_DEADLINE_MS = 60_000;

/**
 * bee-queue carrying webhook ids. It only speeds processing up: the webhook rows in MySQL are the
 * truth, and the worker's sweep picks up any row whose job was never queued or was lost. Commands
 * fail at once while Redis is away instead of queueing in memory.
 *
 * As soon as Redis is lost the queue is opened again on fresh connections, which wait for Redis to come
 * back, and the old instance is let go once its jobs in progress have finished. A bee-queue instance
 * does not recover by itself: it loads its Lua scripts into Redis only when it first connects (a
 * restarted Redis has forgotten them, so every job save and stalled check would fail with NOSCRIPT from
 * then on). Nor may its worker be left to ride out an outage: each of its loops (one per place,
 * `concurrency` of them once it has been busy) asks Redis for the next job again after a wait that
 * doubles on every failure, and the loops share that wait, so with 200 loops it passes what a Node
 * timer holds (2^31 ms) at the first failure; Node then waits 1 ms instead (with a TimeoutOverflowWarning
 * on stderr each time), and the loops ask again and again, taking the process's one thread from the
 * work it can still do from the table. A fresh instance asks nothing of Redis until it has connected.
 */
export class WebhookQueue {
  private queue: BeeQueue<WebhookJob>;
  private readonly retiring = new Set<Promise<void>>();
  /** Instances that failed to start, whose late clients are still to be ended. */
  private readonly discarded = new Set<BeeQueue<WebhookJob>>();
  private handler: { concurrency: number; handle: (job: BeeQueue.Job<WebhookJob>) => Promise<unknown> } | null = null;
  private stalledTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private down = false;
  /** Instances that have connected (and loaded their scripts) at least once. */
  private readonly connected = new WeakSet<BeeQueue<WebhookJob>>();

  constructor(private readonly redisUrl: string, private readonly namespace: string, private readonly role: 'producer' | 'worker', private readonly log: Logger) {
    this.queue = this.open();
  }

  private open(): BeeQueue<WebhookJob> {
    const clients: QueueClient[] = [];
    const makeClient = (): QueueClient => {
      const client = legacyRedis.createClient({
        url: this.redisUrl,
        enable_offline_queue: false,
        socket_keepalive: true,
        socket_initial_delay: REDIS_KEEPALIVE_MS,
        // Reconnect for as long as the queue is open; once closing, give up so no timer outlives it.
        retry_strategy: (options: { attempt: number }) => (this.closing || queue !== this.queue ? new Error('queue closed') : Math.min(options.attempt * 200, 2000)),
      });
      // Its failures before bee-queue listens (while connecting) are the outage, said once by the queue.
      client.on('error', () => undefined);
      // bee-queue makes its blocking client as a duplicate of the first.
      client.duplicate = makeClient;
      clients.push(client);
      return client;
    };
    const queue: BeeQueue<WebhookJob> = new BeeQueue<WebhookJob>(WEBHOOK_JOB, {
      prefix: `bq:${this.namespace}`,
      redis: makeClient() as unknown as BeeQueue.QueueSettings['redis'],
      quitCommandClient: true,
      isWorker: this.role === 'worker',
      getEvents: false,
      sendEvents: false,
      storeJobs: false,
      removeOnSuccess: true,
      removeOnFailure: true,
      stallInterval: 5000,
      activateDelayedJobs: false,
    });
    // Commands failing while Redis is away are expected; the outage itself is logged once below.
    queue.on('error', () => undefined);
    queue.ready().then(() => {
      this.connected.add(queue);
      // Connected only after the queue was closed: let go of it again at once.
      if (this.closing) return void this.shut(queue, 1000);
      if (queue !== this.queue) return;
      this.watch(queue);
      if (this.down) this.log.info('queue_available');
      this.down = false;
    }, () => this.failedToStart(queue));
    // Redis away from the start (or lost again while reconnecting): saves fail at once instead of each waiting.
    setTimeout(() => {
      if (!this.connected.has(queue) && queue === this.queue && !this.closing) this.unavailable();
    }, FIRST_CONNECTION_WAIT_MS).unref();
    if (this.handler) queue.process(this.handler.concurrency, this.handler.handle);
    clientsOf.set(queue, clients);
    this.checkConnections(queue, clients);
    return queue;
  }

  /**
   * The queue's connections that stop answering without closing are dropped (see redis.ts): its command
   * client is asked PING every REDIS_CHECK_EVERY_MS once the instance is ready, and a PING unanswered within
   * REDIS_ANSWER_BOUND_MS drops every connection of the instance, which is then replaced (watch); clients not
   * ready that long after their connection was opened have it dropped, so they connect again.
   */
  private checkConnections(queue: BeeQueue<WebhookJob>, clients: QueueClient[]): void {
    const [commands] = clients;
    const check = pingWithin(() => new Promise<void>((resolve, reject) => commands!.ping((error) => (error ? reject(error) : resolve()))), () => {
      if (queue !== this.queue) return;
      this.log.warn('queue_connection_dead', { boundMs: REDIS_ANSWER_BOUND_MS });
      for (const client of clients) client.stream?.destroy();
    });
    let notReadySince = Date.now();
    const timer = setInterval(() => {
      if (this.closing || queue !== this.queue) return clearInterval(timer);
      if (!this.connected.has(queue) || clients.some((client) => !client.ready)) {
        if (Date.now() - notReadySince < FIRST_CONNECTION_WAIT_MS + REDIS_ANSWER_BOUND_MS) return;
        notReadySince = Date.now();
        for (const client of clients) if (!client.ready) client.stream?.destroy();
        return;
      }
      notReadySince = Date.now();
      check();
    }, REDIS_CHECK_EVERY_MS).unref();
  }

  /**
   * bee-queue gives an instance up for good when one of its clients fails before it is ready (Redis
   * dying, or not yet answering, while the client says hello): nothing would take jobs again. It is
   * replaced by a fresh instance, after a pause so that a Redis refusing every connection is not
   * asked in a tight loop.
   */
  private failedToStart(queue: BeeQueue<WebhookJob>): void {
    if (queue !== this.queue || this.closing) return;
    this.unavailable();
    setTimeout(() => {
      if (queue !== this.queue || this.closing) return;
      this.queue = this.open();
      // Its other client may still be connecting; it is ended now and, should it connect later, then or at close.
      endClients(queue);
      this.discarded.add(queue);
      setTimeout(() => {
        endClients(queue);
        this.discarded.delete(queue);
      }, LATE_CLIENT_WAIT_MS).unref();
    }, RESTART_PAUSE_MS).unref();
  }

  private unavailable(): void {
    if (!this.down) this.log.warn('queue_unavailable');
    this.down = true;
  }

  /**
   * Notices a connection dropping: the instance is replaced at once by a fresh one, which connects (and
   * loads its scripts) when Redis is back, and is let go as soon as its jobs in progress have finished.
   * Closing it stops its worker's loops before they see their first failure: a client says 'end' before
   * it fails the commands it had sent, and a loop whose queue is closing takes that failure as the end.
   */
  private watch(queue: BeeQueue<WebhookJob>): void {
    const clients = queue as unknown as Record<'client' | 'bclient', EventEmitter | null>;
    const lost = () => {
      if (queue !== this.queue || this.closing) return;
      this.unavailable();
      this.queue = this.open();
      this.retire(queue);
    };
    for (const client of [clients.client, clients.bclient]) {
      client?.on('reconnecting', lost);
      client?.on('end', lost);
      if (client) writeOncePerTurn(client as unknown as LegacyRedisClient);
    }
  }

  /** Lets an old instance finish its jobs in progress, then closes its connections. */
  private retire(queue: BeeQueue<WebhookJob>): void {
    const done = this.shut(queue, 30_000).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  /** Queues the webhook; false when Redis did not take it within `timeoutMs` (the sweep will). */
  async enqueue(webhookId: number, timeoutMs = 500): Promise<boolean> {
    if (this.down) return false;
    const job = this.queue.createJob({ webhookId }).setId(String(webhookId));
    return within(job.save(), timeoutMs).then(() => true, () => false);
  }

  /**
   * Runs `handler` for each job, `concurrency` at once. A job holds its place for JOB_DEADLINE_MS at most
   * (the webhook itself stays claimed, and is taken up again by the sweep once its claim runs out). The
   * deadline is kept here rather than as bee-queue's job timeout, which builds an error for every job.
   */
  process(concurrency: number, handler: (job: WebhookJob) => Promise<unknown>): void {
    const handle = (job: BeeQueue.Job<WebhookJob>) => within(handler(job.data), JOB_DEADLINE_MS);
    this.handler = { concurrency, handle };
    this.queue.process(concurrency, handle);
  }

  /**
   * Re-queues jobs whose worker stopped reporting (a crashed or stuck process), every `intervalMs`.
   * The check is timed here rather than by bee-queue's own interval: that one leaves a failed check
   * (Redis away) as an unhandled rejection, which ends the process.
   */
  checkStalled(intervalMs: number): void {
    let busy = false;
    this.stalledTimer = setInterval(() => {
      if (busy || this.down) return;
      busy = true;
      this.queue.checkStalledJobs().then((stalled) => {
        if (stalled) this.log.warn('stalled_jobs_requeued', { count: stalled });
      }, (error: Error) => {
        if (!this.down) this.log.warn('stalled_check_failed', { error: error.message });
      }).finally(() => { busy = false; });
    }, intervalMs);
  }

  /** Jobs waiting, being processed and delayed; one round trip. */
  async counts(): Promise<{ waiting: number; active: number; delayed: number }> {
    const health = await this.queue.checkHealth();
    return { waiting: health.waiting, active: health.active, delayed: health.delayed };
  }

  /** Waits up to `timeoutMs` for jobs in progress, then lets go of Redis even if it is unreachable. */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    clearInterval(this.stalledTimer);
    for (const queue of this.discarded) endClients(queue);
    await Promise.all([this.shut(this.queue, timeoutMs), ...this.retiring]);
  }

  private async shut(queue: BeeQueue<WebhookJob>, timeoutMs: number): Promise<void> {
    // One that never connected has no job and no client yet; its connection attempts end with `closing`.
    if (!this.connected.has(queue)) return;
    const closed = queue.close(timeoutMs).catch((error) => this.log.warn('queue_close_timeout', { error: error.message }));
    // A client that never reached Redis would wait for it forever to accept QUIT.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, timeoutMs + 500).unref())]);
    endClients(queue);
  }
}

/** What writeOncePerTurn uses of a node_redis 3 client, bee-queue's. */
interface LegacyRedisClient {
  stream: Writable | undefined;
  write(data: string | Buffer): void;
}

/**
 * The commands a client is given in one turn of the event loop go to Redis in one socket write. bee-queue's
 * client writes each command on its own: with 200 jobs at once that was a write per job for each of its
 * steps (take the next, read it, hold it, finish it), about half of the worker's socket writes, and where
 * the worker and Redis share a machine a socket write costs both more than the command itself. The socket is
 * corked at the turn's first command and uncorked once the turn's callbacks have run, so no command waits
 * longer than that turn.
 */
function writeOncePerTurn(client: LegacyRedisClient): void {
  const write = client.write;
  let corked = false;
  client.write = function writeCorked(this: LegacyRedisClient, data: string | Buffer) {
    const stream = this.stream;
    if (!corked && stream) {
      corked = true;
      stream.cork();
      setImmediate(() => {
        corked = false;
        stream.uncork();
      });
    }
    write.call(this, data);
  };
}

/** Ends an instance's Redis connections at once, whatever state they are in. */
function endClients(queue: BeeQueue<WebhookJob>): void {
  for (const client of clientsOf.get(queue) ?? []) client.end(true);
}

/** Every client made for an instance, ready or not. */
const clientsOf = new WeakMap<BeeQueue<WebhookJob>, QueueClient[]>();
