import crypto from 'node:crypto';
import http from 'node:http';
import type { ExecutionContext } from 'ava';
import { FakeProviderServer, type ProviderAnswer } from './fake-provider-server';
import { request, type TestResponse } from './http-client';
import { signCardGatewayEvent } from '../../src/payments/providers/card-gateway/signature.js';

/**
 * A loopback stand-in for the card gateway's REST API (Reepay / Frisbii), speaking its documented shapes:
 * Basic auth with the private key and an empty password, `/v1/...` paths, the `{code, error, message, ...}` error
 * body, declines as HTTP 200 with `state: 'failed'`, and the body `key` as idempotency key on POST /v1/charge.
 */

export type FakeChargeOutcome =
  | { kind: 'settled' }
  | { kind: 'authorized' }
  | { kind: 'pending' }
  | { kind: 'failed'; error: string; errorState: 'soft_declined' | 'hard_declined' | 'processing_error' }
  /** Any error answer, e.g. `{status: 500}` or `{status: 400, code: 147, error: 'Payment method failed'}`. */
  | { kind: 'http'; status: number; code?: number; error?: string; transactionError?: string }
  | { kind: 'slow'; delayMs: number; then?: FakeChargeOutcome };

type Json = Record<string, unknown>;

export type { RecordedRequest } from './fake-provider-server';
type RecordedRequestOf = import('./fake-provider-server').RecordedRequest;

/**
 * An account whose request limits the gateway has raised: for tests of recovery at volume, whose
 * thousands of webhooks would otherwise take minutes at the documented 25 reads a second.
 */
export const RAISED_LIMITS_ENV = { CARD_GATEWAY_MAX_CONCURRENT_REQUESTS: '1000', CARD_GATEWAY_MAX_READS_PER_SECOND: '100000', CARD_GATEWAY_MAX_WRITES_PER_SECOND: '100000' };

/** The gateway's messages for its request-limit codes. */
const LIMIT_MESSAGES: Record<number, string> = { 122: 'Request rate limit exceeded', 123: 'Concurrent request limit exceeded' };

export class FakeCardGateway extends FakeProviderServer {
  readonly apiKey: string;
  webhookSecret: string;
  webhookUrls: string[] = [];
  private readonly invoices = new Map<string, Json>();
  private readonly charges = new Map<string, Json>();
  private readonly paymentMethods = new Map<string, Json>();
  private readonly outcomes: FakeChargeOutcome[] = [];
  /** `${handle}\n${key}` -> the first answer given for it. */
  private readonly idempotent = new Map<string, { status: number; body: Json }>();

  constructor(options: { apiKey?: string; webhookSecret?: string } = {}) {
    super();
    this.apiKey = options.apiKey ?? 'priv_test_0123456789abcdef';
    this.webhookSecret = options.webhookSecret ?? 'webhook_secret_test';
  }

  setInvoice(handle: string, invoice: Json): void {
    this.invoices.set(handle, { id: crypto.randomBytes(16).toString('hex'), handle, state: 'created', currency: 'DKK', ...invoice });
  }

  setCharge(handle: string, charge: Json): void {
    this.charges.set(handle, { handle, state: 'created', currency: 'DKK', ...charge });
  }

  setPaymentMethod(id: string, paymentMethod: Json): void {
    this.paymentMethods.set(id, { id, state: 'active', payment_type: 'card', ...paymentMethod });
  }

  /** Outcomes of the next POST /v1/charge requests that are not idempotent repeats, in order; default: success. */
  queueChargeOutcome(...outcomes: FakeChargeOutcome[]): void {
    this.outcomes.push(...outcomes);
  }

  /** Failures for the next GET requests, in order (an outage or a rate limit, without a webhook's help). */
  private readonly readFailures: { status: number; code: number; path?: string }[] = [];

  /**
   * The next `count` GET requests (to paths starting with `path`, when given) are answered with `status` and the
   * gateway's error `code` (e.g. 500, or 429 with 122 "Request rate limit exceeded"); then it answers as before.
   */
  failNextReads(status: number, count = 1, code = 0, path?: string): void {
    for (let i = 0; i < count; i += 1) this.readFailures.push({ status, code, path });
  }

  protected override rateLimitedAnswer(limit: 'concurrent' | 'rate'): Answer {
    const code = limit === 'concurrent' ? 123 : 122;
    return error(429, code, LIMIT_MESSAGES[code]!, '');
  }

