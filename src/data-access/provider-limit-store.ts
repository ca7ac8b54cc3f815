import crypto from 'node:crypto';
import type { Logger } from '../logger';
import { within } from '../shared/within';
import { closeRedis, openRedis, RedisScript, type RedisClient } from './redis';
import { bucketSize, type RequestLimits, type SharedLimitStore, type SharedPlaces } from '../payments/providers/request-limits';

/**
 * Takes up to ARGV[4] places under one kind of a provider account's limits, for every process using the
 * account: a place is a lease in a sorted set (scored by the moment, Redis' clock, it ends), and a start
 * takes a token from a bucket holding ARGV[3] (bucketSize) that refills at ARGV[2] a second (0: no rate). Expired
 * leases (a process that died mid-call) are dropped first. Answers the leases granted, and when fewer
 * than asked, how many ms until it is worth asking again (a token's refill, or a short look for a place).
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local leaseMs = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local want = math.min(tonumber(ARGV[4]), tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]))
local rate = tonumber(ARGV[2])
local retry = 25
if want > 0 and rate > 0 then
  local burst = tonumber(ARGV[3])
  local bucket = redis.call('HMGET', KEYS[2], 'tokens', 'at')
  local tokens = tonumber(bucket[1]) or burst
  local at = tonumber(bucket[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
  local granted = math.min(want, math.floor(tokens))
  if granted < want then retry = math.max(1, math.ceil((1 - (tokens - granted)) * 1000 / rate)) end
  want = granted
  redis.call('HSET', KEYS[2], 'tokens', tostring(tokens - granted), 'at', now)
  redis.call('PEXPIRE', KEYS[2], math.ceil(burst * 1000 / rate) + 1000)
end
local leases = {}
for i = 1, math.max(want, 0) do
  leases[i] = ARGV[6] .. i
  redis.call('ZADD', KEYS[1], now + leaseMs, leases[i])
end
if redis.call('PTTL', KEYS[1]) < leaseMs then redis.call('PEXPIRE', KEYS[1], leaseMs) end
return { retry, unpack(leases) }`;

const SCRIPT = new RedisScript(TAKE);

/**
 * Spends one call of ARGV[1] a minute on one resource of a provider account (a sliding minute on Redis' clock, the
 * calls in a sorted set): 1 when the call may be made, 0 when the minute's calls are used up, then with the ms until
 * the oldest leaves the minute.
 */
