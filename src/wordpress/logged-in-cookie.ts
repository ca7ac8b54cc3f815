/**
 * WordPress's `logged_in` cookie, verified the way `wp_validate_auth_cookie($cookie, 'logged_in')`
 * does it: expiry, HMAC keyed by the password hash fragment, then the server-side session token.
 */
import { createHash, createHmac } from 'node:crypto';
import { isPhpArray, maybeUnserialize, phpGet, phpSerialize, type PhpValue } from './php-serialize';
import { timingSafeStringEqual } from '../security/constant-time';
import { md5Hex } from './passwords';

/** `wordpress_logged_in_` + COOKIEHASH, where COOKIEHASH is md5 of the exact `siteurl` option value. */
export function cookieName(siteUrl: string): string {
  return 'wordpress_logged_in_' + md5Hex(siteUrl);
}

export interface LoggedInCookie {
  login: string;
  /** The expiration exactly as sent; it is what the HMAC covers. */
  expiration: string;
  /** The same, as Unix seconds. */
  expiresAt: number;
  token: string;
  hmac: string;
}

export type ParseCookieResult =
  | { ok: true; cookie: LoggedInCookie }
  | { ok: false; error: 'empty' | 'malformed' | 'bad_expiration' };

/**
 * Splits a cookie value (still URL-encoded, as in the Cookie header, or already decoded: a valid
 * cookie decodes to itself) into `login|expiration|token|hmac`.
 */
export function parseLoggedInCookie(raw: string): ParseCookieResult {
  const value = phpUrlDecode(raw);
  // PHP's empty(): "" and "0" both mean no cookie.
  if (value === '' || value === '0') return { ok: false, error: 'empty' };
  const parts = value.split('|');
  if (parts.length !== 4) return { ok: false, error: 'malformed' };
  const [login, expiration, token, hmac] = parts as [string, string, string, string];
  // WordPress would read "123abc" as 123 yet sign the raw text; only plain digits are accepted here.
  if (!/^\d{1,15}$/.test(expiration)) return { ok: false, error: 'bad_expiration' };
  return { ok: true, cookie: { login, expiration, expiresAt: Number(expiration), token, hmac } };
}

/** PHP urldecode(), which is how $_COOKIE values are decoded: "+" is a space, bad escapes stay. */
function phpUrlDecode(raw: string): string {
  const src = Buffer.from(raw, 'utf8');
  const out = Buffer.alloc(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i += 1) {
    const c = src[i] as number;
    if (c === 0x2b) {
      out[n++] = 0x20;
    } else if (c === 0x25 && i + 2 < src.length && isHex(src[i + 1]) && isHex(src[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(src[i + 1] as number, src[i + 2] as number), 16);
      i += 2;
    } else {
      out[n++] = c;
    }
  }
  return out.toString('utf8', 0, n);
}

function isHex(byte: number | undefined): boolean {
  return byte !== undefined && /[0-9a-fA-F]/.test(String.fromCharCode(byte));
}

/**
 * The raw value of cookie `name` in a Cookie header, or null. Like PHP, the first occurrence wins
 * (the browser lists the most specific path first).
 */
export function readCookie(cookieHeader: string | undefined, name: string): string | null {
  if (!cookieHeader) return null;
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    if (phpUrlDecode(pair.slice(0, eq).trimStart()) === name) return pair.slice(eq + 1);
  }
  return null;
}

/** The `pass_frag` mixed into the cookie key, so that changing the password voids every cookie. */
export function passFrag(userPass: string): Buffer {
  const bytes = Buffer.from(userPass, 'utf8');
  if (userPass.startsWith('$P$') || userPass.startsWith('$2y$')) return bytes.subarray(8, 12);
  // Newer formats ($wp$2y$, $generic$, ...) have long fixed prefixes, so WordPress uses the tail.
  return bytes.subarray(Math.max(0, bytes.length - 4));
}

export interface CookieParts {
  login: string;
  expiration: string | number;
  token: string;
}

/**
 * The cookie's expected HMAC. `secret` is `wp_salt('logged_in')`, i.e. LOGGED_IN_KEY . LOGGED_IN_SALT.
 */
