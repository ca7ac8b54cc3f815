import crypto from 'node:crypto';
import http from 'node:http';
import { FakeProviderServer, type ProviderAnswer } from './fake-provider-server';
import { request } from './http-client';
import { signMobileWalletRequest } from '../../src/payments/providers/mobile-wallet/signature.js';

/**
 * A loopback stand-in for the mobile wallet's APIs (Vipps MobilePay): POST /accesstoken/get with credentials in
 * headers, Bearer + Ocp-Apim-Subscription-Key + Merchant-Serial-Number on every other call, Recurring API v3
 * agreements and charges with the required Idempotency-Key, the Webhooks API v1, and RFC 7807 problem bodies on
 * errors. It is as strict as the published documents, and it takes the money on its own: a charge is attempted on
 * its due date and retried for its `retryDays` when a test runs the wallet's clock (`runDueCharges`, `advanceTo`).
 *
 * Sources named beside the rules:
 * - SPEC: vippsas/vipps-recurring-api docs/openapi.yaml at 3f6ac6b (Dec 2023, the last spec in that repository):
 *   CreateChargeV3, ChargeResponseV3, ErrorV3, the Idempotency-Key parameter, ListChargesV3, CancelChargeV3.
 * - GUIDE: vippsas/vipps-recurring-api recurring-api-guide.md at 3f6ac6b ("Idempotency Key header", "orderId
 *   recommendations", "Due date", "Amount limits", "Cancel a charge", "Charge times", "Charge retries",
 *   "Charge states", "Charge failure reasons", "Recurring agreements with variable amount", "Rate limiting").
 * - PROBLEMS: vippsas/vipps-recurring-api recurring-api-problems.md at 3f6ac6b (same list on
 *   https://developer.vippsmobilepay.com/docs/APIs/recurring-api/recurring-api-problems, 2026).
 * - TOOLKIT: vippsas/agent-toolkit plugins/vipps/skills/recurring/references/charges.md and recurring/SKILL.md (Aug 2026).
 * - DENO: vippsas/deno-sdk src/generated_types/recurring/types.gen.ts (Nov 2024) CreateChargeV3.
 */

export type FakeMobileWalletChargeOutcome =
  | { kind: 'created' }
  /** Any error answer, e.g. `{status: 500}` or `{status: 400, problem: 'charge-due-too-soon'}`. */
  | { kind: 'http'; status: number; problem?: string; detail?: string }
  | { kind: 'slow'; delayMs: number; then?: FakeMobileWalletChargeOutcome };

/** What the customer's payment card behind an agreement does when the wallet charges it. */
export type MobileWalletCardState = 'good' | 'no_funds';

type Json = Record<string, unknown>;

const PROBLEM_BASE = 'https://developer.vippsmobilepay.com/docs/APIs/recurring-api/recurring-api-problems#';
const DAY_MS = 86_400_000;

/**
 * GUIDE "Due date": "This date has to be minimum two days (one day in the test environment) in the future"; SPEC
 * CreateChargeV3.due: "Must be at least two days in advance in the production environment, and at least one day in
 * the test environment"; PROBLEMS charge-due-too-soon: "a minimum of 2 days in the future". The 2026 pages
 * (https://developer.vippsmobilepay.com/docs/APIs/recurring-api/how-it-works/charges/recurring-charges-howitworks,
 * TOOLKIT charges.md) say 1 day. The stricter, 2 days, is kept.
 */
export const MOBILE_WALLET_DUE_LEAD_DAYS = 2;
/** GUIDE "Due date": "maximum two years in advance"; PROBLEMS charge-due-in-too-long. */
const DUE_MAX_YEARS = 2;
/** GUIDE "Charge times": "Charge attempts are primarily made two times during the day: 07:00 and 15:00 UTC." */
const ATTEMPT_HOURS_UTC = [7, 15] as const;
/**
 * TOOLKIT charges.md "Charge states": "A charge sits in PENDING until the due date is under 30 days away, then
 * becomes DUE" (GUIDE "Due date" says charges due in 35 days or less are visible in the app; the 2026 figure is used).
 */
const DUE_VISIBLE_DAYS = 30;
/**
 * GUIDE "Rate limiting": FetchCharge "10 per minute, agreementId + chargeId"; ListCharges "10 per minute, agreementId".
 * Counted on the wallet's clock, over the calls it answered.
 */
const FETCH_CHARGE_PER_MINUTE = 10;
const LIST_CHARGES_PER_MINUTE = 10;

/** SPEC ChargeStatus. */
const CHARGE_STATUSES = ['PENDING', 'DUE', 'RESERVED', 'CHARGED', 'PARTIALLY_CAPTURED', 'FAILED', 'CANCELLED', 'PARTIALLY_REFUNDED', 'REFUNDED', 'PROCESSING'];

export type { RecordedRequest } from './fake-provider-server';

/** One event the wallet sent (or would send) by itself, with where it went. */
export interface MobileWalletEmitted {
  event: MobileWalletDeliveryEvent;
  deliveries: { registrationId: string; url: string; status: number }[];
}

export interface FakeMobileWalletOptions {
  clientId?: string;
  clientSecret?: string;
  subscriptionKey?: string;
  merchantSerialNumber?: string;
  tokenTtlSeconds?: number;
  /** The wallet's clock: "today" for due dates, when charges are attempted, the read limits. Default: the real time. */
  now?: () => Date | number;
  /**
   * Where a delivery to a registered webhook URL is actually sent (e.g. the service's loopback address for its
   * public https URL); the signature is always over the registered URL. Default: the registered URL itself.
   */
  webhookTarget?: (registeredUrl: string) => string;
  /** Whether the sales unit is on the allow list for `type: UNSCHEDULED` (TOOLKIT charges.md). Default false. */
  unscheduledAllowed?: boolean;
}

/** A charge's processing state inside the wallet (not part of the API's charge). */
interface Processing {
  processingMode: 'MULTIPLE_ATTEMPTS' | 'SINGLE_ATTEMPT';
  /** Attempt slots already used. */
  attempts: number;
  /** Why the last attempt failed. */
  lastFailure?: 'user_action_required' | 'charge_amount_too_high';
}

