import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { WooCommerceApiKey, WpOption, WpUser, WpUserMeta } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { RecentlyRead } from './recently-read';

export interface WordPressUser {
  id: number;
  login: string;
  email: string;
  displayName: string;
  /** `user_pass`: the password hash, whose fragment signs the user's cookies. */
  passwordHash: string;
}

export interface StoredApiKey {
  keyId: number;
  userId: number;
  permissions: string;
  consumerSecret: string;
  /** The key's user (null when the user no longer exists) and the first value of its `metaKey` meta. */
  user: WordPressUser | null;
  userMeta: string | null;
}

/**
 * WordPress users as WordPress reads them (`get_user_by`), their meta, and WooCommerce's REST API keys.
 * Login and email comparisons follow the tables' own collation, as WordPress's queries do.
 */
/** A `users` row read with ID, user_login, user_email, display_name and user_pass. */
function userFrom(row: RowDataPacket): WordPressUser {
  return { id: Number(row.ID), login: String(row.user_login), email: String(row.user_email), displayName: String(row.display_name), passwordHash: String(row.user_pass) };
}

export class WordPressUserRepository {
  private readonly pool: Pool;
  private readonly t: { users: string; usermeta: string; apiKeys: string };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = { users: tableOf(dataSource, WpUser), usermeta: tableOf(dataSource, WpUserMeta), apiKeys: tableOf(dataSource, WooCommerceApiKey) };
  }

  async findById(id: number): Promise<WordPressUser | null> {
    return this.findBy('ID', id);
  }

  async findByLogin(login: string): Promise<WordPressUser | null> {
    return login === '' ? null : this.findBy('user_login', login);
  }

  async findByEmail(email: string): Promise<WordPressUser | null> {
    return email === '' ? null : this.findBy('user_email', email);
  }

  private async findBy(column: 'ID' | 'user_login' | 'user_email', value: string | number): Promise<WordPressUser | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ID, user_login, user_email, display_name, user_pass FROM ${this.t.users} WHERE ${column} = ? ORDER BY ID LIMIT 1`, [value]);
    return rows.length ? userFrom(rows[0]) : null;
  }

  /** The first value of each of `keys` (the row `get_user_meta($id, $key, true)` returns); missing keys are absent. */
  async meta(userId: number, keys: string[]): Promise<Map<string, string>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT meta_key, meta_value FROM ${this.t.usermeta} WHERE user_id = ? AND meta_key IN (?) ORDER BY umeta_id`, [userId, keys]);
    const meta = new Map<string, string>();
    for (const row of rows) if (!meta.has(row.meta_key)) meta.set(String(row.meta_key), String(row.meta_value ?? ''));
    return meta;
  }

  /**
   * Replaces a meta value only if it still holds `expected` (so a concurrent change made in WordPress is
   * never overwritten). Whether the row was replaced.
   */
  async replaceMetaIfUnchanged(userId: number, key: string, expected: string, value: string): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE ${this.t.usermeta} SET meta_value = ? WHERE user_id = ? AND meta_key = ? AND meta_value = ? ORDER BY umeta_id LIMIT 1`,
      [value, userId, key, expected]);
    return result.affectedRows === 1;
  }

  /**
   * The API key row whose `consumer_key` column holds `storedKey` (i.e. `wc_api_hash(ck)`), with its user and
   * that user's `metaKey` meta (their capabilities), in one round trip: it runs on every API-key request.
   */
  async apiKeyByStoredKey(storedKey: string, metaKey: string): Promise<StoredApiKey | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT k.key_id, k.user_id, k.permissions, k.consumer_secret, u.ID, u.user_login, u.user_email, u.display_name, u.user_pass,
         (SELECT m.meta_value FROM ${this.t.usermeta} m WHERE m.user_id = k.user_id AND m.meta_key = ? ORDER BY m.umeta_id LIMIT 1) AS user_meta
       FROM ${this.t.apiKeys} k LEFT JOIN ${this.t.users} u ON u.ID = k.user_id
       WHERE k.consumer_key = ? LIMIT 1`, [metaKey, storedKey]);
    if (!rows.length) return null;
    const row = rows[0];
    const user = row.ID === null ? null : userFrom(row);
    return {
      keyId: Number(row.key_id), userId: Number(row.user_id), permissions: String(row.permissions), consumerSecret: String(row.consumer_secret),
      user, userMeta: row.user_meta === null || row.user_meta === undefined ? null : String(row.user_meta),
    };
  }

  /** `last_access`, in the site's local time as WooCommerce writes it. */
  async touchApiKey(keyId: number, localDateTime: string): Promise<void> {
    await this.pool.query(`UPDATE ${this.t.apiKeys} SET last_access = ? WHERE key_id = ?`, [localDateTime, keyId]);
  }
}

/** The site options staff authentication needs: roles, the secrets WordPress generated, and feature flags. */
export interface WordPressSiteOptions {
  /** `{prefix}user_roles`, serialized; null when missing. */
  userRoles: string | null;
  loggedInKey?: string;
  loggedInSalt?: string;
  nonceKey?: string;
  nonceSalt?: string;
  /** `using_application_passwords`: WordPress only checks application passwords once one has existed. */
  applicationPasswordsInUse: boolean;
}

/** Reads the options at most once per `maxAgeMs`, so a role change in WP admin applies within that time. */
export class WordPressSiteRepository {
  private readonly pool: Pool;
  private readonly sql: string;
  private readonly rolesOption: string;
  private readonly options: RecentlyRead<WordPressSiteOptions>;

  constructor(dataSource: DataSource, maxAgeMs = 2000) {
    this.pool = rawPool(dataSource);
    this.rolesOption = `${dataSource.options.entityPrefix ?? ''}user_roles`;
    this.sql = `SELECT option_name, option_value FROM ${tableOf(dataSource, WpOption)} WHERE option_name IN (?)`;
    this.options = new RecentlyRead(() => this.read(), maxAgeMs);
  }

  current(): Promise<WordPressSiteOptions> {
    return this.options.get();
  }

  private async read(): Promise<WordPressSiteOptions> {
    const names = [this.rolesOption, 'logged_in_key', 'logged_in_salt', 'nonce_key', 'nonce_salt', 'using_application_passwords'];
    const [rows] = await this.pool.query<RowDataPacket[]>(this.sql, [names]);
    const value = new Map(rows.map((row) => [String(row.option_name), String(row.option_value)]));
    const inUse = value.get('using_application_passwords');
    const options: WordPressSiteOptions = {
      userRoles: value.get(this.rolesOption) ?? null,
      loggedInKey: value.get('logged_in_key') || undefined,
      loggedInSalt: value.get('logged_in_salt') || undefined,
      nonceKey: value.get('nonce_key') || undefined,
      nonceSalt: value.get('nonce_salt') || undefined,
      // get_network_option's value as PHP would test it: '' and '0' are false.
      applicationPasswordsInUse: inUse !== undefined && inUse !== '' && inUse !== '0',
    };
    return options;
  }
}
