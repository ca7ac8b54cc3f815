import mysql from 'mysql2/promise';
import type { Server } from 'restify';
import { loadConfig, type Config } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import { closeRedis, connectRedis } from '../../src/data-access/redis';
import { silentLogger, type Logger } from '../../src/logger';
import { createApi } from '../../src/entry-points/http/server';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase } from '../../src/demo/woocommerce-schema';
import { ShopSeeder } from '../../src/demo/shop-seeder';

export const HELPDESK_KEY = 'helpdesk-test';
export const HELPDESK_SECRET = 'helpdesk-secret-0123456789';

export interface TestShopOptions {
  prefix?: string;
  hpos?: boolean;
  sync?: boolean;
  sequentialPlugin?: 'none' | 'free' | 'pro';
  defaultCountry?: string;
  timezone?: string;
  /** Another MariaDB server than the shared one on 127.0.0.1:3306 (e.g. a PrivateMariaDb); root without a password. */
  host?: string;
  port?: number;
}

export interface TestShop {
  dbName: string;
  prefix: string;
  db: mysql.Pool;
  seeder: ShopSeeder;
  /** The service configuration for this shop, with overrides as environment variables. */
  config(env?: Record<string, string>): Config;
  /** The environment `config` reads, for a service process of its own (a child worker). */
  environment(env?: Record<string, string>): Record<string, string>;
  drop(): Promise<void>;
}

/** A WooCommerce-shaped database of its own for one test file (files run in parallel). */
export async function createTestShop(name: string, options: TestShopOptions = {}): Promise<TestShop> {
  const prefix = options.prefix ?? 'wp_';
  const dbName = `ss_t_${name}_${process.pid}`.replace(/[^A-Za-z0-9_]/g, '_');
  const server = { host: options.host ?? '127.0.0.1', port: options.port ?? 3306 };
  const admin = await mysql.createConnection({ ...server, user: 'root' });
  await dropDatabase(admin, dbName);
  await createDatabase(admin, dbName);
  await admin.end();
  const db = mysql.createPool({ ...server, user: 'root', database: dbName, connectionLimit: 4, dateStrings: true, timezone: 'Z' });
  await createWooCommerceTables(db, prefix);
  const mode = { hpos: options.hpos ?? false, sync: options.sync ?? false };
  await configureShop(db, prefix, {
    ...mode,
    defaultCountry: options.defaultCountry ?? 'DK',
    timezone: options.timezone ?? 'Europe/Copenhagen',
    sequentialPlugin: options.sequentialPlugin ?? 'none',
    siteUrl: 'https://shop.example.dk',
  });
  const environment = (env: Record<string, string> = {}): Record<string, string> => ({
    DB_NAME: dbName,
    DB_TABLE_PREFIX: prefix,
    HELPDESK_API_KEY: HELPDESK_KEY,
    HELPDESK_API_SECRET: HELPDESK_SECRET,
    PORT: '0',
    SHOP_URL: 'https://shop.example.dk',
    ...(options.host === undefined && options.port === undefined ? {} : { DB_HOST: server.host, DB_PORT: String(server.port) }),
    ...env,
  });
  const config = (env: Record<string, string> = {}) => loadConfig(environment(env));
  const migrations = createShopDataSource(config().db, 1);
  await migrations.initialize();
  await migrations.runMigrations({ transaction: 'each' });
  await migrations.destroy();
  return {
    dbName,
    prefix,
    db,
    seeder: new ShopSeeder(db, prefix, mode, options.timezone ?? 'Europe/Copenhagen'),
    config,
    environment,
    async drop() {
      await db.end();
      const conn = await mysql.createConnection({ ...server, user: 'root' });
      await dropDatabase(conn, dbName);
      await conn.end();
    },
  };
}

export interface RunningApi {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

/** The API in this process, on a free port, with its own database pool and Redis client; `clock` pins the time its use cases see. */
export async function startApi(config: Config, log: Logger = silentLogger, clock?: () => Date): Promise<RunningApi> {
  const dataSource = createShopDataSource(config.db, 4);
  await dataSource.initialize();
  const redis = await connectRedis(config.redisUrl, log, 1000);
  const api = await createApi({ config, dataSource, redis, log, clock });
  const server = api.server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const scheme = config.http.tlsCertFile ? 'https' : 'http';
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    server,
    async stop() {
      await api.close();
      await Promise.allSettled([dataSource.destroy(), closeRedis(redis)]);
    },
  };
}
