/**
 * A real WordPress + WooCommerce + WooCommerce Subscriptions shop (PHP CLI, no web server) on its own MariaDB
 * database, for tests that compare what the service writes with what WooCommerce itself does. Everything goes
 * through test/woocommerce/php/driver.php; test/woocommerce/run.sh (npm run test:woocommerce) unpacks the
 * releases and exports where they are.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { createDatabase, dropDatabase } from '../../../src/demo/woocommerce-schema';
import { WP_SECRETS } from '../../support/wordpress-fixtures';

export type WooCommerceStack = 'current' | 'older';
export type StorageMode = 'hpos' | 'hpos-sync' | 'posts';
export type Gateway = 'reepay_checkout' | 'vipps_recurring';

export interface WooCommerceShopOptions {
  /** A PHP file loaded as a must-use plugin in this shop (e.g. the shop's companion plugin). */
  companion?: string;
  /**
   * The providers' own plugins (card gateway, wallet) in the shop's plugins folder with the must-use plugin that
   * sends their API calls to the test's fakes; the test activates them (driver command provider_plugins).
   */
  providerPlugins?: boolean;
}

export interface InstallResult {
  timings: Record<string, number>;
  versions: { wordpress: string; woocommerce: string; subscriptions: string; php: string };
  storage: { hpos_authoritative: boolean; sync_enabled: boolean; options: Record<string, string | null> };
  is_duplicate_site: boolean;
  emails_enabled: Record<string, boolean>;
  [key: string]: unknown;
}

export interface FixtureArgs {
  kind: 'order' | 'subscription';
  gateway: Gateway;
  meta?: Record<string, unknown>;
  subscription_meta?: Record<string, unknown>;
  status?: string;
}

export interface FixtureResult {
  customer_id: number;
  physical_product_id: number;
  download_product_id: number;
  subscription_product_id: number;
  /** kind 'order': the order; kind 'subscription': the paid parent order. */
  order_id: number;
  subscription_id?: number;
  renewal_order_id?: number;
}

/** One entry of the recorder's log: an e-mail WordPress would have sent, or a hook that fired. */
export interface RecordedEvent {
  seq: number;
  kind: 'mail' | 'hook';
  /** The WooCommerce e-mail id (e.g. failed_order), 'wp_mail' for other mail, or the hook name. */
  name: string;
  object_id: number | null;
  detail: { args?: unknown[]; to?: string[]; subject?: string; object_class?: string | null; customer?: boolean | null };
}

export interface OrderSnapshot {
  exists: boolean;
  type: string;
  status: string;
  data: Record<string, unknown>;
  meta: Record<string, unknown[]>;
  notes: Array<{ id: number; date_created: string; content: string; customer_note: boolean; added_by: string }>;
  items: Array<{ type: string; data: Record<string, unknown>; meta: Record<string, unknown[]> }>;
  products: Record<string, { stock_quantity: number | null; stock_status: string; total_sales: number }>;
  subscription?: {
    dates: Record<string, string | null>;
    suspension_count: number;
    requires_manual_renewal: boolean;
    is_manual: boolean;
    related_orders: number[];
  };
  /** Orders only: the subscriptions the order belongs to (any relation), refunds oldest first. */
  subscription_ids?: number[];
  total_refunded?: string;
  refunds?: Array<{ id: number; amount: string; reason: string; refunded_by: number; refunded_payment: boolean; date_created: string }>;
  download_permissions: Array<Record<string, string | null>>;
  analytics: { order_stats: Record<string, string | null> | null; order_product_lookup: Array<Record<string, string | null>> };
  actions: Array<{ action_id: number; hook: string; status: string; scheduled_date_gmt: string; group: string; priority: number | null; args: unknown }>;
  recorded: RecordedEvent[];
}

export interface Snapshot {
  by_id: Record<string, OrderSnapshot>;
}

export interface RunActionsResult {
  ran: number;
  hooks: Record<string, number>;
  failures: Array<{ action_id: number; hook: string; message: string }>;
}

