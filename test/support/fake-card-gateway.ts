import crypto from 'node:crypto';
import http from 'node:http';
import type { ExecutionContext } from 'ava';
import { FakeProviderServer, type ProviderAnswer } from './fake-provider-server';
import { request, type TestResponse } from './http-client';
import { signCardGatewayEvent } from '../../src/payments/providers/card-gateway/signature.js';

/**
 * A loopback stand-in for the card gateway's REST API (Reepay / Frisbii), as strict as its published documents:
 * Basic auth with a private key and an empty password, `/v1/...` paths, the `{code, error, message, ...}` error
 * body, declines as HTTP 200 with `state: 'failed'`, the body `key` as idempotency key on POST /v1/charge, one
 * authorized or settled charge per handle, `source: auto` resolved to the customer's newest active payment method,
 * and a failed payment method refused with code 147.
 *
 * Sources named beside the rules (fetched copies, read 2026-11-27):
 * - CREATE: https://optimize-docs.billwerk.com/reference/createcharge (and its copy https://docs.frisbii.com/reference/createcharge,
 *   whose body parameters give the field rules)
 * - ERRORS: https://optimize-docs.billwerk.com/docs/errors (HTTP status summary and the error body)
 * - AUTH: https://optimize-docs.billwerk.com/reference/authentication
 * - CODES: reepay/reepay-woocommerce-payment includes/Api.php ERROR_CODES (same list: 0zd0/billwerk-sdk-php src/Helper/ErrorCodes.php)
 * - SETTLE: oscar-team/reepay-php-api docs/Model/SettleCharge.md and docs/Api/ChargeApi.md (settleCharge)
 * - CHARGE_ERRORS: the charge errors table of https://optimize-docs.billwerk.com/reference/session (the create-charge
 *   operation's own codes: 9, 18, 19, 24, 29, 72, 79, 80, 99, 100, 105)
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

/** The gateway's messages for the codes this fake answers with (CODES). */
const MESSAGES: Record<number, string> = {
  1: 'Invalid request',
  6: 'Not authenticated',
  8: 'Not found',
  9: 'Customer not found',
  18: 'Missing customer',
  19: 'Card not found',
  24: 'Missing amount',
  29: 'Invoice already cancelled',
  31: 'Invoice not found',
  34: 'Invalid card token',
  40: 'Payment method not found',
  42: 'Payment method not active',
  64: 'Invoice not settled',
  65: 'Refund amount too high',
  70: 'Transaction not found',
  72: 'Currency change not allowed',
  79: 'Invoice already settled',
  80: 'Invoice has processing transaction',
  99: 'Customer cannot be changed on invoice',
  100: 'Amount change not allowed on invoice',
  102: 'Amount higher than authorized amount',
  105: 'Invoice already authorized',
  106: 'Invoice must be authorized',
  110: 'Unknown or missing source',
  122: 'Request rate limit exceeded',
  123: 'Concurrent request limit exceeded',
  146: 'Non positive amount',
  147: 'Payment method failed',
};

/**
 * The HTTP status of a request that breaks a documented field rule (missing, wrongly typed or wrongly formatted):
 * ERRORS says "422 - Unprocessable Entity: The request could not be interpreted, often missing a required
 * parameter or wrongly formatted parameters"; 400 is "Illegal operation on a resource". 0zd0/billwerk-sdk-php
 * tests/Integration/Service/ChargeServiceTest.php also expects 422 for an incomplete settle. The gateway's own
 * error code on such an answer is not published: 1 "Invalid request" (CODES) is used.
 */
export const CARD_GATEWAY_INVALID_STATUS = 422;

/** CREATE (body parameter `handle`): "Max length 255 with allowable characters [a-zA-Z0-9_.-@]". */
const HANDLE = /^[a-zA-Z0-9_.\-@]{1,255}$/;
/** CREATE (body parameter `currency`): "ISO 4217 three letter alpha code". */
const CURRENCY = /^[A-Z]{3}$/;
/** CREATE (body parameter `amount`): "int32, ≥ 1". */
const INT32_MAX = 2 ** 31 - 1;

/** States in which a charge holds the handle: CREATE "only one authorized or settled charge can exist per handle". */
const HOLDING: Record<string, number> = { settled: 79, authorized: 105 };

export class FakeCardGateway extends FakeProviderServer {
  /** The private key the tests configure the service with (AUTH: several keys may be active at one time). */
  readonly apiKey: string;
  private readonly activeKeys = new Set<string>();
  webhookSecret: string;
  webhookUrls: string[] = [];
  private readonly invoices = new Map<string, Json>();
  private readonly charges = new Map<string, Json>();
  private readonly paymentMethods = new Map<string, Json>();
  private readonly customers = new Set<string>();
  private readonly outcomes: FakeChargeOutcome[] = [];
  /** `${handle}\n${key}` -> the first answer given for it. */
  private readonly idempotent = new Map<string, { status: number; body: Json }>();
  /** Orders payment methods by when they were added, for `source: auto` ("the newest active customer payment method"). */
  private methodSerial = 0;