const SPEND = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return { 0, math.max(1, tonumber(oldest[2]) + 60000 - now) }
end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], 61000)
return { 1, 0 }`;

const SPEND_SCRIPT = new RedisScript(SPEND);

/** The longest a question to Redis may take before the caller goes by its own process's limits. */
const ASK_MS = 1000;
/** After Redis failed to answer, the limits are kept per process this long before Redis is asked again. */
const UNSHARED_FOR_MS = 2000;

/**
 * A provider account's limits kept together in Redis by every process that uses the account (the API's
 * instances, the workers, the CLI), so that together they stay within what the provider allows. Its Redis
 * connection opens on first use. While Redis cannot answer, each process goes by its own limits (as if
 * alone), and a 429 from the provider is tried again as always.
 */
export class RedisProviderLimits implements SharedLimitStore {
  private client: { redis: RedisClient; connecting: Promise<unknown> } | undefined;
  private unsharedUntil = 0;
  private closed = false;
  private sequence = 0;
  private readonly process = crypto.randomBytes(8).toString('hex');

  constructor(private readonly redisUrl: string, private readonly log: Logger) {}

  /** The places of one kind of calls (`reads`, `writes`) to the account at `apiUrl` with `credential`. */
  places(provider: string, apiUrl: string, credential: string, kind: string): SharedPlaces {
    const account = crypto.createHash('sha256').update(`${apiUrl}\n${credential}`).digest('hex').slice(0, 24);
    const key = `shop-sidecar:provider-limits:${provider}:${account}:${kind}`;
    // Leases given back in one turn of the event loop go to Redis together.
    let given: string[] = [];
    const sendGiven = () => {
      const leases = given;
      given = [];
      this.giveBack(key, leases);
    };
    return {
      take: (limits, want, leaseMs) => this.take(key, limits, want, leaseMs),
      give: (lease) => {
        if (given.push(lease) === 1) setImmediate(sendGiven);
      },
    };
  }

  /**
   * One call on `resource` (such as one wallet charge's reads) under its own limit of `perMinute`, for every process:
   * true when it may be made; false with the wait when the minute's calls are used up; null when Redis cannot say.
   */
  async spend(provider: string, apiUrl: string, credential: string, resource: string, perMinute: number): Promise<{ allowed: boolean; retryInMs: number } | null> {
    const redis = await this.connected();
    if (!redis) return null;
    try {
      if (!redis.isReady) throw new Error('Redis is not connected');
      const account = crypto.createHash('sha256').update(`${apiUrl}\n${credential}`).digest('hex').slice(0, 24);
      const key = `shop-sidecar:provider-budgets:${provider}:${account}:${crypto.createHash('sha256').update(resource).digest('hex').slice(0, 32)}`;
      this.sequence += 1;
      const [allowed, retryInMs] = await within(SPEND_SCRIPT.run(redis, [key], [String(perMinute), `${this.process}:${this.sequence}`]) as Promise<[number, number]>, ASK_MS);
      return { allowed: Number(allowed) === 1, retryInMs: Number(retryInMs) };
    } catch (error) {
      return this.unshared(error);
    }
  }

  /** The Redis connection, opened on first use; null while the limits are kept per process. */
  private async connected(): Promise<RedisClient | null> {
    if (this.closed || Date.now() < this.unsharedUntil) return null;
    if (!this.client) {
      const { client: redis, connecting } = openRedis(this.redisUrl, this.log);
      this.client = { redis, connecting: within(connecting, ASK_MS).catch(() => undefined) };
    }
    await this.client.connecting;
    return this.client.redis;
  }

  /** Redis did not answer: each process goes by its own limits for a while. */
  private unshared(error: unknown): null {
    if (!this.unsharedUntil) this.log.warn('provider_limits_unshared', { error: error instanceof Error ? error.message : String(error) });
    this.unsharedUntil = Date.now() + UNSHARED_FOR_MS;
    return null;
  }

  /** Ends leases before their time: their calls are over, or nobody got them. */
  private giveBack(key: string, leases: string[]): void {
    this.client?.redis.zRem(`${key}:leases`, leases).catch(() => undefined);
  }

  /** Closes its connection, within a second whatever Redis does; calls after it keep their own process's limits. */
  async close(): Promise<void> {
    this.closed = true;
    const redis = this.client?.redis;
    if (redis) await within(closeRedis(redis), ASK_MS).catch(() => redis.isOpen && redis.destroy());
  }

  private async take(key: string, limits: RequestLimits, want: number, leaseMs: number): Promise<{ leases: string[]; retryInMs: number } | null> {
    const redis = await this.connected();
    if (!redis) return null;
    try {
      if (!redis.isReady) throw new Error('Redis is not connected');
      const rate = Number.isFinite(limits.perSecond) ? limits.perSecond : 0;
      this.sequence += 1;
      const asked = SCRIPT.run(redis, [`${key}:leases`, `${key}:bucket`], [
        String(limits.concurrent), String(rate), String(rate ? bucketSize(rate) : 1), String(want), String(leaseMs), `${this.process}:${this.sequence}:`,
      ]) as Promise<[number, ...string[]]>;
      const reply = await within(asked, ASK_MS).catch((error: unknown) => {
        // Redis may still grant the places after this process stopped waiting (a busy event loop reads the
        // answer after its timer): nobody holds those leases, so they go back at once rather than keep the
        // account's places taken, from every process, until they end.
        asked.then(([, ...late]) => {
          if (late.length) this.giveBack(key, late);
        }, () => undefined);
        throw error;
      });
      const [retryInMs, ...leases] = reply;
      if (this.unsharedUntil) {
        this.unsharedUntil = 0;
        this.log.info('provider_limits_shared_again', {});
      }
      return { leases, retryInMs: Number(retryInMs) };
    } catch (error) {
      return this.unshared(error);
    }
  }
}
