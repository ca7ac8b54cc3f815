/**
 * WordPress and WooCommerce data for the staff route tests, made the way WordPress makes it. Credentials are
 * computed here from the formulas in reference/woocommerce-data.md §6–§7 with node:crypto and blakejs,
 * not with the service's own src/wordpress code, so the tests check that code against an independent
 * implementation (and, where the reference gives them, against published vectors).
 */
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import { blake2b } from 'blakejs';
import { phpSerialize, setOption, type PhpValue } from '../../src/demo/woocommerce-schema';
import type { TestShop } from './test-shop';

export const SITE_URL = 'https://shop.example.dk';

export const WP_SECRETS = {
  loggedInKey: 'Zl`+S3k.]O7[x9|qv^e4 test logged-in key',
  loggedInSalt: 'p#Qm2!yT6;w0@u test logged-in salt',
  nonceKey: 'c8=Jr$1N%h&4 test nonce key',
  nonceSalt: 'V*3o(9ek)sL test nonce salt',
};

/** The environment a service under test gets for these secrets (as wp-config constants). */
export const WP_SECRETS_ENV = {
  WP_LOGGED_IN_KEY: WP_SECRETS.loggedInKey,
  WP_LOGGED_IN_SALT: WP_SECRETS.loggedInSalt,
  WP_NONCE_KEY: WP_SECRETS.nonceKey,
  WP_NONCE_SALT: WP_SECRETS.nonceSalt,
};

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `wp_generate_password($length, false, false)`: letters and digits only. */
export function wpGeneratePassword(length: number): string {
  return Array.from(crypto.randomBytes(length), (byte) => ALNUM[byte % ALNUM.length]).join('');
}

