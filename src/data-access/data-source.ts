import 'reflect-metadata';
import fs from 'node:fs';
import { DataSource } from 'typeorm';
import type { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';
import type { Pool } from 'mysql2/promise';
import { shopEntities } from '../../entities';
import type { Config } from '../config';
import { serviceMigrations } from './migrations';
import { boundedMysql, DEFAULT_STATEMENT_TIMEOUT_MS, guardedPool, type DatabaseBounds } from './connection-pool';

/**
 * One data source for the shop's database. WordPress's `$table_prefix` becomes TypeORM's entity
 * prefix, so every entity (WooCommerce's and the service's own) maps to the site's real tables.
 * `synchronize` stays off: the service never alters WooCommerce's tables. Every connection is bounded
 * (`bounds`: the worker's and the CLI's from DB_STATEMENT_TIMEOUT_MS unless the caller, the API, says otherwise).
 */
export function createShopDataSource(db: Config['db'], poolSize = 10, bounds: DatabaseBounds = backgroundBounds(db)): DataSource {
  const { user, ...connection } = connectionOptions(db);
  return new DataSource({
    type: 'mysql',
    driver: boundedMysql(bounds),
    ...connection,
    username: user,
    entityPrefix: db.tablePrefix,
    entities: shopEntities,
    migrations: serviceMigrations,
    migrationsTableName: `${db.tablePrefix}sidecar_migrations`,
    synchronize: false,
    timezone: 'Z',
    // WordPress keeps local and GMT times side by side; strings keep the driver from shifting either.
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    poolSize,
    // mysql2 otherwise captures a stack trace for every query, a measurable cost on the hot path.
    // Multiple statements let an order and its items come back in one round trip. Every value goes
    // through placeholders and table names come from the validated prefix, so no input reaches SQL.
    extra: { trace: false, multipleStatements: true },
  });
}

/**
 * The bounds of the worker's and the CLI's connections. A database that is up but busy can take seconds
 * to accept a connection; only one that stays silent 10 s is down.
 */
export function backgroundBounds(db: Config['db']): DatabaseBounds {
  return { statementMs: db.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS, connectMs: 10_000 };
}

/**
 * The bounds of the API's connections: short enough that a request answers within the providers' and the
 * helpdesk's timeouts even when the database stops answering (API_DB_STATEMENT_TIMEOUT_MS; a new
 * connection 3 s).
 */
export function apiBounds(config: Pick<Config, 'http'>): DatabaseBounds {
  return { statementMs: config.http.dbStatementTimeoutMs, connectMs: 3000 };
}

/**
 * How to reach the shop's database, as mysql2 takes it: over TCP or the Unix socket WordPress's DB_HOST
 * names, with TLS when MYSQL_CLIENT_FLAGS or DB_SSL_CA ask for it. Every connection the service opens uses it.
 */
export function connectionOptions(db: Config['db']) {
  return {
    ...(db.socketPath ? { socketPath: db.socketPath } : { host: db.host, port: db.port }),
    ...(db.tls ? { ssl: { ...(db.tls.caFile ? { ca: fs.readFileSync(db.tls.caFile) } : {}), rejectUnauthorized: db.tls.verify } } : {}),
    user: db.user,
    password: db.password,
    database: db.name,
    charset: db.charset,
  };
}

/** Where the database is, for messages: its socket, or host and port, and whether over TLS. */
export function databaseAddress(db: Config['db']): string {
  return `${db.socketPath ? `socket ${db.socketPath}` : `${db.host}:${db.port}`}${db.tls ? ' (TLS)' : ''}`;
}

const pools = new WeakMap<object, Pool>();

/**
 * The promise pool under the data source, for hot-path reads that need no entity mapping; one per data
 * source, whose waits for a connection are bounded and which work holding a connection cannot use (see
 * `guardedPool`).
 */
export function rawPool(dataSource: DataSource): Pool {
  const core = (dataSource.driver as MysqlDriver).pool as object;
  let pool = pools.get(core);
  if (!pool) pools.set(core, pool = guardedPool((dataSource.driver as MysqlDriver).pool.promise() as Pool));
  return pool;
}

/** How many connections a pool has open and idle, how many queries wait for one, and the most it opens. */
export interface PoolState {
  open: number;
  idle: number;
  waiting: number;
  limit: number;
}

/** The state of the data source's pool. */
export function poolState(dataSource: DataSource): PoolState | null {
  // mysql2 keeps these in its pool's own fields; read defensively, as they are not a published API.
  const pool = (dataSource.driver as MysqlDriver | undefined)?.pool as unknown as {
    _allConnections?: { length: number }; _freeConnections?: { length: number }; _connectionQueue?: { length: number }; config?: { connectionLimit?: number };
  } | undefined;
  if (!pool?._allConnections || !pool._freeConnections || !pool._connectionQueue) return null;
  return { open: pool._allConnections.length, idle: pool._freeConnections.length, waiting: pool._connectionQueue.length, limit: pool.config?.connectionLimit ?? 0 };
}