  constructor(options: { apiKey?: string; webhookSecret?: string } = {}) {
    super();
    this.apiKey = options.apiKey ?? 'priv_test_0123456789abcdef';
    this.activeKeys.add(this.apiKey);
    this.webhookSecret = options.webhookSecret ?? 'webhook_secret_test';
  }

  /** Another private key of the account (AUTH: "You can have multiple API keys active at one time"). */
  addApiKey(key: string): void {
    this.activeKeys.add(key);
  }

  /** The key no longer authenticates (revoked in the administration): every call with it is answered 401. */
  revokeApiKey(key: string = this.apiKey): void {
    this.activeKeys.delete(key);
  }

  /** A customer of the account without payment methods (a charge may name it by `customer_handle`). */
  setCustomer(handle: string): void {
    this.customers.add(handle);
  }

  setInvoice(handle: string, invoice: Json): void {
    this.invoices.set(handle, { id: crypto.randomBytes(16).toString('hex'), handle, state: 'created', currency: 'DKK', ...invoice });
    this.noteCustomer(invoice.customer);
  }

  /** Outcomes queued and answers to lose that no request has met yet are dropped. */
  clearFaults(): void {
    this.outcomes.length = 0;
    this.clearLostAnswers();
  }

  /** A charge as the gateway holds it now, or undefined. */
  charge(handle: string): Json | undefined {
    return this.charges.get(handle);
  }

  setCharge(handle: string, charge: Json): void {
    this.charges.set(handle, { handle, state: 'created', currency: 'DKK', ...charge });
    this.noteCustomer(charge.customer);
  }

  /**
   * A customer payment method (1.8 of the reference: `state` active | inactivated | failed | pending | deleted).
   * Methods set later count as newer for `source: auto` unless the test gives `created`.
   */
  setPaymentMethod(id: string, paymentMethod: Json): void {
    this.methodSerial += 1;
    const created = new Date(Date.UTC(2020, 0, 1) + this.methodSerial * 1000).toISOString();
    this.paymentMethods.set(id, { id, state: 'active', payment_type: 'card', created, ...paymentMethod });
    this.noteCustomer(paymentMethod.customer);
  }

  /** A payment method as the gateway holds it now, or undefined. */
  paymentMethod(id: string): Json | undefined {
    return this.paymentMethods.get(id);
  }

  /**
   * The method enters state failed, as when a scheme tells the gateway a token may not be charged again
   * (billwerk-sdk-php src/Enum/CustomerEventEnum.php: customer_payment_method_failed "has entered failed state and
   * should not be used again"); later charges on it are refused with 147 (CREATE). Returns the event the gateway sends.
   */
  failPaymentMethod(id: string): CardGatewayDeliveryEvent {
    const method = this.mustHaveMethod(id);
    const at = new Date().toISOString();
    Object.assign(method, { state: 'failed', failed: at });
    return { event_type: 'customer_payment_method_failed', customer: String(method.customer), payment_method: id };
  }

  /**
   * A failed method is active again, e.g. a suspended token resumed or a failed card retried successfully
   * (billwerk-sdk-php src/Enum/CustomerEventEnum.php: customer_payment_method_reactivated). Returns the event the
   * gateway sends, for `sendCardGatewayEvent`.
   */
  reactivatePaymentMethod(id: string): CardGatewayDeliveryEvent {
    const method = this.mustHaveMethod(id);
    const at = new Date().toISOString();
    method.state = 'active';
    delete method.failed;
    if (method.card && typeof method.card === 'object') (method.card as Json).reactivated = at;
    return { event_type: 'customer_payment_method_reactivated', customer: String(method.customer), payment_method: id };
  }

  /**
   * Outcomes of the next POST /v1/charge requests that keep the field rules and are not idempotent repeats, in
   * order; default: success. An `http` outcome is answered before the gateway looks further (an outage, an injected
   * error); a charge result (settled, failed, ...) applies if the gateway charges the request, which it may still
   * refuse (e.g. 147 for a failed payment method).
   */
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

  /** ERRORS: "429 - Request limiting exceeded: ... request rate limiting (code=122) or concurrent requests limit (code=123)". */
  protected override rateLimitedAnswer(limit: 'concurrent' | 'rate'): Answer {
    return error(429, limit === 'concurrent' ? 123 : 122, '');
  }

  /** Requests other than GETs (what a read-only caller must never send). */
  writes(): RecordedRequestOf[] {
    return this.requests.filter((request) => request.method !== 'GET');
  }

