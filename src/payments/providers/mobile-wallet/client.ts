import { PROVIDER_MAX_IN_FLIGHT, type ProviderFailure } from '../http-request';
import { LimitedProvider, ResourceBudget, type ProviderLimits, type SharedLimitStore } from '../request-limits';

/**
 * Mobile wallet (Vipps MobilePay) client: Recurring API v3 and Webhooks API v1.
 *
 * Every call carries a Bearer access token from POST /accesstoken/get plus Ocp-Apim-Subscription-Key,
 * Merchant-Serial-Number and the Vipps-System-* headers. Tokens live 1 h (test) / 24 h (production), so one is
 * cached until shortly before it expires, and concurrent callers share a single token request. Results are values;
 * nothing is thrown for HTTP or transport failures.
 */

export type { ProviderFailure, ProviderFailureKind } from '../http-request';

/** `status`: the HTTP status of a success, where it tells more than the body (CancelChargeV3's 202: accepted, not yet enacted). */
export type MobileWalletResult<T> = { ok: true; value: T; status?: number } | ProviderFailure;

export type MobileWalletAgreementStatus = 'PENDING' | 'ACTIVE' | 'STOPPED' | 'EXPIRED';

/** GET /recurring/v3/agreements/{agreementId}: provider field names kept as sent. */
export interface MobileWalletAgreement {
  id: string;
  status: MobileWalletAgreementStatus;
  productName?: string;
  pricing?: { type?: string; amount?: number; currency?: string; [key: string]: unknown };
  interval?: { unit?: string; count?: number; [key: string]: unknown };
  start?: string | null;
  stop?: string | null;
  externalId?: string | null;
  [key: string]: unknown;
}

export type MobileWalletChargeStatus =
  | 'PENDING'
  | 'DUE'
  | 'PROCESSING'
  | 'UNKNOWN'
  | 'CHARGED'
  | 'RESERVED'
  | 'PARTIALLY_CAPTURED'
  | 'FAILED'
  | 'REFUNDED'
  | 'PARTIALLY_REFUNDED'
  | 'CANCELLED';

/** GET /recurring/v3/agreements/{agreementId}/charges/{chargeId} */
export interface MobileWalletCharge {
  id: string;
  agreementId?: string;
  amount: number;
  currency?: string;
  description?: string;
  due?: string;
  retryDays?: number;
  status: MobileWalletChargeStatus;
  type?: string;
  transactionType?: string;
  transactionId?: string | null;
  externalId?: string | null;
  externalAgreementId?: string | null;
  /** user_action_required, charge_amount_too_high, non_technical_error, technical_error (experimental). */
  failureReason?: string | null;
  failureDescription?: string | null;
  summary?: { captured?: number; refunded?: number; cancelled?: number; [key: string]: unknown };
  history?: Array<{ occurred: string; event: string; amount: number; idempotencyKey?: string; success: boolean; [key: string]: unknown }>;
  [key: string]: unknown;
}

/**
 * The `state` of a wallet decline, beside its `failureReason`: `wallet_retried` when the wallet had retried the
 * charge itself (its `retryDays` above 0) before it FAILED. Its FAILED is then final after days of the wallet's own
 * tries, each told to the customer in the app ("Charge retries": "The status of a charge will be DUE ... until the
 * retryDays have passed without a successful charge. The final status will be CHARGED or FAILED",
 * vippsas/vipps-recurring-api recurring-api-guide.md), so dunning does not loop on the same agreement
 * (decline-policy.ts). Null for a charge tried once (`retryDays` 0) or one whose `retryDays` is not known.
 */
export function walletFailureState(charge: Pick<MobileWalletCharge, 'retryDays'>): 'wallet_retried' | null {
  return typeof charge.retryDays === 'number' && charge.retryDays > 0 ? 'wallet_retried' : null;
}