async function rows(db: mysql.Pool, sql: string, params: unknown[] = []): Promise<mysql.RowDataPacket[]> {
  const [result] = await db.query<mysql.RowDataPacket[]>(sql, params);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Users, capabilities, API keys

export interface StaffUser {
  id: number;
  login: string;
  email: string;
  /** `user_pass` as stored. */
  userPass: string;
}

/**
 * A user with roles, and optionally own grants or denials in `{prefix}capabilities` (e.g. `{ manage_woocommerce: false }`).
 * The password is hashed as WordPress 6.8 does (the seeder's `$wp$2y$` bcrypt of the HMAC-SHA384 pre-hash).
 */
export async function createStaffUser(shop: TestShop, spec: { login: string; email?: string; roles: string[]; caps?: Record<string, boolean>; displayName?: string; pass?: string }): Promise<StaffUser> {
  const email = spec.email ?? `${spec.login.replace(/[^a-z0-9]/gi, '.')}@example.dk`;
  const id = await shop.seeder.createUser({ login: spec.login, email, roles: spec.roles, pass: spec.pass, displayName: spec.displayName });
  if (spec.caps) await setUserCapabilities(shop, id, { ...Object.fromEntries(spec.roles.map((role) => [role, true])), ...spec.caps });
  const [user] = await rows(shop.db, `SELECT user_pass FROM ${shop.prefix}users WHERE ID = ?`, [id]);
  return { id, login: spec.login, email, userPass: String(user.user_pass) };
}

/** Replaces the raw `{prefix}capabilities` value (a serialized array, or anything else for refusal tests). */
export async function setUserCapabilities(shop: TestShop, userId: number, caps: Record<string, PhpValue> | string): Promise<void> {
  const value = typeof caps === 'string' ? caps : phpSerialize(caps);
  await setUserMeta(shop, userId, `${shop.prefix}capabilities`, value);
}

export async function setUserMeta(shop: TestShop, userId: number, key: string, value: string | null): Promise<void> {
  await shop.db.query(`DELETE FROM ${shop.prefix}usermeta WHERE user_id = ? AND meta_key = ?`, [userId, key]);
  if (value !== null) await shop.db.query(`INSERT INTO ${shop.prefix}usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)`, [userId, key, value]);
}

export async function userMeta(shop: TestShop, userId: number, key: string): Promise<string | null> {
  const found = await rows(shop.db, `SELECT meta_value FROM ${shop.prefix}usermeta WHERE user_id = ? AND meta_key = ?`, [userId, key]);
  return found.length ? String(found[0].meta_value) : null;
}

export interface ApiKey {
  keyId: number;
  consumerKey: string;
  consumerSecret: string;
}

/** A WooCommerce REST API key as WooCommerce generates it (`ck_`/`cs_` + 40 hex; key stored as HMAC-SHA256 with "wc-api"). */
export async function createApiKey(shop: TestShop, userId: number, permissions: 'read' | 'write' | 'read_write'): Promise<ApiKey> {
  return shop.seeder.createApiKey(userId, permissions);
}

// ---------------------------------------------------------------------------------------------------------------
// Application passwords

/** `wp_fast_hash()`: "$generic$" + base64url(BLAKE2b-240 keyed "wp_fast_hash_6.8+"), without padding. */
export function wpFastHash(password: string): string {
  return `$generic$${Buffer.from(blake2b(Buffer.from(password), Buffer.from('wp_fast_hash_6.8+'), 30)).toString('base64url')}`;
}

/** How WordPress shows a new application password: groups of four separated by spaces (`chunk_split`). */
export function displayedApplicationPassword(password: string): string {
  return password.match(/.{1,4}/g)!.join(' ');
}

export interface ApplicationPasswordItem {
  uuid: string;
  app_id: string;
  name: string;
  password: string;
  created: number;
  last_used: number | null;
  last_ip: string | null;
}

/**
 * Adds an application password to the user's `_application_passwords` list (hashed with `wp_fast_hash`
 * unless a ready `hash` is given, e.g. a pre-6.8 `$P$` one) and marks application passwords as in use,
 * as `WP_Application_Passwords::create_new_application_password` does. Returns the plain password.
 */
export async function addApplicationPassword(shop: TestShop, userId: number, options: { name?: string; password?: string; hash?: string } = {}): Promise<string> {
  const password = options.password ?? wpGeneratePassword(24);
  const existing = await userMeta(shop, userId, '_application_passwords');
  const items = existing ? (parseItems(existing)) : [];
  items.push({
    uuid: crypto.randomUUID(), app_id: '', name: options.name ?? 'Helpdesk', password: options.hash ?? wpFastHash(password),
    created: Math.floor(Date.now() / 1000) - 3600, last_used: null, last_ip: null,
  });
  await setUserMeta(shop, userId, '_application_passwords', phpSerialize(items as unknown as PhpValue));
  await setOption(shop.db, shop.prefix, 'using_application_passwords', '1');
  return password;
}

/** Just enough of PHP's unserialize to read back the fixture's own item lists. */
function parseItems(serialized: string): ApplicationPasswordItem[] {
  const items: ApplicationPasswordItem[] = [];
  const re = /a:7:\{s:4:"uuid";s:\d+:"([^"]*)";s:6:"app_id";s:\d+:"([^"]*)";s:4:"name";s:\d+:"([^"]*)";s:8:"password";s:\d+:"([^"]*)";s:7:"created";i:(\d+);s:9:"last_used";(?:N|i:(\d+));s:7:"last_ip";(?:N|s:\d+:"([^"]*)");\}/g;
  for (const m of serialized.matchAll(re)) {
    items.push({ uuid: m[1], app_id: m[2], name: m[3], password: m[4], created: Number(m[5]), last_used: m[6] ? Number(m[6]) : null, last_ip: m[7] ?? null });
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// Logged-in cookie, session tokens, REST nonce

export interface CookieSecrets {
  loggedInKey: string;
  loggedInSalt: string;
}

/** `pass_frag`: characters 8–11 of a `$P$` / `$2y$` hash, else the last four. */
function passFrag(userPass: string): string {
  return userPass.startsWith('$P$') || userPass.startsWith('$2y$') ? userPass.slice(8, 12) : userPass.slice(-4);
}

/** `wp_generate_auth_cookie($user_id, $expiration, 'logged_in', $token)`: `login|expiration|token|hmac`. */
export function loggedInCookieValue(input: { login: string; userPass: string; expiration: number; token: string; secrets?: CookieSecrets }): string {
  const secrets = input.secrets ?? WP_SECRETS;
  const key = crypto.createHmac('md5', secrets.loggedInKey + secrets.loggedInSalt)
    .update(`${input.login}|${passFrag(input.userPass)}|${input.expiration}|${input.token}`).digest('hex');
  const hmac = crypto.createHmac('sha256', key).update(`${input.login}|${input.expiration}|${input.token}`).digest('hex');
  return `${input.login}|${input.expiration}|${input.token}|${hmac}`;
}

/** The Cookie header a browser sends: `wordpress_logged_in_` + md5(siteurl), value URL-encoded as PHP's setcookie() does. */
export function cookieHeader(value: string, siteUrl = SITE_URL): string {
  const name = `wordpress_logged_in_${crypto.createHash('md5').update(siteUrl).digest('hex')}`;
  return `wordpress_test_cookie=WP%20Cookie%20check; ${name}=${encodeURIComponent(value)}`;
}

/** Writes the user's `session_tokens` (keyed by sha256 of each token), as `WP_User_Meta_Session_Tokens` stores them. */
export async function setSessions(shop: TestShop, userId: number, sessions: { token: string; expiration: number }[]): Promise<void> {
  const value: Record<string, PhpValue> = {};
  for (const session of sessions) {
    value[crypto.createHash('sha256').update(session.token).digest('hex')] = {
      expiration: session.expiration, ip: '192.0.2.55', ua: 'Mozilla/5.0 (Macintosh) Safari/605.1.15', login: session.expiration - 14 * 86400,
    };
  }
  await setUserMeta(shop, userId, 'session_tokens', phpSerialize(value));
}

/** `wp_create_nonce('wp_rest')` at `nowSeconds`, or `ticksAgo` half-days earlier. */
export function restNonce(input: { uid: number; token: string; nowSeconds: number; ticksAgo?: number; action?: string; nonceKey?: string; nonceSalt?: string }): string {
  const tick = Math.ceil(input.nowSeconds / 43200) - (input.ticksAgo ?? 0);
  const secret = (input.nonceKey ?? WP_SECRETS.nonceKey) + (input.nonceSalt ?? WP_SECRETS.nonceSalt);
  const hex = crypto.createHmac('md5', secret).update(`${tick}|${input.action ?? 'wp_rest'}|${input.uid}|${input.token}`).digest('hex');
  return hex.slice(-12, -2);
}

export interface StaffSession {
  token: string;
  expiration: number;
  cookie: string;
  nonce: string;
  /** Headers for a request: Cookie, X-WP-Nonce, and HTTPS through the trusted proxy. */
  headers: Record<string, string>;
}

/** Logs the user in as wp_signon would: a new session token, its session entry, the cookie and a REST nonce. */
export async function logIn(shop: TestShop, user: StaffUser, options: { nowSeconds?: number; lifetimeSeconds?: number } = {}): Promise<StaffSession> {
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const token = wpGeneratePassword(43);
  const expiration = now + (options.lifetimeSeconds ?? 2 * 86400);
  await setSessions(shop, user.id, [{ token, expiration }]);
  const cookie = cookieHeader(loggedInCookieValue({ login: user.login, userPass: user.userPass, expiration, token }));
  const nonce = restNonce({ uid: user.id, token, nowSeconds: now });
  return { token, expiration, cookie, nonce, headers: { cookie, 'x-wp-nonce': nonce, 'x-forwarded-proto': 'https' } };
}

// ---------------------------------------------------------------------------------------------------------------
// Posts and Action Scheduler

/** A `cancellation_reason` post (published unless said otherwise). */
export async function createCancellationReason(shop: TestShop, title: string, options: { status?: string; menuOrder?: number } = {}): Promise<number> {
  const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const now = new Date().toISOString().slice(0, 19).replace('T', ' ');
  const [result] = await shop.db.query<mysql.ResultSetHeader>(
    `INSERT INTO ${shop.prefix}posts (post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status,
      comment_status, ping_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_parent, guid,
      menu_order, post_type) VALUES (1, ?, ?, '', ?, '', ?, 'closed', 'closed', ?, '', '', ?, ?, '', 0, '', ?, 'cancellation_reason')`,
    [now, now, title, options.status ?? 'publish', slug, now, now, options.menuOrder ?? 0]);
  return result.insertId;
}

export const ACTION_GROUP = 'wc_subscription_scheduled_event';
export const PAYMENT_HOOK = 'woocommerce_scheduled_subscription_payment';

const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/**
 * A pending renewal as WCS schedules it with Action Scheduler: hook, JSON args `{"subscription_id":N}`,
 * group `wc_subscription_scheduled_event`, priority 5, and the serialized `ActionScheduler_SimpleSchedule`
 * (the form found in real `actionscheduler_actions` dumps).
 */
export async function scheduleRenewalAction(shop: TestShop, subscriptionId: number, when: Date, options: { status?: string; localTime?: string } = {}): Promise<number> {
  const [group] = await rows(shop.db, `SELECT group_id FROM ${shop.prefix}actionscheduler_groups WHERE slug = ?`, [ACTION_GROUP]);
  let groupId = group ? Number(group.group_id) : 0;
  if (!groupId) {
    const [inserted] = await shop.db.query<mysql.ResultSetHeader>(`INSERT INTO ${shop.prefix}actionscheduler_groups (slug) VALUES (?)`, [ACTION_GROUP]);
    groupId = inserted.insertId;
  }
  const ts = Math.floor(when.getTime() / 1000);
  const schedule = `O:30:"ActionScheduler_SimpleSchedule":2:{s:22:"\0*\0scheduled_timestamp";i:${ts};s:41:"\0ActionScheduler_SimpleSchedule\0timestamp";i:${ts};}`;
  const [result] = await shop.db.query<mysql.ResultSetHeader>(
    `INSERT INTO ${shop.prefix}actionscheduler_actions (hook, status, scheduled_date_gmt, scheduled_date_local, priority, args, schedule, group_id, attempts, claim_id)
     VALUES (?, ?, ?, ?, 5, ?, ?, ?, 0, 0)`,
    [PAYMENT_HOOK, options.status ?? 'pending', gmt(when), options.localTime ?? gmt(when), `{"subscription_id":${subscriptionId}}`, schedule, groupId]);
  return result.insertId;
}

export interface ActionRow {
  action_id: number;
  status: string;
  scheduled_date_gmt: string;
  scheduled_date_local: string;
  priority: number;
  schedule: string;
  group: string;
}

export async function renewalActions(shop: TestShop, subscriptionId: number): Promise<ActionRow[]> {
  const found = await rows(shop.db,
    `SELECT a.action_id, a.status, a.scheduled_date_gmt, a.scheduled_date_local, a.priority, a.schedule, g.slug AS \`group\`
     FROM ${shop.prefix}actionscheduler_actions a LEFT JOIN ${shop.prefix}actionscheduler_groups g ON g.group_id = a.group_id
     WHERE a.hook = ? AND a.args = ? ORDER BY a.action_id`, [PAYMENT_HOOK, `{"subscription_id":${subscriptionId}}`]);
  return found.map((row) => ({ ...row, action_id: Number(row.action_id), priority: Number(row.priority) }) as ActionRow);
}

/** Subscription (or order) meta as each store holds it: `{ legacy, hpos }`, each null when that store has no row. */
export async function metaInStores(shop: TestShop, id: number, key: string): Promise<{ legacy: string | null; hpos: string | null }> {
  const [legacy] = await rows(shop.db, `SELECT meta_value FROM ${shop.prefix}postmeta WHERE post_id = ? AND meta_key = ?`, [id, key]);
  const [hpos] = await rows(shop.db, `SELECT meta_value FROM ${shop.prefix}wc_orders_meta WHERE order_id = ? AND meta_key = ?`, [id, key]);
  return { legacy: legacy ? String(legacy.meta_value) : null, hpos: hpos ? String(hpos.meta_value) : null };
}

export async function statusInStores(shop: TestShop, id: number): Promise<{ legacy: string | null; hpos: string | null }> {
  const [legacy] = await rows(shop.db, `SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]);
  const [hpos] = await rows(shop.db, `SELECT status FROM ${shop.prefix}wc_orders WHERE id = ?`, [id]);
  return { legacy: legacy ? String(legacy.post_status) : null, hpos: hpos ? String(hpos.status) : null };
}

export async function notesOf(shop: TestShop, id: number): Promise<{ content: string; author: string }[]> {
  const found = await rows(shop.db, `SELECT comment_content, comment_author FROM ${shop.prefix}comments WHERE comment_post_ID = ? AND comment_type = 'order_note' ORDER BY comment_ID`, [id]);
  return found.map((row) => ({ content: String(row.comment_content), author: String(row.comment_author) }));
}