export class FakeMobileWallet extends FakeProviderServer {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly subscriptionKey: string;
  readonly merchantSerialNumber: string;
  /** Lifetime of issued tokens, sent as the provider does: `expires_in` as a string of seconds (real time). */
  tokenTtlSeconds: number;
  tokensIssued = 0;
  /** Events the wallet produced by itself (charges taken or failed on their due dates), in order. */
  readonly emitted: MobileWalletEmitted[] = [];
  private readonly clock: () => Date | number;
  private manualNow: Date | null = null;
  private readonly webhookTarget: (registeredUrl: string) => string;
  private readonly unscheduledAllowed: boolean;
  private readonly tokens = new Map<string, number>();
  private readonly agreements = new Map<string, Json>();
  private readonly cards = new Map<string, MobileWalletCardState>();
  private readonly charges = new Map<string, Json>();
  private readonly processing = new Map<string, Processing>();
  /** GUIDE "orderId recommendations": "This orderId must be unique across all Recurring and eCom transactions for the given merchantSerialNumber". */
  private readonly usedOrderIds = new Set<string>();
  private readonly webhooks = new Map<string, { id: string; url: string; events: string[]; secret: string }>();
  private readonly outcomes: FakeMobileWalletChargeOutcome[] = [];
  /** Idempotency-Key -> fingerprint of the first request and the answer given to it. */
  private readonly idempotent = new Map<string, { fingerprint: string; status: number; body: Json | null }>();
  /** Read-limit key -> times of the reads answered (wallet clock, ms). */
  private readonly reads = new Map<string, number[]>();
  private chargeCounter = 0;

  constructor(options: FakeMobileWalletOptions = {}) {
    super();
    this.clientId = options.clientId ?? 'client-id-test';
    this.clientSecret = options.clientSecret ?? 'client-secret-test';
    this.subscriptionKey = options.subscriptionKey ?? 'subscription-key-test';
    this.merchantSerialNumber = options.merchantSerialNumber ?? '123456';
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? 3600;
    this.clock = options.now ?? (() => new Date());
    this.webhookTarget = options.webhookTarget ?? ((url) => url);
    this.unscheduledAllowed = options.unscheduledAllowed ?? false;
  }

  /** The wallet's "now". */
  now(): Date {
    if (this.manualNow) return this.manualNow;
    const value = this.clock();
    return value instanceof Date ? value : new Date(value);
  }

  /** The wallet's "today", YYYY-MM-DD in UTC. */
  today(): string {
    return this.now().toISOString().slice(0, 10);
  }

  /**
   * An agreement as GET /recurring/v3/agreements/{id} answers it: `status` PENDING | ACTIVE | STOPPED (cannot be
   * reactivated) | EXPIRED (reference 2.6; deno-sdk src/generated_types/recurring/types.gen.ts); only ACTIVE is charged.
   */
  setAgreement(agreementId: string, agreement: Json = {}): void {
    this.agreements.set(agreementId, {
      id: agreementId,
      status: 'ACTIVE',
      productName: 'Subscription',
      pricing: { type: 'LEGACY', amount: 9900, currency: 'DKK' },
      interval: { unit: 'MONTH', count: 1 },
      ...agreement,
    });
  }

  /**
   * The payment card the customer has on the agreement in the app: `no_funds` makes the wallet's attempts fail
   * (`user_action_required`: "lack of funds, card is blocked for ecommerce, card is expired", GUIDE "Charge failure
   * reasons"); `good` is the customer fixing it in the app ("add funds to the card or change the card on the agreement").
   */
  setAgreementCard(agreementId: string, state: MobileWalletCardState): void {
    this.cards.set(agreementId, state);
  }

  /**
   * The customer's own maximum on a VARIABLE agreement, as changed in the app (GUIDE "Charge amount higher than
   * the user's max amount": the charge stays DUE and fails at due + retryDays unless the user raises it).
   */
  setMaxAmount(agreementId: string, maxAmount: number): void {
    const agreement = this.agreements.get(agreementId);
    if (!agreement) throw new Error(`no agreement ${agreementId} at the fake wallet`);
    agreement.pricing = { ...(agreement.pricing as Json), type: 'VARIABLE', maxAmount };
  }

  setCharge(agreementId: string, chargeId: string, charge: Json = {}): void {
    const key = `${agreementId}/${chargeId}`;
    this.charges.set(key, {
      id: chargeId,
      agreementId,
      amount: 9900,
      currency: 'DKK',
      status: 'PENDING',
      type: 'RECURRING',
      transactionType: 'DIRECT_CAPTURE',
      transactionId: null,
      failureReason: null,
      failureDescription: null,
      summary: { captured: 0, refunded: 0, cancelled: 0 },
      history: [],
      ...charge,
    });
    // The id is now taken at this merchant (GUIDE "orderId recommendations"); the wallet starts over with its attempts.
    this.usedOrderIds.add(chargeId);
    const previous = this.processing.get(key);
    this.processing.set(key, { processingMode: (charge.processingMode as Processing['processingMode'] | undefined) ?? previous?.processingMode ?? 'MULTIPLE_ATTEMPTS', attempts: 0 });
  }

  /** A charge as the wallet holds it now, or undefined. */
  charge(agreementId: string, chargeId: string): Json | undefined {
    return this.charges.get(`${agreementId}/${chargeId}`);
  }

  /** Outcomes of the next create-charge requests that are not idempotent repeats, in order; default: created. */
  queueChargeOutcome(...outcomes: FakeMobileWalletChargeOutcome[]): void {
    this.outcomes.push(...outcomes);
  }

  /** Cancels to answer 202 and enact later (see acceptNextCancels), and those accepted so far, not yet enacted. */
  private cancelsToAccept = 0;
  private readonly acceptedCancels: { agreementId: string; chargeId: string; idempotencyKey: string }[] = [];

  /**
   * SPEC CancelChargeV3 documents 202: "accepted, will likely succeed but has not yet been enacted". The next `count`
   * cancels of a cancellable charge are answered so, and the charge stays as it is until enactAcceptedCancels(); a
   * charge that falls due meanwhile is taken on its due date as any other.
   */
  acceptNextCancels(count = 1): void {
    this.cancelsToAccept += count;
  }

  /** Outcomes queued, cancels to answer 202 and answers to lose that no request has met yet are dropped. */
  clearFaults(): void {
    this.outcomes.length = 0;
    this.cancelsToAccept = 0;
    this.clearLostAnswers();
  }

