import mysql from 'mysql2/promise';

/**
 * The tables of a WordPress 6.x + WooCommerce 9.x + WooCommerce Subscriptions site, with the column types,
 * defaults and indexes those plugins create (wp-admin/includes/schema.php, WC_Install::get_schema(),
 * OrdersTableDataStore::get_database_schema(), Action Scheduler's store schema, WCS_Retry_Table_Maker),
 * for tests, the demo and benchmarks. Charset and collation are what WordPress picks on MariaDB / MySQL 5.6+.
 * Like a migration, this is DDL, and the one file outside `entities/` that spells these tables: it creates them
 * exactly as the plugins' installers do (index prefix lengths, zero-date defaults, collations), which TypeORM's
 * schema builder would not. Everything that reads or writes them goes through the entities, which
 * `npm run test:woocommerce` holds against a real install.
 */

export type Db = mysql.Connection | mysql.Pool;

const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci';
/** `$wpdb->get_max_index_length()` for utf8mb4. */
const MAX_INDEX = 191;
const ZERO_DATE = "'0000-00-00 00:00:00'";

/** Accepts only what a WordPress `$table_prefix` may contain, so it can be put in SQL unquoted. */
export function checkPrefix(prefix: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(prefix)) throw new Error(`invalid table prefix: ${JSON.stringify(prefix)}`);
  return prefix;
}

function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`invalid database name: ${JSON.stringify(name)}`);
  return name;
}