  protected route(req: http.IncomingMessage, pathname: string, json: unknown, rawBody: string): Answer {
    // AUTH: "The API key must be provided as the HTTP Basic Auth username. No password needs to be provided";
    // ERRORS: "401 - Unauthorized: No valid authentication provided". The code is not published: 6 "Not authenticated" (CODES).
    if (!this.authenticated(req.headers.authorization)) return error(401, 6, pathname);
    const failureAt = req.method === 'GET' ? this.readFailures.findIndex((f) => f.path === undefined || pathname.startsWith(f.path)) : -1;
    const failure = failureAt < 0 ? undefined : this.readFailures.splice(failureAt, 1)[0];
    if (failure) return error(failure.status, failure.code, pathname, MESSAGES[failure.code] ?? http.STATUS_CODES[failure.status] ?? 'Error');
    let match: RegExpExecArray | null;
    if (req.method === 'GET' && (match = /^\/v1\/invoice\/([^/]+)$/.exec(pathname))) {
      return found(this.invoices.get(decodeURIComponent(match[1]!)), 31, pathname);
    }
    // GET /v1/invoice/{id}/transaction/{transaction}: one transaction of an invoice, as the card plugin reads the
    // `transaction` of an invoice event with the invoice's id (reepay-woocommerce-payment includes/OrderFlow/Webhook.php,
    // invoice_settled; reference/payment-providers.md "invoice_settled"). Whether the route also takes the handle is not
    // published: only the id is taken. Unknown: 404 with 31 "Invoice not found" or 70 "Transaction not found" (CODES).
    if (req.method === 'GET' && (match = /^\/v1\/invoice\/([^/]+)\/transaction\/([^/]+)$/.exec(pathname))) {
      const id = decodeURIComponent(match[1]!);
      const invoice = [...this.invoices.values()].find((candidate) => candidate.id === id);
      if (!invoice) return error(404, 31, pathname);
      const transaction = ((invoice.transactions as Json[] | undefined) ?? []).find((candidate) => candidate.id === decodeURIComponent(match![2]!));
      return found(transaction, 70, pathname);
    }
    if (req.method === 'GET' && (match = /^\/v1\/charge\/([^/]+)$/.exec(pathname))) {
      return found(this.charges.get(decodeURIComponent(match[1]!)), 31, pathname);
    }
    // GET /v1/payment_method/{id} (reference 1.8; 0zd0/billwerk-sdk-php src/Service/PaymentMethodService.php get);
    // unknown: 404 with 40 "Payment method not found" (https://optimize-docs.billwerk.com/reference/addpaymentmethodv2 errors).
    if (req.method === 'GET' && (match = /^\/v1\/payment_method\/([^/]+)$/.exec(pathname))) {
      return found(this.paymentMethods.get(decodeURIComponent(match[1]!)), 40, pathname);
    }
    // GET /v1/list/payment_method?customer=&state= answering {count, content[]}: reepay/reepay-woocommerce-payment
    // includes/Api.php get_reepay_cards (size 100, from 1970-01-01, state active); billwerk-sdk-php PaymentMethodService list.
    if (req.method === 'GET' && pathname === '/v1/list/payment_method') {
      return this.listPaymentMethods(new URL(req.url ?? '/', 'http://fake').searchParams);
    }
    if (req.method === 'GET' && pathname === '/v1/account/webhook_settings') {
      return { status: 200, body: { urls: this.webhookUrls, disabled: false, secret: this.webhookSecret, alert_count: 4, event_types: [] } };
    }
    if (req.method === 'POST' && pathname === '/v1/charge') return this.chargeRequest(json, rawBody);
    // POST /v1/charge/{handle}/cancel (reepay-woocommerce-payment includes/Api.php cancel_payment; billwerk-sdk-php ChargeService cancel).
    if (req.method === 'POST' && (match = /^\/v1\/charge\/([^/]+)\/cancel$/.exec(pathname))) {
      return this.cancelCharge(decodeURIComponent(match[1]!), pathname);
    }
    // POST /v1/charge/{handle}/settle (SETTLE; reepay-woocommerce-payment includes/Api.php settle).
    if (req.method === 'POST' && (match = /^\/v1\/charge\/([^/]+)\/settle$/.exec(pathname))) {
      return this.settleRequest(decodeURIComponent(match[1]!), json, rawBody, pathname);
    }
    if (req.method === 'POST' && pathname === '/v1/refund') return this.refundRequest(json, rawBody);
    // ERRORS: "404 - Not Found", "405 - Method Not Allowed"; 8 "Not found" (CODES).
    return error(404, 8, pathname);
  }

  private authenticated(authorization: string | undefined): boolean {
    const basic = /^Basic (.+)$/.exec(authorization ?? '')?.[1];
    if (basic === undefined) return false;
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // The key is the user name and the password is empty.
    if (colon < 0 || decoded.slice(colon + 1) !== '') return false;
    return this.activeKeys.has(decoded.slice(0, colon));
  }

  private noteCustomer(customer: unknown): void {
    if (typeof customer === 'string' && customer !== '') this.customers.add(customer);
  }

  private mustHaveMethod(id: string): Json {
    const method = this.paymentMethods.get(id);
    if (!method) throw new Error(`no payment method ${id} at the fake gateway`);
    return method;
  }

  private listPaymentMethods(query: URLSearchParams): Answer {
    const customer = query.get('customer');
    const state = query.get('state');
    const content = [...this.paymentMethods.values()]
      .filter((method) => (customer === null || method.customer === customer) && (state === null || method.state === state))
      .sort((a, b) => String(b.created).localeCompare(String(a.created)));
    return { status: 200, body: { size: Number(query.get('size') ?? 20), count: content.length, content } };
  }

  private chargeRequest(json: unknown, rawBody: string): Answer {
    const path = '/v1/charge';
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      return invalid(path, rawBody.trim() === '' ? 'a JSON body is required' : 'the body is not a JSON object');
    }
    const input = json as Json;
    const refused = fieldRules(input, path);
    if (refused) return refused;
    const handle = input.handle as string;