export interface CreateMobileWalletChargeInput {
  /** Minor units (øre). */
  amount: number;
  /** Shown in the app; at most 45 characters. */
  description: string;
  transactionType: 'DIRECT_CAPTURE' | 'RESERVE_CAPTURE';
  /** YYYY-MM-DD; required for RECURRING charges (at least 2 days ahead is safe in every environment). */
  due?: string;
  /** 0-14; the provider retries within this window itself. */
  retryDays?: number;
  /** Replaces the generated chargeId; unique per MSN, at most 50 chars [a-zA-Z0-9-]. */
  orderId?: string;
  externalId?: string;
  type?: 'RECURRING' | 'UNSCHEDULED';
  processingMode?: 'MULTIPLE_ATTEMPTS' | 'SINGLE_ATTEMPT';
}

export interface MobileWalletWebhookRegistration {
  id: string;
  url: string;
  events: string[];
}

export interface MobileWalletClientOptions {
  /** https://api.vipps.no or https://apitest.vipps.no */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  subscriptionKey: string;
  merchantSerialNumber: string;
  timeoutMs: number;
  /** Vipps-System-* headers (each at most 30 characters). */
  system?: { name?: string; version?: string; pluginName?: string; pluginVersion?: string };
  /** Clock for token expiry, in ms; injectable for tests. */
  now?: () => number;
  /** Where the charge rate is kept together with the other processes using the merchant; this process's own unless given. */
  shared?: SharedLimitStore;
}