  /** Carries out the cancels answered 202 whose charges can still be cancelled; how many were. */
  enactAcceptedCancels(): number {
    let enacted = 0;
    for (const { agreementId, chargeId, idempotencyKey } of this.acceptedCancels.splice(0)) {
      const charge = this.charges.get(`${agreementId}/${chargeId}`);
      if (!charge || !['PENDING', 'DUE', 'RESERVED'].includes(String(charge.status))) continue;
      const amount = Number(charge.amount);
      Object.assign(charge, { status: 'CANCELLED', summary: { captured: 0, refunded: 0, cancelled: amount } });
      charge.history = [...((charge.history as Json[] | undefined) ?? []), { occurred: isoSeconds(this.now()), event: 'CANCEL', amount, idempotencyKey, success: true }];
      enacted += 1;
    }
    return enacted;
  }

  /** Statuses for the next GET requests to the APIs (not the token), in order: an outage or a rate limit. */
  private readonly readFailures: { status: number; path?: string }[] = [];

  /** The next `count` GET requests (to paths starting with `path`, when given) are answered with `status` (e.g. 500 or 429). */
  failNextReads(status: number, count = 1, path?: string): void {
    for (let i = 0; i < count; i += 1) this.readFailures.push({ status, path });
  }

  /** Requests other than GETs and the access token's POST (which creates nothing): what a read-only caller must never send. */
  writes(): import('./fake-provider-server').RecordedRequest[] {
    return this.requests.filter((request) => request.method !== 'GET' && request.path.toLowerCase() !== '/accesstoken/get');
  }

  /** Invalidate every issued token, as a key rotation would: the next API call gets 401. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  webhookSecret(id: string): string | undefined {
    return this.webhooks.get(id)?.secret;
  }

  /** Moves the wallet's clock to `date` (from then on it no longer follows the `now` option) and runs what fell due. */
  advanceTo(date: Date | string): Promise<MobileWalletEmitted[]> {
    const at = new Date(date);
    if (at.getTime() < this.now().getTime()) throw new Error(`the wallet's clock does not go back (${this.now().toISOString()} -> ${at.toISOString()})`);
    this.manualNow = at;
    return this.runDueCharges(at);
  }

  /**
   * The wallet's own processing up to `at` (default: its now): every PENDING or DUE charge whose attempt times have
   * come is attempted, in time order, at 07:00 and 15:00 UTC on its due date and on each of the `retryDays` after it
   * (GUIDE "Charge times", "Charge retries": "We will retry the charge for the number of days specified in
   * retryDays"; one attempt for SINGLE_ATTEMPT, TOOLKIT charges.md). The charge stays DUE while retried and ends
   * CHARGED (RESERVED for RESERVE_CAPTURE) or FAILED (GUIDE "Charge states", "Example charge flows"). Each end is
   * sent to the webhooks registered for its event, signed, and returned.
   */
  async runDueCharges(at: Date = this.now()): Promise<MobileWalletEmitted[]> {
    const emitted: MobileWalletEmitted[] = [];
    const due: { key: string; slot: Date }[] = [];
    for (const [key, charge] of this.charges) {
      this.showWhenDue(charge, at);
      if (charge.status !== 'PENDING' && charge.status !== 'DUE') continue;
      const slot = this.nextSlot(key, charge);
      if (slot && slot.getTime() <= at.getTime()) due.push({ key, slot });
    }
    // In time order across charges, each charge's slots one after another.
    while (due.length > 0) {
      due.sort((a, b) => a.slot.getTime() - b.slot.getTime());
      const { key, slot } = due.shift()!;
      const event = this.attempt(key, slot);
      if (event) emitted.push(await this.emit(event, slot));
      const charge = this.charges.get(key)!;
      const next = charge.status === 'DUE' || charge.status === 'PENDING' ? this.nextSlot(key, charge) : undefined;
      if (next && next.getTime() <= at.getTime()) due.push({ key, slot: next });
    }
    return emitted;
  }

  protected override contentType(status: number): string {
    return status >= 400 ? 'application/problem+json' : 'application/json';
  }

  protected route(req: http.IncomingMessage, pathname: string, json: unknown, rawBody: string): Answer {
    const method = req.method ?? '';
    // The access token API's path is written /accesstoken/get in the wallet's documents; its own WooCommerce plugin
    // calls accessToken/get (woo-vipps 6.0.5: recurring/includes/wc-vipps-recurring-api.php, payment/VippsApi.class.php)
    // and works in production, so the wallet matches this path without regard to case.
    if (method === 'POST' && pathname.toLowerCase() === '/accesstoken/get') return this.issueToken(req);

    // SPEC Authorization parameter; PROBLEMS not-authorized "JWT token is invalid"; GUIDE "HTTP responses": "401 Unauthorized: Invalid credentials".
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || expiresAt <= Date.now()) return problem(401, 'not-authorized', 'JWT token is invalid', pathname);
    if (req.headers['ocp-apim-subscription-key'] !== this.subscriptionKey) return problem(401, 'not-authorized', 'Invalid subscription key', pathname);
    // GUIDE "HTTP responses": "403 Forbidden: Authentication ok, but credentials lacks authorization".
    if (req.headers['merchant-serial-number'] !== this.merchantSerialNumber) return problem(403, 'forbidden', 'Unknown merchant serial number', pathname);

    const failureAt = method === 'GET' ? this.readFailures.findIndex((f) => f.path === undefined || pathname.startsWith(f.path)) : -1;
    const failure = failureAt < 0 ? undefined : this.readFailures.splice(failureAt, 1)[0]!.status;
    if (failure) return problem(failure, 'error', 'Simulated failure', pathname);

