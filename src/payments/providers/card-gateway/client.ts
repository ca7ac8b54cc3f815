import type { ProviderFailure } from '../http-request';
import { LimitedProvider, type ProviderLimits, type SharedLimitStore } from '../request-limits';

/**
 * Card gateway (Reepay / Frisbii) REST client: the few calls the payment processor needs.
 *
 * Auth is HTTP Basic with the private API key as user name and an empty password. Every call returns a
 * result value; nothing is thrown for HTTP or transport failures. A declined charge is NOT a failure here:
 * the provider answers 200 with `state: 'failed'` and `error`/`error_state`, and so does this client.
 */

export type { ProviderFailure, ProviderFailureKind } from '../http-request';

/** The gateway's error code on a charge of a payment method in state failed (create charge: HTTP 400, code 147). */
export const FAILED_PAYMENT_METHOD_CODE = '147';

export type CardGatewayResult<T> = { ok: true; value: T } | ProviderFailure;

export type CardGatewayChargeState = 'created' | 'authorized' | 'settled' | 'failed' | 'cancelled' | 'pending';
export type CardGatewayErrorState = 'soft_declined' | 'hard_declined' | 'processing_error' | 'pending';

/** GET /v1/charge/{handle}: provider field names kept as sent. */
export interface CardGatewayCharge {
  handle: string;
  state: CardGatewayChargeState;
  customer: string;
  amount: number;
  currency: string;
  created?: string;
  authorized?: string;
  settled?: string;
  cancelled?: string;
  transaction?: string;
  /** Transaction error, e.g. `insufficient_funds`, `credit_card_expired`. */
  error?: string | null;
  error_state?: CardGatewayErrorState | null;
  processing?: boolean;
  authorized_amount?: number;
  refunded_amount?: number;
  recurring_payment_method?: string;
  source?: { type?: string; card?: string; fingerprint?: string; masked_card?: string; exp_date?: string; acquirer_message?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export type CardGatewayInvoiceState = 'created' | 'pending' | 'dunning' | 'settled' | 'cancelled' | 'authorized' | 'failed';

/** GET /v1/invoice/{handle} */
export interface CardGatewayInvoice {
  id: string;
  handle: string;
  customer: string;
  subscription?: string;
  state: CardGatewayInvoiceState;
  amount: number;
  currency: string;
  created?: string;
  settled_amount?: number;
  authorized_amount?: number;
  refunded_amount?: number;
  recurring_payment_method?: string;
  transactions?: Array<{ id: string; state: string; type: string; amount: number; created?: string; payment_type?: string; [key: string]: unknown }>;
  credit_notes?: Array<{ id: string; amount: number; [key: string]: unknown }>;
  [key: string]: unknown;
}

export type CardGatewayPaymentMethodState = 'active' | 'inactivated' | 'failed' | 'pending' | 'deleted';

/** GET /v1/payment_method/{id} */
export interface CardGatewayPaymentMethod {
  /** ca_... card, ms_... MobilePay Subscriptions, vr_... Vipps Recurring, sr_... SEPA */
  id: string;
  state: CardGatewayPaymentMethodState;
  customer: string;
  reference?: string;
  created?: string;
  failed?: string;
  payment_type?: string;
  card?: { masked_card?: string; exp_date?: string; card_type?: string; error_state?: string; error_code?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** GET /v1/account/webhook_settings */
export interface CardGatewayWebhookSettings {
  urls: string[];
  /** The signing secret of webhook deliveries. */
  secret: string;
  disabled?: boolean;
  username?: string;
  password?: string;
  alert_emails?: string[];
  alert_count?: number;
  event_types?: string[];
  [key: string]: unknown;
}

export interface CreateCardGatewayChargeInput {
  /** Not sent: this host's Date.now() by which the request must have left, or it is never sent (request-limits.ts). */
  leaveBy?: number;
  /** Charge/invoice handle; only one authorized or settled charge can exist per handle. */
  handle: string;
  /**
   * Idempotency key (sent as body field `key`): repeating a request with the same key and handle returns the first
   * result, so a retry after a timeout or 5xx cannot charge twice. Derive it from the payment, not from the attempt time.
   */
  key: string;
  /** Minor units, VAT included. */
  amount: number;
  currency?: string;
  /** A saved method of the customer (`ca_...`), or `auto` for the customer's newest active method. */
  source: string;
  customerHandle?: string;
  /** true settles at once; false only authorizes (must normally be settled within 7 days). */
  settle?: boolean;
  recurring?: boolean;
  ordertext?: string;
  metadata?: Record<string, unknown>;
}

export interface CardGatewayClientOptions {
  /** e.g. https://api.reepay.com (a trailing /v1 is tolerated). */
  apiUrl: string;
  /** Private API key. */
  apiKey: string;
  timeoutMs: number;
  /** The account's request limits (CARD_GATEWAY_MAX_*); the documented ones unless given. */
  limits?: ProviderLimits;
  /** Where the limits are kept together with the other processes using the account; this process's own unless given. */
  shared?: SharedLimitStore;
}

/**
 * The gateway's documented request limits per account: 10 reads and 10 writes in flight, 25 reads and 10
 * writes started a second (with short bursts of twice that); above them it answers 429 with code 123 or 122.
 */
export const CARD_GATEWAY_LIMITS: ProviderLimits = {
  reads: { concurrent: 10, perSecond: 25 },
  writes: { concurrent: 10, perSecond: 10 },
};

export class CardGatewayClient {
  private readonly baseUrl: string;
  private readonly authorization: string;
  private readonly timeoutMs: number;
  private readonly provider: LimitedProvider;

  constructor(options: CardGatewayClientOptions) {
    // The configured default has no version; accept a /v1 suffix too rather than calling /v1/v1/...
    this.baseUrl = options.apiUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.authorization = `Basic ${Buffer.from(`${options.apiKey}:`, 'utf8').toString('base64')}`;
    this.timeoutMs = options.timeoutMs;
    const { shared } = options;
    this.provider = new LimitedProvider(options.limits ?? CARD_GATEWAY_LIMITS, shared && { store: shared, provider: 'card_gateway', apiUrl: this.baseUrl, credential: options.apiKey });
  }

  getInvoice(handle: string): Promise<CardGatewayResult<CardGatewayInvoice>> {
    return this.send('GET', `/v1/invoice/${encodeURIComponent(handle)}`);
  }

  /** Only the charge carries `error` / `error_state` of a failed payment. */
  getCharge(handle: string): Promise<CardGatewayResult<CardGatewayCharge>> {
    return this.send('GET', `/v1/charge/${encodeURIComponent(handle)}`);
  }

  getPaymentMethod(id: string): Promise<CardGatewayResult<CardGatewayPaymentMethod>> {
    return this.send('GET', `/v1/payment_method/${encodeURIComponent(id)}`);
  }

  /**
   * POST /v1/charge. A decline comes back as ok with `state: 'failed'`; branch on state/error_state, not on ok.
   * Retry only timeout/network/5xx failures, and with the same `key`.
   */
  createCharge(input: CreateCardGatewayChargeInput): Promise<CardGatewayResult<CardGatewayCharge>> {
    const body: Record<string, unknown> = {
      handle: input.handle,
      key: input.key,
      amount: input.amount,
      source: input.source,
      settle: input.settle ?? false,
    };
    if (input.currency !== undefined) body.currency = input.currency;
    if (input.customerHandle !== undefined) body.customer_handle = input.customerHandle;
    if (input.recurring !== undefined) body.recurring = input.recurring;
    if (input.ordertext !== undefined) body.ordertext = input.ordertext;
    if (input.metadata !== undefined) body.metadata = input.metadata;
    return this.send('POST', '/v1/charge', body, input.leaveBy);
  }

  /**
   * POST /v1/charge/{handle}/settle: an authorized charge settled (captured), at most its authorized amount. Only
   * one settle per handle; the same `key` answers the same again, so a settle whose answer was lost is asked again
   * with it. A charge settled already is refused with 79.
   */
  settleCharge(handle: string, input: { key: string; amount: number }): Promise<CardGatewayResult<CardGatewayCharge>> {
    return this.send('POST', `/v1/charge/${encodeURIComponent(handle)}/settle`, { key: input.key, amount: input.amount });
  }

  /** POST /v1/charge/{handle}/cancel: a charge not yet settled (created, pending, authorized) is cancelled and never taken. */
  cancelCharge(handle: string): Promise<CardGatewayResult<CardGatewayCharge>> {
    return this.send('POST', `/v1/charge/${encodeURIComponent(handle)}/cancel`);
  }

  getWebhookSettings(): Promise<CardGatewayResult<CardGatewayWebhookSettings>> {
    return this.send('GET', '/v1/account/webhook_settings');
  }

  private async send<T>(method: string, path: string, body?: unknown, leaveBy?: number): Promise<CardGatewayResult<T>> {
    const headers: Record<string, string> = { Authorization: this.authorization, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await this.provider.exchange(method, this.baseUrl + path, headers, body === undefined ? undefined : JSON.stringify(body), this.timeoutMs, `${method} ${path}`, leaveBy);
    if (!response.ok) return response;
    const { status, json } = response;
    if (status >= 200 && status < 300) {
      if (json === null || typeof json !== 'object') return { ok: false, kind: 'http', status, message: `${method} ${path}: response is not a JSON object` };
      return { ok: true, value: json as T };
    }
    const error = (json !== null && typeof json === 'object' ? json : {}) as Record<string, unknown>;
    const failure: ProviderFailure = {
      ok: false,
      kind: status === 404 ? 'not_found' : 'http',
      status,
      message: `${method} ${path}: HTTP ${status}${describe(error.error, error.message)}`,
    };
    if (typeof error.code === 'number' || typeof error.code === 'string') failure.code = error.code;
    if (typeof error.transaction_error === 'string') failure.transactionError = error.transaction_error;
    return failure;
  }
}

function describe(...parts: unknown[]): string {
  const text = parts.filter((part): part is string => typeof part === 'string' && part !== '').join(': ');
  return text === '' ? '' : ` (${text})`;
}
