import type { Config } from '../config';
import type { Logger } from '../logger';
import type { WordPressSiteRepository, WordPressUser, WordPressUserRepository } from '../data-access/wordpress-user-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { localDateTime } from '../shop/shop-time';
import { BoundedMemo } from '../shared/bounded-memo';
import { effectiveCapabilities } from '../wordpress/capabilities';
import { checkLoggedInCookie, cookieName, parseLoggedInCookie, readCookie } from '../wordpress/logged-in-cookie';
import { normalizeApplicationPassword } from '../wordpress/passwords';
import { passwordChecks, type PasswordCheckPool } from '../wordpress/password-check-pool';
import { isPhpArray, maybeUnserialize, phpGet, phpList, phpSerialize, type PhpArray, type PhpValue } from '../wordpress/php-serialize';
import { verifyRestNonce } from '../wordpress/rest-nonce';
import { consumerSecretMatches, hashConsumerKey, methodAllowed } from '../wordpress/woocommerce-api-key';
import type { StaffAuthentication, StaffCredential, StaffIdentity, UnauthenticatedReason } from './staff-identity';
import { resolveWordPressSecrets } from './wordpress-secrets';

/** What a Basic-authenticated request offers: the Authorization header, WooCommerce's query-string key pair, the method. */
export interface BasicCredentialsRequest {
  https: boolean;
  method: string;
  basic: { user: string; password: string } | null;
  /** `consumer_key` / `consumer_secret` from the query string (WooCommerce reads these first). */
  queryKey: { consumerKey: string; consumerSecret: string } | null;
  clientIp: string;
}

export interface CookieRequest {
  https: boolean;
  method: string;
  cookieHeader: string | undefined;
  /** `_wpnonce` from the query string, else the `X-WP-Nonce` header. */
  nonce: string | undefined;
}

const DAY_SECONDS = 86_400;
/** WooCommerce writes a key's last access on every request; once a minute per key is enough to keep WP admin's column true. */
const API_KEY_TOUCH_INTERVAL_MS = 60_000;

const refuse = (reason: UnauthenticatedReason): StaffAuthentication => ({ kind: 'unauthenticated', reason });

/** `sanitize_user()` / `sanitize_text_field()` as far as they matter for logins and keys: trimmed, inner whitespace collapsed. */
function sanitizeName(value: string): string {
  return value.replace(/[\r\n\t]+/g, ' ').replace(/ {2,}/g, ' ').trim();
}

/** WordPress's `is_email()`, reduced to the shape checks it makes. */
export function looksLikeEmail(value: string): boolean {
  if (value.length < 6) return false;
  const at = value.indexOf('@', 1);
  if (at === -1 || at !== value.lastIndexOf('@')) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (!/^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(local)) return false;
  if (/\.{2}/.test(domain) || /^\.|\.$/.test(domain)) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => /^[a-z0-9-]+$/i.test(label) && !/^-|-$/.test(label));
}

/**
 * Staff authentication exactly as WordPress and WooCommerce accept it, verified from the shop's own tables:
 * WooCommerce REST API keys and WordPress application passwords as HTTP Basic (HTTPS only), or the
 * `logged_in` cookie with a `wp_rest` nonce. Capabilities come from the user's roles and own grants.
 */
export class AuthenticateStaff {
  private readonly capabilitiesKey: string;
  private readonly touchedKeys = new Map<number, number>();
  /** Capabilities computed for each distinct (roles option, user's capabilities meta) pair: unserializing the roles on every request was a third of a millisecond. */
  private capabilityCache = { roles: null as string | null, byUserCaps: new BoundedMemo<Set<string>>(1000) };

  constructor(private readonly deps: {
    config: Config;
    users: WordPressUserRepository;
    site: WordPressSiteRepository;
    settings: ShopSettingsRepository;
    /** The site URL WordPress uses: SHOP_URL (WP_SITEURL's part), else the `siteurl` option. */
    siteUrl: () => Promise<string>;
    log: Logger;
    clock: () => Date;
    tablePrefix: string;
    /** Application password checks, off the event loop (the process's pool unless a test gives another). */
    passwords?: Pick<PasswordCheckPool, 'check'>;
  }) {
    this.capabilitiesKey = `${deps.tablePrefix}capabilities`;
  }

