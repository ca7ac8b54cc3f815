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
 * The size of a token bucket refilled at `perSecond`: half a second's worth. No one second then sees more
 * than one and a half times the rate, which leaves the rest of the burst the card gateway allows (twice
 * its rate) for calls that the network or a busy event loop bunches together on their way.
 */
export function bucketSize(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond / 2));
}

/**
 * A gate in front of one kind of call: at most `concurrent` in flight and, by a token bucket (bucketSize),
 * `perSecond` started on average. Waiters go in arrival order, each within its own bound.
 */
export class RequestGate {
  private inFlight = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly burst: number;
  private readonly waiting: { enter: (entered: boolean) => void; timer: NodeJS.Timeout }[] = [];
  private refill: NodeJS.Timeout | undefined;

  constructor(private readonly limits: RequestLimits, private readonly now: () => number = Date.now) {
    this.burst = bucketSize(limits.perSecond);
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

/** One kind of calls to one provider account, whose limits the processes using the account keep together. */
export interface SharedPlaces {
  /**
   * Takes up to `want` places (each a lease that ends by itself after `leaseMs`), answering the leases
   * granted and when to ask again if fewer; null when the store cannot answer now, so that the process
   * goes by its own limits alone.
   */
  take(limits: RequestLimits, want: number, leaseMs: number): Promise<{ leases: string[]; retryInMs: number } | null>;
  give(lease: string): void;
}

/** Where the processes using one provider account keep its limits together (Redis: src/data-access/provider-limit-store.ts). */
export interface SharedLimitStore {
  places(provider: string, apiUrl: string, credential: string, kind: keyof ProviderLimits): SharedPlaces;
  /** One call on one resource under its own limit a minute, for every process (null: the store cannot say). */
  spend?(provider: string, apiUrl: string, credential: string, resource: string, perMinute: number): Promise<{ allowed: boolean; retryInMs: number } | null>;
}

/**
 * A provider's limit on calls about one resource (one wallet charge's reads, say), kept across every process through
 * the shared store, and in this process alone while the store cannot answer. A call over it is not made: the caller
 * hears at once that the provider would refuse it (429), and asks again later.
 */
export class ResourceBudget {
  private readonly local = new Map<string, number[]>();

  constructor(private readonly perMinute: number, private readonly account?: SharedAccount) {}

  /** Whether one more call on `resource` may be made now, and if not, in how many ms. */
  async spend(resource: string): Promise<{ allowed: boolean; retryInMs: number }> {
    const shared = this.account?.store.spend
      ? await this.account.store.spend(this.account.provider, this.account.apiUrl, this.account.credential, resource, this.perMinute).catch(() => null)
      : null;
    if (shared) return shared;
    const now = Date.now();
    const recent = (this.local.get(resource) ?? []).filter((at) => at > now - 60_000);
    if (recent.length >= this.perMinute) {
      this.local.set(resource, recent);
      return { allowed: false, retryInMs: recent[0]! + 60_000 - now };
    }
    recent.push(now);
    this.local.set(resource, recent);
    if (this.local.size > 10_000) this.local.delete(this.local.keys().next().value as string);
    return { allowed: true, retryInMs: 0 };
  }
}

/** A provider account (its API and the credential it is known by) whose limits are kept in `store`. */
export interface SharedAccount {
  store: SharedLimitStore;
  provider: string;
  apiUrl: string;
  credential: string;
}

/** A shared place outlives its call's own bound by this much, so that only a process that died leaves one to expire. */
const LEASE_MARGIN_MS = 2000;

/**
 * The places of one kind of calls under the account's limits, for this process: calls that have their
 * place at the local gate line up here, and one loop at a time asks the shared store for places for all
 * of them at once, asking again when a call here ends or when the store says a token will be there.
 */
class SharedAdmission {
  private readonly waiting: { deadline: number; leaseMs: number; enter: (lease: string | null | false) => void }[] = [];
  private asking = false;
  private poke: (() => void) | undefined;

  constructor(private readonly places: SharedPlaces, private readonly limits: RequestLimits) {}

  /** A lease once the call may start (`null`: the store could not answer, go by this process's limits), false if `deadline` passed first. */
  enter(deadline: number, callMs: number): Promise<string | null | false> {
    return new Promise((enter) => {
      this.waiting.push({ deadline, leaseMs: callMs + LEASE_MARGIN_MS, enter });
      void this.ask();
    });
  }

  leave(lease: string | null): void {
    if (lease !== null) this.places.give(lease);
    this.poke?.();
  }

  private async ask(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      while (this.waiting.length) {
        const now = Date.now();
        for (const late of this.waiting.filter((waiter) => waiter.deadline <= now)) {
          this.waiting.splice(this.waiting.indexOf(late), 1);
          late.enter(false);
        }
        if (!this.waiting.length) return;
        const leaseMs = Math.max(...this.waiting.map((waiter) => waiter.leaseMs));
        const answer = await this.places.take(this.limits, this.waiting.length, leaseMs).catch(() => null);
        if (!answer) {
          for (const waiter of this.waiting.splice(0)) waiter.enter(null);
          return;
        }
        for (const lease of answer.leases) {
          const waiter = this.waiting.shift();
          if (waiter && waiter.deadline > Date.now()) waiter.enter(lease);
          else {
            this.places.give(lease);
            waiter?.enter(false);
          }
        }
        if (this.waiting.length && !answer.leases.length) await this.pause(answer.retryInMs);
      }
    } finally {
      this.asking = false;
    }
  }

  /** Until `ms` pass, a call of this process ends, or the first waiter's deadline comes. */
  private pause(ms: number): Promise<void> {
    const until = Math.min(ms, Math.min(...this.waiting.map((waiter) => waiter.deadline)) - Date.now());
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.poke = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, until));
      this.poke = done;
    });
  }
}