export interface WooCommerceShop {
  dbName: string;
  prefix: string;
  stack: WooCommerceStack;
  mode: StorageMode;
  install: InstallResult;
  /** The environment every PHP process of this shop runs with (what bootstrap.php reads). */
  env: NodeJS.ProcessEnv;
  /** This shop's own folder (its wp-content is inside). */
  siteDir: string;
  /** The WordPress tree of the shop's stack. */
  wpDir: string;
  /** Runs one driver command; resolves with its result, rejects with PHP's stderr. */
  php<T = unknown>(command: string, args?: object): Promise<T>;
  fixture(args: FixtureArgs): Promise<FixtureResult>;
  /** One WooCommerce/Subscriptions call on an order or subscription (see SIDECAR_OPS in php/lib/commands.php). */
  call(op: string, id: number, args?: object): Promise<unknown>;
  runActions(horizonSeconds?: number): Promise<RunActionsResult>;
  snapshot(ids: number[]): Promise<Snapshot>;
  log(id?: number): Promise<RecordedEvent[]>;
  logReset(): Promise<void>;
  sql<T = Record<string, string | null>>(query: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

const MARKER = '@@SIDECAR-JSON@@';
const REPO = path.resolve(__dirname, '../../../..');

/** test/woocommerce/php: the driver, the bootstrap and the test must-use plugins. */
export function phpDir(): string {
  return process.env.SIDECAR_WC_PHP_DIR ?? path.join(REPO, 'test/woocommerce/php');
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests with \`npm run test:woocommerce\` (test/woocommerce/run.sh prepares the WordPress/WooCommerce releases)`);
  return value;
}

/** Where the stack's three trees are, as run.sh exported them. */
function stackDirs(stack: WooCommerceStack): { wp: string; wc: string; wcs: string } {
  const suffix = stack === 'current' ? 'CURRENT' : 'OLDER';
  return {
    wp: requiredEnv(`SIDECAR_WP_${suffix}`),
    wc: requiredEnv(`SIDECAR_WC_${suffix}`),
    wcs: requiredEnv(`SIDECAR_WCS_${suffix}`),
  };
}

function adminConnection(): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: process.env.DB_HOST ?? '127.0.0.1',
    port: Number(process.env.DB_PORT ?? 3306),
    user: process.env.DB_USER ?? 'root',
    password: process.env.DB_PASSWORD ?? '',
  });
}

/**
 * Every command is a new PHP process that loads WordPress, WooCommerce and Subscriptions: OPcache's file cache
 * (shared by all shops, beside the unpacked releases) spares compiling those thousands of files each time,
 * about 3x faster per command. PHP compares each file's modification time with the cached one, so a changed
 * file is compiled anew.
 */
export function phpCacheArgs(): string[] {
  const dir = path.join(requiredEnv('SIDECAR_WC_CACHE'), 'opcache');
  return ['-d', 'opcache.enable_cli=1', '-d', `opcache.file_cache=${dir}`, '-d', 'opcache.file_cache_only=1'];
}

/** Spawns `php driver.php command`, JSON on stdin; the answer is the line after the last marker on stdout. */
function runPhp(env: NodeJS.ProcessEnv, command: string, args: object, timeoutMs: number): Promise<unknown> {
  const driver = path.join(phpDir(), 'driver.php');
  return new Promise((resolve, reject) => {
    const child = spawn('php', [...phpCacheArgs(), driver, command], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => { clearTimeout(timer); reject(error); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      const at = stdout.lastIndexOf(MARKER);
      if (code !== 0 || at < 0) {
        // PHP's deprecation notices from the releases come first; the driver's own error is at the end.
        reject(new Error(`php driver.php ${command} failed (${signal ?? `exit ${code}`}):\n${stderr.slice(-6000) || stdout.slice(-2000)}`));
        return;
      }
      try {
        const line = stdout.slice(at + MARKER.length).trim().split('\n')[0];
        resolve((JSON.parse(line) as { result: unknown }).result);
      } catch (error) {
        reject(new Error(`php driver.php ${command}: unreadable answer: ${(error as Error).message}\n${stdout.slice(at, at + 2000)}`));
      }
    });
    child.stdin.end(JSON.stringify(args));
  });
}

