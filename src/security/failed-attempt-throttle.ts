import crypto from 'node:crypto';
import { closeRedis, RedisScript, watchRedisConnection, type RedisClient } from '../data-access/redis';
import type { Logger } from '../logger';
import { BoundedMemo } from '../shared/bounded-memo';

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
  /** It failed: its place becomes a failure counted for the window, and a subject that has reached its limit is blocked. */
  failed(): Promise<void>;
  /** It did not fail: its place is given back. Only the first of `failed` and `released` counts. */
  released(): void;
}

/**
 * Whoever an attempt is made for (the HTTP request): once it is destroyed nobody waits for the answer, so
 * a wait for a place ends and a place it holds is no longer kept alive.
 */
export interface AttemptHolder {
  readonly destroyed: boolean;
}

export type AttemptVerdict =
  | { kind: 'allowed'; reservation: Reservation }
  | Exclude<ThrottleState, { kind: 'open' }>
  /** Its holder went away before it had a place: nobody to answer, and no place taken. */
  | { kind: 'abandoned' };

const STAYS: AttemptHolder = { destroyed: false };
const ABANDONED: AttemptVerdict = { kind: 'abandoned' };

/**
 * A place is a token in the subject's sorted set of places, scored by the moment (Redis' clock) its
 * lease ends; a failure is a count in the subject's failure counter, which lives for the window. Places
 * are kept apart from failures so that a place whose holder vanishes (a killed process, a request that
 * never settles) ends with its lease rather than with the failure window.
 *
 * The lease outlives any normal attempt by far (a lookup takes milliseconds). No fixed lease could cover
 * every live attempt (a body may trickle in for up to Node's 300 s request timeout, a site extension has
 * no deadline), so an attempt that takes longer has its lease renewed while its holder is still there;
 * see RENEW_AFTER_MS. It is short so that the places of a process that dies are free again within seconds.
 */
const LEASE_MS = 5000;
/**
 * A held place is renewed once it is this old, by one process-wide sweep every RENEW_SWEEP_MS: at the
 * latest 3 s into its lease, leaving 2 s for event loop delay and the round trip. Attempts shorter than
 * this (nearly all) cost no renewal at all.
 */
const RENEW_AFTER_MS = 2000;
const RENEW_SWEEP_MS = 1000;
/** The first and the longest wait before the blocks are read again after a failed read. */
const RESYNC_RETRY_FIRST_MS = 100;
const RESYNC_RETRY_LAST_MS = 2000;

// Redis' own clock for lease ends, so that API processes on several hosts agree on them.
const NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

// A subject at its limit: its failure counter is swapped for a block, announced to every instance; the
// subject's id is returned.
const BLOCK = `local function block(failures, blocked, seconds, ends, channel, id)
  redis.call('SET', blocked, '1', 'EX', seconds)
  redis.call('DEL', failures)
  redis.call('PUBLISH', channel, id .. ' ' .. ends)
  return id
end`;

// An attempt takes a place under the limit of every subject it counts against, before it is evaluated,
// all in one step on the server. Refused while any of its subjects (also those it is only checked
// against) is blocked: the milliseconds left. A counted subject whose failures already reach the limit
// (one lowered since they were counted) is blocked now, as a failure reaching it would have done, and
// announced: the ids blocked. Busy (-1) while a counted subject has as many failures and live places as
// it may have failures (expired places pruned first). Else the place is taken (0).
// KEYS: each counted subject's failure counter, block and places, then the blocks of the subjects only
// checked. ARGV: limit, counted subjects, token, lease (ms), block seconds, block end, channel, then
// each counted subject's id. A busy subject is announced as wanted, so that instances keeping spare
// places for it give them back at once (see SPARE_IDLE_MS).
const RESERVE = `
${BLOCK}
local limit, counted = tonumber(ARGV[1]), tonumber(ARGV[2])
local wait = 0
for i = 1, counted do wait = math.max(wait, redis.call('PTTL', KEYS[3 * i - 1])) end
for i = 3 * counted + 1, #KEYS do wait = math.max(wait, redis.call('PTTL', KEYS[i])) end
if wait > 0 then return wait end
${NOW_MS}
local blocked, busy = {}, false
for i = 1, counted do
  local failures = tonumber(redis.call('GET', KEYS[3 * i - 2]) or '0')
  if failures >= limit then
    blocked[#blocked + 1] = block(KEYS[3 * i - 2], KEYS[3 * i - 1], ARGV[5], ARGV[6], ARGV[7], ARGV[7 + i])
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[3 * i], '-inf', now)
    if failures + redis.call('ZCARD', KEYS[3 * i]) >= limit then busy = true end
  end
end
if #blocked > 0 then return blocked end
if busy then
  for i = 1, counted do redis.call('PUBLISH', ARGV[7], 'want ' .. ARGV[7 + i]) end
  return -1
end
for i = 1, counted do
  redis.call('ZADD', KEYS[3 * i], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[3 * i], ARGV[4])
end
return 0`;

