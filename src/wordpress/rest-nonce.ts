/**
 * WordPress nonces (`wp_create_nonce` / `wp_verify_nonce`) as the REST API checks `X-WP-Nonce`
 * with action "wp_rest". Time is passed in so that callers and tests pin it.
 */
import { createHmac } from 'node:crypto';
import { timingSafeStringEqual } from '../security/constant-time';

export const DEFAULT_NONCE_LIFE = 86400;

/** `wp_nonce_tick`: the half-life window number the nonce is bound to. */
export function nonceTick(nowSeconds: number, nonceLife = DEFAULT_NONCE_LIFE): number {
  return Math.ceil(nowSeconds / (nonceLife / 2));
}

export interface NonceContext {
  /** The user ID (0 when logged out). */
  uid: number;
  /** The session token from the logged-in cookie. */
  token: string;
  /** `wp_salt('nonce')`, i.e. NONCE_KEY . NONCE_SALT. */
  nonceKeySalt: string;
  action?: string;
}

/** `wp_create_nonce` for a given tick: 10 hex characters from the middle of an HMAC-MD5. */
export function createRestNonce(input: NonceContext & { tick: number }): string {
  const action = input.action ?? 'wp_rest';
  const hex = createHmac('md5', input.nonceKeySalt).update(`${input.tick}|${action}|${input.uid}|${input.token}`, 'utf8').digest('hex');
  return hex.slice(-12, -2);
}

/**
 * `wp_verify_nonce`: 1 when made in the current tick (0-12 h old by default), 2 when made in the
 * previous one (12-24 h), 0 otherwise.
 */
export function verifyRestNonce(nonce: string, context: NonceContext & { nonceLife?: number }, nowSeconds: number): 0 | 1 | 2 {
  // PHP's empty(): "0" counts as no nonce at all.
  if (nonce === '' || nonce === '0') return 0;
  const tick = nonceTick(nowSeconds, context.nonceLife);
  const current = timingSafeStringEqual(createRestNonce({ ...context, tick }), nonce);
  const previous = timingSafeStringEqual(createRestNonce({ ...context, tick: tick - 1 }), nonce);
  if (current) return 1;
  return previous ? 2 : 0;
}