let callsWaiting = 0;

/** The answer to a call that found no place under the limits within LIMIT_WAIT_MS. */
/** Not sent: its time to leave came while it waited for a place (the caller's bound, shorter than LIMIT_WAIT_MS). */
function notLeft(what: string): ProviderExchange {
  return { ok: false, kind: 'timeout', notSent: true, message: `${what}: not sent, its time to leave passed while it waited under the provider's request limits` };
}

function noPlace(what: string): ProviderExchange {
  return { ok: false, kind: 'timeout', message: `${what}: no place under the provider's request limits within ${LIMIT_WAIT_MS / 1000} s` };
}

/** Provider calls of this process waiting for their place under the limits (the worker's watchdog reports them). */
export function providerCallsWaitingAtLimits(): number {
  return callsWaiting;
}

/**
 * One provider's calls under its request limits: reads and writes each wait for a place at their gate, and
 * an answer of 429 (the provider's own limit, perhaps reached with other processes' calls) is tried again
 * after the pause the provider asks for, or 1, 2 and 4 seconds, before it is given to the caller.
 */
export class LimitedProvider {
  private readonly gates: Record<keyof ProviderLimits, { local: RequestGate; shared?: SharedAdmission }>;

  /**
   * With `account`, the limits that have a rate (those the provider sets per account) are kept together
   * with the other processes using the account; the rest are this process's own.
   */
  constructor(limits: ProviderLimits, account?: SharedAccount) {
    const gate = (kind: keyof ProviderLimits) => ({
      local: new RequestGate(limits[kind]),
      shared: account && Number.isFinite(limits[kind].perSecond)
        ? new SharedAdmission(account.store.places(account.provider, account.apiUrl, account.credential, kind), limits[kind])
        : undefined,
    });
    this.gates = { reads: gate('reads'), writes: gate('writes') };
  }

  /**
   * `leaveBy` (this host's Date.now(), ms): the request must have left by then, or it is never sent. A write whose
   * wait for a place (or a 429's pause) would end later gives up unsent, so that a request long queued cannot reach
   * the provider after its caller's record says it can no longer arrive (the charge ledger's in-flight bound).
   */
  async exchange(method: string, url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number, what: string, leaveBy = Infinity): Promise<ProviderExchange> {
    const gate = method === 'GET' ? this.gates.reads : this.gates.writes;
    for (let attempt = 0; ; attempt += 1) {
      const waitMs = Math.min(LIMIT_WAIT_MS, leaveBy - Date.now());
      if (waitMs <= 0) return notLeft(what);
      const deadline = Date.now() + waitMs;
      callsWaiting += 1;
      let lease: string | null | false = false;
      try {
        if (!(await gate.local.enter(waitMs))) return waitMs < LIMIT_WAIT_MS ? notLeft(what) : noPlace(what);
        lease = gate.shared ? await gate.shared.enter(deadline, timeoutMs) : null;
      } finally {
        callsWaiting -= 1;
      }
      if (lease === false || Date.now() >= leaveBy) {
        if (lease !== false) gate.shared?.leave(lease);
        gate.local.leave();
        return lease === false && waitMs >= LIMIT_WAIT_MS ? noPlace(what) : notLeft(what);
      }
      let response: ProviderExchange;
      try {
        response = await exchange(method, url, headers, body, timeoutMs, what);
      } finally {
        gate.shared?.leave(lease);
        gate.local.leave();
      }
      if (!response.ok || response.status !== 429 || attempt === RATE_LIMITED_RETRIES) return response;
      const pause = pauseAfterRateLimit(response.headers['retry-after'], attempt);
      // The provider turned the request away: past its time to leave, the 429 is the answer, nothing was made.
      if (Date.now() + pause >= leaveBy) return response;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** `Retry-After` in seconds or as a date when the provider sends one, else 1, 2, 4 s; never more than the cap. */
export function pauseAfterRateLimit(retryAfter: string | undefined, attempt: number, now = Date.now()): number {
  const askedMs = retryAfter === undefined ? NaN : /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : Date.parse(retryAfter) - now;
  return Math.min(Number.isFinite(askedMs) ? Math.max(askedMs, 0) : 1000 * 2 ** attempt, RATE_LIMITED_PAUSE_MAX_MS);
}
