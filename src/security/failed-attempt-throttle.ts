import crypto from 'node:crypto';
import { closeRedis, type RedisClient } from '../data-access/redis';
import type { Logger } from '../logger';
import { BoundedMemo } from '../bounded-memo';

export interface ThrottleLimits {
  maxFailures: number;
  windowSeconds: number;
  blockSeconds: number;
}

export type ThrottleState = { kind: 'open' } | { kind: 'blocked'; retryAfterSeconds: number } | { kind: 'unavailable' };

// Counts a failure and, at the limit, swaps the counter for a block and announces it to every
// instance, in one step on the server so that all instances share one count.
const RECORD_FAILURE = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if failures >= tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[3], ARGV[4])
  return 1
end
return 0`;

/**
 * Failed authentications and failed lookups, counted in Redis per subject (an API key, or a client
 * address when no credentials were sent). Blocks are kept in Redis and announced on a channel; each
 * instance holds the current blocks in memory (filled from Redis whenever its subscription
 * (re)connects), so a request that fails nothing costs no Redis round trip. Without a live
 * subscription the state is `unavailable`, and the caller refuses rather than let guesses through.
 */
export class FailedAttemptThrottle {
  private readonly blocked = new Map<string, number>();
  private readonly channel: string;
  private subscriber: RedisClient | null = null;
  private subscribed = false;
  private listening = false;

  constructor(private readonly redis: RedisClient, private readonly namespace: string, private readonly limits: ThrottleLimits, private readonly log: Logger) {
    this.channel = `${namespace}:blocks`;
  }

  /**
   * Subscribes to block announcements, and resyncs whenever the subscription comes back. Waits up
   * to `waitMs` for the first sync; without Redis the service starts anyway and refuses lookups.
   */
  async start(waitMs = 3000): Promise<void> {
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    let synced: () => void = () => undefined;
    const firstSync = new Promise<void>((resolve) => { synced = resolve; });
    subscriber.on('error', () => { this.listening = false; });
    subscriber.on('end', () => { this.listening = false; });
    subscriber.on('ready', () => void this.resync().then(synced));
    subscriber.connect().catch(() => undefined);
    await Promise.race([firstSync, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
  }

  async stop(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    this.listening = false;
    if (subscriber) await closeRedis(subscriber);
  }

  /** Subscribe first, then read the blocks already in Redis, so none announced in between is missed. */
  private async resync(): Promise<void> {
    const subscriber = this.subscriber;
    if (!subscriber) return;
    try {
      // The client resubscribes by itself after a reconnect; only the blocks need reading again.
      if (!this.subscribed) await subscriber.subscribe(this.channel, (message) => this.remember(message));
      this.subscribed = true;
      for await (const keys of this.redis.scanIterator({ MATCH: `${this.namespace}:blocked:*`, COUNT: 500 })) {
        for (const key of keys) {
          const ttl = await this.redis.pTTL(key);
          if (ttl > 0) this.blocked.set(key.slice(key.lastIndexOf(':') + 1), Date.now() + ttl);
        }
      }
      this.listening = true;
    } catch (error) {
      this.log.warn('throttle_resync_failed', { error });
    }
  }

  private remember(message: string): void {
    const [id, until] = message.split(' ');
    if (id && Number(until) > Date.now()) this.blocked.set(id, Number(until));
  }

  private readonly ids = new BoundedMemo<string>(10_000);

  /** Subjects are hashed so API key names and addresses do not sit in Redis as they are. */
  private id(subject: string): string {
    return this.ids.get(subject, () => crypto.createHash('sha256').update(subject).digest('hex').slice(0, 32));
  }

  state(subject: string): ThrottleState {
    if (!this.listening) return { kind: 'unavailable' };
    const id = this.id(subject);
    const until = this.blocked.get(id);
    if (until === undefined) return { kind: 'open' };
    const left = until - Date.now();
    if (left > 0) return { kind: 'blocked', retryAfterSeconds: Math.ceil(left / 1000) };
    this.blocked.delete(id);
    return { kind: 'open' };
  }

  async recordFailure(subject: string): Promise<void> {
    const { windowSeconds, maxFailures, blockSeconds } = this.limits;
    const id = this.id(subject);
    const until = Date.now() + blockSeconds * 1000;
    try {
      const blockedNow = await this.redis.eval(RECORD_FAILURE, {
        keys: [`${this.namespace}:failures:${id}`, `${this.namespace}:blocked:${id}`, this.channel],
        arguments: [String(windowSeconds), String(maxFailures), String(blockSeconds), `${id} ${until}`],
      });
      if (blockedNow === 1) this.blocked.set(id, until);
    } catch {
      // Redis is away: the subscription drops too, and requests are refused until it is back.
    }
  }
}
