import crypto from 'node:crypto';
import type { RedisClient } from '../data-access/redis';

export interface ThrottleLimits {
  maxFailures: number;
  windowSeconds: number;
  blockSeconds: number;
}

export type ThrottleState = { kind: 'open' } | { kind: 'blocked'; retryAfterSeconds: number } | { kind: 'unavailable' };

// Counts a failure and, at the limit, swaps the counter for a block, in one step on the server so
// that every instance of the API shares one count.
const RECORD_FAILURE = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if failures >= tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
  redis.call('DEL', KEYS[1])
end
return failures`;

/**
 * Failed authentications and failed lookups, counted in Redis per subject (an API key, or a client
 * address when no credentials were sent). When Redis cannot answer, the state is `unavailable` and
 * the caller refuses the request rather than let guesses through uncounted.
 */
export class FailedAttemptThrottle {
  constructor(private readonly redis: RedisClient, private readonly namespace: string, private readonly limits: ThrottleLimits) {}

  private keys(subject: string): [string, string] {
    const id = crypto.createHash('sha256').update(subject).digest('hex').slice(0, 32);
    return [`${this.namespace}:failures:${id}`, `${this.namespace}:blocked:${id}`];
  }

  async state(subject: string): Promise<ThrottleState> {
    try {
      const ttl = await this.redis.pTTL(this.keys(subject)[1]);
      return ttl > 0 ? { kind: 'blocked', retryAfterSeconds: Math.ceil(ttl / 1000) } : { kind: 'open' };
    } catch {
      return { kind: 'unavailable' };
    }
  }

  async recordFailure(subject: string): Promise<void> {
    const { windowSeconds, maxFailures, blockSeconds } = this.limits;
    try {
      await this.redis.eval(RECORD_FAILURE, { keys: this.keys(subject), arguments: [String(windowSeconds), String(maxFailures), String(blockSeconds)] });
    } catch {
      // The next request sees Redis unavailable and is refused, so nothing slips through uncounted.
    }
  }
}