  /** Requests other than GETs (what a read-only caller must never send). */
  writes(): RecordedRequestOf[] {
    return this.requests.filter((request) => request.method !== 'GET');
  }

  protected route(req: http.IncomingMessage, pathname: string, json: unknown): Answer {
    const expected = `Basic ${Buffer.from(`${this.apiKey}:`).toString('base64')}`;
    if (req.headers.authorization !== expected) return error(401, 1, 'Unauthorized', pathname);
    const failureAt = req.method === 'GET' ? this.readFailures.findIndex((f) => f.path === undefined || pathname.startsWith(f.path)) : -1;
    const failure = failureAt < 0 ? undefined : this.readFailures.splice(failureAt, 1)[0];
    if (failure) return error(failure.status, failure.code, LIMIT_MESSAGES[failure.code] ?? http.STATUS_CODES[failure.status] ?? 'Error', pathname);
    let match: RegExpExecArray | null;
    if (req.method === 'GET' && (match = /^\/v1\/invoice\/([^/]+)$/.exec(pathname))) {
      return found(this.invoices.get(decodeURIComponent(match[1]!)), 31, 'Invoice not found', pathname);
    }
    if (req.method === 'GET' && (match = /^\/v1\/charge\/([^/]+)$/.exec(pathname))) {
      return found(this.charges.get(decodeURIComponent(match[1]!)), 31, 'Invoice not found', pathname);
    }
    if (req.method === 'GET' && (match = /^\/v1\/payment_method\/([^/]+)$/.exec(pathname))) {
      return found(this.paymentMethods.get(decodeURIComponent(match[1]!)), 8, 'Not found', pathname);
    }
    if (req.method === 'GET' && pathname === '/v1/account/webhook_settings') {
      return { status: 200, body: { urls: this.webhookUrls, disabled: false, secret: this.webhookSecret, alert_count: 4, event_types: [] } };
    }
    if (req.method === 'POST' && pathname === '/v1/charge') return this.chargeRequest(json);
    return error(404, 8, 'Not found', pathname);
  }

  private chargeRequest(json: unknown): Answer {
    const input = (json ?? {}) as Json;
    if (typeof input.handle !== 'string' || typeof input.source !== 'string') return error(400, 2, 'Invalid request', '/v1/charge');
    const idempotencyKey = typeof input.key === 'string' ? `${input.handle}\n${input.key}` : null;
    const previous = idempotencyKey === null ? undefined : this.idempotent.get(idempotencyKey);
    if (previous) return previous;
    let outcome = this.outcomes.shift() ?? { kind: input.settle === true ? 'settled' : 'authorized' };
    let delayMs = 0;
    while (outcome.kind === 'slow') {
      delayMs += outcome.delayMs;
      outcome = outcome.then ?? { kind: input.settle === true ? 'settled' : 'authorized' };
    }
    // The charge exists as soon as it is processed, even if the answer is late (as with a real timeout).
    const answer = { ...this.createCharge(input, outcome), delayMs };
    // 5xx answers are not remembered: the documented recovery is to retry with the same key.
    if (idempotencyKey !== null && answer.status < 500) this.idempotent.set(idempotencyKey, { status: answer.status, body: answer.body });
    return answer;
  }

  private createCharge(input: Json, outcome: Exclude<FakeChargeOutcome, { kind: 'slow' }>): Answer {
    const handle = String(input.handle);
    if (outcome.kind === 'http') {
      const answer = error(outcome.status, outcome.code ?? 0, outcome.error ?? http.STATUS_CODES[outcome.status] ?? 'Error', '/v1/charge');
      if (outcome.transactionError) answer.body.transaction_error = outcome.transactionError;
      return answer;
    }
    const existing = this.charges.get(handle);
    if (existing?.state === 'settled') return error(400, 79, 'Invoice already settled', '/v1/charge');
    if (existing?.state === 'authorized') return error(400, 105, 'Invoice already authorized', '/v1/charge');
    const now = new Date().toISOString();
    const source = String(input.source);
    const customer = input.customer_handle ?? this.paymentMethods.get(source)?.customer ?? 'customer-1';
    const charge: Json = {
      handle,
      state: outcome.kind,
      customer,
      amount: input.amount,
      currency: input.currency ?? 'DKK',
      created: now,
      transaction: crypto.randomBytes(16).toString('hex'),
      processing: outcome.kind === 'pending',
      source: { type: 'card', card: source, masked_card: '457199XXXXXX1234', exp_date: '12-30' },
      error: null,
      error_state: null,
    };
    if (outcome.kind === 'authorized') charge.authorized = now;
    if (outcome.kind === 'settled') Object.assign(charge, { authorized: now, settled: now });
    if (outcome.kind === 'failed') Object.assign(charge, { error: outcome.error, error_state: outcome.errorState });
    this.charges.set(handle, charge);
    this.invoices.set(handle, {
      id: crypto.randomBytes(16).toString('hex'),
      handle,
      customer,
      state: outcome.kind,
      amount: input.amount,
      currency: charge.currency,
      created: now,
      transactions: [],
      credit_notes: [],
    });
    return { status: 200, body: charge };
  }
}

