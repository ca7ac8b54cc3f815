import crypto from 'node:crypto';
import { timingSafeStringEqual } from '../../../security/constant-time';

/**
 * Mobile wallet (Vipps MobilePay Webhooks API) request authentication.
 *
 *   contentHash  = base64(SHA-256(raw body bytes))                       -> header x-ms-content-sha256
 *   stringToSign = METHOD + "\n" + pathAndQuery + "\n" + x-ms-date + ";" + host + ";" + contentHash
 *   signature    = base64(HMAC-SHA256(key = UTF-8 bytes of the secret string, stringToSign))
 *   Authorization: HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=<signature>
 *
 * pathAndQuery and host are those of the URL registered with the provider, which is what it signs; behind a
 * reverse proxy the values this process sees differ. The secret looks like base64 but is NOT decoded.
 */

export const MOBILE_WALLET_SIGNED_HEADERS = 'x-ms-date;host;x-ms-content-sha256';
const AUTH_SCHEME = 'HMAC-SHA256';

export type HeaderBag = Record<string, string | string[] | undefined>;

export function mobileWalletContentHash(body: Buffer): string {
  return crypto.createHash('sha256').update(body).digest('base64');
}

export function mobileWalletStringToSign(parts: {
  method: string;
  pathAndQuery: string;
  date: string;
  host: string;
  contentHash: string;
}): string {
  return `${parts.method.toUpperCase()}\n${parts.pathAndQuery}\n${parts.date};${parts.host};${parts.contentHash}`;
}

export function mobileWalletSignature(stringToSign: string, secret: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(stringToSign, 'utf8').digest('base64');
}

/** host[:port] and path+query of a registered webhook URL, as the provider uses them when signing. */
export function signedUrlParts(url: string | URL): { host: string; pathAndQuery: string } {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return { host: parsed.host, pathAndQuery: parsed.pathname + parsed.search };
}

/** Everything the provider would send for a delivery; used by tests and the fake, mirrors verification. */
export function signMobileWalletRequest(input: { method?: string; url: string | URL; date: string; body: Buffer; secret: string }): {
  contentHash: string;
  signature: string;
  authorization: string;
  host: string;
} {
  const { host, pathAndQuery } = signedUrlParts(input.url);
  const contentHash = mobileWalletContentHash(input.body);
  const signature = mobileWalletSignature(
    mobileWalletStringToSign({ method: input.method ?? 'POST', pathAndQuery, date: input.date, host, contentHash }),
    input.secret,
  );
  return { contentHash, signature, host, authorization: `${AUTH_SCHEME} SignedHeaders=${MOBILE_WALLET_SIGNED_HEADERS}&Signature=${signature}` };
}

export interface MobileWalletWebhookRequest {
  method: string;
  /** The externally registered webhook URL (MOBILE_WALLET_WEBHOOK_URL), not the URL seen behind a proxy. */
  registeredUrl: string | URL;
  headers: HeaderBag;
  /** The exact bytes received, before any JSON parsing: the hash is over them. */
  body: Buffer;
}

export interface MobileWalletVerifyOptions {
  /** Tried in order; one secret per registration, several during a re-registration. */
  secrets: readonly string[];
}

export type MobileWalletVerifyFailure = 'missing_headers' | 'no_secrets' | 'malformed_authorization' | 'content_hash' | 'signature';

export type MobileWalletVerification = { ok: true } | { ok: false; reason: MobileWalletVerifyFailure };

export function verifyMobileWalletWebhook(request: MobileWalletWebhookRequest, options: MobileWalletVerifyOptions): MobileWalletVerification {
  const date = header(request.headers, 'x-ms-date');
  const claimedHash = header(request.headers, 'x-ms-content-sha256');
  // Some hosting setups strip Authorization; the provider's own plugin falls back to this header.
  const authorization = header(request.headers, 'authorization') ?? header(request.headers, 'x-vipps-authorization');
  if (date === undefined || claimedHash === undefined || authorization === undefined) return { ok: false, reason: 'missing_headers' };

  const secrets = options.secrets.filter((secret) => secret !== '');
  if (secrets.length === 0) return { ok: false, reason: 'no_secrets' };

  const givenSignature = parseAuthorization(authorization);
  if (givenSignature === null) return { ok: false, reason: 'malformed_authorization' };

  const contentHash = mobileWalletContentHash(request.body);
  if (!timingSafeStringEqual(contentHash, claimedHash)) return { ok: false, reason: 'content_hash' };

  const { host, pathAndQuery } = signedUrlParts(request.registeredUrl);
  const stringToSign = mobileWalletStringToSign({ method: request.method, pathAndQuery, date, host, contentHash });
  let matched = false;
  for (const secret of secrets) {
    // Every secret is tried so timing does not reveal which one matched.
    if (timingSafeStringEqual(mobileWalletSignature(stringToSign, secret), givenSignature)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'signature' };
}

/** The Signature value of "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=...", or null. */
function parseAuthorization(value: string): string | null {
  const match = /^\s*HMAC-SHA256\s+(.+?)\s*$/i.exec(value);
  if (!match) return null;
  const params = new Map<string, string>();
  for (const pair of match[1]!.split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0) params.set(pair.slice(0, eq).trim().toLowerCase(), pair.slice(eq + 1).trim());
  }
  // Our string-to-sign covers exactly these headers in this order; a different list cannot be verified by it.
  if (params.get('signedheaders')?.toLowerCase() !== MOBILE_WALLET_SIGNED_HEADERS) return null;
  const signature = params.get('signature');
  return signature ? signature : null;
}

function header(headers: HeaderBag, name: string): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    // Tolerate callers that kept the original header case.
    const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  if (Array.isArray(value)) value = value[0];
  return value === undefined || value === '' ? undefined : value;
}