function schema(p: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${p}users (
      ID bigint(20) unsigned NOT NULL auto_increment,
      user_login varchar(60) NOT NULL default '',
      user_pass varchar(255) NOT NULL default '',
      user_nicename varchar(50) NOT NULL default '',
      user_email varchar(100) NOT NULL default '',
      user_url varchar(100) NOT NULL default '',
      user_registered datetime NOT NULL default ${ZERO_DATE},
      user_activation_key varchar(255) NOT NULL default '',
      user_status int(11) NOT NULL default '0',
      display_name varchar(250) NOT NULL default '',
      PRIMARY KEY (ID),
      KEY user_login_key (user_login),
      KEY user_nicename (user_nicename),
      KEY user_email (user_email)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}usermeta (
      umeta_id bigint(20) unsigned NOT NULL auto_increment,
      user_id bigint(20) unsigned NOT NULL default '0',
      meta_key varchar(255) default NULL,
      meta_value longtext,
      PRIMARY KEY (umeta_id),
      KEY user_id (user_id),
      KEY meta_key (meta_key(${MAX_INDEX}))
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}options (
      option_id bigint(20) unsigned NOT NULL auto_increment,
      option_name varchar(191) NOT NULL default '',
      option_value longtext NOT NULL,
      autoload varchar(20) NOT NULL default 'yes',
      PRIMARY KEY (option_id),
      UNIQUE KEY option_name (option_name),
      KEY autoload (autoload)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}posts (
      ID bigint(20) unsigned NOT NULL auto_increment,
      post_author bigint(20) unsigned NOT NULL default '0',
      post_date datetime NOT NULL default ${ZERO_DATE},
      post_date_gmt datetime NOT NULL default ${ZERO_DATE},
      post_content longtext NOT NULL,
      post_title text NOT NULL,
      post_excerpt text NOT NULL,
      post_status varchar(20) NOT NULL default 'publish',
      comment_status varchar(20) NOT NULL default 'open',
      ping_status varchar(20) NOT NULL default 'open',
      post_password varchar(255) NOT NULL default '',
      post_name varchar(200) NOT NULL default '',
      to_ping text NOT NULL,
      pinged text NOT NULL,
      post_modified datetime NOT NULL default ${ZERO_DATE},
      post_modified_gmt datetime NOT NULL default ${ZERO_DATE},
      post_content_filtered longtext NOT NULL,
      post_parent bigint(20) unsigned NOT NULL default '0',
      guid varchar(255) NOT NULL default '',
      menu_order int(11) NOT NULL default '0',
      post_type varchar(20) NOT NULL default 'post',
      post_mime_type varchar(100) NOT NULL default '',
      comment_count bigint(20) NOT NULL default '0',
      PRIMARY KEY (ID),
      KEY post_name (post_name(${MAX_INDEX})),
      KEY type_status_date (post_type,post_status,post_date,ID),
      KEY post_parent (post_parent),
      KEY post_author (post_author)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}postmeta (
      meta_id bigint(20) unsigned NOT NULL auto_increment,
      post_id bigint(20) unsigned NOT NULL default '0',
      meta_key varchar(255) default NULL,
      meta_value longtext,
      PRIMARY KEY (meta_id),
      KEY post_id (post_id),
      KEY meta_key (meta_key(${MAX_INDEX}))
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}comments (
      comment_ID bigint(20) unsigned NOT NULL auto_increment,
      comment_post_ID bigint(20) unsigned NOT NULL default '0',
      comment_author tinytext NOT NULL,
      comment_author_email varchar(100) NOT NULL default '',
      comment_author_url varchar(200) NOT NULL default '',
      comment_author_IP varchar(100) NOT NULL default '',
      comment_date datetime NOT NULL default ${ZERO_DATE},
      comment_date_gmt datetime NOT NULL default ${ZERO_DATE},
      comment_content text NOT NULL,
      comment_karma int(11) NOT NULL default '0',
      comment_approved varchar(20) NOT NULL default '1',
      comment_agent varchar(255) NOT NULL default '',
      comment_type varchar(20) NOT NULL default 'comment',
      comment_parent bigint(20) unsigned NOT NULL default '0',
      user_id bigint(20) unsigned NOT NULL default '0',
      PRIMARY KEY (comment_ID),
      KEY comment_post_ID (comment_post_ID),
      KEY comment_approved_date_gmt (comment_approved,comment_date_gmt),
      KEY comment_date_gmt (comment_date_gmt),
      KEY comment_parent (comment_parent),
      KEY comment_author_email (comment_author_email(10))
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}commentmeta (
      meta_id bigint(20) unsigned NOT NULL auto_increment,
      comment_id bigint(20) unsigned NOT NULL default '0',
      meta_key varchar(255) default NULL,
      meta_value longtext,
      PRIMARY KEY (meta_id),
      KEY comment_id (comment_id),
      KEY meta_key (meta_key(${MAX_INDEX}))
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}woocommerce_api_keys (
      key_id bigint(20) unsigned NOT NULL auto_increment,
      user_id bigint(20) unsigned NOT NULL,
      description varchar(200) NULL,
      permissions varchar(10) NOT NULL,
      consumer_key char(64) NOT NULL,
      consumer_secret char(43) NOT NULL,
      nonces longtext NULL,
      truncated_key char(7) NOT NULL,
      last_access datetime NULL default null,
      PRIMARY KEY (key_id),
      KEY consumer_key (consumer_key),
      KEY consumer_secret (consumer_secret)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}woocommerce_order_items (
      order_item_id bigint(20) unsigned NOT NULL auto_increment,
      order_item_name text NOT NULL,
      order_item_type varchar(200) NOT NULL DEFAULT '',
      order_id bigint(20) unsigned NOT NULL,
      PRIMARY KEY (order_item_id),
      KEY order_id (order_id)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}woocommerce_order_itemmeta (
      meta_id bigint(20) unsigned NOT NULL auto_increment,
      order_item_id bigint(20) unsigned NOT NULL,
      meta_key varchar(255) default NULL,
      meta_value longtext NULL,
      PRIMARY KEY (meta_id),
      KEY order_item_id (order_item_id),
      KEY meta_key (meta_key(32))
    ) ${TABLE_OPTIONS}`,
    // HPOS. Index lengths as computed for utf8mb4: 191 - 8 - 100 - 1 = 82 and 191 - 20 = 171.
    `CREATE TABLE IF NOT EXISTS ${p}wc_orders (
      id bigint(20) unsigned NOT NULL,
      status varchar(20) null,
      currency varchar(10) null,
      type varchar(20) null,
      tax_amount decimal(26,8) null,
      total_amount decimal(26,8) null,
      customer_id bigint(20) unsigned null,
      billing_email varchar(320) null,
      date_created_gmt datetime null,
      date_updated_gmt datetime null,
      parent_order_id bigint(20) unsigned null,
      payment_method varchar(100) null,
      payment_method_title text null,
      transaction_id varchar(100) null,
      ip_address varchar(100) null,
      user_agent text null,
      customer_note text null,
      PRIMARY KEY (id),
      KEY status (status),
      KEY date_created (date_created_gmt),
      KEY customer_id_billing_email (customer_id, billing_email(171)),
      KEY billing_email (billing_email(${MAX_INDEX})),
      KEY type_status_date (type, status, date_created_gmt),
      KEY parent_order_id (parent_order_id),
      KEY date_updated (date_updated_gmt)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}wc_order_addresses (
      id bigint(20) unsigned auto_increment primary key,
      order_id bigint(20) unsigned NOT NULL,
      address_type varchar(20) null,
      first_name text null,
      last_name text null,
      company text null,
      address_1 text null,
      address_2 text null,
      city text null,
      state text null,
      postcode text null,
      country text null,
      email varchar(320) null,
      phone varchar(100) null,
      KEY order_id (order_id),
      UNIQUE KEY address_type_order_id (address_type, order_id),
      KEY email (email(${MAX_INDEX})),
      KEY phone (phone)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}wc_order_operational_data (
      id bigint(20) unsigned auto_increment primary key,
      order_id bigint(20) unsigned NULL,
      created_via varchar(100) NULL,
      woocommerce_version varchar(20) NULL,
      prices_include_tax tinyint(1) NULL,
      coupon_usages_are_counted tinyint(1) NULL,
      download_permission_granted tinyint(1) NULL,
      cart_hash varchar(100) NULL,
      new_order_email_sent tinyint(1) NULL,
      order_key varchar(100) NULL,
      order_stock_reduced tinyint(1) NULL,
      date_paid_gmt datetime NULL,
      date_completed_gmt datetime NULL,
      shipping_tax_amount decimal(26,8) NULL,
      shipping_total_amount decimal(26,8) NULL,
      discount_tax_amount decimal(26,8) NULL,
      discount_total_amount decimal(26,8) NULL,
      recorded_sales tinyint(1) NULL,
      UNIQUE KEY order_id (order_id),
      KEY order_key (order_key)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}wc_orders_meta (
      id bigint(20) unsigned auto_increment primary key,
      order_id bigint(20) unsigned null,
      meta_key varchar(255),
      meta_value text null,
      KEY meta_key_value (meta_key(100), meta_value(82)),
      KEY order_id_meta_key_meta_value (order_id, meta_key(100), meta_value(82))
    ) ${TABLE_OPTIONS}`,
    // Action Scheduler (bundled with WooCommerce).
    `CREATE TABLE IF NOT EXISTS ${p}actionscheduler_actions (
      action_id bigint(20) unsigned NOT NULL auto_increment,
      hook varchar(191) NOT NULL,
      status varchar(20) NOT NULL,
      scheduled_date_gmt datetime NULL default ${ZERO_DATE},
      scheduled_date_local datetime NULL default ${ZERO_DATE},
      priority tinyint unsigned NOT NULL default '10',
      args varchar(${MAX_INDEX}),
      schedule longtext,
      group_id bigint(20) unsigned NOT NULL default '0',
      attempts int(11) NOT NULL default '0',
      last_attempt_gmt datetime NULL default ${ZERO_DATE},
      last_attempt_local datetime NULL default ${ZERO_DATE},
      claim_id bigint(20) unsigned NOT NULL default '0',
      extended_args varchar(8000) DEFAULT NULL,
      PRIMARY KEY (action_id),
      KEY hook_status_scheduled_date_gmt (hook(163), status, scheduled_date_gmt),
      KEY status_scheduled_date_gmt (status, scheduled_date_gmt),
      KEY scheduled_date_gmt (scheduled_date_gmt),
      KEY args (args(${MAX_INDEX})),
      KEY group_id (group_id),
      KEY last_attempt_gmt (last_attempt_gmt),
      KEY claim_id_status_priority_scheduled_date_gmt (claim_id, status, priority, scheduled_date_gmt),
      KEY status_last_attempt_gmt (status, last_attempt_gmt),
      KEY status_claim_id (status, claim_id)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}actionscheduler_groups (
      group_id bigint(20) unsigned NOT NULL auto_increment,
      slug varchar(255) NOT NULL,
      PRIMARY KEY (group_id),
      KEY slug (slug(${MAX_INDEX}))
    ) ${TABLE_OPTIONS}`,
    // WooCommerce Subscriptions' failed-payment retry store.
    `CREATE TABLE IF NOT EXISTS ${p}wcs_payment_retries (
      retry_id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
      order_id bigint(20) unsigned NOT NULL,
      status varchar(255) NOT NULL,
      date_gmt datetime NOT NULL default ${ZERO_DATE},
      rule_raw text,
      PRIMARY KEY (retry_id),
      KEY order_id (order_id)
    ) ${TABLE_OPTIONS}`,
    // WooCommerce's saved payment methods (WC_Payment_Token), one per card a gateway's plugin saved for a customer.
    `CREATE TABLE IF NOT EXISTS ${p}woocommerce_payment_tokens (
      token_id bigint(20) unsigned NOT NULL auto_increment,
      gateway_id varchar(200) NOT NULL,
      token text NOT NULL,
      user_id bigint(20) unsigned NOT NULL DEFAULT '0',
      type varchar(200) NOT NULL,
      is_default tinyint(1) NOT NULL DEFAULT '0',
      PRIMARY KEY (token_id),
      KEY user_id (user_id)
    ) ${TABLE_OPTIONS}`,
    `CREATE TABLE IF NOT EXISTS ${p}woocommerce_payment_tokenmeta (
      meta_id bigint(20) unsigned NOT NULL auto_increment,
      payment_token_id bigint(20) unsigned NOT NULL,
      meta_key varchar(255) NULL,
      meta_value longtext NULL,
      PRIMARY KEY (meta_id),
      KEY payment_token_id (payment_token_id),
      KEY meta_key (meta_key(32))
    ) ${TABLE_OPTIONS}`,
  ];
}

/**
 * Runs `work` on one connection whose session SQL mode drops the modes WordPress's wpdb also drops
 * (so the zero-date defaults of the core schema are accepted on strict MySQL 8 servers too).
 */
async function withWordPressSqlMode<T>(db: Db, work: (conn: mysql.Connection) => Promise<T>): Promise<T> {
  const conn = 'getConnection' in db ? await db.getConnection() : db;
  const [rows] = await conn.query('SELECT @@SESSION.sql_mode AS mode');
  const previous = String((rows as { mode: string }[])[0].mode);
  const incompatible = ['NO_ZERO_DATE', 'ONLY_FULL_GROUP_BY', 'STRICT_TRANS_TABLES', 'STRICT_ALL_TABLES', 'TRADITIONAL', 'ANSI', 'NO_ZERO_IN_DATE'];
  const lenient = previous.split(',').filter((mode) => mode && !incompatible.includes(mode)).join(',');
  try {
    await conn.query('SET SESSION sql_mode = ?', [lenient]);
    return await work(conn);
  } finally {
    await conn.query('SET SESSION sql_mode = ?', [previous]).catch(() => undefined);
    if ('release' in conn && typeof conn.release === 'function') conn.release();
  }
}

/** Creates (if missing) every WordPress / WooCommerce / WCS table the service reads or writes, with `prefix`. */
export async function createWooCommerceTables(db: Db, prefix: string): Promise<void> {
  const p = checkPrefix(prefix);
  await withWordPressSqlMode(db, async (conn) => {
    for (const statement of schema(p)) await conn.query(statement);
  });
}

/** `update_option()`: inserts or replaces one option. */
/** A WordPress option's value, or null when the option is missing. */
export async function getOption(db: Db, prefix: string, name: string): Promise<string | null> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(`SELECT option_value FROM ${checkPrefix(prefix)}options WHERE option_name = ?`, [name]);
  return rows.length ? String(rows[0].option_value) : null;
}

export async function setOption(db: Db, prefix: string, name: string, value: string, autoload = 'yes'): Promise<void> {
  const p = checkPrefix(prefix);
  await db.query(
    `INSERT INTO ${p}options (option_name, option_value, autoload) VALUES (?, ?, ?)
     ON DUPLICATE KEY UPDATE option_value = VALUES(option_value), autoload = VALUES(autoload)`,
    [name, value, autoload],
  );
}

export async function createDatabase(adminDb: Db, name: string): Promise<void> {
  await adminDb.query(`CREATE DATABASE IF NOT EXISTS \`${checkDatabaseName(name)}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci`);
}

