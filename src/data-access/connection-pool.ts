import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolConnection } from 'mysql2/promise';

/** The longest anything waits for a pooled connection while every one is in use. */
export const CONNECTION_WAIT_MS = 5000;

/**
 * Row locks are waited for this long at most (InnoDB's default is 50 s). A transaction that times out is
 * retried from the start (see `OrderWriteRepository.transaction`), and a job past its attempts fails
 * with the reason, so a lock held by a stuck session costs seconds, not the worker.
 */
export const LOCK_WAIT_SECONDS = 10;

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

const holding = new AsyncLocalStorage<{ open: boolean }>();

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
  if (holding.getStore()?.open) throw new SecondConnectionError(what);
}

/** mysql2's callback pool, whose fields tell whether a request for a connection would have to wait. */
interface CorePool {
  _allConnections: { length: number };
  _freeConnections: { length: number };
  config: { connectionLimit: number };
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

  const acquire = (): Promise<PoolConnection> => {
    if (!mustWait()) return pool.getConnection();
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new ConnectionWaitTimeoutError(waitMs, core.config.connectionLimit));
      }, waitMs);
      pool.getConnection().then((connection) => {
        // Given up on already: the connection goes straight to whoever waits next.
        if (late) return connection.release();
        clearTimeout(timer);
        resolve(connection);
      }, (error: unknown) => {
        if (late) return;
        clearTimeout(timer);
        reject(error);
      });
    });
  };

  const onOwnConnection = async <T>(run: (connection: PoolConnection) => Promise<T>): Promise<T> => {
    const connection = await acquire();
    try {
      return await run(connection);
    } finally {
      connection.release();
    }
  };

  const guarded: Pool = Object.create(pool);
  guarded.getConnection = () => {
    refuseInsideTransaction('a transaction');
    return acquire();
  };
  // A query or statement runs as the pool runs it, unless it would have to wait: then on a connection taken within the bound.
  const bounded = <K extends 'query' | 'execute'>(method: K, what: string) => ((...args: unknown[]) => {
    refuseInsideTransaction(what);
    if (!mustWait()) return (pool[method] as (...a: unknown[]) => unknown)(...args);
    return onOwnConnection((connection) => (connection[method] as (...a: unknown[]) => Promise<unknown>)(...args));
  }) as Pool[K];
  guarded.query = bounded('query', 'a query');
  guarded.execute = bounded('execute', 'a statement');
  return guarded;
}
