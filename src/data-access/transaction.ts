import type { FieldPacket, PoolConnection, QueryResult } from 'mysql2/promise';
import { LOCK_WAIT_SECONDS, lockWaitSeconds, statementBoundOf } from './connection-pool';

/** Where a statement runs: the pool (each statement on its own) or a transaction. */
export interface Executor {
  query<T extends QueryResult>(sql: string, values?: unknown[]): Promise<[T, FieldPacket[]]>;
}

/** One parameterised SQL statement, to be run later. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/** Statements as one, sent in one round trip; the answer holds one result per statement. */
export function together(statements: Statement[]): Statement {
  return { sql: statements.map((statement) => statement.sql).join(';\n'), values: statements.flatMap((statement) => statement.values) };
}

const START: Statement = { sql: 'START TRANSACTION', values: [] };
/**
 * Every transaction runs READ COMMITTED, so meta writes take no gap locks and changes to neighbouring
 * orders do not deadlock one another, and waits LOCK_WAIT_SECONDS at most for a lock. Both are set
 * once per connection, for its session, the first time a transaction runs on it, rather than sent again
 * with every transaction.
 */
function session(connection: object): Statement[] {
  const bound = statementBoundOf(connection);
  const lockWait = bound === undefined ? LOCK_WAIT_SECONDS : lockWaitSeconds(bound);
  return [
    { sql: 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', values: [] },
    // Row locks (InnoDB) and table metadata locks (an ALTER or LOCK TABLES elsewhere, whose default wait is a year).
    { sql: `SET SESSION innodb_lock_wait_timeout = ${lockWait}, SESSION lock_wait_timeout = ${lockWait}`, values: [] },
  ];
}
const sessionSet = new WeakSet<object>();

/**
 * One transaction on one connection, sent in as few round trips as its work allows. A write whose answer
 * nobody reads (`write()`) waits and travels in the same packet as the next statement whose answer is
 * needed, ahead of it, so the order of statements is kept; START TRANSACTION waits the same way, and
 * COMMIT takes whatever is still waiting. A waiting write that fails, fails the statement it travelled
 * with, and the transaction is rolled back as a whole, as it would have been.
 */
export class Transaction implements Executor {
  /** What starts the transaction, sent with its first statement. */
  private readonly begin: Statement[];
  private waiting: Statement[] = [];
  private begun = false;
  private readonly committed: (() => void)[] = [];

  constructor(private readonly connection: PoolConnection) {
    this.begin = sessionSet.has(connection.connection) ? [START] : [...session(connection.connection), START];
  }

  /** Sends `statement` with the next one whose answer is needed (or with COMMIT). */
  defer(statement: Statement): void {
    this.waiting.push(statement);
  }

  async query<T extends QueryResult>(sql: string, values: unknown[] = []): Promise<[T, FieldPacket[]]> {
    if (this.begun && !this.waiting.length) return this.connection.query<T>(sql, values);
    const ahead = this.take();
    const [results, fields] = await this.send<T[] & QueryResult>([...ahead, { sql, values }]);
    // A statement of several (such as `UPDATE ...; SELECT ...`) keeps its own list of answers.
    const own = results.length - ahead.length;
    return own === 1
      ? [results[ahead.length], fields[ahead.length] as unknown as FieldPacket[]]
      : [results.slice(ahead.length) as unknown as T, fields.slice(ahead.length) as unknown as FieldPacket[]];
  }

  /**
   * Runs `then` once this transaction has committed (never when it is rolled back, nor again when a retry of
   * the whole transaction registers it anew): for telling others of what is now stored.
   */
  afterCommit(then: () => void): void {
    this.committed.push(then);
  }

  /** COMMIT, with what is still waiting and `last` ahead of it, in one round trip; nothing at all when nothing was done. */
  async commit(last?: Statement): Promise<void> {
    if (last) this.defer(last);
    if (this.begun || this.waiting.length) await this.send([...this.take(), { sql: 'COMMIT', values: [] }]);
    for (const then of this.committed.splice(0)) then();
  }

  async rollback(): Promise<void> {
    if (this.begun) await this.connection.query('ROLLBACK');
  }

  /** What waits, after what starts the transaction if it has not started yet. */
  private take(): Statement[] {
    const taken = this.begun ? this.waiting : [...this.begin, ...this.waiting];
    this.waiting = [];
    if (!this.begun) sessionSet.add(this.connection.connection);
    this.begun = true;
    return taken;
  }

  private send<T extends QueryResult>(statements: Statement[]): Promise<[T, FieldPacket[]]> {
    const { sql, values } = together(statements);
    return this.connection.query<T>(sql, values);
  }
}

/** A write whose answer nobody reads: in a transaction it waits for the next round trip; elsewhere it runs now. */
export async function write(db: Executor, sql: string, values: unknown[]): Promise<void> {
  if (db instanceof Transaction) db.defer({ sql, values });
  else await db.query(sql, values);
}
