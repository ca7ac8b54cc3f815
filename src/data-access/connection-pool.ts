import mysql from 'mysql2';
import mysqlPromise, { type Pool, type PoolConnection } from 'mysql2/promise';
import { ScopedStorage } from '../shared/scoped-storage';
import { AbandonedSessions } from './abandoned-sessions';

/** The longest anything waits for a pooled connection while every one is in use. */
export const CONNECTION_WAIT_MS = 5000;

/**
 * Row locks are waited for this long at most (InnoDB's default is 50 s). A transaction that times out is
 * retried from the start (see `OrderWriteRepository.transaction`), and a job past its attempts fails
 * with the reason, so a lock held by a stuck session costs seconds, not the worker.
 */
export const LOCK_WAIT_SECONDS = 10;

/**
 * A connection's sessions wait for a lock LOCK_WAIT_SECONDS at most, or less where its statements have a
 * shorter bound (the API's): a lock not had in time then fails as a lock wait, which is retried, instead of
 * the bound dropping the connection.
 */
export function lockWaitSeconds(statementMs: number): number {
  return Math.max(1, Math.min(LOCK_WAIT_SECONDS, Math.floor(statementMs / 1000) - 2));
}

/**
 * The bounds of one process's connections to the database. A statement (or a ping, or preparing a
 * statement) not answered within `statementMs` ends with StatementTimeoutError, and its connection is
 * destroyed, never handed out again: a connection that stopped answering without closing (a pulled cable,
 * a firewall dropping the flow, a failover whose old primary vanished) would otherwise hold its caller, and
 * every later one, for good. A new connection not ready within `connectMs` fails the same way.
 */
export interface DatabaseBounds {
  statementMs: number;
  connectMs: number;
}

/** DB_STATEMENT_TIMEOUT_MS unless set: above the lock waits of LOCK_WAIT_SECONDS, which are retried. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 12_000;

/** TCP keep-alive on every connection to the database: the first probe after this much silence. */
export const DATABASE_KEEPALIVE_MS = 10_000;
/** A pooled connection unused this long is asked to answer a ping before it is handed out. */
export const CHECK_IDLE_AFTER_MS = 2000;
/** The longest a ping of an idle connection may take. */
const PING_BOUND_MS = 2000;

/** A statement was not answered within its bound; its connection has been destroyed. */
export class StatementTimeoutError extends Error {
  readonly code = 'ER_STATEMENT_TIMEOUT';
  readonly fatal = true;
  constructor(readonly boundMs: number) {
    super(`the database did not answer within ${boundMs} ms; the connection was dropped`);
  }
}

const UNREACHABLE_CODES = new Set(['ER_STATEMENT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether `error` says the database could not be reached or stopped answering (rather than refusing a
 * statement): a lost or refused connection, a statement's bound passed. Such a failure says nothing about
 * the work itself, which is tried again as soon as the database answers. No connection free in time is not
 * one: the database answers, this process is busy.
 */
export function databaseUnreachable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, fatal, driverError } = error as { code?: unknown; fatal?: unknown; driverError?: unknown };
  // TypeORM wraps the driver's error.
  if (driverError) return databaseUnreachable(driverError);
  return fatal === true || (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('PROTOCOL_')));
}

/**
 * Whether a request that met `error` should be told to come back shortly (503): the database unreachable,
 * or every connection taken for longer than a request may wait.
 */
export function databaseUnavailable(error: unknown): boolean {
  return databaseUnreachable(error) || error instanceof ConnectionWaitTimeoutError;
}

/** What the bounds use of mysql2's callback connection: its command in progress and its way of failing every waiting command at once. */
interface CoreConnection {
  _command: CoreCommand | null;
  threadId: number | null;
  stream: { destroy(): void };
  lastActiveTime?: number;
  _fatalError?: unknown;
  _closing?: boolean;
  _handleNetworkError(error: Error): void;
  ping(callback: (error: Error | null) => void): void;
}
interface CoreCommand {
  constructor: { name: string };
}
interface CorePoolOfConnections {
  _closed: boolean;
  _allConnections: { length: number; get(index: number): CoreConnection };
  on(event: 'connection', listener: (connection: CoreConnection) => void): void;
  getConnection(callback: (error: Error | null, connection?: CoreConnection) => void): void;
}

/**
 * mysql2, as TypeORM's driver, with `bounds` on every connection of every pool it creates: keep-alive,
 * the connect bound, each command's bound, and a ping before a connection idle for CHECK_IDLE_AFTER_MS is
 * handed out. One place for every statement the service sends, whether through TypeORM, the raw pool or
 * a transaction's connection.
 */