  /** A WooCommerce consumer key and secret (query string first, then Basic), else an application password. */
  async withBasicCredentials(request: BasicCredentialsRequest): Promise<StaffAuthentication> {
    // WooCommerce uses Basic only over SSL; application passwords are likewise only available over HTTPS.
    if (!request.https) return refuse('https_required');
    const fromQuery = request.queryKey && request.queryKey.consumerKey !== '' && request.queryKey.consumerSecret !== '' ? request.queryKey : null;
    const basic = request.basic && request.basic.user !== '' && request.basic.password !== '' ? request.basic : null;
    const fromHeader = basic ? { consumerKey: basic.user, consumerSecret: basic.password } : null;
    const pair = fromQuery ?? fromHeader;
    if (!pair) return refuse('no_credentials');

    const key = await this.deps.users.apiKeyByStoredKey(hashConsumerKey(sanitizeName(pair.consumerKey)), this.capabilitiesKey);
    if (key) {
      if (!consumerSecretMatches(key.consumerSecret, pair.consumerSecret)) return refuse('bad_consumer_secret');
      // WooCommerce answers a key used beyond its permissions with 401 (woocommerce_rest_authentication_error).
      if (!methodAllowed(key.permissions, request.method.toUpperCase())) return refuse('key_lacks_permission');
      if (!key.user) return refuse('key_user_missing');
      this.touchApiKey(key.keyId);
      const meta = new Map<string, string>();
      if (key.userMeta !== null) meta.set(this.capabilitiesKey, key.userMeta);
      return this.authenticated(key.user, 'api_key', meta);
    }
    // Not a WooCommerce key: WordPress then tries the Authorization header as an application password
    // (a query-string pair never is one).
    if (!basic) return refuse('unknown_api_key');
    return this.withApplicationPassword(basic.user, basic.password, request.clientIp);
  }

  /** `wp_authenticate_application_password`: the user by login (or email), then each of their application passwords. */
  private async withApplicationPassword(username: string, password: string, clientIp: string): Promise<StaffAuthentication> {
    const site = await this.deps.site.current();
    if (!site.applicationPasswordsInUse) return refuse('application_passwords_not_in_use');
    const name = sanitizeName(username);
    const user = (await this.deps.users.findByLogin(name)) ?? (looksLikeEmail(name) ? await this.deps.users.findByEmail(name) : null);
    if (!user) return refuse('unknown_user');
    const meta = await this.deps.users.meta(user.id, ['_application_passwords', this.capabilitiesKey]);
    const stored = meta.get('_application_passwords');
    const items = stored === undefined ? null : readApplicationPasswords(stored);
    const supplied = normalizeApplicationPassword(password);
    for (const [index, item] of (items?.list ?? []).entries()) {
      const hash = phpGet(item, 'password');
      if (typeof hash !== 'string' || hash === '') continue;
      if (await (this.deps.passwords ?? passwordChecks).check(supplied, hash)) {
        this.recordApplicationPasswordUse(user.id, stored!, items!.list, index, clientIp);
        return this.authenticated(user, 'application_password', meta);
      }
    }
    return refuse('bad_application_password');
  }

  /**
   * `wp_validate_auth_cookie($cookie, 'logged_in')` followed by `rest_cookie_check_errors`' nonce check: the cookie
   * first (no valid cookie is `unauthenticated`), then the nonce (`invalid_nonce`).
   */
  async withCookie(request: CookieRequest): Promise<StaffAuthentication> {
    const site = await this.deps.site.current();
    // COOKIEHASH is md5 of the site URL.
    const siteUrl = await this.deps.siteUrl();
    // On an https site the cookie is set `secure`: a browser never sends it over plain HTTP.
    if (siteUrl.startsWith('https:') && !request.https) return refuse('https_required');
    const raw = readCookie(request.cookieHeader, cookieName(siteUrl));
    if (raw === null) return refuse('no_cookie');
    const parsed = parseLoggedInCookie(raw);
    if (!parsed.ok) return refuse('malformed_cookie');
    const secrets = resolveWordPressSecrets(this.deps.config.wordpressSecrets, site);
    if (!secrets) {
      this.deps.log.error('wordpress_secrets_unavailable', { hint: 'set WP_LOGGED_IN_KEY/SALT and WP_NONCE_KEY/SALT or check the site options' });
      return refuse('secrets_unavailable');
    }
    const user = await this.deps.users.findByLogin(parsed.cookie.login);
    if (!user) return refuse('unknown_user');
    const meta = await this.deps.users.meta(user.id, ['session_tokens', this.capabilitiesKey]);
    const nowSeconds = Math.floor(this.deps.clock().getTime() / 1000);
    const check = checkLoggedInCookie({
      cookie: parsed.cookie, userPass: user.passwordHash, sessionTokens: meta.get('session_tokens') ?? null,
      secret: secrets.loggedIn, nowSeconds, method: request.method.toUpperCase(),
    });
    if (!check.ok) return refuse(check.reason);
    // Only once the cookie itself is verified does the nonce decide: a valid cookie with a missing, stale or foreign
    // nonce is the browser's ordinary life after a day (or a forged cross-site request), not a guess at a credential.
    if (!request.nonce) return { kind: 'invalid_nonce', userId: user.id, reason: 'no_nonce' };
    const nonceAge = verifyRestNonce(request.nonce, { uid: user.id, token: parsed.cookie.token, nonceKeySalt: secrets.nonce }, nowSeconds);
    if (nonceAge === 0) return { kind: 'invalid_nonce', userId: user.id, reason: 'bad_nonce' };
    return this.authenticated(user, 'cookie', meta);
  }

