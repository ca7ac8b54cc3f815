import type { Logger } from '../logger';
import { exchange } from '../payments/providers/http-request';
import { handOverHeaders } from './handover-signature';

/** Where the companion plugin takes changes to apply now, and the key that signs the request. */
export interface HandOverTarget {
  url: string;
  key: string;
}

/** What of the site is not known, so that no hand-over can be signed or sent, each with where it is read from. */
export type UnknownTargetPart = 'url' | 'LOGGED_IN_KEY' | 'LOGGED_IN_SALT';

const WHERE_READ: Record<UnknownTargetPart, string> = {
  url: "the site's URL (SHOP_URL, or the siteurl option)",
  LOGGED_IN_KEY: "its LOGGED_IN_KEY (WP_CONFIG_FILE or WP_LOGGED_IN_KEY, or the logged_in_key option)",
  LOGGED_IN_SALT: "its LOGGED_IN_SALT (WP_CONFIG_FILE or WP_LOGGED_IN_SALT, or the logged_in_salt option)",
};

/** `the site's URL (...) and its LOGGED_IN_SALT (...) are unknown`: which, and where each is read from. */
export function unknownTargetMessage(unknown: UnknownTargetPart[]): string {
  const parts = unknown.map((part) => WHERE_READ[part]);
  return `${parts.join(' and ')} ${parts.length > 1 ? 'are' : 'is'} unknown`;
}