/**
 * A new shop on database ss_wc_<name>_<pid>: WordPress installed, WooCommerce and Subscriptions activated and
 * set up as a Danish shop (DKK, 25% VAT included in prices, stock managed), in the given order storage mode.
 */
export async function createWooCommerceShop(
  name: string,
  stack: WooCommerceStack,
  mode: StorageMode,
  options: WooCommerceShopOptions = {},
): Promise<WooCommerceShop> {
  const dbName = `ss_wc_${name}_${process.pid}`.replace(/[^A-Za-z0-9_]/g, '_');
  const prefix = 'wp_';
  const dirs = stackDirs(stack);
  const siteDir = path.join(requiredEnv('SIDECAR_WC_CACHE'), 'sites', dbName);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SIDECAR_WP_DIR: dirs.wp,
    SIDECAR_WC_DIR: dirs.wc,
    // Subscriptions' report cache looks for WooCommerce in /tmp/woocommerce when CI is set, unless told where it is.
    WC_CORE_DIR: dirs.wc,
    SIDECAR_WCS_DIR: dirs.wcs,
    SIDECAR_SITE_DIR: siteDir,
    SIDECAR_DB_NAME: dbName,
    SIDECAR_DB_PREFIX: prefix,
    SIDECAR_DB_HOST: `${process.env.DB_HOST ?? '127.0.0.1'}:${process.env.DB_PORT ?? '3306'}`,
    SIDECAR_DB_USER: process.env.DB_USER ?? 'root',
    SIDECAR_DB_PASSWORD: process.env.DB_PASSWORD ?? '',
    // The same salts as the service's WordPress tests, so a logged-in cookie WordPress makes verifies there.
    SIDECAR_SALT_LOGGED_IN_KEY: WP_SECRETS.loggedInKey,
    SIDECAR_SALT_LOGGED_IN_SALT: WP_SECRETS.loggedInSalt,
    SIDECAR_SALT_NONCE_KEY: WP_SECRETS.nonceKey,
    SIDECAR_SALT_NONCE_SALT: WP_SECRETS.nonceSalt,
    SIDECAR_COMPANION: options.companion ? path.resolve(options.companion) : '',
    SIDECAR_PROVIDER_PLUGINS: options.providerPlugins ? '1' : '',
  };

  const admin = await adminConnection();
  try {
    await dropDatabase(admin, dbName);
    await createDatabase(admin, dbName);
  } finally {
    await admin.end();
  }
  await fs.rm(siteDir, { recursive: true, force: true });
  await fs.mkdir(path.join(requiredEnv('SIDECAR_WC_CACHE'), 'opcache'), { recursive: true });

  const php = <T = unknown>(command: string, args: object = {}, timeoutMs = 5 * 60_000) =>
    runPhp(env, command, args, timeoutMs) as Promise<T>;
  const install = await php<InstallResult>('install', { mode });

  return {
    dbName,
    prefix,
    stack,
    mode,
    install,
    env,
    siteDir,
    wpDir: dirs.wp,
    php,
    fixture: (args) => php<FixtureResult>('fixture', args),
    call: (op, id, args = {}) => php('call', { op, id, args }),
    runActions: (horizonSeconds) => php<RunActionsResult>('run_actions', horizonSeconds === undefined ? {} : { horizon_seconds: horizonSeconds }),
    snapshot: (ids) => php<Snapshot>('snapshot', { ids }),
    log: (id) => php<RecordedEvent[]>('log', id === undefined ? {} : { id }),
    logReset: async () => { await php('log_reset'); },
    sql: <T>(query: string, params: unknown[] = []) => php<T[]>('sql', { query, params }),
    async drop() {
      const conn = await adminConnection();
      try {
        await dropDatabase(conn, dbName);
      } finally {
        await conn.end();
      }
      await fs.rm(siteDir, { recursive: true, force: true });
    },
  };
}