export function boundedMysql(bounds: DatabaseBounds): typeof mysql {
  const driver: typeof mysql = Object.create(mysql);
  driver.createPool = ((options: mysql.PoolOptions) => {
    const pool = mysql.createPool({ ...options, connectTimeout: bounds.connectMs, enableKeepAlive: true, keepAliveInitialDelay: DATABASE_KEEPALIVE_MS });
    const { host, port, socketPath, user, password, database, ssl, charset } = options;
    const abandoned = new AbandonedSessions({ host, port, socketPath, user, password, database, ssl, charset }, bounds.connectMs);
    const core = pool as unknown as CorePoolOfConnections;
    core.on('connection', (connection) => statementBounds.set(connection, bounds.statementMs));
    boundCommands(core, bounds.statementMs, abandoned);
    const getConnection = core.getConnection.bind(core);
    core.getConnection = (callback) => handOutLive(getConnection, callback, 0);
    return pool;
  }) as typeof mysql.createPool;
  return driver;
}

/** ER_OPTION_PREVENTS_STATEMENT (--read-only), ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, ER_READ_ONLY_MODE. */
const READ_ONLY_ERRNOS = new Set([1290, 1792, 1836]);

/** The statement bound of each connection the bounds were put on (see transaction.ts for its lock waits). */
const statementBounds = new WeakMap<object, number>();

/** The statement bound of a mysql2 connection, when it is one of a bounded pool's. */
export function statementBoundOf(connection: object): number | undefined {
  return statementBounds.get(connection);
}

/** How often a pool's connections are looked at for a command past its bound (a bound is kept to within this). */
const COMMAND_CHECK_EVERY_MS = 250;

/**
 * Every connection of `pool` is looked at every COMMAND_CHECK_EVERY_MS: a command in progress since longer
 * than its bound (a ping PING_BOUND_MS, any other `statementMs`) ends with StatementTimeoutError, for it and
 * every command queued behind it, and its connection is destroyed. Looking from outside costs a statement
 * nothing (no timer of its own); the first look at a command starts its clock.
 */
function boundCommands(pool: CorePoolOfConnections, statementMs: number, abandoned: AbandonedSessions): void {
  const seen = new WeakMap<object, number>();
  const timer = setInterval(() => {
    if (pool._closed) return clearInterval(timer);
    const now = Date.now();
    const connections = pool._allConnections;
    for (let i = 0; i < connections.length; i += 1) {
      const connection = connections.get(i);
      const command = connection._command;
      // Ended already (failed with the connection, or closed on purpose), or nothing waits on it.
      if (!command || connection._fatalError || connection._closing) continue;
      const since = seen.get(command);
      if (since === undefined) {
        seen.set(command, now);
        continue;
      }
      const boundMs = command.constructor.name === 'Ping' ? Math.min(PING_BOUND_MS, statementMs) : statementMs;
      if (now - since < boundMs) continue;
      connection.stream.destroy();
      connection._handleNetworkError(new StatementTimeoutError(boundMs));
      // Its session may still hold locks on the server, which has not heard of the drop.
      abandoned.add(connection.threadId);
    }
  }, COMMAND_CHECK_EVERY_MS).unref();
}

/** A pooled connection, pinged first when it has been idle; one that does not answer is dropped and another taken. */
function handOutLive(
  getConnection: CorePoolOfConnections['getConnection'],
  callback: (error: Error | null, connection?: CoreConnection) => void,
  dropped: number,
): void {
  getConnection((error, connection) => {
    if (error || !connection) return callback(error);
    if (Date.now() - (connection.lastActiveTime ?? Date.now()) < CHECK_IDLE_AFTER_MS) return callback(null, connection);
    connection.ping((pingError) => {
      if (!pingError) {
        connection.lastActiveTime = Date.now();
        return callback(null, connection);
      }
      // The ping's failure destroyed it. After as many as a pool holds, the next one is a new connection anyway.
      if (dropped >= 20) return callback(pingError);
      handOutLive(getConnection, callback, dropped + 1);
    });
  });
}

/** No pooled connection became free within CONNECTION_WAIT_MS. */
export class ConnectionWaitTimeoutError extends Error {
  readonly code = 'ER_CONNECTION_WAIT_TIMEOUT';
  constructor(waitedMs: number, limit: number) {
    super(`no database connection became free within ${waitedMs} ms (all ${limit} in use)`);
  }
}

/**
 * Work inside a transaction asked the pool for another connection. Were it allowed, enough transactions
 * each holding one connection and waiting for a second would hold every connection and wait forever; so
 * it is refused at once, as the programming error it is.
 */
export class SecondConnectionError extends Error {
  readonly code = 'ER_SECOND_CONNECTION';
  constructor(what: string) {
    super(`${what} asked the pool for a connection inside a transaction, which holds one already; it must run on the transaction's connection`);
  }
}

const holding = new ScopedStorage<{ open: boolean }>();

/**
 * Runs `work` as the holder of one pooled connection: anything it starts that asks the pool for another
 * is refused with SecondConnectionError. Work it leaves behind may use the pool once `work` has ended.
 */
export function holdingConnection<T>(work: () => Promise<T>): Promise<T> {
  const scope = { open: true };
  return holding.run(scope, work).finally(() => { scope.open = false; });
}

