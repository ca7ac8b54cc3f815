import crypto from 'node:crypto';
import http from 'node:http';
import { FakeProviderServer, type ProviderAnswer } from './fake-provider-server';
import { signMobileWalletRequest } from '../../src/payments/providers/mobile-wallet/signature.js';

/**
 * A loopback stand-in for the mobile wallet's APIs (Vipps MobilePay): POST /accesstoken/get with credentials in
 * headers, Bearer + Ocp-Apim-Subscription-Key + Merchant-Serial-Number on every other call, Recurring API v3
 * agreements and charges with the required Idempotency-Key on POST, the Webhooks API v1, and RFC 7807 problem
 * bodies on errors.
 */

export type FakeMobileWalletChargeOutcome =
  | { kind: 'created' }
  /** Any error answer, e.g. `{status: 500}` or `{status: 400, problem: 'charge-due-too-soon'}`. */
  | { kind: 'http'; status: number; problem?: string; detail?: string }
  | { kind: 'slow'; delayMs: number; then?: FakeMobileWalletChargeOutcome };

type Json = Record<string, unknown>;

const PROBLEM_BASE = 'https://developer.vippsmobilepay.com/docs/APIs/recurring-api/recurring-api-problems#';

export type { RecordedRequest } from './fake-provider-server';

export class FakeMobileWallet extends FakeProviderServer {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly subscriptionKey: string;
  readonly merchantSerialNumber: string;
  /** Lifetime of issued tokens, sent as the provider does: `expires_in` as a string of seconds. */
  tokenTtlSeconds: number;
  tokensIssued = 0;
  private readonly tokens = new Map<string, number>();
  private readonly agreements = new Map<string, Json>();
  private readonly charges = new Map<string, Json>();
  private readonly webhooks = new Map<string, { id: string; url: string; events: string[]; secret: string }>();
  private readonly outcomes: FakeMobileWalletChargeOutcome[] = [];
  /** Idempotency-Key -> fingerprint of the first request and the answer given to it. */
  private readonly idempotent = new Map<string, { fingerprint: string; status: number; body: Json }>();
  private chargeCounter = 0;

  constructor(
    options: { clientId?: string; clientSecret?: string; subscriptionKey?: string; merchantSerialNumber?: string; tokenTtlSeconds?: number } = {},
  ) {
    super();
    this.clientId = options.clientId ?? 'client-id-test';
    this.clientSecret = options.clientSecret ?? 'client-secret-test';
    this.subscriptionKey = options.subscriptionKey ?? 'subscription-key-test';
    this.merchantSerialNumber = options.merchantSerialNumber ?? '123456';
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? 3600;
  }

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