    let match: RegExpExecArray | null;
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)$/.exec(pathname)) && method === 'GET') {
      const agreement = this.agreements.get(decodeURIComponent(match[1]!));
      return agreement ? { status: 200, body: agreement } : problem(404, 'agreement-not-found', 'Agreement not found', pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges\/([^/]+)$/.exec(pathname)) && method === 'GET') {
      return this.fetchCharge(decodeURIComponent(match[1]!), decodeURIComponent(match[2]!), pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges\/([^/]+)$/.exec(pathname)) && method === 'DELETE') {
      return this.cancelChargeRequest(req, decodeURIComponent(match[1]!), decodeURIComponent(match[2]!), rawBody, pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges\/([^/]+)\/refund$/.exec(pathname)) && method === 'POST') {
      return this.refundChargeRequest(req, decodeURIComponent(match[1]!), decodeURIComponent(match[2]!), json, rawBody, pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges$/.exec(pathname)) && method === 'GET') {
      return this.listCharges(decodeURIComponent(match[1]!), new URL(req.url ?? '/', 'http://fake').searchParams.get('status'), pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges$/.exec(pathname)) && method === 'POST') {
      return this.chargeRequest(req, decodeURIComponent(match[1]!), json, rawBody, pathname);
    }
    if (pathname === '/webhooks/v1/webhooks' && method === 'POST') {
      const input = (json ?? {}) as Json;
      if (typeof input.url !== 'string' || !Array.isArray(input.events) || input.events.length === 0) {
        return problem(400, 'validation-error', 'url and events are required', pathname);
      }
      const registration = {
        id: crypto.randomUUID(),
        url: input.url,
        events: input.events.map(String),
        secret: crypto.randomBytes(48).toString('base64'),
      };
      this.webhooks.set(registration.id, registration);
      return { status: 201, body: { id: registration.id, secret: registration.secret } };
    }
    if (pathname === '/webhooks/v1/webhooks' && method === 'GET') {
      return { status: 200, body: { webhooks: [...this.webhooks.values()].map(({ id, url, events }) => ({ id, url, events })) } };
    }
    if ((match = /^\/webhooks\/v1\/webhooks\/([^/]+)$/.exec(pathname)) && method === 'DELETE') {
      return this.webhooks.delete(decodeURIComponent(match[1]!))
        ? { status: 204, body: null }
        : problem(404, 'not-found', 'Webhook not found', pathname);
    }
    return problem(404, 'not-found', 'No such route', pathname);
  }

  private issueToken(req: http.IncomingMessage): Answer {
    const h = req.headers;
    if (h.client_id !== this.clientId || h.client_secret !== this.clientSecret || h['ocp-apim-subscription-key'] !== this.subscriptionKey) {
      return { status: 401, body: { error: 'unauthorized_client', error_description: 'Invalid client credentials' } };
    }
    const token = `eyJ.fake.${crypto.randomBytes(12).toString('hex')}`;
    this.tokens.set(token, Date.now() + this.tokenTtlSeconds * 1000);
    this.tokensIssued += 1;
    const now = Math.floor(Date.now() / 1000);
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        expires_in: String(this.tokenTtlSeconds),
        ext_expires_in: '0',
        expires_on: String(now + this.tokenTtlSeconds),
        not_before: String(now),
        resource: '00000002-0000-0000-c000-000000000000',
        access_token: token,
      },
    };
  }

  /** GUIDE "Rate limiting": a call over its key's limit in the last minute is answered 429. */
  private overReadLimit(key: string, perMinute: number, pathname: string): Answer | undefined {
    const now = this.now().getTime();
    const recent = (this.reads.get(key) ?? []).filter((at) => at > now - 60_000 && at <= now);
    if (recent.length >= perMinute) {
      this.reads.set(key, recent);
      const retryAfter = Math.max(1, Math.ceil((recent[0]! + 60_000 - now) / 1000));
      // GUIDE "HTTP responses": "Responses might include a Retry-After-header ... This will mostly apply to 429
      // responses". The 429 problem has no type of its own in PROBLEMS: RFC 7807 3.1 "about:blank", title = status phrase.
      return {
        status: 429,
        headers: { 'Retry-After': String(retryAfter) },
        body: { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: `At most ${perMinute} calls a minute`, instance: pathname, contextId: crypto.randomUUID() },
      };
    }
    recent.push(now);
    this.reads.set(key, recent);
    return undefined;
  }

  private fetchCharge(agreementId: string, chargeId: string, pathname: string): Answer {
    const limited = this.overReadLimit(`fetch-charge ${agreementId}/${chargeId}`, FETCH_CHARGE_PER_MINUTE, pathname);
    if (limited) return limited;
    const charge = this.charges.get(`${agreementId}/${chargeId}`);
    if (!charge) return problem(404, 'charge-not-found', 'Charge not found', pathname);
    this.showWhenDue(charge, this.now());
    return { status: 200, body: charge };
  }

  /** SPEC ListChargesV3: "Fetches all charges for a single agreement ... Supports filtering on status using query parameter" (ChargeStatusQueryV3 `status`). */
  private listCharges(agreementId: string, status: string | null, pathname: string): Answer {
    if (status !== null && !CHARGE_STATUSES.includes(status)) return problem(400, 'validation-error', `status must be one of ${CHARGE_STATUSES.join(', ')}`, pathname, [{ field: 'status', text: 'invalid value' }]);
    const limited = this.overReadLimit(`list-charges ${agreementId}`, LIST_CHARGES_PER_MINUTE, pathname);
    if (limited) return limited;
    if (!this.agreements.has(agreementId)) return problem(404, 'agreement-not-found', 'Agreement not found', pathname);
    const now = this.now();
    const charges = [...this.charges.values()].filter((charge) => charge.agreementId === agreementId);
    for (const charge of charges) this.showWhenDue(charge, now);
    return { status: 200, body: charges.filter((charge) => status === null || charge.status === status) };
  }

  /**
   * SPEC Idempotency-Key parameter: "Key size can be between 1 to 40 characters. Key must not contain '#', '?', '/'
   * or '\\'", required on POST/PUT/PATCH/DELETE (GUIDE "Idempotency Key header"); PROBLEMS idempotency-key-header.
   */
  private idempotencyKey(req: http.IncomingMessage, pathname: string): string | Answer {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || !/^[^#?/\\]{1,40}$/.test(key)) {
      return problem(400, 'idempotency-key-header', 'Missing or invalid Idempotency key header', pathname);
    }
    return key;
  }

  /**
   * GUIDE "Idempotency Key header": "you should receive the same response as if you only sent one request";
   * "If the response is a client-error (4xx), you will continue to get the same error as long as you use the same
   * idempotency key"; "If you reuse an idempotency key on a different request, you will get a 409 CONFLICT"
   * (PROBLEMS idempotency-conflict). 5xx answers are not kept: a retry with the same key is processed again.
   */
  private replay(key: string, fingerprint: string, pathname: string): Answer | undefined {
    const previous = this.idempotent.get(key);
    if (!previous) return undefined;
    return previous.fingerprint === fingerprint
      ? { status: previous.status, body: previous.body }
      : problem(409, 'idempotency-conflict', 'The Idempotency-Key has been used before for a different request', pathname);
  }

  private remember(key: string, fingerprint: string, answer: Answer): void {
    if (answer.status < 500) this.idempotent.set(key, { fingerprint, status: answer.status, body: answer.body as Json | null });
  }

  private chargeRequest(req: http.IncomingMessage, agreementId: string, json: unknown, rawBody: string, pathname: string): Answer {
    const key = this.idempotencyKey(req, pathname);
    if (typeof key !== 'string') return key;
    const fingerprint = `POST ${pathname}\n${rawBody}`;
    const replayed = this.replay(key, fingerprint, pathname);
    if (replayed) return replayed;
    let outcome = this.outcomes.shift() ?? { kind: 'created' };
    let delayMs = 0;
    while (outcome.kind === 'slow') {
      delayMs += outcome.delayMs;
      outcome = outcome.then ?? { kind: 'created' };
    }
    const answer = outcome.kind === 'http'
      ? problem(outcome.status, outcome.problem ?? 'error', outcome.detail ?? 'Simulated failure', pathname)
      : this.createCharge(req, agreementId, json, rawBody, key, pathname);
    this.remember(key, fingerprint, answer);
    return { ...answer, delayMs };
  }

  private createCharge(req: http.IncomingMessage, agreementId: string, json: unknown, rawBody: string, idempotencyKey: string, pathname: string): Answer {
    // SPEC CreateChargeV3 requestBody content application/json; PROBLEMS unsupported-media-type, invalid-json.
    if (!/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) return problem(415, 'unsupported-media-type', 'Content-Type must be application/json', pathname);
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return problem(400, 'invalid-json', rawBody.trim() === '' ? 'A JSON body is required' : 'JSON body is invalid', pathname);
    const input = json as Json;
    const invalid = this.chargeFieldRules(input, pathname);
    if (invalid) return invalid;

    const agreement = this.agreements.get(agreementId);
    if (!agreement) return problem(404, 'agreement-not-found', 'Agreement not found', pathname);
    // GUIDE "Create a charge" flow and TOOLKIT SKILL.md: "The agreement must be ACTIVE. Charges cannot be created
    // against any other status." Its problem type is not in PROBLEMS; charge-creation-failed "Could not create the
    // charge", with SPEC ErrorV2's example message.
    if (agreement.status !== 'ACTIVE') return problem(400, 'charge-creation-failed', 'Cannot create a charge for an agreement which is not active.', pathname);
    const pricing = (agreement.pricing ?? {}) as Json;
    const amount = input.amount as number;
    // GUIDE "Amount limits": LEGACY pricing "A limit is in place however, which is 5 times the agreement price"
    // (counted per charge here, not per interval); VARIABLE pricing: "can not be higher than the suggestedMaxAmount or
    // maxAmount field, depending on which is highest"; PROBLEMS charge-amount-too-high.
    const limit = pricing.type === 'VARIABLE'
      ? Math.max(Number(pricing.suggestedMaxAmount ?? 0), Number(pricing.maxAmount ?? 0))
      : typeof pricing.amount === 'number' ? 5 * pricing.amount : Infinity;
    if (amount > limit) return problem(400, 'charge-amount-too-high', `Amount set for charge is too high: at most ${limit}`, pathname);
    // GUIDE "orderId recommendations": unique per merchant serial number. The problem for a reused one is not in
    // PROBLEMS; conflict "could not be performed due to a conflicting request/state" (409) is used.
    if (typeof input.orderId === 'string' && this.usedOrderIds.has(input.orderId)) {
      return problem(409, 'conflict', `orderId ${input.orderId} has been used before at this merchant serial number`, pathname);
    }

    // GUIDE "orderId recommendations": "If the field is not provided, we will automatically create a unique ID prefixed with chr-".
    const chargeId = typeof input.orderId === 'string' ? input.orderId : `chr-${(++this.chargeCounter).toString(36)}${crypto.randomBytes(3).toString('hex')}`;
    const type = (input.type as string | undefined) ?? 'RECURRING';
    const now = this.now();
    this.setCharge(agreementId, chargeId, {
      amount,
      currency: pricing.currency ?? 'DKK',
      description: input.description,
      // SPEC ChargeResponseV3.due: "format: date-time", example "2019-06-01T00:00:00Z".
      due: typeof input.due === 'string' ? `${input.due}T00:00:00Z` : null,
      retryDays: input.retryDays ?? 0,
      status: 'PENDING',
      type,
      transactionType: input.transactionType,
      externalId: input.externalId ?? null,
      externalAgreementId: agreement.externalId ?? null,
      history: [{ occurred: isoSeconds(now), event: 'CREATE', amount, idempotencyKey, success: true }],
    });
    const processing = this.processing.get(`${agreementId}/${chargeId}`)!;
    processing.processingMode = (input.processingMode as Processing['processingMode'] | undefined) ?? 'MULTIPLE_ATTEMPTS';
    this.showWhenDue(this.charges.get(`${agreementId}/${chargeId}`)!, now);
    return { status: 201, body: { chargeId } };
  }

  /** The field rules of CreateChargeV3; a breach is PROBLEMS validation-error (400) naming the field, unless the due date has its own problem. */
  private chargeFieldRules(input: Json, pathname: string): Answer | undefined {
    const refuse = (field: string, text: string) => problem(400, 'validation-error', 'Input validation failed', pathname, [{ field, text }]);
    // SPEC CreateChargeV3.required: amount, description, transactionType (due and retryDays below).
    // amount: "type: integer, format: int32, minimum: 100", minor units.
    if (typeof input.amount !== 'number' || !Number.isInteger(input.amount)) return refuse('amount', 'must be an integer amount in minor units');
    if (input.amount < 100 || input.amount > 2 ** 31 - 1) return refuse('amount', 'must be at least 100');
    // transactionType: enum DIRECT_CAPTURE, RESERVE_CAPTURE (SPEC schemas.transactionType).
    if (input.transactionType !== 'DIRECT_CAPTURE' && input.transactionType !== 'RESERVE_CAPTURE') return refuse('transactionType', 'must be DIRECT_CAPTURE or RESERVE_CAPTURE');
    // description: "minimum: 1, maximum: 45"; GUIDE "Charge descriptions": "description cannot be longer than 45 characters".
    if (typeof input.description !== 'string' || input.description.length < 1 || [...input.description].length > 45) return refuse('description', 'must be 1 to 45 characters');
    // type: RECURRING (default) or UNSCHEDULED (DENO ChargeCreationTypeV3; TOOLKIT charges.md); UNSCHEDULED needs
    // the sales unit on an allow list, else HTTP 400 "Cannot create a charge with type 'UNSCHEDULED'" (problem type not published).
    const type = input.type ?? 'RECURRING';
    if (type !== 'RECURRING' && type !== 'UNSCHEDULED') return refuse('type', 'must be RECURRING or UNSCHEDULED');
    if (type === 'UNSCHEDULED' && !this.unscheduledAllowed) return problem(400, 'unsupported-feature', "Cannot create a charge with type 'UNSCHEDULED'", pathname);
    // processingMode: MULTIPLE_ATTEMPTS (default) or SINGLE_ATTEMPT, "which requires retryDays: 0" (TOOLKIT charges.md;
    // https://developer.vippsmobilepay.com/docs/APIs/recurring-api/how-it-works/charges/recurring-charges-howitworks).
    const mode = input.processingMode ?? 'MULTIPLE_ATTEMPTS';
    if (mode !== 'MULTIPLE_ATTEMPTS' && mode !== 'SINGLE_ATTEMPT') return refuse('processingMode', 'must be MULTIPLE_ATTEMPTS or SINGLE_ATTEMPT');
    if (type === 'RECURRING') {
      // retryDays: required (SPEC CreateChargeV3.required; DENO: "Required only for RECURRING charges"), "minimum: 0, maximum: 14".
      if (typeof input.retryDays !== 'number' || !Number.isInteger(input.retryDays)) return refuse('retryDays', 'is required: an integer from 0 to 14');
      if (input.retryDays < 0 || input.retryDays > 14) return refuse('retryDays', 'must be from 0 to 14');
      if (mode === 'SINGLE_ATTEMPT' && input.retryDays !== 0) return refuse('retryDays', 'must be 0 with processingMode SINGLE_ATTEMPT');
      // due: required for RECURRING, "Must be in the format YYYY-MM-DD and ISO 8601".
      if (typeof input.due !== 'string' || !isDate(input.due)) return refuse('due', 'is required, as YYYY-MM-DD');
      const earliest = addDays(this.today(), MOBILE_WALLET_DUE_LEAD_DAYS);
      if (input.due < earliest) return problem(400, 'charge-due-too-soon', `Charge date due must be a minimum of ${MOBILE_WALLET_DUE_LEAD_DAYS} days in the future (at the earliest ${earliest})`, pathname);
      const latest = addYears(this.today(), DUE_MAX_YEARS);
      if (input.due > latest) return problem(400, 'charge-due-in-too-long', `Charge due date must be a maximum of ${DUE_MAX_YEARS} years in the future (at the latest ${latest})`, pathname);
    }
    // orderId: "maxLength: 50, minLength: 1", GUIDE: "can contain alphanumeric characters and dashes: a-z, A-Z, 0-9, -".
    if (input.orderId !== undefined && (typeof input.orderId !== 'string' || !/^[a-zA-Z0-9-]{1,50}$/.test(input.orderId))) return refuse('orderId', 'must be 1 to 50 characters of a-z, A-Z, 0-9 and -');
    // externalId: "maxLength: 64, minLength: 1".
    if (input.externalId !== undefined && (typeof input.externalId !== 'string' || input.externalId.length < 1 || input.externalId.length > 64)) return refuse('externalId', 'must be 1 to 64 characters');
    return undefined;
  }

  /**
   * SPEC CancelChargeV3 (DELETE, Idempotency-Key required, 204): "Cancels a pending, due or reserved charge. When
   * cancelling a charge that is PARTIALLY_CAPTURED, the remaining funds on the charge will be released back to the
   * customer"; GUIDE "Cancel a charge": "... and the charge status will be set to CHARGED". Any other status:
   * PROBLEMS cancel-charge-failed "Could not cancel the charge".
   */
  private cancelChargeRequest(req: http.IncomingMessage, agreementId: string, chargeId: string, rawBody: string, pathname: string): Answer {
    const key = this.idempotencyKey(req, pathname);
    if (typeof key !== 'string') return key;
    const fingerprint = `DELETE ${pathname}\n${rawBody}`;
    const replayed = this.replay(key, fingerprint, pathname);
    if (replayed) return replayed;
    const answer = this.cancelCharge(agreementId, chargeId, key, pathname);
    this.remember(key, fingerprint, answer);
    return answer;
  }

  private cancelCharge(agreementId: string, chargeId: string, idempotencyKey: string, pathname: string): Answer {
    const charge = this.charges.get(`${agreementId}/${chargeId}`);
    if (!charge) return problem(404, 'charge-not-found', 'Charge not found', pathname);
    const summary = { captured: 0, refunded: 0, cancelled: 0, ...(charge.summary as Json | undefined) } as { captured: number; refunded: number; cancelled: number };
    const amount = Number(charge.amount);
    const now = isoSeconds(this.now());
    if (this.cancelsToAccept > 0 && ['PENDING', 'DUE', 'RESERVED'].includes(String(charge.status))) {
      this.cancelsToAccept -= 1;
      this.acceptedCancels.push({ agreementId, chargeId, idempotencyKey });
      return { status: 202, body: null };
    }
    if (charge.status === 'PENDING' || charge.status === 'DUE' || charge.status === 'RESERVED') {
      Object.assign(charge, { status: 'CANCELLED', summary: { ...summary, cancelled: amount - summary.captured } });
    } else if (charge.status === 'PARTIALLY_CAPTURED') {
      Object.assign(charge, { status: 'CHARGED', summary: { ...summary, cancelled: amount - summary.captured } });
    } else {
      return problem(400, 'cancel-charge-failed', `Could not cancel the charge: it is ${String(charge.status)}`, pathname);
    }
    charge.history = [...((charge.history as Json[] | undefined) ?? []), { occurred: now, event: 'CANCEL', amount: amount - summary.captured, idempotencyKey, success: true }];
    return { status: 204, body: null };
  }

  /**
   * SPEC RefundChargeV3 (POST .../charges/{chargeId}/refund, Idempotency-Key required, 204 No Content; body
   * RefundRequest: `amount` (int32, minor units) and `description` (the reason), both required): refunds money the
   * charge captured. GUIDE "Charge states": a refund makes the charge PARTIALLY_REFUNDED, or REFUNDED once all that
   * was captured is refunded; `summary.refunded` counts it. Not published: the problem for a charge with nothing (or
   * not enough) left to refund; chosen, as for a cancel: 400 `refund-charge-failed` "Could not refund the charge",
   * for a charge that is not CHARGED or PARTIALLY_REFUNDED and for an amount above captured minus refunded.
   */
  private refundChargeRequest(req: http.IncomingMessage, agreementId: string, chargeId: string, json: unknown, rawBody: string, pathname: string): Answer {
    const key = this.idempotencyKey(req, pathname);
    if (typeof key !== 'string') return key;
    const fingerprint = `POST ${pathname}\n${rawBody}`;
    const replayed = this.replay(key, fingerprint, pathname);
    if (replayed) return replayed;
    const answer = this.refundCharge(agreementId, chargeId, key, json, pathname);
    this.remember(key, fingerprint, answer);
    return answer;
  }

  private refundCharge(agreementId: string, chargeId: string, idempotencyKey: string, json: unknown, pathname: string): Answer {
    const input = (json !== null && typeof json === 'object' && !Array.isArray(json) ? json : {}) as Json;
    const refuse = (field: string, text: string) => problem(400, 'validation-error', `${field}: ${text}`, pathname, [{ field, text }]);
    if (typeof input.amount !== 'number' || !Number.isInteger(input.amount) || input.amount < 1 || input.amount > 2 ** 31 - 1) return refuse('amount', 'must be a positive int32');
    if (typeof input.description !== 'string' || input.description === '') return refuse('description', 'must not be empty');
    const charge = this.charges.get(`${agreementId}/${chargeId}`);
    if (!charge) return problem(404, 'charge-not-found', 'Charge not found', pathname);
    const summary = { captured: 0, refunded: 0, cancelled: 0, ...(charge.summary as Json | undefined) } as { captured: number; refunded: number; cancelled: number };
    if (!['CHARGED', 'PARTIALLY_REFUNDED'].includes(String(charge.status)) || input.amount > summary.captured - summary.refunded) {
      return problem(400, 'refund-charge-failed', `Could not refund the charge: it is ${String(charge.status)}, ${summary.captured - summary.refunded} left to refund`, pathname);
    }
    const refunded = summary.refunded + input.amount;
    Object.assign(charge, { status: refunded === summary.captured ? 'REFUNDED' : 'PARTIALLY_REFUNDED', summary: { ...summary, refunded } });
    charge.history = [...((charge.history as Json[] | undefined) ?? []), { occurred: isoSeconds(this.now()), event: 'REFUND', amount: input.amount, idempotencyKey, success: true }];
    return { status: 204, body: null };
  }

  /** PENDING becomes DUE once the due date is near (DUE_VISIBLE_DAYS). */
  private showWhenDue(charge: Json, at: Date): void {
    if (charge.status !== 'PENDING' || typeof charge.due !== 'string') return;
    const due = Date.parse(`${charge.due.slice(0, 10)}T00:00:00Z`);
    if (!Number.isNaN(due) && due - at.getTime() < DUE_VISIBLE_DAYS * DAY_MS) charge.status = 'DUE';
  }

  /** The time of the charge's next attempt, or undefined when it has none left (or no due date). */
  private nextSlot(key: string, charge: Json): Date | undefined {
    if (typeof charge.due !== 'string') return undefined;
    const due = Date.parse(`${charge.due.slice(0, 10)}T00:00:00Z`);
    if (Number.isNaN(due)) return undefined;
    const processing = this.processing.get(key) ?? { processingMode: 'MULTIPLE_ATTEMPTS', attempts: 0 };
    const slots = this.slotCount(charge, processing);
    if (processing.attempts >= slots) return undefined;
    const day = Math.floor(processing.attempts / ATTEMPT_HOURS_UTC.length);
    return new Date(due + day * DAY_MS + ATTEMPT_HOURS_UTC[processing.attempts % ATTEMPT_HOURS_UTC.length]! * 3_600_000);
  }

  /**
   * GUIDE "Charge retries": "We will retry the charge for the number of days specified in retryDays. The maximum
   * number of retryDays is 14"; "The status of a charge will be DUE ... from the due date until the charge has
   * succeeded, or until the retryDays have passed without a successful charge. The final status will be CHARGED or
   * FAILED"; "Example charge flows": "retryDays = 10, and has funds on the fifth day: PENDING -> DUE (for five days)
   * -> CHARGED". So a charge the customer's card cannot pay on its due date is tried again each day (at the
   * "Charge times" hours) through due + retryDays, and FAILED after the last try. TOOLKIT SKILL.md: "the charge is
   * retried until retryDays runs out ... Do not build your own retry loop for RECURRING charges"; "retryDays: 0
   * means one attempt and then FAILED" (SINGLE_ATTEMPT: one try).
   */
  private slotCount(charge: Json, processing: Processing): number {
    if (processing.processingMode === 'SINGLE_ATTEMPT') return 1;
    const retryDays = typeof charge.retryDays === 'number' ? charge.retryDays : 0;
    return (retryDays + 1) * ATTEMPT_HOURS_UTC.length;
  }

  /** One attempt at `slot`; the event the wallet sends when the charge ends, or undefined while it keeps trying. */
  private attempt(key: string, slot: Date): MobileWalletDeliveryEvent | undefined {
    const charge = this.charges.get(key)!;
    const processing = this.processing.get(key) ?? { processingMode: 'MULTIPLE_ATTEMPTS' as const, attempts: 0 };
    this.processing.set(key, processing);
    processing.attempts += 1;
    charge.status = 'DUE';
    const agreementId = String(charge.agreementId);
    const agreement = this.agreements.get(agreementId);
    const amount = Number(charge.amount);
    const occurred = isoSeconds(slot);
    const history = (charge.history as Json[] | undefined) ?? [];
    // TOOLKIT SKILL.md: "Stopping cancels PENDING, DUE, and RESERVED charges" (SPEC CancelChargeV3: "if you cancel an
    // agreement, there is no need to cancel the charges ... This will be done automatically").
    if (!agreement || agreement.status !== 'ACTIVE') {
      Object.assign(charge, { status: 'CANCELLED', summary: { captured: 0, refunded: 0, cancelled: amount }, history: [...history, { occurred, event: 'CANCEL', amount, idempotencyKey: `${charge.id}-agreement-stopped`, success: true }] });
      return this.chargeEvent('recurring.charge-canceled.v1', charge, occurred);
    }
    const pricing = (agreement.pricing ?? {}) as Json;
    // GUIDE "Charge amount higher than the user's max amount": above the user's maxAmount the charge waits (DUE)
    // and fails at due + retryDays with charge_amount_too_high; otherwise the customer's card decides.
    const failure = pricing.type === 'VARIABLE' && typeof pricing.maxAmount === 'number' && amount > pricing.maxAmount ? 'charge_amount_too_high'
      : this.cards.get(agreementId) === 'no_funds' ? 'user_action_required' : undefined;
    if (!failure) {
      const reserve = charge.transactionType === 'RESERVE_CAPTURE';
      // SPEC ChargeResponseV3.transactionId: "Contains null until the status has reached CHARGED"; pattern digits.
      const transactionId = String(5_000_000_000 + crypto.randomInt(0, 999_999_999));
      Object.assign(charge, {
        status: reserve ? 'RESERVED' : 'CHARGED',
        transactionId,
        failureReason: null,
        failureDescription: null,
        summary: { captured: reserve ? 0 : amount, refunded: 0, cancelled: 0 },
        history: [...history, { occurred, event: reserve ? 'RESERVE' : 'CAPTURE', amount, idempotencyKey: `${charge.id}-${agreementId}-ProcessPayment`, success: true }],
      });
      return this.chargeEvent(reserve ? 'recurring.charge-reserved.v1' : 'recurring.charge-captured.v1', charge, occurred, { transactionId });
    }
    processing.lastFailure = failure;
    // GUIDE "Charge retries": "The status of a charge will be DUE while Vipps is taking care of business ... The final
    // status will be CHARGED or FAILED"; "We don't provide details about each charge attempt to the merchant".
    if (this.nextSlot(key, charge)) return undefined;
    // GUIDE "Charge failure reasons" (failureReason / failureDescription, experimental).
    Object.assign(charge, {
      status: 'FAILED',
      failureReason: failure,
      failureDescription: failure === 'user_action_required' ? 'User action required' : 'Charge amount too high',
      history: [...history, { occurred, event: 'FAIL', amount, idempotencyKey: `${charge.id}-${agreementId}-ProcessPayment`, success: false }],
    });
    return this.chargeEvent('recurring.charge-failed.v1', charge, occurred, { failureReason: failure });
  }

  /**
   * A charge event's payload: eventType, agreementId, chargeId, chargeExternalId (read by the official plugin,
   * vippsas/vipps-recurring-woocommerce includes/wc-gateway-vipps-recurring.php handle_webhook_callback), nullable
   * transactionId (Recurring CHANGELOG Dec 2025), amount, currency, chargeType, occurred, msn (third-party typings;
   * see /work/shared/reference/payment-providers.md 2.5).
   */
  private chargeEvent(eventType: string, charge: Json, occurred: string, extra: Json = {}): MobileWalletDeliveryEvent {
    return {
      eventType,
      agreementId: String(charge.agreementId),
      chargeId: String(charge.id),
      chargeExternalId: (charge.externalId as string | null | undefined) ?? null,
      amount: charge.amount,
      currency: charge.currency,
      chargeType: charge.type,
      occurred,
      msn: this.merchantSerialNumber,
      transactionId: null,
      ...extra,
    };
  }

  /**
   * Sends `event` to every webhook registered for its type (vippsas/webhooks-api api-guide.md), signed as the
   * Webhooks API signs (request-authentication.md: x-ms-date, x-ms-content-sha256, HMAC-SHA256 over the registered
   * URL's path and host). A failed delivery is recorded (status 0 when nothing answered), not retried.
   */
  private async emit(event: MobileWalletDeliveryEvent, at: Date): Promise<MobileWalletEmitted> {
    const deliveries: MobileWalletEmitted['deliveries'] = [];
    for (const registration of this.webhooks.values()) {
      if (!registration.events.includes(event.eventType)) continue;
      const delivery = mobileWalletDelivery(event, { secret: registration.secret, url: registration.url, date: at });
      const target = new URL(this.webhookTarget(registration.url));
      let status = 0;
      try {
        const { host: _host, ...headers } = delivery.headers;
        // The Host header stays the registered one, as the signature covers it.
        const answer = await request(target.origin, 'POST', `${target.pathname}${target.search}`, { headers: { ...headers, host: delivery.headers.host! }, body: delivery.body, timeoutMs: 10_000 });
        status = answer.status;
      } catch {
        status = 0;
      }
      deliveries.push({ registrationId: registration.id, url: registration.url, status });
    }
    const emitted = { event, deliveries };
    this.emitted.push(emitted);
    return emitted;
  }
}