/** The companion's own route; the `?rest_route=` form works whatever the site's permalink settings. */
export function handOverUrl(siteUrl: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/?rest_route=/shop-sidecar/v1/apply`;
}

/** One change as the companion reports it after trying it: `pending` when another run held its order. */
export interface AppliedChange {
  id: number;
  status: 'applied' | 'failed' | 'pending' | 'missing' | string;
  result?: string;
}

export type HandOverAttempt =
  | { kind: 'applied'; version: number | null; changes: AppliedChange[] }
  /** The site, its salts or the companion's route are not known or not there: asked again only after a long wait. */
  | { kind: 'not_configured' | 'refused' | 'missing'; message: string }
  /** Timeout, network, 5xx: asked again soon. */
  | { kind: 'unreachable'; message: string };

/** Changes sent in one request: WordPress applies them one after another, so a request stays short. */
export const HANDOVER_BATCH = 25;
/** Long enough for a batch on a slow shop; past it the request counts as failed and the changes are sent again (applying is once only). */
export const HANDOVER_TIMEOUT_MS = 30_000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
/** Changes kept in memory at most; beyond, the worker's pass over the table finds them. */
const MAX_QUEUED = 10_000;
/**
 * A change the companion answered `pending` (an earlier change of its order or subscription was being applied by
 * another run, or the request ran out of time before it) is asked for again after each of these waits in turn; after
 * the last, the worker's pass over waiting changes (every 5 s) and Action Scheduler are left to apply it. Without them
 * such a change (staff's second action on a subscription while WordPress still applies their first, say) waited
 * 5-10 s for that pass.
 */
const WAITING_ASKED_AGAIN_MS = [250, 500, 1000, 2000, 4000, 8000, 16_000];

/**
 * Hands each stored change to WooCommerce at once: right after the transaction that decided it commits,
 * the companion plugin is asked over the shop's own HTTP (signed with a key derived from the site's
 * salts) to apply it, instead of waiting for WP-Cron to run Action Scheduler, which on a quiet shop may
 * be minutes or never. Requests go one at a time, changes that arrive meanwhile travel together in the
 * next. When WordPress cannot be reached it asks again after 1, 2, 4 ... 60 s; the Action Scheduler
 * action stored with each change stays the safety net, and the companion applies a change once
 * whichever comes first.
 */
export class WooCommerceHandOver {
  private readonly queued = new Set<number>();
  private draining = false;
  private scheduled = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryAt = 0;
  /** Requests that failed in a row, for the backoff and the log. */
  private failures = 0;
  /** How often each change answered `pending` has been asked for again, and the timers that will ask next. */
  private readonly waitingAsked = new Map<number, number>();
  private readonly waitingTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly deps: {
    target: () => Promise<HandOverTarget | { unknown: UnknownTargetPart[] }>;
    log: Logger;
  }) {}

  /** Asks WooCommerce to apply `changeId` as soon as it can be asked. */
  notify(changeId: number): void {
    if (this.closed || this.queued.size >= MAX_QUEUED) return;
    this.queued.add(changeId);
    // Changes stored in the same turn travel together.
    if (this.draining || this.retryTimer || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  /** Stops asking; a request in flight ends within its timeout. */
  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.queued.clear();
    for (const timer of this.waitingTimers) clearTimeout(timer);
    this.waitingTimers.clear();
    this.waitingAsked.clear();
  }

  /** One signed request for `changeIds` (an empty list asks only whether the companion answers, and its version). */
  async send(changeIds: number[]): Promise<HandOverAttempt> {
    let target: HandOverTarget | { unknown: UnknownTargetPart[] };
    try {
      target = await this.deps.target();
    } catch (error) {
      return { kind: 'unreachable', message: `reading the site's address and salts: ${error instanceof Error ? error.message : String(error)}` };
    }
    if ('unknown' in target) return { kind: 'not_configured', message: unknownTargetMessage(target.unknown) };
    const body = JSON.stringify({ changes: changeIds });
    // The wall clock, whatever clock the service's decisions run on: the companion checks it against its own.
    const now = Math.floor(Date.now() / 1000);
    const response = await exchange('POST', target.url, handOverHeaders(target.key, now, body), body, HANDOVER_TIMEOUT_MS, 'WooCommerce hand-over');
    if (!response.ok) return { kind: 'unreachable', message: response.message };
    const answer = (response.json ?? {}) as { version?: unknown; changes?: unknown; code?: unknown; message?: unknown };
    const said = typeof answer.message === 'string' ? `: ${answer.message}` : '';
    if (response.status === 200 && Array.isArray(answer.changes)) {
      return { kind: 'applied', version: typeof answer.version === 'number' ? answer.version : null, changes: answer.changes as AppliedChange[] };
    }
    if (response.status === 401 || response.status === 403) {
      return { kind: 'refused', message: `WordPress refused the hand-over (HTTP ${response.status}${said}); the service and WordPress do not share the same LOGGED_IN_KEY and LOGGED_IN_SALT` };
    }
    if (response.status === 404) {
      return { kind: 'missing', message: `WordPress has no hand-over route (HTTP 404${said}); install the companion plugin of this version in wp-content/mu-plugins/` };
    }
    return { kind: 'unreachable', message: `WordPress answered HTTP ${response.status}${said}` };
  }

  private async drain(): Promise<void> {
    if (this.draining || this.closed) return;
    this.draining = true;
    try {
      while (this.queued.size && !this.closed) {
        const wait = this.retryAt - Date.now();
        if (wait > 0) {
          this.retryTimer ??= setTimeout(() => {
            this.retryTimer = null;
            void this.drain();
          }, wait);
          this.retryTimer.unref();
          return;
        }
        const ids = [...this.queued].slice(0, HANDOVER_BATCH);
        const attempt = await this.send(ids);
        if (attempt.kind === 'applied') {
          for (const id of ids) this.queued.delete(id);
          this.succeeded(attempt);
          this.askAgainForWaiting(ids, attempt.changes);
        } else {
          this.failed(attempt);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private succeeded(attempt: Extract<HandOverAttempt, { kind: 'applied' }>): void {
    if (this.failures) this.deps.log.info('woocommerce_handover_recovered', { afterFailures: this.failures });
    const failedThere = attempt.changes.filter((change) => change.status === 'failed');
    if (failedThere.length) this.deps.log.warn('woocommerce_changes_failed', { changes: failedThere });
    this.failures = 0;
    this.retryAt = 0;
  }

  /** The changes of `sent` the companion left `pending` are asked for again after their next wait; the others are done here. */
  private askAgainForWaiting(sent: number[], changes: AppliedChange[]): void {
    const waiting = new Set(changes.filter((change) => change.status === 'pending').map((change) => change.id));
    for (const id of sent) {
      const asked = this.waitingAsked.get(id) ?? 0;
      if (!waiting.has(id)) {
        this.waitingAsked.delete(id);
        continue;
      }
      // Asked as often as it gets: the count stays, so the worker's pass finding it still waiting does not start the waits again.
      if (asked >= WAITING_ASKED_AGAIN_MS.length) continue;
      this.waitingAsked.set(id, asked + 1);
      // A change applied elsewhere (Action Scheduler) is never answered here again: the oldest counts go first.
      if (this.waitingAsked.size > MAX_QUEUED) this.waitingAsked.delete(this.waitingAsked.keys().next().value as number);
      const timer = setTimeout(() => {
        this.waitingTimers.delete(timer);
        this.notify(id);
      }, WAITING_ASKED_AGAIN_MS[asked]);
      timer.unref();
      this.waitingTimers.add(timer);
    }
  }

  private failed(attempt: Exclude<HandOverAttempt, { kind: 'applied' }>): void {
    const failures = ++this.failures;
    // What only the operator can fix is asked again after the longest wait; a passing fault sooner.
    const delay = attempt.kind === 'unreachable' ? Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1)) : MAX_RETRY_MS;
    this.retryAt = Date.now() + delay;
    // The first failure and then every tenth, so an outage is told without a line per retry.
    if (failures === 1 || failures % 10 === 0) {
      this.deps.log.warn('woocommerce_handover_failed', { kind: attempt.kind, error: attempt.message, failures, retryInMs: delay, queued: this.queued.size });
    }
  }
}
