import { exchange, type ProviderExchange } from './http-request';

/** How much of a provider's API this process uses: calls in flight at once, and calls started per second. */
export interface RequestLimits {
  concurrent: number;
  /** Calls started per second on average; `Infinity` for no rate limit. */
  perSecond: number;
}

/** Limits for reads (GET) and writes (everything else), which the card gateway counts apart. */
export interface ProviderLimits {
  reads: RequestLimits;
  writes: RequestLimits;
}

/**
 * The longest a call waits for its place under the limits. A backlog the provider lets through at 25
 * calls a second takes its time, and every job in it must still end, with its retry planned, if its
 * turn does not come.
 */
export const LIMIT_WAIT_MS = 30_000;

/** Answers of 429 tried again within one call; the provider turned them away before doing anything. */
const RATE_LIMITED_RETRIES = 3;
/** The longest pause before trying a 429 again, whatever `Retry-After` asks. */
const RATE_LIMITED_PAUSE_MAX_MS = 8_000;

/**
 * A gate in front of one kind of call: at most `concurrent` in flight and, by a token bucket holding one
 * second's worth, `perSecond` started on average and never more than twice that in any one second (the
 * burst the card gateway allows). Waiters go in arrival order, each within its own bound.
 */
export class RequestGate {
  private inFlight = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly burst: number;
  private readonly waiting: { enter: (entered: boolean) => void; timer: NodeJS.Timeout }[] = [];
  private refill: NodeJS.Timeout | undefined;

  constructor(private readonly limits: RequestLimits, private readonly now: () => number = Date.now) {
    this.burst = Number.isFinite(limits.perSecond) ? Math.max(1, limits.perSecond) : Infinity;
    this.tokens = this.burst;
    this.refilledAt = now();
  }

  /** Calls in flight and calls waiting for their place. */
  get load(): { inFlight: number; waiting: number } {
    return { inFlight: this.inFlight, waiting: this.waiting.length };
  }

  /** Resolves true once the call may start (it must then call `leave`), false if `waitMs` passed first. */
  enter(waitMs: number): Promise<boolean> {
    if (!this.waiting.length && this.admit()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        enter: resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          resolve(false);
        }, waitMs),
      };
      this.waiting.push(waiter);
      this.wake();
    });
  }

  leave(): void {
    this.inFlight -= 1;
    this.wake();
  }

  /** Takes a place and a token when both are free. */
  private admit(): boolean {
    if (this.inFlight >= this.limits.concurrent) return false;
    if (this.burst === Infinity) {
      this.inFlight += 1;
      return true;
    }
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.limits.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    this.inFlight += 1;
    return true;
  }

  /** Lets waiters in while places and tokens last; when tokens ran out, looks again as the next one arrives. */
  private wake(): void {
    while (this.waiting.length && this.admit()) {
      const waiter = this.waiting.shift()!;
      clearTimeout(waiter.timer);
      waiter.enter(true);
    }
    if (!this.waiting.length || this.inFlight >= this.limits.concurrent || this.refill) return;
    const untilToken = Math.ceil(((1 - this.tokens) / this.limits.perSecond) * 1000);
    this.refill = setTimeout(() => {
      this.refill = undefined;
      this.wake();
    }, Math.max(1, untilToken));
  }
}

/**
 * One provider's calls under its request limits: reads and writes each wait for a place at their gate, and
 * an answer of 429 (the provider's own limit, perhaps reached with other processes' calls) is tried again
 * after the pause the provider asks for, or 1, 2 and 4 seconds, before it is given to the caller.
 */
export class LimitedProvider {
  private readonly reads: RequestGate;
  private readonly writes: RequestGate;

  constructor(limits: ProviderLimits, private readonly waitMs = LIMIT_WAIT_MS) {
    this.reads = new RequestGate(limits.reads);
    this.writes = new RequestGate(limits.writes);
  }

  async exchange(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number, what: string): Promise<ProviderExchange> {
    const gate = method === 'GET' ? this.reads : this.writes;
    for (let attempt = 0; ; attempt += 1) {
      if (!(await gate.enter(this.waitMs))) {
        return { ok: false, kind: 'timeout', message: `${what}: no place under the provider's request limits within ${this.waitMs / 1000} s` };
      }
      let response: ProviderExchange;
      try {
        response = await exchange(method, url, headers, body, timeoutMs, what);
      } finally {
        gate.leave();
      }
      if (!response.ok || response.status !== 429 || attempt === RATE_LIMITED_RETRIES) return response;
      await new Promise((resolve) => setTimeout(resolve, pauseAfterRateLimit(response.headers['retry-after'], attempt)));
    }
  }
}

/** `Retry-After` in seconds or as a date when the provider sends one, else 1, 2, 4 s; never more than the cap. */
export function pauseAfterRateLimit(retryAfter: string | undefined, attempt: number, now = Date.now()): number {
  const askedMs = retryAfter === undefined ? NaN : /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : Date.parse(retryAfter) - now;
  return Math.min(Number.isFinite(askedMs) ? Math.max(askedMs, 0) : 1000 * 2 ** attempt, RATE_LIMITED_PAUSE_MAX_MS);
}