// A reserved attempt failed: its place becomes a failure in the window's counter (the window starts
// with the first). A subject at its limit swaps its counter for a block, announced to every instance;
// an attempt that was already under way when its subject was blocked adds nothing to the block.
// KEYS: each counted subject's failure counter, block and places. ARGV: limit, window (ms), block
// seconds, block end, channel, token, then each subject's id.
const FAIL = `
${BLOCK}
local blocked = {}
for i = 1, #KEYS / 3 do
  redis.call('ZREM', KEYS[3 * i], ARGV[6])
  if redis.call('EXISTS', KEYS[3 * i - 1]) == 0 then
    local failures = redis.call('INCR', KEYS[3 * i - 2])
    if failures == 1 then redis.call('PEXPIRE', KEYS[3 * i - 2], ARGV[2]) end
    if failures >= tonumber(ARGV[1]) then
      blocked[#blocked + 1] = block(KEYS[3 * i - 2], KEYS[3 * i - 1], ARGV[3], ARGV[4], ARGV[5], ARGV[6 + i])
    end
  end
end
return blocked`;

// Places given back. KEYS: places, one per token. ARGV: the tokens.
const RELEASE = `
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[i]) end
return 0`;

// Places still held get a new lease; one that has already lapsed is not taken again (it may have been
// given to another attempt). KEYS: places, one per token. ARGV: lease (ms), then the tokens.
const RENEW = `
${NOW_MS}
for i = 1, #KEYS do
  local ends = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
  if ends and tonumber(ends) > now then
    redis.call('ZADD', KEYS[i], now + tonumber(ARGV[1]), ARGV[i + 1])
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  end
end
return 0`;

const SCRIPTS = { reserve: new RedisScript(RESERVE), fail: new RedisScript(FAIL), release: new RedisScript(RELEASE), renew: new RedisScript(RENEW) };

/**
 * A place held here: by an undecided attempt (renewed while its holder is there), or spare, kept for the
 * next attempt of the same subjects (renewed while it is kept).
 */
interface HeldPlace {
  token: string;
  /** The counted subjects' ids, and the keys the scripts take for them. */
  ids: string[];
  keys: string[];
  places: string[];
  /** The counted subjects' ids as one string: the spare places of the same subjects are kept under it. */
  subjects: string;
  holder: AttemptHolder;
  /** performance.now() when its lease was last asked for and granted (asked before the round trip, so on the safe side). */
  leasedAt: number;
  /** performance.now() since when it has been spare; undefined while an attempt holds it. */
  spareSince?: number;
}

/**
 * While a subject's places are all taken by attempts not yet decided, an attempt waits this long at most
 * for one of them to be given back (a burst of lookups that succeed), asking again after 5, 10, 20, 40 ms,
 * then every 50 ms; it is refused at once when the attempts it waits for fail and block the subject, and
 * it stops waiting when its holder goes away. At most MAX_WAITING attempts wait at a time in one process;
 * more are refused at once, with a retry worth it this soon.
 */
const BUSY_WAIT_MS = 1000;
const BUSY_ASK_EVERY_MS = 50;
const MAX_WAITING = 100;
/**
 * A place given back by an attempt that did not fail is kept here, spare, for this long before it is
 * given back in Redis: the helpdesk's next lookup (nearly always the same API key) takes it without a
 * round trip to Redis, so a stream of lookups that succeed costs Redis nothing but the lease renewals. A
 * spare place still counts under the limit, so no more attempts are evaluated than with none; another
 * instance that finds the subject busy announces it as wanted, and the spare places are given back at once.
 */
const SPARE_IDLE_MS = 100;
/** After a subject is announced as wanted, its places are given back as they are decided, for this long. */
const WANTED_MS = 2000;
/** Past this many subjects announced as wanted, those whose time has passed are forgotten. */
const WANTED_KEPT_MAX = 1000;
/**
 * A spare place is taken again only while its lease surely runs (granted within this time). Renewals keep
 * a place in use well inside it; one whose renewals failed (Redis away) is given up, not trusted.
 */