/** 1-40 characters without # ? / \ (Recurring API rule). */
export function isValidIdempotencyKey(key: string): boolean {
  return /^[^#?/\\]{1,40}$/.test(key);
}

/**
 * The wallet documents a rate only for creating charges (up to 500 a minute); reads are bounded by the
 * calls in flight this process allows any provider. A 429 is tried again either way.
 */
const MOBILE_WALLET_LIMITS: ProviderLimits = {
  reads: { concurrent: PROVIDER_MAX_IN_FLIGHT, perSecond: Infinity },
  writes: { concurrent: PROVIDER_MAX_IN_FLIGHT, perSecond: 8 },
};

export class MobileWalletClient {
  private readonly baseUrl: string;
  private readonly options: MobileWalletClientOptions;
  private readonly systemHeaders: Record<string, string>;
  private readonly now: () => number;
  private token: { value: string; refreshAt: number } | null = null;
  private tokenRequest: Promise<MobileWalletResult<string>> | null = null;
  private readonly provider: LimitedProvider;
  /**
   * The wallet's limits per resource, kept across the merchant's processes (the recurring guide's rate-limit table):
   * FetchCharge 10 a minute per agreement and charge, ListCharges 10 a minute per agreement, CancelCharge 5 a minute.
   */
  private readonly budgets: { fetchCharge: ResourceBudget; listCharges: ResourceBudget; cancelCharge: ResourceBudget };

  constructor(options: MobileWalletClientOptions) {
    this.options = options;
    this.baseUrl = options.apiUrl.replace(/\/+$/, '');
    this.now = options.now ?? Date.now;
    const { shared } = options;
    // The rate is the merchant's (its serial number), whichever API keys are used.
    const account = shared && { store: shared, provider: 'mobile_wallet', apiUrl: this.baseUrl, credential: options.merchantSerialNumber };
    this.provider = new LimitedProvider(MOBILE_WALLET_LIMITS, account);
    this.budgets = { fetchCharge: new ResourceBudget(10, account), listCharges: new ResourceBudget(10, account), cancelCharge: new ResourceBudget(5, account) };
    this.systemHeaders = {
      'Vipps-System-Name': options.system?.name ?? 'shop-sidecar',
      'Vipps-System-Version': options.system?.version ?? '0.1.0',
      'Vipps-System-Plugin-Name': options.system?.pluginName ?? 'payment-hub',
      'Vipps-System-Plugin-Version': options.system?.pluginVersion ?? '0.1.0',
    };
  }

  getAgreement(agreementId: string): Promise<MobileWalletResult<MobileWalletAgreement>> {
    return this.call('GET', `/recurring/v3/agreements/${encodeURIComponent(agreementId)}`);
  }

  getCharge(agreementId: string, chargeId: string): Promise<MobileWalletResult<MobileWalletCharge>> {
    return this.within(this.budgets.fetchCharge, `fetch-charge ${agreementId}/${chargeId}`, 'GET', `/recurring/v3/agreements/${encodeURIComponent(agreementId)}/charges/${encodeURIComponent(chargeId)}`);
  }

  /** A call within its resource's limit a minute; over it, the wallet's 429 without asking the wallet. */
  private async within<T>(budget: ResourceBudget, resource: string, method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<MobileWalletResult<T>> {
    const spent = await budget.spend(resource);
    if (!spent.allowed) {
      return { ok: false, kind: 'http', status: 429, message: `${method} ${path}: not asked, the wallet's limit a minute for ${resource.split(' ')[0]} is used up; again in ${Math.ceil(spent.retryInMs / 1000)} s` };
    }
    return this.call(method, path, body, extraHeaders);
  }

  /**
   * POST /recurring/v3/agreements/{agreementId}/charges with the required Idempotency-Key header. The provider
   * caches the answer per key (a 4xx too), and the same key on a different request gives 409, so derive the key
   * from the payment and retry only timeouts, network errors and 5xx, with the same key.
   * Throws a RangeError for a key the provider would reject: that is a programming error, not a provider outcome.
   */
  createCharge(agreementId: string, charge: CreateMobileWalletChargeInput, idempotencyKey: string, leaveBy?: number): Promise<MobileWalletResult<{ chargeId: string }>> {
    if (!isValidIdempotencyKey(idempotencyKey)) throw new RangeError('Idempotency-Key must be 1-40 characters without # ? / \\');
    return this.call('POST', `/recurring/v3/agreements/${encodeURIComponent(agreementId)}/charges`, charge, { 'Idempotency-Key': idempotencyKey }, leaveBy);
  }

  /**
   * DELETE /recurring/v3/agreements/{agreementId}/charges/{chargeId}: cancels a charge that is PENDING or DUE,
   * so that the wallet does not take it on its due date (vipps-recurring-api docs/openapi.yaml, cancelCharge).
   * Refused once the charge is charged. The key makes a repeat of the same cancellation harmless. 204: cancelled;
   * 202 (`status` on the result): "accepted, will likely succeed but has not yet been enacted", to be read back.
   */
  cancelCharge(agreementId: string, chargeId: string, idempotencyKey: string): Promise<MobileWalletResult<null>> {
    if (!isValidIdempotencyKey(idempotencyKey)) throw new RangeError('Idempotency-Key must be 1-40 characters without # ? / \\');
    return this.within(this.budgets.cancelCharge, `cancel-charge ${agreementId}/${chargeId}`, 'DELETE', `/recurring/v3/agreements/${encodeURIComponent(agreementId)}/charges/${encodeURIComponent(chargeId)}`, undefined, { 'Idempotency-Key': idempotencyKey });
  }

  /** GET /recurring/v3/agreements/{agreementId}/charges?status=…: the agreement's charges in that status, whoever created them. */
  listCharges(agreementId: string, status: MobileWalletChargeStatus): Promise<MobileWalletResult<MobileWalletCharge[]>> {
    return this.within(this.budgets.listCharges, `list-charges ${agreementId}`, 'GET', `/recurring/v3/agreements/${encodeURIComponent(agreementId)}/charges?status=${encodeURIComponent(status)}`);
  }

  /** POST /webhooks/v1/webhooks. The secret is returned only here, once: store it. */
  registerWebhook(registration: { url: string; events: readonly string[] }): Promise<MobileWalletResult<{ id: string; secret: string }>> {
    return this.call('POST', '/webhooks/v1/webhooks', { url: registration.url, events: registration.events });
  }

  listWebhooks(): Promise<MobileWalletResult<{ webhooks: MobileWalletWebhookRegistration[] }>> {
    return this.call('GET', '/webhooks/v1/webhooks');
  }

  /** DELETE /webhooks/v1/webhooks/{id} (204). */
  deleteWebhook(id: string): Promise<MobileWalletResult<null>> {
    return this.call('DELETE', `/webhooks/v1/webhooks/${encodeURIComponent(id)}`);
  }

  /** The cached token, or a new one; concurrent callers share one in-flight request. */
  accessToken(): Promise<MobileWalletResult<string>> {
    if (this.token && this.now() < this.token.refreshAt) return Promise.resolve({ ok: true, value: this.token.value });
    this.tokenRequest ??= this.fetchToken().finally(() => {
      this.tokenRequest = null;
    });
    return this.tokenRequest;
  }

  private async fetchToken(): Promise<MobileWalletResult<string>> {
    const requestedAt = this.now();
    const result = await this.send<Record<string, unknown>>('POST', '/accesstoken/get', {
      client_id: this.options.clientId,
      client_secret: this.options.clientSecret,
      'Ocp-Apim-Subscription-Key': this.options.subscriptionKey,
      'Merchant-Serial-Number': this.options.merchantSerialNumber,
      ...this.systemHeaders,
    });
    if (!result.ok) return result;
    const accessToken = result.value?.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      return { ok: false, kind: 'http', status: 200, message: 'POST /accesstoken/get: no access_token in the response' };
    }
    // The provider sends expires_in as a string of seconds ("86398"); accept a number too. Unknown: assume 5 min.
    const lifetime = Number(result.value?.expires_in);
    const seconds = Number.isFinite(lifetime) && lifetime > 0 ? lifetime : 300;
    // Renew a little early so a token never expires between being read here and reaching the provider.
    const margin = Math.min(300, seconds * 0.1);
    this.token = { value: accessToken, refreshAt: requestedAt + (seconds - margin) * 1000 };
    return { ok: true, value: accessToken };
  }

  private async call<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}, leaveBy?: number): Promise<MobileWalletResult<T>> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      if (!token.ok) return token;
      const result = await this.send<T>(
        method,
        path,
        {
          Authorization: `Bearer ${token.value}`,
          'Ocp-Apim-Subscription-Key': this.options.subscriptionKey,
          'Merchant-Serial-Number': this.options.merchantSerialNumber,
          ...this.systemHeaders,
          ...extraHeaders,
        },
        body,
        leaveBy,
      );
      // A 401 means the token was refused (revoked, rotated keys): drop it and try once with a fresh one.
      // Safe for POSTs as well: the request was not processed, and it carries the same Idempotency-Key.
      if (!result.ok && result.status === 401 && attempt === 0) {
        if (this.token?.value === token.value) this.token = null;
        continue;
      }
      return result;
    }
  }

  private async send<T>(method: string, path: string, headers: Record<string, string>, body?: unknown, leaveBy?: number): Promise<MobileWalletResult<T>> {
    const requestHeaders: Record<string, string> = { Accept: 'application/json', ...headers };
    if (body !== undefined) requestHeaders['Content-Type'] = 'application/json';
    const payload = body === undefined ? (method === 'POST' ? '' : undefined) : JSON.stringify(body);
    const response = await this.provider.exchange(method, this.baseUrl + path, requestHeaders, payload, this.options.timeoutMs, `${method} ${path}`, leaveBy);
    if (!response.ok) return response;
    const { status, text, json } = response;
    if (status >= 200 && status < 300) {
      // 204 and other empty answers; a 202 says so (accepted, not yet enacted).
      if (text.trim() === '') return status === 202 ? { ok: true, value: null as T, status } : { ok: true, value: null as T };
      if (json === undefined) return { ok: false, kind: 'http', status, message: `${method} ${path}: response is not JSON` };
      return { ok: true, value: json as T };
    }
    const { message, code } = problemOf(json);
    const failure: ProviderFailure = { ok: false, kind: status === 404 ? 'not_found' : 'http', status, message: `${method} ${path}: HTTP ${status}${message}` };
    if (code !== undefined) failure.code = code;
    return failure;
  }
}

/** RFC 7807 problem (title/detail/type) or the older [{errorCode, errorMessage}] error list. */
function problemOf(json: unknown): { message: string; code?: string } {
  const first = Array.isArray(json) ? json[0] : json;
  if (first === null || typeof first !== 'object') return { message: '' };
  const problem = first as Record<string, unknown>;
  const parts = [problem.title, problem.detail, problem.errorMessage].filter((part): part is string => typeof part === 'string' && part !== '');
  const code = typeof problem.type === 'string' ? problem.type : problem.errorCode === undefined ? undefined : String(problem.errorCode);
  return { message: parts.length === 0 ? '' : ` (${parts.join(': ')})`, ...(code === undefined ? {} : { code }) };
}

