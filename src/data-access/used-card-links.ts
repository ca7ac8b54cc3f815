import { within } from '../shared/within';
import type { RedisClient } from './redis';

/** A bound on each call: a Redis that stopped answering must not hold an agent's page. */
const ANSWER_WITHIN_MS = 2000;

export type LinkClaim = 'claimed' | 'used' | 'unavailable';

/**
 * The helpdesk card's action links already used, in Redis: claiming a link is one `SET NX` (never a read followed by a
 * write), so of two clicks at once exactly one does the action. Each mark outlives its link (it expires with it).
 */
export class UsedCardLinks {
  constructor(private readonly redis: RedisClient, private readonly namespace: string) {}

  async claim(nonce: string, keepMs: number): Promise<LinkClaim> {
    if (!this.redis.isReady) return 'unavailable';
    try {
      const set = await bounded(this.redis.set(this.key(nonce), String(Date.now()), { condition: 'NX', expiration: { type: 'PX', value: Math.max(1, Math.ceil(keepMs)) } }));
      return set === 'OK' ? 'claimed' : 'used';
    } catch {
      return 'unavailable';
    }
  }

  async isUsed(nonce: string): Promise<boolean | 'unavailable'> {
    if (!this.redis.isReady) return 'unavailable';
    try {
      return (await bounded(this.redis.exists(this.key(nonce)))) === 1;
    } catch {
      return 'unavailable';
    }
  }

  /** Gives a claimed link back (the action was refused for its form's values, which the agent may correct). */
  async release(nonce: string): Promise<void> {
    try {
      await bounded(this.redis.del(this.key(nonce)));
    } catch {
      // Left claimed: the agent opens the card again for a new link.
    }
  }

  private key(nonce: string): string {
    return `${this.namespace}:card-link-used:${nonce}`;
  }
}

function bounded<T>(work: Promise<T>): Promise<T> {
  return within(work, ANSWER_WITHIN_MS);
}