const SPARE_TRUSTED_MS = LEASE_MS - 1000;

/**
 * Failed authentications and failed lookups, counted in Redis per subject (a client address, an API
 * key, an API key at one address: the caller names them). Every attempt takes its place under the limit
 * before it is evaluated and gives it back when it did not fail, so simultaneous attempts cannot overtake
 * the count; a place is leased (LEASE_MS), so one whose attempt is never decided here frees itself, and a
 * place given back stays spare here a moment for the next attempt of the same subjects (SPARE_IDLE_MS).
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
  /** Places held here, by attempts or spare, by token. */
  private readonly held = new Map<string, HeldPlace>();
  /** Spare places by their subjects, the most recently given back last. */
  private readonly spares = new Map<string, HeldPlace[]>();
  private spareSweep: NodeJS.Timeout | null = null;
  /** Subjects' ids announced as wanted elsewhere, until when (Date.now()). */
  private readonly wanted = new Map<string, number>();
  private renewals: NodeJS.Timeout | null = null;
  private renewing = false;
  private readonly tokenPrefix = `${crypto.randomBytes(8).toString('hex')}:`;
  private tokens = 0;

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
    watchRedisConnection(subscriber, this.log);
    this.subscriber = subscriber;
    let synced: () => void = () => undefined;
    const firstSync = new Promise<void>((resolve) => { synced = resolve; });
    // Spare places do not outlive the connection: Redis may have restarted without them.
    const lost = () => {
      this.listening = false;
      this.dropSpares();
    };
    subscriber.on('error', lost);
    subscriber.on('end', lost);
    subscriber.on('ready', () => void this.resync().then(synced));
    subscriber.connect().catch(() => undefined);
    this.renewals ??= setInterval(() => void this.renewLeases(), RENEW_SWEEP_MS).unref();
    await Promise.race([firstSync, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
  }

  /** Gives back the spare places and stops listening; places of undecided attempts end with their lease. */
  async stop(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    this.listening = false;
    if (this.renewals) clearInterval(this.renewals);
    this.renewals = null;
    if (this.spareSweep) clearTimeout(this.spareSweep);
    this.spareSweep = null;
    await this.giveBackSpares(() => true);
    if (subscriber) await closeRedis(subscriber);
  }

  /**
   * Subscribe first, then read the blocks already in Redis, so none announced in between is missed.
   * After Redis restarts, the subscriber is often back before the command client (they keep separate
   * reconnection timers), and the read fails: it is tried again until it succeeds, or lookups would be
   * refused until the next outage.
   */
  private async resync(retryMs = RESYNC_RETRY_FIRST_MS): Promise<void> {
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
      this.log.warn('throttle_resync_failed', { error, retryInMs: retryMs });
      await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
      if (this.subscriber === subscriber && subscriber.isReady && !this.listening) await this.resync(Math.min(retryMs * 2, RESYNC_RETRY_LAST_MS));
    }
  }

  /** An announcement: `<id> <block end>` for a block, `want <id>` for a subject busy elsewhere. */
  private remember(message: string): void {
    const [first, second] = message.split(' ');
    if (first === 'want') {
      // Many subjects busy at once (clients of many addresses) must not make the map grow without end.
      if (this.wanted.size >= WANTED_KEPT_MAX) for (const [id, until] of this.wanted) if (until <= Date.now()) this.wanted.delete(id);
      this.wanted.set(second, Date.now() + WANTED_MS);
      void this.giveBackSpares((place) => place.ids.includes(second));
      return;
    }
    if (first && Number(second) > Date.now()) this.blocked.set(first, Number(second));
  }

  private readonly hashedIds = new BoundedMemo<string>(10_000);

  /** Subjects are hashed so API key names and addresses do not sit in Redis as they are. */
  private id(subject: string): string {
    return this.hashedIds.get(subject, () => crypto.createHash('sha256').update(subject).digest('hex').slice(0, 32));
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
   * While the places are only taken by attempts still undecided, it waits briefly for one (BUSY_WAIT_MS),
   * as long as `holder` is there. The place is kept (renewed) until the reservation is decided or the
   * holder is gone, whichever comes first; the caller decides it in every case.
   */
  reserve(counted: string[], checked: string[] = [], holder: AttemptHolder = STAYS): Promise<AttemptVerdict> {
    // A helpdesk whose lookups succeed takes a spare place nearly every time: answered at once, without the
    // promises and turns of the wait below.
    const known = holder.destroyed ? undefined : this.knownVerdict(counted, checked, holder);
    return known ? Promise.resolve(known) : this.reserveOrWait(counted, checked, holder);
  }

  private async reserveOrWait(counted: string[], checked: string[], holder: AttemptHolder): Promise<AttemptVerdict> {
    const deadline = Date.now() + BUSY_WAIT_MS;
    let waiting = false;
    try {
      for (let pause = 5; ; pause = Math.min(2 * pause, BUSY_ASK_EVERY_MS)) {
        if (holder.destroyed) return ABANDONED;
        const verdict = await this.tryReserve(counted, checked, holder);
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

  /** The verdict known here without Redis: a subject blocked, no subscription to know blocks by, or a spare place taken. */
  private knownVerdict(counted: string[], checked: string[], holder: AttemptHolder): AttemptVerdict | undefined {
    for (const subject of counted) {
      const known = this.state(subject);
      if (known.kind !== 'open') return known;
    }
    for (const subject of checked) {
      const known = this.state(subject);
      if (known.kind !== 'open') return known;
    }
    // A spare place asks Redis nothing: the blocks of every subject are known here from their announcements.
    const spare = this.takeSpare(counted.map((subject) => this.id(subject)).join(' '));
    if (!spare) return undefined;
    spare.holder = holder;
    return { kind: 'allowed', reservation: this.reservationFor(spare) };
  }

  private async tryReserve(counted: string[], checked: string[], holder: AttemptHolder): Promise<AttemptVerdict | { kind: 'busy' }> {
    const known = this.knownVerdict(counted, checked, holder);
    if (known) return known;
    const ids = counted.map((subject) => this.id(subject));
    const subjects = ids.join(' ');

    const { maxFailures, blockSeconds } = this.limits;
    // `failed`, not the `failures` of old, whose counts also held undecided attempts (places that could leak).
    const keys = ids.flatMap((id) => [`${this.namespace}:failed:${id}`, `${this.namespace}:blocked:${id}`, `${this.namespace}:places:${id}`]);
    const places = ids.map((id) => `${this.namespace}:places:${id}`);
    const checkedKeys = checked.map((subject) => `${this.namespace}:blocked:${this.id(subject)}`);
    const token = `${this.tokenPrefix}${(this.tokens += 1)}`;
    const leasedAt = performance.now();
    const blockEnd = Date.now() + blockSeconds * 1000;
    let reply: unknown;
    try {
      reply = await SCRIPTS.reserve.run(this.redis, [...keys, ...checkedKeys], [
        String(maxFailures), String(ids.length), token, String(LEASE_MS), String(blockSeconds), String(blockEnd), this.channel, ...ids,
      ]);
    } catch {
      // Redis is away: the subscription drops too, and requests are refused until it is back.
      return { kind: 'unavailable' };
    }
    if (Array.isArray(reply)) {
      this.noteBlocks(reply as string[], blockEnd);
      return { kind: 'blocked', retryAfterSeconds: blockSeconds };
    }
    const waitMs = Number(reply);
    if (waitMs < 0) return { kind: 'busy' };
    if (waitMs > 0) return { kind: 'blocked', retryAfterSeconds: Math.ceil(waitMs / 1000) };

    const place: HeldPlace = { token, ids, keys, places, subjects, holder, leasedAt };
    this.held.set(token, place);
    const reservation = this.reservationFor(place);
    // Gone during the round trip: nobody to evaluate the attempt for.
    if (holder.destroyed) {
      reservation.released();
      return ABANDONED;
    }
    return { kind: 'allowed', reservation };
  }

  /** The attempt now holding `place` decides it once: failed, or given back (kept spare when nobody else wants it). */
  private reservationFor(place: HeldPlace): Reservation {
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      return true;
    };
    return {
      failed: async () => {
        if (!settle()) return;
        this.held.delete(place.token);
        const { windowSeconds, maxFailures, blockSeconds } = this.limits;
        const blockEnd = Date.now() + blockSeconds * 1000;
        try {
          const blockedNow = await SCRIPTS.fail.run(this.redis, place.keys, [
            String(maxFailures), String(windowSeconds * 1000), String(blockSeconds), String(blockEnd), this.channel, place.token, ...place.ids,
          ]) as string[];
          this.noteBlocks(blockedNow, blockEnd);
        } catch {
          // The failure goes uncounted, and its place ends with its lease; without Redis every attempt is refused anyway.
        }
      },
      released: () => {
        if (!settle()) return;
        if (this.listening && !this.isWanted(place.ids)) return this.keepSpare(place);
        void this.giveBack([place]);
      },
    };
  }

  private isWanted(ids: string[]): boolean {
    for (const id of ids) {
      const until = this.wanted.get(id);
      if (until === undefined) continue;
      if (until > Date.now()) return true;
      this.wanted.delete(id);
    }
    return false;
  }

  private keepSpare(place: HeldPlace): void {
    place.holder = STAYS;
    place.spareSince = performance.now();
    const kept = this.spares.get(place.subjects);
    if (kept) kept.push(place); else this.spares.set(place.subjects, [place]);
    this.sweepSparesSoon();
  }

  /** Spare places idle for SPARE_IDLE_MS are given back by one sweep, due once per SPARE_IDLE_MS while any are kept. */
  private sweepSparesSoon(): void {
    this.spareSweep ??= setTimeout(() => {
      this.spareSweep = null;
      const now = performance.now();
      void this.giveBackSpares((spare) => now - (spare.spareSince ?? now) >= SPARE_IDLE_MS);
    }, SPARE_IDLE_MS).unref();
  }

  /** The most recently given back spare place of these subjects whose lease surely still runs; older ones are given back. */
  private takeSpare(subjects: string): HeldPlace | undefined {
    const kept = this.spares.get(subjects);
    if (!kept) return undefined;
    const now = performance.now();
    const lapsing: HeldPlace[] = [];
    let spare: HeldPlace | undefined;
    while ((spare = kept.pop()) && now - spare.leasedAt > SPARE_TRUSTED_MS) lapsing.push(spare);
    if (lapsing.length) void this.giveBack(lapsing);
    if (!kept.length) this.spares.delete(subjects);
    if (spare) spare.spareSince = undefined;
    return spare;
  }

  /** Gives back in Redis the spare places that `which` picks, in one round trip; a sweep follows while any are left. */
  private async giveBackSpares(which: (place: HeldPlace) => boolean): Promise<void> {
    const leaving: HeldPlace[] = [];
    for (const [subjects, kept] of this.spares) {
      const staying: HeldPlace[] = [];
      for (const place of kept) (which(place) ? leaving : staying).push(place);
      if (staying.length) this.spares.set(subjects, staying); else this.spares.delete(subjects);
    }
    if (this.spares.size) this.sweepSparesSoon();
    await this.giveBack(leaving);
  }

  /** Spare places forgotten without a word to Redis (the connection is gone; their leases end there by themselves). */
  private dropSpares(): void {
    for (const kept of this.spares.values()) for (const place of kept) this.held.delete(place.token);
    this.spares.clear();
  }

  /** Places no longer held here, given back in Redis in one round trip. */
  private async giveBack(places: HeldPlace[]): Promise<void> {
    if (!places.length) return;
    for (const place of places) this.held.delete(place.token);
    const { keys, tokens } = placeKeysAndTokens(places);
    await SCRIPTS.release.run(this.redis, keys, tokens).catch(() => undefined);
  }

  private noteBlocks(ids: string[], until: number): void {
    for (const id of ids) {
      this.blocked.set(id, until);
      this.events.blocked?.();
    }
  }

  /**
   * One round trip for every place here that is due, so a slow attempt keeps its place without a timer of
   * its own. A place whose holder is gone is let lapse: its request ends without an answer anyway.
   */
  private async renewLeases(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    const now = performance.now();
    const due: HeldPlace[] = [];
    for (const place of this.held.values()) {
      if (now - place.leasedAt < RENEW_AFTER_MS) continue;
      if (place.holder.destroyed) {
        this.held.delete(place.token);
        continue;
      }
      due.push(place);
    }
    if (due.length === 0) return;
    const { keys, tokens } = placeKeysAndTokens(due);
    this.renewing = true;
    try {
      await SCRIPTS.renew.run(this.redis, keys, [String(LEASE_MS), ...tokens]);
      for (const place of due) place.leasedAt = now;
    } catch (error) {
      this.log.warn('throttle_lease_renewal_failed', { error });
    } finally {
      this.renewing = false;
    }
  }
}

/** The scripts' arguments for several places: each place's keys, and its token once per key. */
function placeKeysAndTokens(places: HeldPlace[]): { keys: string[]; tokens: string[] } {
  const keys: string[] = [];
  const tokens: string[] = [];
  for (const place of places) {
    for (const key of place.places) {
      keys.push(key);
      tokens.push(place.token);
    }
  }
  return { keys, tokens };
}