  /**
   * The WordPress user with this e-mail, as the helpdesk card names its agent (the card's own token vouches for the
   * request, not for the agent: what the agent may do is what WordPress gives that user). Null when there is none.
   */
  async helpdeskAgent(email: string): Promise<StaffIdentity | null> {
    const trimmed = email.trim();
    if (trimmed === '') return null;
    const user = await this.deps.users.findByEmail(trimmed);
    if (!user) return null;
    const meta = await this.deps.users.meta(user.id, [this.capabilitiesKey]);
    const authenticated = await this.authenticated(user, 'helpdesk_card', meta);
    return authenticated.kind === 'authenticated' ? authenticated.identity : null;
  }

  /** `meta` holds the user's capabilities meta, read along with whatever the credential check needed. */
  private async authenticated(user: WordPressUser, via: StaffCredential, meta: Map<string, string>): Promise<StaffAuthentication> {
    const site = await this.deps.site.current();
    const identity: StaffIdentity = {
      userId: user.id, login: user.login, displayName: user.displayName, email: user.email, via,
      capabilities: this.capabilities(meta.get(this.capabilitiesKey) ?? null, site.userRoles),
    };
    return { kind: 'authenticated', identity };
  }

  private capabilities(userCaps: string | null, roles: string | null): Set<string> {
    // Keyed by the exact stored strings, so any change in WP admin (a role's or the user's) gives a fresh computation.
    if (this.capabilityCache.roles !== roles) this.capabilityCache = { roles, byUserCaps: new BoundedMemo(1000) };
    return this.capabilityCache.byUserCaps.get(userCaps ?? '', () => effectiveCapabilities(userCaps, roles));
  }

  private touchApiKey(keyId: number): void {
    const now = this.deps.clock();
    const last = this.touchedKeys.get(keyId);
    if (last !== undefined && now.getTime() - last < API_KEY_TOUCH_INTERVAL_MS) return;
    this.touchedKeys.set(keyId, now.getTime());
    void this.deps.settings.current()
      .then((settings) => this.deps.users.touchApiKey(keyId, localDateTime(now, settings.timeZone)))
      .catch((error) => this.deps.log.warn('api_key_touch_failed', { keyId, error }));
  }

  /**
   * `WP_Application_Passwords::record_application_password_usage`: `last_used` and `last_ip`, at most once a day.
   * Written only if the stored value is still the one read, so a password added meanwhile is never lost.
   */
  private recordApplicationPasswordUse(userId: number, stored: string, list: PhpArray[], index: number, clientIp: string): void {
    const item = list[index];
    if (!item) return;
    const now = Math.floor(this.deps.clock().getTime() / 1000);
    const lastUsed = phpGet(item, 'last_used');
    if (typeof lastUsed === 'number' && lastUsed + DAY_SECONDS > now) return;
    item.last_used = now;
    item.last_ip = clientIp;
    const updated = phpSerialize(list as unknown as Parameters<typeof phpSerialize>[0]);
    void this.deps.users.replaceMetaIfUnchanged(userId, '_application_passwords', stored, updated)
      .catch((error) => this.deps.log.warn('application_password_usage_not_recorded', { userId, error }));
  }
}

/** The `_application_passwords` list; null when it is not a list of arrays (objects are refused by the reader). */
function readApplicationPasswords(stored: string): { list: PhpArray[] } | null {
  const parsed = maybeUnserialize(stored);
  if (!parsed.ok) return null;
  const list = phpList(parsed.value as PhpValue);
  if (!list || !list.every(isPhpArray)) return null;
  return { list: list as PhpArray[] };
}