export async function dropDatabase(adminDb: Db, name: string): Promise<void> {
  await adminDb.query(`DROP DATABASE IF EXISTS \`${checkDatabaseName(name)}\``);
}

// ---------------------------------------------------------------------------------------------------------------
// PHP serialize(), as WordPress stores arrays in options and meta.

export type PhpValue = null | boolean | number | string | PhpValue[] | { [key: string]: PhpValue };

/** PHP `serialize()`: string lengths in UTF-8 bytes; integer-like object keys become `i:` keys as in PHP arrays. */
export function phpSerialize(value: PhpValue): string {
  if (value === null) return 'N;';
  if (typeof value === 'boolean') return `b:${value ? 1 : 0};`;
  if (typeof value === 'number') return Number.isInteger(value) ? `i:${value};` : `d:${value};`;
  if (typeof value === 'string') return `s:${Buffer.byteLength(value, 'utf8')}:"${value}";`;
  const entries: [string | number, PhpValue][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  const body = entries.map(([key, item]) => {
    const isIntKey = typeof key === 'number' || /^(0|-?[1-9]\d*)$/.test(key);
    return (isIntKey ? `i:${key};` : phpSerialize(String(key))) + phpSerialize(item);
  }).join('');
  return `a:${entries.length}:{${body}}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Shop settings.

export interface ShopSettings {
  hpos: boolean;
  sync: boolean;
  defaultCountry?: string;
  timezone?: string;
  gmtOffset?: number;
  currency?: string;
  priceDecimals?: number;
  sequentialPlugin?: 'none' | 'free' | 'pro';
  siteUrl?: string;
}

export const WOOCOMMERCE_VERSION = '9.8.5';

const SEQUENTIAL_PLUGINS = {
  none: [],
  free: ['woocommerce-sequential-order-numbers/woocommerce-sequential-order-numbers.php'],
  pro: ['woocommerce-sequential-order-numbers-pro/woocommerce-sequential-order-numbers-pro.php'],
} as const;

/** The options WooCommerce, WCS and WordPress would hold for a shop configured like `settings`. */
export async function configureShop(db: Db, prefix: string, settings: ShopSettings): Promise<void> {
  const p = checkPrefix(prefix);
  const siteUrl = settings.siteUrl ?? 'https://shop.example.dk';
  const plugins = [
    'woocommerce/woocommerce.php',
    'woocommerce-subscriptions/woocommerce-subscriptions.php',
    ...SEQUENTIAL_PLUGINS[settings.sequentialPlugin ?? 'none'],
  ];
  const options: [string, string, string?][] = [
    ['siteurl', siteUrl],
    ['home', siteUrl],
    ['blogname', 'Demo Butik'],
    ['admin_email', 'admin@example.dk'],
    ['timezone_string', settings.timezone ?? 'Europe/Copenhagen'],
    ['gmt_offset', String(settings.gmtOffset ?? 0)],
    ['date_format', 'j. F Y'],
    ['time_format', 'H:i'],
    ['start_of_week', '1'],
    ['WPLANG', 'da_DK'],
    ['db_version', '58975'],
    ['active_plugins', phpSerialize(plugins)],
    [`${p}user_roles`, phpSerialize(userRoles())],
    ['woocommerce_version', WOOCOMMERCE_VERSION],
    ['woocommerce_db_version', WOOCOMMERCE_VERSION],
    // As Subscriptions 7.9.0 records itself: the plugin's version, and its bundled subscriptions-core's.
    ['wcs_plugin_version', '7.9.0'],
    ['woocommerce_subscriptions_active_version', '8.3.0'],
    ['woocommerce_default_country', settings.defaultCountry ?? 'DK'],
    ['woocommerce_currency', settings.currency ?? 'DKK'],
    ['woocommerce_currency_pos', 'right_space'],
    ['woocommerce_price_thousand_sep', '.'],
    ['woocommerce_price_decimal_sep', ','],
    ['woocommerce_price_num_decimals', String(settings.priceDecimals ?? 2)],
    ['woocommerce_calc_taxes', 'yes'],
    ['woocommerce_prices_include_tax', 'yes'],
    ['woocommerce_custom_orders_table_enabled', settings.hpos ? 'yes' : 'no'],
    ['woocommerce_custom_orders_table_data_sync_enabled', settings.sync ? 'yes' : 'no'],
    ['woocommerce_custom_orders_table_created', 'yes'],
    ['woocommerce_subscriptions_is_active', 'yes'],
  ];
  if (settings.sequentialPlugin === 'free' || settings.sequentialPlugin === 'pro') {
    options.push(['woocommerce_seq_order_number_db_version', settings.sequentialPlugin === 'pro' ? '1.12.0' : '1.11.1']);
  }
  for (const [name, value, autoload] of options) await setOption(db, p, name, value, autoload ?? 'yes');
}

// ---------------------------------------------------------------------------------------------------------------
// Roles: WordPress's populate_roles() plus WC_Install::create_roles(), as stored in `{prefix}user_roles`.

const WC_CAPABILITY_TYPES = ['product', 'shop_order', 'shop_coupon'];

function wooCommerceCapabilities(): string[] {
  const caps = ['manage_woocommerce', 'view_woocommerce_reports'];
  for (const type of WC_CAPABILITY_TYPES) {
    caps.push(
      `edit_${type}`, `read_${type}`, `delete_${type}`, `edit_${type}s`, `edit_others_${type}s`, `publish_${type}s`,
      `read_private_${type}s`, `delete_${type}s`, `delete_private_${type}s`, `delete_published_${type}s`,
      `delete_others_${type}s`, `edit_private_${type}s`, `edit_published_${type}s`,
      `manage_${type}_terms`, `edit_${type}_terms`, `delete_${type}_terms`, `assign_${type}_terms`,
    );
  }
  return caps;
}

const levels = (max: number) => Array.from({ length: max + 1 }, (_, level) => `level_${max - level}`);

const EDITOR_CAPS = [
  'moderate_comments', 'manage_categories', 'manage_links', 'upload_files', 'unfiltered_html', 'edit_posts',
  'edit_others_posts', 'edit_published_posts', 'publish_posts', 'edit_pages', 'read', 'edit_others_pages',
  'edit_published_pages', 'publish_pages', 'delete_pages', 'delete_others_pages', 'delete_published_pages',
  'delete_posts', 'delete_others_posts', 'delete_published_posts', 'delete_private_posts', 'edit_private_posts',
  'read_private_posts', 'delete_private_pages', 'edit_private_pages', 'read_private_pages',
];

const ADMIN_ONLY_CAPS = [
  'switch_themes', 'edit_themes', 'activate_plugins', 'edit_plugins', 'edit_users', 'edit_files', 'manage_options',
  'import', 'delete_users', 'create_users', 'unfiltered_upload', 'edit_dashboard', 'update_plugins', 'delete_plugins',
  'install_plugins', 'update_themes', 'install_themes', 'update_core', 'list_users', 'remove_users', 'promote_users',
  'edit_theme_options', 'delete_themes', 'export',
];

const SHOP_MANAGER_CAPS = [
  ...levels(9), 'read', 'read_private_pages', 'read_private_posts', 'edit_posts', 'edit_pages', 'edit_published_posts',
  'edit_published_pages', 'edit_private_pages', 'edit_private_posts', 'edit_others_posts', 'edit_others_pages',
  'publish_posts', 'publish_pages', 'delete_posts', 'delete_pages', 'delete_private_pages', 'delete_private_posts',
  'delete_published_pages', 'delete_published_posts', 'delete_others_posts', 'delete_others_pages',
  'manage_categories', 'manage_links', 'moderate_comments', 'upload_files', 'export', 'import', 'list_users',
  'edit_theme_options',
];

const caps = (names: string[]) => Object.fromEntries(names.map((name) => [name, true] as [string, PhpValue]));

function userRoles(): Record<string, PhpValue> {
  const wc = wooCommerceCapabilities();
  return {
    administrator: { name: 'Administrator', capabilities: caps([...ADMIN_ONLY_CAPS, ...EDITOR_CAPS, ...levels(10), ...wc]) },
    editor: { name: 'Editor', capabilities: caps([...EDITOR_CAPS, ...levels(7)]) },
    author: { name: 'Author', capabilities: caps(['upload_files', 'edit_posts', 'edit_published_posts', 'publish_posts', 'read', 'level_2', 'level_1', 'level_0', 'delete_posts', 'delete_published_posts']) },
    contributor: { name: 'Contributor', capabilities: caps(['edit_posts', 'read', 'level_1', 'level_0', 'delete_posts']) },
    subscriber: { name: 'Subscriber', capabilities: caps(['read', 'level_0']) },
    customer: { name: 'Customer', capabilities: caps(['read']) },
    shop_manager: { name: 'Shop manager', capabilities: caps([...SHOP_MANAGER_CAPS, ...wc]) },
  };
}

/** `user_level` WordPress derives from a role's `level_N` capabilities. */
export function userLevelOf(roles: string[]): number {
  const all = userRoles();
  let level = 0;
  for (const role of roles) {
    const definition = all[role] as { capabilities: Record<string, PhpValue> } | undefined;
    for (const cap of Object.keys(definition?.capabilities ?? {})) {
      const match = /^level_(\d+)$/.exec(cap);
      if (match) level = Math.max(level, Number(match[1]));
    }
  }
  return level;
}
