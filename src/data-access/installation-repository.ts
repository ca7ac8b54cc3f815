import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { WpOption } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement } from './prepared-statement';
import type { Statement } from './transaction';
import { serializedStringList } from '../wordpress/serialized-values';

/** Privileges the service needs on the shop's database: to read and write, and to create and change its own tables. */
export const NEEDED_PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'CREATE', 'ALTER', 'INDEX', 'DROP'] as const;

const SUBSCRIPTIONS_PLUGIN = 'woocommerce-subscriptions/woocommerce-subscriptions.php';
/**
 * Subscriptions' own version as it records it (WC_Subscriptions::PLUGIN_VERSION_OPTION_NAME, written by its upgrader
 * since the plugin bundles subscriptions-core: 7.9.0 for Subscriptions 7.9.0). `woocommerce_subscriptions_active_version`
 * is that bundled library's version instead (8.3.0 in Subscriptions 7.9.0), the only one older releases record.
 */
const SUBSCRIPTIONS_VERSION_OPTION = 'wcs_plugin_version';
const SUBSCRIPTIONS_CORE_VERSION_OPTION = 'woocommerce_subscriptions_active_version';
/** MySQL's and MariaDB's "Table doesn't exist": no WordPress with this prefix in the database. */
const ER_NO_SUCH_TABLE = 1146;
/**
 * Subscriptions' switch for its own retry of failed renewals (WCS_Retry_Manager::is_retry_enabled: on only
 * when exactly 'yes'; its settings default is 'no', so an absent option is off).
 */
const SUBSCRIPTIONS_RETRY_OPTION = 'woocommerce_subscriptions_enable_retry';

/** What `payment-hub doctor` reads of the database server and the shop's installation. */
export class InstallationRepository {
  private readonly pool: Pool;
  private readonly pluginOptions: Statement;

  constructor(private readonly dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.pluginOptions = PreparedStatement.from(dataSource.createQueryBuilder().select('o.name', 'name').addSelect('o.value', 'value')
      .from(WpOption, 'o').where('o.name IN (:names)')
      .setParameters({ names: ['woocommerce_version', SUBSCRIPTIONS_VERSION_OPTION, SUBSCRIPTIONS_CORE_VERSION_OPTION, 'active_plugins', SUBSCRIPTIONS_RETRY_OPTION] })).with({});
  }

  /** The server's version, and its UTC clock as it answered (with the local time around the round trip). */
  async server(): Promise<{ version: string; serverMs: number; sentMs: number; answeredMs: number }> {
    const sentMs = Date.now();
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT VERSION() AS version, DATE_FORMAT(UTC_TIMESTAMP(3), '%Y-%m-%dT%H:%i:%s.%fZ') AS now`);
    const answeredMs = Date.now();
    return { version: String(rows[0].version), serverMs: Date.parse(String(rows[0].now).replace(/(\.\d{3})\d+Z$/, '$1Z')), sentMs, answeredMs };
  }

  /**
   * The needed privileges the connected user lacks, from its global and database grants (MariaDB and MySQL
   * list both in information_schema). Grants on single tables are not seen here.
   */
  async missingPrivileges(): Promise<string[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = @grantee
       UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = @grantee AND ? LIKE TABLE_SCHEMA`.replace(
        /@grantee/g, `CONCAT("'", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'", SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")`),
      [this.dataSource.options.database]);
    const held = new Set(rows.map((row) => String(row.privilege)));
    return held.has('ALL PRIVILEGES') ? [] : NEEDED_PRIVILEGES.filter((privilege) => !held.has(privilege));
  }

  /**
   * The service's migrations not applied yet, by name, read from its migrations table without creating it (TypeORM's
   * own check creates the table, a write that a check must not make); all of them when the table is not there.
   */
  async pendingMigrations(): Promise<string[]> {
    const known = this.dataSource.migrations.map((migration) => migration.name ?? migration.constructor.name);
    const table = this.dataSource.options.migrationsTableName ?? 'migrations';
    let rows: RowDataPacket[];
    try {
      [rows] = await this.pool.query<RowDataPacket[]>(`SELECT name FROM \`${table}\``);
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_NO_SUCH_TABLE) throw error;
      return known;
    }
    const applied = new Set(rows.map((row) => String(row.name)));
    return known.filter((name) => !applied.has(name));
  }

  /**
   * WooCommerce's and Subscriptions' versions as they recorded them, whether Subscriptions is active, and whether
   * its own retry system is on. No options table with this prefix reads as no WooCommerce.
   */
  async plugins(): Promise<{ woocommerce: string | null; subscriptions: string | null; subscriptionsCore: string | null; subscriptionsActive: boolean; subscriptionsRetry: boolean }> {
    let rows: RowDataPacket[];
    try {
      [rows] = await this.pool.query<RowDataPacket[]>(this.pluginOptions.sql, this.pluginOptions.values);
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_NO_SUCH_TABLE) throw error;
      rows = [];
    }
    const value = new Map(rows.map((row) => [String(row.name), String(row.value)]));
    return {
      woocommerce: value.get('woocommerce_version') ?? null,
      subscriptions: value.get(SUBSCRIPTIONS_VERSION_OPTION) ?? null,
      subscriptionsCore: value.get(SUBSCRIPTIONS_CORE_VERSION_OPTION) ?? null,
      subscriptionsActive: serializedStringList(value.get('active_plugins') ?? '').includes(SUBSCRIPTIONS_PLUGIN),
      subscriptionsRetry: value.get(SUBSCRIPTIONS_RETRY_OPTION) === 'yes',
    };
  }
}