    // CREATE (body parameter `key`): "multiple requests with the same key and handle will yield the same result.
    // In case of networking errors the same request with same key can safely be retried."
    const idempotencyKey = typeof input.key === 'string' ? `${handle}\n${input.key}` : null;
    const previous = idempotencyKey === null ? undefined : this.idempotent.get(idempotencyKey);
    if (previous) return previous;

    const answer = this.processCharge(input, handle, path);
    // CREATE error handling: "Communication error (no HTTP response) or HTTP server error 5xx: Retry operation
    // immediately or later, preferably with an idempotency key", so a 5xx is not the key's answer.
    if (idempotencyKey !== null && answer.status < 500) this.idempotent.set(idempotencyKey, { status: answer.status, body: answer.body });
    return answer;
  }

  private processCharge(input: Json, handle: string, path: string): Answer {
    // The test's next outcome belongs to this request: an injected error answer (an outage) comes before the
    // gateway looks at the request; a delay delays whatever the answer is; a charge result applies if it is charged.
    let outcome = this.outcomes.shift() ?? { kind: input.settle === true ? 'settled' : 'authorized' };
    let delayMs = 0;
    while (outcome.kind === 'slow') {
      delayMs += outcome.delayMs;
      outcome = outcome.then ?? { kind: input.settle === true ? 'settled' : 'authorized' };
    }
    if (outcome.kind === 'http') {
      const answer = error(outcome.status, outcome.code ?? 0, path, outcome.error ?? http.STATUS_CODES[outcome.status] ?? 'Error');
      if (outcome.transactionError) answer.body.transaction_error = outcome.transactionError;
      return { ...answer, delayMs };
    }
    return { ...this.chargeOrRefuse(input, handle, path, outcome), delayMs };
  }

  private chargeOrRefuse(input: Json, handle: string, path: string, outcome: Exclude<FakeChargeOutcome, { kind: 'slow' | 'http' }>): Answer {
    const existing = this.charges.get(handle) ?? this.invoices.get(handle);
    // CREATE: "only one authorized or settled charge can exist per handle" (79 "Invoice already settled",
    // 105 "Invoice already authorized", CHARGE_ERRORS); "If the charge is failed it can be retried with the same handle".
    const holding = existing ? HOLDING[String(existing.state)] : undefined;
    if (holding !== undefined) return error(400, holding, path);
    // CHARGE_ERRORS: 29 "Invoice already cancelled"; 80 "Existing charge has processing transactions".
    if (existing?.state === 'cancelled') return error(400, 29, path);
    if (existing?.state === 'pending') return error(400, 80, path);
    const currency = typeof input.currency === 'string' ? input.currency : existing ? String(existing.currency ?? 'DKK') : 'DKK';
    // CREATE (`currency`): "The currency of an existing charge or invoice cannot be changed" (72, CHARGE_ERRORS).
    if (existing && typeof input.currency === 'string' && existing.currency !== undefined && existing.currency !== input.currency) return error(400, 72, path);
    // CREATE (`amount`): "Either amount or order_lines must be provided if charge/invoice does not already exists"
    // (24 "No amount or order lines was provided"); 100 "Amount change is not allowed when charging an existing invoice" (CHARGE_ERRORS).
    if (!existing && input.amount === undefined && input.order_lines === undefined) return error(400, 24, path);
    if (existing && input.amount !== undefined && existing.amount !== undefined && existing.amount !== input.amount) return error(400, 100, path);

    const source = this.resolveSource(input, path);
    if ('status' in source) return source;
    const customer = source.customer;
    // CREATE (`customer_handle`): "customer cannot be changed for existing charge/invoice so if handle is provided
    // it must match the customer handle for existing customer" (99, CHARGE_ERRORS).
    if (existing && typeof existing.customer === 'string' && existing.customer !== customer) return error(400, 99, path);
    // The charge exists as soon as it is processed, even if the answer is late (as with a real timeout).
    const amount = typeof input.amount === 'number' ? input.amount : Number(existing?.amount);
    return this.createCharge(handle, amount, currency, customer, source.method, outcome);
  }

  /**
   * CREATE (`source`): "Either an existing payment method for the customer or a card token ct_.... The existing
   * payment method can either be referenced directly with id, e.g. ca_..., or the keyword auto can be given to
   * indicate that the newest active customer payment method should be used."
   */
  private resolveSource(input: Json, path: string): { customer: string; method: Json } | Answer {
    const source = input.source as string;
    const named = typeof input.customer_handle === 'string' ? input.customer_handle : undefined;
    if (source === 'auto') {
      // CREATE (`customer_handle`): "If charge does not already exist either this reference must be provided, a
      // create customer object must be provided or the source must be a payment method reference (e.g. ca_..)
      // identifying customer" -> 18 "Customer could not be determined ..." (CHARGE_ERRORS).
      if (named === undefined) return error(400, 18, path, 'Customer could not be determined from either reference, create customer object or payment method source');
      // CHARGE_ERRORS: 9 (404) "The customer is not found".
      if (!this.customers.has(named)) return error(404, 9, path);
      const newest = [...this.paymentMethods.values()]
        .filter((method) => method.customer === named && method.state === 'active')
        .sort((a, b) => String(b.created).localeCompare(String(a.created)))[0];
      // Not published: what `auto` answers for a customer without an active method. Chosen: 110 "Unknown or missing source" (CODES).
      if (!newest) return error(400, 110, path, `customer ${named} has no active payment method`);
      return { customer: named, method: newest };
    }
    const method = this.paymentMethods.get(source);
    if (!method) {
      // https://optimize-docs.billwerk.com/reference/setsubscriptionpaymentmethod errors: 34 "Invalid card token
      // provided as source", 110 "Unknown or missing source argument"; CHARGE_ERRORS: 19 (404) "Customer card
      // provided as source but cannot be found".
      if (source.startsWith('ct_')) return error(400, 34, path);
      if (/^(ca|ms|vr|sr)_/.test(source)) return error(404, 19, path);
      return error(400, 110, path);
    }
    // "an existing payment method for the customer": another customer's method is not found for this one (chosen: 19).
    if (named !== undefined && method.customer !== named) return error(404, 19, path, `payment method ${source} is not a method of customer ${named}`);
    // CREATE error handling: "HTTP 400 client error and error code 147: The stored payment method referenced is in
    // state failed, and it is not allowed to make charges because of scheme or payment provider rules."
    if (method.state === 'failed') return error(400, 147, path);
    // A method in another state than active (deleted, inactivated, pending): 42 "Payment method not active" (CODES; its HTTP status is not published: 400 chosen).
    if (method.state !== 'active') return error(400, 42, path, `payment method ${source} is ${String(method.state)}`);
    return { customer: String(method.customer), method };
  }

  private createCharge(handle: string, amount: number, currency: string, customer: string, method: Json, outcome: Exclude<FakeChargeOutcome, { kind: 'slow' | 'http' }>): Answer {
    const now = new Date().toISOString();
    const card = (method.card && typeof method.card === 'object' ? method.card : {}) as Json;
    // CREATE: "Errors relating to the payment method or acquirer processing, e.g. insufficient funds ... will
    // result in a HTTP 200 OK with a charge object with state failed and error indication in the error_state and
    // error parameters"; "The pending state is only used for asynchronous payment methods".
    const transaction = crypto.randomBytes(16).toString('hex');
    const charge: Json = {
      handle,
      state: outcome.kind,
      customer,
      amount,
      currency,
      created: now,
      transaction,
      processing: outcome.kind === 'pending',
      recurring_payment_method: method.id,
      source: {
        type: method.payment_type ?? 'card',
        card: method.id,
        masked_card: card.masked_card ?? '457199XXXXXX1234',
        exp_date: card.exp_date ?? '12-30',
      },
      error: null,
      error_state: null,
    };
    if (outcome.kind === 'authorized') Object.assign(charge, { authorized: now, authorized_amount: amount });
    if (outcome.kind === 'settled') Object.assign(charge, { authorized: now, settled: now, authorized_amount: amount });
    if (outcome.kind === 'failed') Object.assign(charge, { error: outcome.error, error_state: outcome.errorState });
    this.charges.set(handle, charge);
    this.customers.add(customer);
    const invoiceId = (this.invoices.get(handle)?.id as string | undefined) ?? crypto.randomBytes(16).toString('hex');
    // The invoice keeps every attempt's transaction (a failed charge "can be retried with the same handle", CREATE).
    const earlier = (this.invoices.get(handle)?.transactions as Json[] | undefined) ?? [];
    this.invoices.set(handle, {
      id: invoiceId,
      handle,
      customer,
      state: outcome.kind,
      amount,
      currency,
      created: now,
      ...(outcome.kind === 'settled' ? { settled: now, authorized: now, settled_amount: amount, authorized_amount: amount } : {}),
      ...(outcome.kind === 'authorized' ? { authorized: now, authorized_amount: amount } : {}),
      transactions: [...earlier, this.transactionOf(transaction, invoiceId, outcome, amount, currency, now, method, card)],
      credit_notes: [],
    });
    return { status: 200, body: charge };
  }

  /**
   * The invoice's transaction for a charge (the transaction object of https://optimize-docs.billwerk.com/reference/gettransaction:
   * `id`, `state`, `invoice`, `type` authorization | settle | refund | cancel, `amount`, the step's time, `payment_type`
   * and, for a card, `card_transaction` with the card and, when it failed, `error` and `acquirer_message`). A charge that
   * settles at once is one settle transaction; the charge's `transaction` names it.
   */
  private transactionOf(id: string, invoiceId: string, outcome: Exclude<FakeChargeOutcome, { kind: 'slow' | 'http' }>, amount: number, currency: string, now: string, method: Json, card: Json): Json {
    const failed = outcome.kind === 'failed';
    return {
      id,
      state: outcome.kind === 'pending' ? 'processing' : outcome.kind,
      invoice: invoiceId,
      type: outcome.kind === 'authorized' ? 'authorization' : 'settle',
      amount,
      currency,
      created: now,
      ...(outcome.kind === 'settled' ? { settled: now } : outcome.kind === 'authorized' ? { authorized: now } : failed ? { failed: now } : {}),
      payment_type: method.payment_type ?? 'card',
      card_transaction: {
        card: method.id,
        card_type: card.card_type ?? 'visa',
        exp_date: card.exp_date ?? '12-30',
        masked_card: card.masked_card ?? '457199XXXXXX1234',
        // Not published: the acquirer's own words for a decline. Chosen: the error code after "Declined: ".
        ...(failed ? { error: outcome.error, error_state: outcome.errorState, acquirer_message: `Declined: ${outcome.error}` } : {}),
      },
    };
  }

  /** A step on the invoice (a refund, a cancel) joins its transactions, oldest first. */
  private addTransaction(invoice: Json, transaction: Json): void {
    invoice.transactions = [...((invoice.transactions as Json[] | undefined) ?? []), { invoice: invoice.id, payment_type: 'card', ...transaction }];
  }

  private invoiceByIdOrHandle(idOrHandle: string): Json | undefined {
    return this.invoices.get(idOrHandle) ?? [...this.invoices.values()].find((candidate) => candidate.id === idOrHandle);
  }

  /**
   * A charge the gateway answered `pending` (an asynchronous payment method: CREATE "The pending state is only used
   * for asynchronous payment methods") completes at the gateway, on its own: the charge, its invoice and its
   * transaction are settled. Returns the `invoice_settled` event the gateway sends, with the transaction it names.
   */
  settlePendingCharge(handle: string): CardGatewayDeliveryEvent {
    const charge = this.charges.get(handle);
    const invoice = this.invoices.get(handle);
    if (charge?.state !== 'pending' || !invoice) throw new Error(`no pending charge ${handle} at the fake gateway`);
    const now = new Date().toISOString();
    Object.assign(charge, { state: 'settled', processing: false, authorized: now, settled: now, authorized_amount: charge.amount });
    Object.assign(invoice, { state: 'settled', authorized: now, settled: now, authorized_amount: charge.amount, settled_amount: charge.amount });
    const transaction = ((invoice.transactions as Json[] | undefined) ?? []).find((candidate) => candidate.id === charge.transaction);
    if (transaction) Object.assign(transaction, { state: 'settled', settled: now });
    return { event_type: 'invoice_settled', invoice: handle, transaction: String(charge.transaction), customer: String(charge.customer) };
  }

  /** An invoice as the gateway holds it now (its transactions and credit notes included), or undefined. */
  invoice(handle: string): Json | undefined {
    return this.invoices.get(handle);
  }

  /**
   * POST /v1/refund (REFUND: https://optimize-docs.billwerk.com/reference/createrefund, "Create refund"; the official
   * plugin's includes/Api.php refund sends `{invoice: <handle>, amount}` and reads `credit_note_id` from the answer):
   * - `invoice` (required): the invoice's handle or id; unknown: 404 with 31 "Invoice not found" (CODES);
   * - `amount` (optional, int32 >= 1; REFUND: "if not given, the full refundable amount"); 146 "Non positive amount";
   * - only a settled invoice is refunded: 64 "Invoice not settled" (CODES);
   * - never more than what is settled and not yet refunded: 65 "Refund amount too high" (CODES);
   * - `key` (optional): "multiple requests with the same key and invoice will yield the same result" (REFUND).
   * The answer is the refund (state `refunded`, `credit_note_id`, `transaction`); the invoice gets the credit note in
   * `credit_notes` and its `refunded_amount` grows (invoice object: settled_amount, refunded_amount, credit_notes),
   * as does the charge's of the same handle. The refused ones are 400 "Illegal operation on a resource" (ERRORS).
   */
  private refundRequest(json: unknown, rawBody: string): Answer {
    const path = '/v1/refund';
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      return invalid(path, rawBody.trim() === '' ? 'a JSON body is required' : 'the body is not a JSON object');
    }
    const input = json as Json;
    if (typeof input.invoice !== 'string' || input.invoice === '') return invalid(path, 'invoice is required');
    if (input.amount !== undefined && (typeof input.amount !== 'number' || !Number.isInteger(input.amount) || input.amount > INT32_MAX)) return invalid(path, 'amount must be an int32');
    if (typeof input.amount === 'number' && input.amount < 1) return error(400, 146, path);
    const invoice = this.invoiceByIdOrHandle(input.invoice);
    if (!invoice) return error(404, 31, path);
    const handle = String(invoice.handle);
    const idempotencyKey = typeof input.key === 'string' ? `refund\n${handle}\n${input.key}` : null;
    const repeated = idempotencyKey === null ? undefined : this.idempotent.get(idempotencyKey);
    if (repeated) return { status: repeated.status, body: repeated.body };
    if (invoice.state !== 'settled') return error(400, 64, path);
    const settled = Number(invoice.settled_amount ?? invoice.amount);
    const refunded = Number(invoice.refunded_amount ?? 0);
    const amount = typeof input.amount === 'number' ? input.amount : settled - refunded;
    if (amount < 1 || amount > settled - refunded) return error(400, 65, path);
    const now = new Date().toISOString();
    const creditNote = { id: `cn-${crypto.randomBytes(8).toString('hex')}`, invoice: invoice.id, amount, currency: invoice.currency, created: now };
    Object.assign(invoice, { settled_amount: settled, refunded_amount: refunded + amount, credit_notes: [...((invoice.credit_notes as Json[] | undefined) ?? []), creditNote] });
    const charge = this.charges.get(handle);
    if (charge) charge.refunded_amount = Number(charge.refunded_amount ?? 0) + amount;
    const refundId = crypto.randomBytes(16).toString('hex');
    // The refund is a transaction of the invoice; an `invoice_refund` event's `transaction` "equals the refund id"
    // (reference/payment-providers.md, webhook fields).
    this.addTransaction(invoice, { id: refundId, state: 'refunded', type: 'refund', amount, currency: invoice.currency, created: now, refunded: now });
    const body: Json = {
      id: refundId,
      state: 'refunded',
      invoice: invoice.id,
      amount,
      currency: invoice.currency,
      transaction: refundId,
      error: null,
      type: 'card',
      created: now,
      credit_note_id: creditNote.id,
      ref_transaction: charge?.transaction ?? null,
    };
    if (idempotencyKey !== null) this.idempotent.set(idempotencyKey, { status: 200, body });
    return { status: 200, body };
  }

  /** The refunds the gateway made on an invoice (its credit notes), oldest first. */
  creditNotes(handle: string): Json[] {
    return [...((this.invoices.get(handle)?.credit_notes as Json[] | undefined) ?? [])];
  }

  /**
   * POST /v1/charge/{handle}/settle (SETTLE: oscar-team/reepay-php-api docs/Model/SettleCharge.md, the same in
   * pfeiffer/reepay-ruby docs/SettleCharge.md; the body may be empty):
   * - `key` (optional): "Only one settle can be performed for the same handle ... multiple requests with the same key
   *   will yield the same result. In case of networking errors the same request with same key can safely be retried";
   * - `amount` (optional): "different from authorized amount to settle. Must be less than or equal to the authorized
   *   amount", else 102 "Amount higher than authorized amount" (CODES); "Either `amount` or `order_lines` can be
   *   provided" (both: refused as a malformed request); `order_lines` "controls the amount";
   * - an unknown handle: 404 with 31 "Invoice not found" (CODES, as for the invoice); a settled charge 79 "Invoice
   *   already settled" (SETTLE: "the second will fail because charge is already settled"; the official plugin matches
   *   that message); a cancelled one 29 "Invoice already cancelled"; any other state 106 "Invoice must be authorized"
   *   (CODES; which code each state gets is not published: chosen).
   * Settled, the charge's `amount` is what was settled (reference 1.6: "after partial settles it is the total
   * settled"), its invoice settled with a settle transaction the charge's `transaction` names.
   */
  private settleRequest(handle: string, json: unknown, rawBody: string, path: string): Answer {
    if (rawBody.trim() !== '' && (json === null || typeof json !== 'object' || Array.isArray(json))) return invalid(path, 'the body is not a JSON object');
    const input = (rawBody.trim() === '' ? {} : json) as Json;
    if (input.key !== undefined && typeof input.key !== 'string') return invalid(path, 'key must be a string');
    const idempotencyKey = typeof input.key === 'string' ? `settle\n${handle}\n${input.key}` : null;
    const previous = idempotencyKey === null ? undefined : this.idempotent.get(idempotencyKey);
    if (previous) return previous;
    const answer = this.settleCharge(handle, input, path);
    if (idempotencyKey !== null && answer.status < 500) this.idempotent.set(idempotencyKey, { status: answer.status, body: answer.body });
    return answer;
  }

  private settleCharge(handle: string, input: Json, path: string): Answer {
    if (input.amount !== undefined && input.order_lines !== undefined) return invalid(path, 'either amount or order_lines can be provided');
    let amount: number | undefined;
    if (input.amount !== undefined) {
      if (typeof input.amount !== 'number' || !Number.isInteger(input.amount) || input.amount > INT32_MAX) return invalid(path, 'amount must be an integer');
      if (input.amount < 1) return error(400, 146, path);
      amount = input.amount;
    } else if (input.order_lines !== undefined) {
      if (!Array.isArray(input.order_lines) || !input.order_lines.length) return invalid(path, 'order_lines must be a non-empty array');
      amount = 0;
      for (const line of input.order_lines as Json[]) {
        const quantity = line.quantity === undefined ? 1 : Number(line.quantity);
        if (typeof line.amount !== 'number' || !Number.isInteger(quantity) || quantity < 1) return invalid(path, 'each order line needs an amount and a positive quantity');
        const vat = line.amount_incl_vat === false ? 1 + Number(line.vat ?? 0) : 1;
        amount += Math.round(line.amount * quantity * vat);
      }
    }
    const charge = this.charges.get(handle);
    if (!charge) return error(404, 31, path);
    if (charge.state === 'settled') return error(400, 79, path);
    if (charge.state === 'cancelled') return error(400, 29, path);
    if (charge.state !== 'authorized') return error(400, 106, path);
    const authorized = Number(charge.authorized_amount ?? charge.amount);
    const settled = amount ?? authorized;
    if (settled > authorized) return error(400, 102, path);
    const now = new Date().toISOString();
    const transaction = crypto.randomBytes(16).toString('hex');
    Object.assign(charge, { state: 'settled', settled: now, amount: settled, transaction });
    const invoice = this.invoices.get(handle);
    if (invoice) {
      Object.assign(invoice, { state: 'settled', settled: now, settled_amount: settled });
      this.addTransaction(invoice, { id: transaction, state: 'settled', type: 'settle', amount: settled, currency: charge.currency, created: now, settled: now });
    }
    return { status: 200, body: charge };
  }

  /**
   * POST /v1/charge/{handle}/cancel: the charge (an invoice with its transaction) ends `cancelled`, releasing an
   * authorization (reference 1.6: state `cancelled` and the `cancelled` time; the official plugin's cancel_payment
   * reads `transaction` from the answer). Not published: which states it refuses. Chosen: a settled charge is 79
   * (money moved: refund instead), a cancelled one 29 "Invoice already cancelled" (CHARGE_ERRORS).
   */
  private cancelCharge(handle: string, path: string): Answer {
    const charge = this.charges.get(handle);
    if (!charge) return error(404, 31, path);
    if (charge.state === 'settled') return error(400, 79, path);
    if (charge.state === 'cancelled') return error(400, 29, path);
    const now = new Date().toISOString();
    const transaction = crypto.randomBytes(16).toString('hex');
    Object.assign(charge, { state: 'cancelled', cancelled: now, processing: false, transaction });
    const invoice = this.invoices.get(handle);
    if (invoice) {
      invoice.state = 'cancelled';
      this.addTransaction(invoice, { id: transaction, state: 'cancelled', type: 'cancel', amount: charge.amount, currency: charge.currency, created: now, cancelled: now });
    }
    return { status: 200, body: charge };
  }
}

