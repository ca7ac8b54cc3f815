import crypto from 'node:crypto';
import { closeRedis, type RedisClient } from '../data-access/redis';
import type { Logger } from '../logger';
import { BoundedMemo } from '../bounded-memo';

export interface ThrottleLimits {
  maxFailures: number;
  windowSeconds: number;
  blockSeconds: number;
}

/** What the throttle reports as it happens (the API's metrics count blocks). */
export interface ThrottleEvents {
  /** A subject reached the limit here and is now blocked. */
  blocked?(): void;
}

export type ThrottleState = { kind: 'open' } | { kind: 'blocked'; retryAfterSeconds: number } | { kind: 'unavailable' };

/** An attempt holding a place under its subjects' limits until it is known to have failed or not. */
export interface Reservation {
  /** It failed: it stays counted, and a subject that has reached its limit is blocked. */
  failed(): Promise<void>;
  /** It did not fail: its place is given back. Only the first of `failed` and `released` counts. */
  released(): void;
}

export type AttemptVerdict = { kind: 'allowed'; reservation: Reservation } | Exclude<ThrottleState, { kind: 'open' }>;

// An attempt takes a place under the limit of every subject it counts against, before it is evaluated,
// all in one step on the server: refused while any of its subjects (also those it is only checked
// against) is blocked (the milliseconds left returned), or while a counted one has as many failures and
// undecided attempts as it may have failures (-1: busy). KEYS: each counted subject's failure counter
// and block, then the blocks of the subjects only checked. ARGV: limit, window (ms), counted subjects.
const RESERVE = `
local counted = tonumber(ARGV[3])
local wait = 0
for i = 1, counted do wait = math.max(wait, redis.call('PTTL', KEYS[2 * i])) end
for i = 2 * counted + 1, #KEYS do wait = math.max(wait, redis.call('PTTL', KEYS[i])) end
if wait > 0 then return wait end
for i = 1, counted do
  if tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0') >= tonumber(ARGV[1]) then return -1 end
end
for i = 1, counted do
  if redis.call('INCR', KEYS[2 * i - 1]) == 1 then redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[2]) end
end
return 0`;

// A reserved attempt failed: it stays counted. A subject at its limit swaps its counter for a block,
// announced to every instance. ARGV: limit, block seconds, block end, channel, then each subject's id.
const FAIL = `
local blocked = {}
for i = 1, #KEYS, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[1]) then
    local id = ARGV[4 + (i + 1) / 2]
    redis.call('SET', KEYS[i + 1], '1', 'EX', ARGV[2])
    redis.call('DEL', KEYS[i])
    redis.call('PUBLISH', ARGV[4], id .. ' ' .. ARGV[3])
    blocked[#blocked + 1] = id
  end
end
return blocked`;

// A reserved attempt did not fail: its place is given back (a counter a block has replaced stays gone).
const RELEASE = `
for i = 1, #KEYS, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

/**
 * While a subject's places are all taken by attempts not yet decided, an attempt waits this long at most
 * for one of them to be given back (a burst of lookups that succeed), asking again after 5, 10, 20, 40 ms,
 * then every 50 ms; it is refused at once when the attempts it waits for fail and block the subject. At
 * most MAX_WAITING attempts wait at a time in one process; more are refused at once, with a retry worth it
 * this soon.
 */
const BUSY_WAIT_MS = 1000;
const BUSY_ASK_EVERY_MS = 50;
const MAX_WAITING = 100;

/**
 * Failed authentications and failed lookups, counted in Redis per subject (a client address, an API
 * key, an API key at one address: the caller names them). Every attempt takes its place under the limit before it is
 * evaluated and gives it back when it did not fail, so simultaneous attempts cannot overtake the count.
 * Blocks are kept in Redis and announced on a channel; each instance holds the current blocks in
 * memory (filled from Redis whenever its subscription (re)connects), so a blocked subject is refused
 * without a Redis round trip. Without a live subscription the state is `unavailable`, and the caller
 * refuses rather than let guesses through.
 */
export class FailedAttemptThrottle {
  private readonly blocked = new Map<string, number>();
  private readonly channel: string;
  private subscriber: RedisClient | null = null;
  private subscribed = false;
  private listening = false;
  /** Attempts waiting here for a place (MAX_WAITING). */
  private waiting = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly namespace: string,
    private readonly limits: ThrottleLimits,
    private readonly log: Logger,
    private readonly events: ThrottleEvents = {},
  ) {
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

  /** Whether block announcements are being heard (without them every request is refused). */
  get available(): boolean {
    return this.listening;
  }

  /** What is known here without asking Redis: a subject blocked, or no live subscription to know it by. */
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

  /**
   * Takes a place for one attempt under the limit of every subject in `counted`, before the attempt is
   * evaluated, so that however many arrive at once, no more attempts are evaluated than a subject may
   * fail. A block of any subject in `checked` refuses the attempt too, but it does not count there.
   * While the places are only taken by attempts still undecided, it waits briefly for one (BUSY_WAIT_MS).
   */
  async reserve(counted: string[], checked: string[] = []): Promise<AttemptVerdict> {
    const deadline = Date.now() + BUSY_WAIT_MS;
    let waiting = false;
    try {
      for (let pause = 5; ; pause = Math.min(2 * pause, BUSY_ASK_EVERY_MS)) {
        const verdict = await this.tryReserve(counted, checked);
        if (verdict.kind !== 'busy') return verdict;
        if (Date.now() + pause > deadline || (!waiting && this.waiting >= MAX_WAITING)) return { kind: 'blocked', retryAfterSeconds: 1 };
        if (!waiting) this.waiting += 1;
        waiting = true;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    } finally {
      if (waiting) this.waiting -= 1;
    }
  }

  private async tryReserve(counted: string[], checked: string[]): Promise<AttemptVerdict | { kind: 'busy' }> {
    for (const subject of [...counted, ...checked]) {
      const known = this.state(subject);
      if (known.kind !== 'open') return known;
    }
    const { windowSeconds, maxFailures, blockSeconds } = this.limits;
    const ids = counted.map((subject) => this.id(subject));
    const keys = ids.flatMap((id) => [`${this.namespace}:failures:${id}`, `${this.namespace}:blocked:${id}`]);
    const checkedKeys = checked.map((subject) => `${this.namespace}:blocked:${this.id(subject)}`);
    let waitMs: number;
    try {
      waitMs = Number(await this.redis.eval(RESERVE, {
        keys: [...keys, ...checkedKeys], arguments: [String(maxFailures), String(windowSeconds * 1000), String(ids.length)],
      }));
    } catch {
      // Redis is away: the subscription drops too, and requests are refused until it is back.
      return { kind: 'unavailable' };
    }
    if (waitMs < 0) return { kind: 'busy' };
    if (waitMs > 0) return { kind: 'blocked', retryAfterSeconds: Math.ceil(waitMs / 1000) };

    let settled = false;
    const settle = () => !settled && (settled = true);
    return {
      kind: 'allowed',
      reservation: {
        failed: async () => {
          if (!settle()) return;
          const until = Date.now() + blockSeconds * 1000;
          try {
            const blockedNow = await this.redis.eval(FAIL, { keys, arguments: [String(maxFailures), String(blockSeconds), String(until), this.channel, ...ids] }) as string[];
            for (const id of blockedNow) {
              this.blocked.set(id, until);
              this.events.blocked?.();
            }
          } catch {
            // The attempt stays counted in Redis as reserved; the counter's window ends it.
          }
        },
        released: () => {
          if (!settle()) return;
          this.redis.eval(RELEASE, { keys, arguments: [] }).catch(() => undefined);
        },
      },
    };
  }
}
