import type { DataSource, SelectQueryBuilder } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { WooCommerceApiKey, WpOption, WpUser, WpUserMeta } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots } from './prepared-statement';
import { RecentlyRead } from './recently-read';
import type { Statement } from './transaction';

export interface WordPressUser {
  id: number;
  login: string;
  email: string;
  displayName: string;
  /** The password hash, whose fragment signs the user's cookies. */
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

/** What a user is read with, as `u`: the fields of a `WordPressUser`. */
function selectUser<T extends SelectQueryBuilder<object>>(builder: T): T {
  return builder.addSelect('u.id', 'id').addSelect('u.login', 'login').addSelect('u.email', 'email')
    .addSelect('u.displayName', 'displayName').addSelect('u.passwordHash', 'passwordHash');
}

function userFrom(row: RowDataPacket): WordPressUser {
  return { id: Number(row.id), login: String(row.login), email: String(row.email), displayName: String(row.displayName), passwordHash: String(row.passwordHash) };
}

/**
 * WordPress users as WordPress reads them (`get_user_by`), their meta, and WooCommerce's REST API keys.
 * Login and email comparisons follow the tables' own collation, as WordPress's queries do.
 */
export class WordPressUserRepository {
  private readonly pool: Pool;
  private readonly userBy: Record<'id' | 'login' | 'email', PreparedStatement<'value'>>;
  private readonly metaOf: PreparedStatement<'userId' | 'keys'>;
  private readonly replaceMeta: PreparedStatement<'value' | 'userId' | 'key' | 'expected'>;
  private readonly apiKey: PreparedStatement<'metaKey' | 'storedKey'>;
  private readonly touchKey: PreparedStatement<'lastAccess' | 'keyId'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const userBy = (property: keyof typeof this.userBy) => PreparedStatement.from(selectUser(dataSource.createQueryBuilder())
      .from(WpUser, 'u').where(`u.${property} = :value`).orderBy('u.id').limit(1).setParameters(slots('value')));
    this.userBy = { id: userBy('id'), login: userBy('login'), email: userBy('email') };
    this.metaOf = PreparedStatement.from(dataSource.createQueryBuilder().select('m.key', 'key').addSelect('m.value', 'value')
      .from(WpUserMeta, 'm').where('m.userId = :userId AND m.key IN (:keys)').orderBy('m.id').setParameters(slots('userId', 'keys')));
    this.replaceMeta = PreparedStatement.from(dataSource.createQueryBuilder().update(WpUserMeta).set({ value: () => ':value' })
      .where('userId = :userId AND key = :key AND value = :expected').orderBy('id').limit(1)
      .setParameters(slots('value', 'userId', 'key', 'expected')));
    this.apiKey = PreparedStatement.from(selectUser(dataSource.createQueryBuilder()
      .select('k.id', 'keyId').addSelect('k.userId', 'userId').addSelect('k.permissions', 'permissions').addSelect('k.consumerSecret', 'consumerSecret'))
      .addSelect((meta) => meta.select('m.value').from(WpUserMeta, 'm').where('m.userId = k.userId AND m.key = :metaKey').orderBy('m.id').limit(1), 'userMeta')
      .from(WooCommerceApiKey, 'k').leftJoin(WpUser, 'u', 'u.id = k.userId')
      .where('k.consumerKey = :storedKey').limit(1).setParameters(slots('metaKey', 'storedKey')));
    this.touchKey = PreparedStatement.from(dataSource.createQueryBuilder().update(WooCommerceApiKey).set({ lastAccess: () => ':lastAccess' })
      .where('id = :keyId').setParameters(slots('lastAccess', 'keyId')));
  }

  async findById(id: number): Promise<WordPressUser | null> {
    return this.findBy('id', id);
  }

  async findByLogin(login: string): Promise<WordPressUser | null> {
    return login === '' ? null : this.findBy('login', login);
  }

  async findByEmail(email: string): Promise<WordPressUser | null> {
    return email === '' ? null : this.findBy('email', email);
  }

  private async findBy(field: keyof typeof this.userBy, value: string | number): Promise<WordPressUser | null> {
    const { sql, values } = this.userBy[field].with({ value });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? userFrom(rows[0]) : null;
  }

  /** The first value of each of `keys` (the row `get_user_meta($id, $key, true)` returns); missing keys are absent. */
  async meta(userId: number, keys: string[]): Promise<Map<string, string>> {
    const { sql, values } = this.metaOf.with({ userId, keys });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    const meta = new Map<string, string>();
    for (const row of rows) if (!meta.has(row.key)) meta.set(String(row.key), String(row.value ?? ''));
    return meta;
  }

  /**
   * Replaces a meta value only if it still holds `expected` (so a concurrent change made in WordPress is
   * never overwritten). Whether the row was replaced.
   */
  async replaceMetaIfUnchanged(userId: number, key: string, expected: string, value: string): Promise<boolean> {
    const { sql, values } = this.replaceMeta.with({ value, userId, key, expected });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows === 1;
  }

  /**
   * The API key whose stored consumer key is `storedKey` (i.e. `wc_api_hash(ck)`), with its user and that
   * user's `metaKey` meta (their capabilities), in one round trip: it runs on every API-key request.
   */
  async apiKeyByStoredKey(storedKey: string, metaKey: string): Promise<StoredApiKey | null> {
    const { sql, values } = this.apiKey.with({ metaKey, storedKey });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    if (!rows.length) return null;
    const row = rows[0];
    const user = row.id === null ? null : userFrom(row);
    return {
      keyId: Number(row.keyId), userId: Number(row.userId), permissions: String(row.permissions), consumerSecret: String(row.consumerSecret),
      user, userMeta: row.userMeta === null || row.userMeta === undefined ? null : String(row.userMeta),
    };
  }

  /** The key's last access, in the site's local time as WooCommerce writes it. */
  async touchApiKey(keyId: number, localDateTime: string): Promise<void> {
    const { sql, values } = this.touchKey.with({ lastAccess: localDateTime, keyId });
    await this.pool.query(sql, values);
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
  private readonly rolesOption: string;
  private readonly optionValues: Statement;
  private readonly options: RecentlyRead<WordPressSiteOptions>;

  constructor(dataSource: DataSource, maxAgeMs = 2000) {
    this.pool = rawPool(dataSource);
    this.rolesOption = `${dataSource.options.entityPrefix ?? ''}user_roles`;
    const names = [this.rolesOption, 'logged_in_key', 'logged_in_salt', 'nonce_key', 'nonce_salt', 'using_application_passwords'];
    this.optionValues = PreparedStatement.from(dataSource.createQueryBuilder().select('o.name', 'name').addSelect('o.value', 'value')
      .from(WpOption, 'o').where('o.name IN (:names)').setParameters({ names })).with({});
    this.options = new RecentlyRead(() => this.read(), maxAgeMs);
  }

  current(): Promise<WordPressSiteOptions> {
    return this.options.get();
  }

  private async read(): Promise<WordPressSiteOptions> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.optionValues.sql, this.optionValues.values);
    const value = new Map(rows.map((row) => [String(row.name), String(row.value)]));
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