/** The card gateway always answers with a JSON body. */
interface Answer extends ProviderAnswer {
  body: Json;
}

/**
 * The documented field rules of POST /v1/charge (CREATE body parameters); a breach is answered as ERRORS says for
 * a missing or wrongly formatted parameter.
 */
function fieldRules(input: Json, path: string): Answer | undefined {
  // `handle`: "string, required, length ≥ 1 ... Max length 255 with allowable characters [a-zA-Z0-9_.-@]".
  if (typeof input.handle !== 'string') return invalid(path, 'handle is required');
  if (!HANDLE.test(input.handle)) return invalid(path, 'handle must be 1 to 255 characters of [a-zA-Z0-9_.-@]');
  // `key`: "string, optional idempotency key".
  if (input.key !== undefined && typeof input.key !== 'string') return invalid(path, 'key must be a string');
  // `source`: "string, required, length ≥ 1".
  if (typeof input.source !== 'string' || input.source === '') return invalid(path, 'source is required');
  // `amount`: "int32, ≥ 1. Amount in the smallest unit"; an integer below 1 has its own code, 146 "Non positive amount" (CODES).
  if (input.amount !== undefined) {
    if (typeof input.amount !== 'number' || !Number.isInteger(input.amount) || input.amount > INT32_MAX) return invalid(path, 'amount must be an integer in minor units');
    if (input.amount < 1) return error(400, 146, path);
  }
  // `currency`: "Optional currency in ISO 4217 three letter alpha code".
  if (input.currency !== undefined && (typeof input.currency !== 'string' || !CURRENCY.test(input.currency))) return invalid(path, 'currency must be an ISO 4217 three letter code');
  // `customer_handle`: "string, customer reference".
  if (input.customer_handle !== undefined && (typeof input.customer_handle !== 'string' || input.customer_handle === '')) return invalid(path, 'customer_handle must be a non-empty string');
  // `settle`, `recurring`: booleans.
  for (const flag of ['settle', 'recurring'] as const) {
    if (input[flag] !== undefined && typeof input[flag] !== 'boolean') return invalid(path, `${flag} must be a boolean`);
  }
  // `ordertext`: string; `metadata`: object.
  if (input.ordertext !== undefined && typeof input.ordertext !== 'string') return invalid(path, 'ordertext must be a string');
  if (input.metadata !== undefined && (input.metadata === null || typeof input.metadata !== 'object' || Array.isArray(input.metadata))) return invalid(path, 'metadata must be an object');
  return undefined;
}

function found(value: Json | undefined, code: number, path: string): Answer {
  return value ? { status: 200, body: value } : error(404, code, path);
}

function invalid(path: string, message: string): Answer {
  return error(CARD_GATEWAY_INVALID_STATUS, 1, path, message);
}

/**
 * ERRORS: "All non successful 2xx responses will return a generic JSON error response": code, error (short
 * message), message (optional clarifying message), http_status, http_reason, path, timestamp, request_id
 * (0zd0/billwerk-sdk-php stubs/json/ErrorModel.all.json spells it request_id).
 */
function error(status: number, code: number, path: string, message?: string): Answer {
  const short = MESSAGES[code] ?? http.STATUS_CODES[status] ?? 'Error';
  return {
    status,
    body: {
      code,
      error: short,
      message: message ?? short,
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
