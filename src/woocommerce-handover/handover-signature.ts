import crypto from 'node:crypto';

/** What the companion plugin derives its hand-over key from, with `wp_salt('logged_in')` as the HMAC key. */
const KEY_PURPOSE = 'shop-sidecar-handover-v1';
/**
 * What the companion derives the key of its notices to the service from (the other direction): a purpose of its
 * own, so that a request signed for one route is never taken by the other.
 */
const SHOP_EVENTS_KEY_PURPOSE = 'shop-sidecar-shop-events-v1';
/**
 * How far a signed request's timestamp may be from its receiver's clock (the companion's for the hand-over, the
 * service's for the companion's notices) before it is refused: replays are refused after this.
 */
export const HANDOVER_MAX_SKEW_SECONDS = 300;

export const TIMESTAMP_HEADER = 'X-Shop-Sidecar-Timestamp';
export const SIGNATURE_HEADER = 'X-Shop-Sidecar-Signature';

/**
 * The key both sides derive from the site's own secret (`wp_salt('logged_in')`, LOGGED_IN_KEY . LOGGED_IN_SALT),
 * so nobody without the site's salts can make WordPress run the hand-over, and the operator sets nothing new.
 * PHP: `hash_hmac('sha256', 'shop-sidecar-handover-v1', wp_salt('logged_in'))`.
 */
export function handOverKey(loggedInSalt: string): string {
  return crypto.createHmac('sha256', loggedInSalt).update(KEY_PURPOSE).digest('hex');
}

/** The key of the companion's notices to the service. PHP: `hash_hmac('sha256', 'shop-sidecar-shop-events-v1', wp_salt('logged_in'))`. */
export function shopEventsKey(loggedInSalt: string): string {
  return crypto.createHmac('sha256', loggedInSalt).update(SHOP_EVENTS_KEY_PURPOSE).digest('hex');
}

/** PHP: `hash_hmac('sha256', $timestamp . "\n" . $raw_body, $key)`. */
export function signHandOver(key: string, timestampSeconds: number | string, body: string | Buffer): string {
  return crypto.createHmac('sha256', key).update(`${timestampSeconds}\n`).update(body).digest('hex');
}

/** Why a signed request is refused: its headers missing, its timestamp too far from the clock, or its signature not the body's. */
export type SignatureRefusal = 'unsigned' | 'stale' | 'mismatch';

/**
 * Checks a request signed as the hand-over is signed, the cheap checks first: both headers there, the timestamp
 * (whole seconds) within HANDOVER_MAX_SKEW_SECONDS of `nowSeconds`, then the HMAC over the exact bytes received.
 */
export function checkSignature(key: string, signed: { timestamp?: string; signature?: string; body: Buffer }, nowSeconds: number): SignatureRefusal | null {
  const timestamp = signed.timestamp?.trim() ?? '';
  const signature = signed.signature?.trim().toLowerCase() ?? '';
  if (!timestamp || !signature) return 'unsigned';
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > HANDOVER_MAX_SKEW_SECONDS) return 'stale';
  const expected = Buffer.from(signHandOver(key, timestamp, signed.body), 'hex');
  const given = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : null;
  return given && crypto.timingSafeEqual(expected, given) ? null : 'mismatch';
}

/** The headers of one signed hand-over request. */
export function handOverHeaders(key: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    [TIMESTAMP_HEADER]: String(timestampSeconds),
    [SIGNATURE_HEADER]: signHandOver(key, timestampSeconds, body),
  };
}