type Answer = ProviderAnswer;

/**
 * SPEC ErrorV3 ("Error response using the Problem JSON format"): type, title, status, detail, instance, contextId,
 * extraDetails[{field, text}]; PROBLEMS: each type starts with the problems page URL plus '#' and the identifier.
 * The title is the status's phrase (SPEC example "Bad Request"). traceId is kept for older readers (TOOLKIT: "RFC 7807 bodies with a traceId").
 */
function problem(status: number, type: string, detail: string, instance: string, extraDetails?: { field: string; text: string }[]): Answer {
  const contextId = crypto.randomUUID();
  return {
    status,
    body: {
      type: PROBLEM_BASE + type,
      title: http.STATUS_CODES[status] ?? 'Error',
      status,
      detail,
      instance,
      contextId,
      traceId: contextId,
      ...(extraDetails ? { extraDetails } : {}),
    },
  };
}

function isDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function addYears(day: string, years: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCFullYear(date.getUTCFullYear() + years);
  return date.toISOString().slice(0, 10);
}

/** SPEC ChargeEvent.occurred: "yyyy-MM-dd'T'HH:mm:ss'Z', with or without milliseconds". */
function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** The payload a test sends; anything the provider would put there (eventType, agreementId, chargeId, ...). */
export type MobileWalletDeliveryEvent = { eventType: string; [field: string]: unknown };

/**
 * A signed mobile-wallet webhook delivery, with the headers the provider sends: x-ms-date, x-ms-content-sha256,
 * Authorization (HMAC-SHA256 ...), host of the registered URL. `url` is the registered webhook URL.
 */
export function mobileWalletDelivery(
  event: MobileWalletDeliveryEvent | Buffer,
  options: { secret: string; url: string; date?: string | Date },
): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.isBuffer(event) ? event : Buffer.from(JSON.stringify(event), 'utf8');
  const date = options.date === undefined ? new Date().toUTCString() : typeof options.date === 'string' ? options.date : options.date.toUTCString();
  const signed = signMobileWalletRequest({ method: 'POST', url: options.url, date, body, secret: options.secret });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      host: signed.host,
      'x-ms-date': date,
      'x-ms-content-sha256': signed.contentHash,
      authorization: signed.authorization,
    },
  };
}