export function loggedInCookieHmac(parts: CookieParts, userPass: string, secret: string): string {
  const expiration = String(parts.expiration);
  const keyInput = Buffer.concat([
    Buffer.from(`${parts.login}|`, 'utf8'),
    passFrag(userPass),
    Buffer.from(`|${expiration}|${parts.token}`, 'utf8'),
  ]);
  const key = createHmac('md5', secret).update(keyInput).digest('hex');
  return createHmac('sha256', key).update(`${parts.login}|${expiration}|${parts.token}`, 'utf8').digest('hex');
}

export function verifyLoggedInCookieHmac(cookie: CookieParts & { hmac: string }, userPass: string, secret: string): boolean {
  return timingSafeStringEqual(loggedInCookieHmac(cookie, userPass, secret), cookie.hmac);
}

/**
 * Whether the cookie has expired. WordPress allows an hour's grace for POST requests, so that a form
 * submitted just after expiry still goes through.
 */
export function loggedInCookieExpired(cookie: Pick<LoggedInCookie, 'expiresAt'>, nowSeconds: number, method = 'GET'): boolean {
  const grace = method === 'POST' ? 3600 : 0;
  return cookie.expiresAt + grace < nowSeconds;
}

export function sessionTokenVerifier(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * `WP_Session_Tokens::verify`: the usermeta `session_tokens` value (serialized, or null when the row
 * is missing) must hold sha256(token) with an expiration not before `nowSeconds`.
 */
export function sessionTokenValid(sessionTokensSerialized: string | null, token: string, nowSeconds: number): boolean {
  if (sessionTokensSerialized === null) return false;
  const parsed = maybeUnserialize(sessionTokensSerialized);
  if (!parsed.ok || !isPhpArray(parsed.value)) return false;
  const session = phpGet(parsed.value, sessionTokenVerifier(token));
  const expiration = sessionExpiration(session);
  return expiration !== null && expiration >= nowSeconds;
}

// Very old sessions were stored as a bare integer expiration; WordPress still reads them that way.
function sessionExpiration(session: PhpValue | undefined): number | null {
  if (typeof session === 'number') return session;
  if (!isPhpArray(session)) return null;
  const expiration = phpGet(session, 'expiration');
  if (typeof expiration === 'number') return expiration;
  if (typeof expiration === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(expiration)) return Number(expiration);
  return null;
}

export type LoggedInCookieCheck =
  | { ok: true; cookie: LoggedInCookie }
  | { ok: false; reason: 'expired' | 'bad_hmac' | 'bad_session' };

/**
 * Every check after the user lookup, in WordPress's order. The caller parses the cookie, loads the
 * user by `cookie.login` (401 if none), and passes that user's password hash and `session_tokens`.
 */
export function checkLoggedInCookie(input: {
  cookie: LoggedInCookie;
  userPass: string;
  sessionTokens: string | null;
  secret: string;
  nowSeconds: number;
  method?: string;
}): LoggedInCookieCheck {
  const { cookie } = input;
  if (loggedInCookieExpired(cookie, input.nowSeconds, input.method)) return { ok: false, reason: 'expired' };
  if (!verifyLoggedInCookieHmac(cookie, input.userPass, input.secret)) return { ok: false, reason: 'bad_hmac' };
  if (!sessionTokenValid(input.sessionTokens, cookie.token, input.nowSeconds)) return { ok: false, reason: 'bad_session' };
  return { ok: true, cookie };
}

/**
 * A cookie value as `wp_generate_auth_cookie` builds it (not URL-encoded: pass it through
 * encodeURIComponent for a Cookie header). For tests and the demo.
 */
export function makeLoggedInCookie(input: { login: string; userPass: string; token: string; expiration: number; key: string }): string {
  const parts = { login: input.login, expiration: input.expiration, token: input.token };
  return `${input.login}|${input.expiration}|${input.token}|${loggedInCookieHmac(parts, input.userPass, input.key)}`;
}

export interface SessionEntry {
  token: string;
  expiration: number;
  ip?: string;
  ua?: string;
  login?: number;
}

/** The `session_tokens` usermeta value WordPress would store for these sessions. For tests and the demo. */
export function serializeSessionTokens(sessions: SessionEntry[]): string {
  const value: Record<string, { expiration: number; ip: string; ua: string; login: number }> = {};
  for (const s of sessions) {
    value[sessionTokenVerifier(s.token)] = { expiration: s.expiration, ip: s.ip ?? '127.0.0.1', ua: s.ua ?? 'test', login: s.login ?? s.expiration - 172800 };
  }
  return phpSerialize(value);
}