  setCharge(agreementId: string, chargeId: string, charge: Json = {}): void {
    this.charges.set(`${agreementId}/${chargeId}`, {
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
  }

  /** Outcomes of the next create-charge requests that are not idempotent repeats, in order; default: created. */
  queueChargeOutcome(...outcomes: FakeMobileWalletChargeOutcome[]): void {
    this.outcomes.push(...outcomes);
  }

  /** Statuses for the next GET requests to the APIs (not the token), in order: an outage or a rate limit. */
  private readonly readFailures: { status: number; path?: string }[] = [];

  /** The next `count` GET requests (to paths starting with `path`, when given) are answered with `status` (e.g. 500 or 429). */
  failNextReads(status: number, count = 1, path?: string): void {
    for (let i = 0; i < count; i += 1) this.readFailures.push({ status, path });
  }

  /** Requests other than GETs and the access token's POST (which creates nothing): what a read-only caller must never send. */
  writes(): import('./fake-provider-server').RecordedRequest[] {
    return this.requests.filter((request) => request.method !== 'GET' && request.path !== '/accesstoken/get');
  }

  /** Invalidate every issued token, as a key rotation would: the next API call gets 401. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  webhookSecret(id: string): string | undefined {
    return this.webhooks.get(id)?.secret;
  }

  protected override contentType(status: number): string {
    return status >= 400 ? 'application/problem+json' : 'application/json';
  }

  protected route(req: http.IncomingMessage, pathname: string, json: unknown, rawBody: string): Answer {
    const method = req.method ?? '';
    if (method === 'POST' && pathname === '/accesstoken/get') return this.issueToken(req);

    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || expiresAt <= Date.now()) return problem(401, 'not-authorized', 'Unauthorized', 'JWT token is invalid', pathname);
    if (req.headers['ocp-apim-subscription-key'] !== this.subscriptionKey) return problem(401, 'not-authorized', 'Unauthorized', 'Invalid subscription key', pathname);
    if (req.headers['merchant-serial-number'] !== this.merchantSerialNumber) return problem(403, 'forbidden', 'Forbidden', 'Unknown merchant serial number', pathname);

    const failureAt = method === 'GET' ? this.readFailures.findIndex((f) => f.path === undefined || pathname.startsWith(f.path)) : -1;
    const failure = failureAt < 0 ? undefined : this.readFailures.splice(failureAt, 1)[0].status;
    if (failure) return problem(failure, 'error', http.STATUS_CODES[failure] ?? 'Error', 'Simulated failure', pathname);

    let match: RegExpExecArray | null;
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)$/.exec(pathname)) && method === 'GET') {
      const agreement = this.agreements.get(decodeURIComponent(match[1]!));
      return agreement ? { status: 200, body: agreement } : problem(404, 'agreement-not-found', 'Not Found', 'Agreement not found', pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges\/([^/]+)$/.exec(pathname)) && method === 'GET') {
      const charge = this.charges.get(`${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`);
      return charge ? { status: 200, body: charge } : problem(404, 'charge-not-found', 'Not Found', 'Charge not found', pathname);
    }
    if ((match = /^\/recurring\/v3\/agreements\/([^/]+)\/charges$/.exec(pathname)) && method === 'POST') {
      return this.chargeRequest(req, decodeURIComponent(match[1]!), json, rawBody, pathname);
    }
    if (pathname === '/webhooks/v1/webhooks' && method === 'POST') {
      const input = (json ?? {}) as Json;
      if (typeof input.url !== 'string' || !Array.isArray(input.events) || input.events.length === 0) {
        return problem(400, 'validation-error', 'Bad Request', 'url and events are required', pathname);
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
        : problem(404, 'not-found', 'Not Found', 'Webhook not found', pathname);
    }
    return problem(404, 'not-found', 'Not Found', 'No such route', pathname);
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

  private chargeRequest(req: http.IncomingMessage, agreementId: string, json: unknown, rawBody: string, pathname: string): Answer {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || !/^[^#?/\\]{1,40}$/.test(key)) {
      return problem(400, 'idempotency-key-header', 'Bad Request', 'Missing or invalid Idempotency-Key header', pathname);
    }
    const fingerprint = `${pathname}\n${rawBody}`;
    const previous = this.idempotent.get(key);
    if (previous) {
      // Same key on a different request is a conflict; on the same request, the first answer (errors included).
      return previous.fingerprint === fingerprint
        ? { status: previous.status, body: previous.body }
        : problem(409, 'conflict', 'Conflict', 'Idempotency-Key reused for a different request', pathname);
    }
    let outcome = this.outcomes.shift() ?? { kind: 'created' };
    let delayMs = 0;
    while (outcome.kind === 'slow') {
      delayMs += outcome.delayMs;
      outcome = outcome.then ?? { kind: 'created' };
    }
    const answer = this.createCharge(agreementId, (json ?? {}) as Json, outcome, pathname);
    // 5xx answers are not remembered, so a retry with the same key is processed again.
    if (answer.status < 500) this.idempotent.set(key, { fingerprint, status: answer.status, body: answer.body ?? {} });
    return { ...answer, delayMs };
  }

  private createCharge(agreementId: string, input: Json, outcome: Exclude<FakeMobileWalletChargeOutcome, { kind: 'slow' }>, pathname: string): Answer {
    if (outcome.kind === 'http') {
      return problem(outcome.status, outcome.problem ?? 'error', http.STATUS_CODES[outcome.status] ?? 'Error', outcome.detail ?? 'Simulated failure', pathname);
    }
    const agreement = this.agreements.get(agreementId);
    if (!agreement) return problem(404, 'agreement-not-found', 'Not Found', 'Agreement not found', pathname);
    if (agreement.status !== 'ACTIVE') return problem(400, 'agreement-not-active', 'Bad Request', 'Agreement is not active', pathname);
    if (!Number.isSafeInteger(input.amount) || typeof input.description !== 'string' || typeof input.transactionType !== 'string') {
      return problem(400, 'validation-error', 'Bad Request', 'amount, description and transactionType are required', pathname);
    }
    // The wallet's documented rule: a single attempt has no retry days of the wallet's own.
    if (input.processingMode === 'SINGLE_ATTEMPT' && (input.retryDays ?? 0) !== 0) {
      return problem(400, 'validation-error', 'Bad Request', 'processingMode SINGLE_ATTEMPT requires retryDays 0', pathname);
    }
    const chargeId = typeof input.orderId === 'string' ? input.orderId : `chr-${++this.chargeCounter}${crypto.randomBytes(3).toString('hex')}`;
    this.setCharge(agreementId, chargeId, {
      amount: input.amount,
      description: input.description,
      due: input.due,
      retryDays: input.retryDays ?? 0,
      processingMode: input.processingMode ?? 'MULTIPLE_ATTEMPTS',
      type: input.type ?? 'RECURRING',
      transactionType: input.transactionType,
      externalId: input.externalId ?? null,
      currency: (agreement.pricing as Json | undefined)?.currency ?? 'DKK',
    });
    return { status: 201, body: { chargeId } };
  }
}

type Answer = ProviderAnswer;

function problem(status: number, type: string, title: string, detail: string, instance: string): Answer {
  return { status, body: { type: PROBLEM_BASE + type, title, status, detail, instance, traceId: crypto.randomBytes(8).toString('hex') } };
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