/** Throws SecondConnectionError when called from work that holds a pooled connection. */
export function refuseInsideTransaction(what: string): void {
  if (holding.get()?.open) throw new SecondConnectionError(what);
}

/** mysql2's promise wrapper of a pooled connection, as its promise pool's getConnection makes it (exported, not typed). */
const PromisePoolConnection = (mysqlPromise as unknown as { PromisePoolConnection: new (connection: CorePooledConnection, promise: PromiseConstructor) => PoolConnection }).PromisePoolConnection;

/** mysql2's callback pool, whose fields tell whether a request for a connection would have to wait. */
interface CorePool {
  _allConnections: { length: number };
  _freeConnections: { length: number };
  config: { connectionLimit: number };
  getConnection(callback: (error: Error | null, connection?: CorePooledConnection) => void): void;
}

type QueryCallback = (error: (Error & { errno?: number }) | null, rows?: unknown, fields?: unknown) => void;

/** A connection of mysql2's callback pool, as a query on its own connection uses it. */
interface CorePooledConnection {
  query(...args: unknown[]): unknown;
  execute(...args: unknown[]): unknown;
  release(): void;
  destroy(): void;
}

/**
 * The data source's promise pool, with two rules every caller gets without thinking of them: a
 * connection is never asked for by work holding one (see SecondConnectionError), and a wait for one has
 * a bound (CONNECTION_WAIT_MS). A timer is set only when every connection is in use, so a query on an
 * idle pool costs what it did.

 */
export function guardedPool(pool: Pool, waitMs = CONNECTION_WAIT_MS): Pool {
  const core = (pool as unknown as { pool: CorePool }).pool;
  const mustWait = () => core._freeConnections.length === 0 && core._allConnections.length >= core.config.connectionLimit;

  /** A connection of the callback pool, or ConnectionWaitTimeoutError once every one has been in use for `waitMs`. */
  const take = (callback: (error: Error | null, connection?: CorePooledConnection) => void): void => {
    if (!mustWait()) return core.getConnection(callback);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      callback(new ConnectionWaitTimeoutError(waitMs, core.config.connectionLimit));
    }, waitMs);
    core.getConnection((error, connection) => {
      // Given up on already: the connection goes straight to whoever waits next.
      if (late) return connection?.release();
      clearTimeout(timer);
      callback(error, connection);
    });
  };

  /** A connection for work of its own (a transaction), within the same bound, as mysql2's promise pool hands it out. */
  const acquire = (): Promise<PoolConnection> => new Promise((resolve, reject) => {
    take((error, connection) => (error || !connection ? reject(error) : resolve(new PromisePoolConnection(connection, Promise))));
  });

  /**
   * One query or statement on a connection of its own, taken and given back through the callback pool: mysql2's
   * promise connection would add an object, a promise and a turn of its own to each (a tenth of a one-connection
   * order status answer's time in the database client, measured). Answers `[rows, fields]` as mysql2's promise API.
   */
  const onOwnConnection = (method: 'query' | 'execute', args: unknown[]): Promise<[unknown, unknown]> => new Promise((resolve, reject) => {
    take((error, connection) => {
      if (error || !connection) return reject(error);
      const done: QueryCallback = (queryError, rows, fields) => {
        // As mysql2's pool.query does: a server that has turned read-only (a failover) does not get this connection back.
        if (queryError && READ_ONLY_ERRNOS.has(queryError.errno ?? 0)) connection.destroy(); else connection.release();
        if (queryError) reject(queryError); else resolve([rows, fields]);
      };
      try {
        // As mysql2's promise connection passes them: values only when given.
        if (args[1] === undefined) connection[method](args[0], done); else connection[method](args[0], args[1], done);
      } catch (thrown) {
        // Refused before it was sent (arguments mysql2 cannot use): the connection is as it was.
        connection.release();
        reject(thrown);
      }
    });
  });

  const guarded: Pool = Object.create(pool);
  guarded.getConnection = () => {
    refuseInsideTransaction('a transaction');
    return acquire();
  };
  // A query or statement runs on a connection taken (within the bound) and given back, never through mysql2's own
  // pool.query: that one wraps each query's callback in a closure which, for reasons inside V8, kept every query's
  // rows alive through the young-generation collections that followed, until a full one. Under one connection's load
  // each young collection copied and promoted about two thirds of what had been allocated, and paused 5 to 10 ms
  // instead of 0.3 (bench/results/order-status-pool-query-2026-11-29.md).
  const bounded = <K extends 'query' | 'execute'>(method: K, what: string) => ((...args: unknown[]) => {
    refuseInsideTransaction(what);
    // A callback is refused as mysql2's promise pool refuses it.
    if (typeof args[1] === 'function') throw new Error('Callback function is not available with promise clients.');
    return onOwnConnection(method, args);
  }) as unknown as Pool[K];
  guarded.query = bounded('query', 'a query');
  guarded.execute = bounded('execute', 'a statement');
  return guarded;
}
