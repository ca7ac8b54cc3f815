import crypto from 'node:crypto';

/** What the companion plugin derives its hand-over key from, with `wp_salt('logged_in')` as the HMAC key. */
const KEY_PURPOSE = 'shop-sidecar-handover-v1';
/** How far a request's timestamp may be from the companion's clock before it is refused (replays are refused after this). */
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

/** PHP: `hash_hmac('sha256', $timestamp . "\n" . $raw_body, $key)`. */
export function signHandOver(key: string, timestampSeconds: number, body: string): string {
  return crypto.createHmac('sha256', key).update(`${timestampSeconds}\n${body}`).digest('hex');
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