/** The card gateway always answers with a JSON body. */
interface Answer extends ProviderAnswer {
  body: Json;
}

function found(value: Json | undefined, code: number, message: string, path: string): Answer {
  return value ? { status: 200, body: value } : error(404, code, message, path);
}

function error(status: number, code: number, message: string, path: string): Answer {
  return {
    status,
    body: {
      code,
      error: message,
      path,
      timestamp: new Date().toISOString(),
      http_status: status,
      http_reason: http.STATUS_CODES[status] ?? '',
      request_id: crypto.randomBytes(16).toString('hex'),
    },
  };
}

/** The fields a test sets on a delivery; the envelope fields get defaults. */
export interface CardGatewayDeliveryEvent {
  event_type: string;
  id?: string;
  event_id?: string;
  timestamp?: string;
  [field: string]: unknown;
}

/**
 * A signed card-gateway webhook delivery as the provider sends it: the signature is the body field `signature`
 * over `timestamp + id`; no signature header.
 */
export function cardGatewayDelivery(
  event: CardGatewayDeliveryEvent,
  secret: string,
): { body: Buffer; headers: Record<string, string>; payload: Record<string, unknown> } {
  const id = event.id ?? crypto.randomBytes(16).toString('hex');
  const timestamp = event.timestamp ?? new Date().toISOString();
  const payload: Record<string, unknown> = {
    ...event,
    id,
    event_id: event.event_id ?? crypto.randomBytes(16).toString('hex'),
    timestamp,
  };
  payload.signature = signCardGatewayEvent({ timestamp, id }, secret);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  return { body, payload, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } };
}

/** Signs `event` with `secret` as the card gateway does and sends it to the service's webhook route. */
export async function sendCardGatewayEvent(apiUrl: string, event: CardGatewayDeliveryEvent, secret: string): Promise<{ res: TestResponse; eventId: string }> {
  const delivery = cardGatewayDelivery(event, secret);
  const res = await request(apiUrl, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: delivery.headers, body: delivery.body });
  return { res, eventId: String(delivery.payload.event_id) };
}

/** A settled invoice of 10.00 at the fake gateway, and its signed `invoice_settled` event sent to the service. */
export function sendInvoiceSettled(apiUrl: string, gateway: FakeCardGateway, handle: string): Promise<{ res: TestResponse; eventId: string }> {
  gateway.setInvoice(handle, { state: 'settled', amount: 1000 });
  return sendCardGatewayEvent(apiUrl, { event_type: 'invoice_settled', invoice: handle }, gateway.webhookSecret);
}

/**
 * A gateway holding the settled invoices `inv-0` to `inv-<invoices - 1>` and enforcing the documented
 * limits per account (10 calls in flight, bursts of 50 a second); stopped when the test ends.
 */
export async function startEnforcingGateway(t: ExecutionContext, invoices: number, latencyMs = 0): Promise<FakeCardGateway> {
  const fake = new FakeCardGateway();
  await fake.start();
  t.teardown(() => fake.stop());
  fake.latencyMs = latencyMs;
  fake.enforceLimits(10, 50);
  for (let i = 0; i < invoices; i += 1) fake.setInvoice(`inv-${i}`, { state: 'settled', amount: 100, customer: 'c' });
  return fake;
}

/** Reads those invoices all at once, the clients taking turns; whether every read was answered. */
export async function readAllInvoices(clients: { getInvoice(handle: string): Promise<{ ok: boolean }> }[], invoices: number): Promise<boolean> {
  const results = await Promise.all(Array.from({ length: invoices }, (_, i) => clients[i % clients.length]!.getInvoice(`inv-${i}`)));
  return results.every((result) => result.ok);
}
