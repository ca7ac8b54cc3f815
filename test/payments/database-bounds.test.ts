import test from 'ava';
import type { DataSource } from 'typeorm';
import { createShopDataSource, poolState, rawPool } from '../../src/data-access/data-source';
import { CHECK_IDLE_AFTER_MS, StatementTimeoutError } from '../../src/data-access/connection-pool';
import { FaultProxy } from '../support/fault-proxy';
import { createTestShop, type TestShop } from '../support/test-shop';

// The database's connections when the network between stops passing bytes without closing anything: each
// statement ends within its bound with its connection dropped, and the pool serves again once the network
// is back, without a restart.

const STATEMENT_MS = 1500;
let shop: TestShop;
let proxy: FaultProxy;
let dataSource: DataSource;

test.before(async () => {
  shop = await createTestShop('database_bounds');
  proxy = await FaultProxy.start({ port: 3306 });
  const config = shop.config({ DB_HOST: proxy.host, DB_PORT: String(proxy.port) });
  dataSource = createShopDataSource(config.db, 4, { statementMs: STATEMENT_MS, connectMs: 1000 });
  await dataSource.initialize();
});

test.after.always(async () => {
  await dataSource?.destroy().catch(() => undefined);
  await proxy?.close();
  await shop?.drop();
});

const timed = async <T>(work: Promise<T>) => {
  const started = Date.now();
  const outcome = await work.then((value) => ({ value }), (error: unknown) => ({ error }));
  return { ...outcome, ms: Date.now() - started };
};

test.serial('When the database vanishes mid-statement, Then the statement fails within its bound naming it, its connection is dropped, and once the network is back the next statement is answered on a new connection', async (t) => {
  const pool = rawPool(dataSource);
  // Two pooled connections, one for each way of sending a statement.
  await Promise.all([pool.query('SELECT SLEEP(0.05)'), pool.query('SELECT SLEEP(0.05)')]);
  proxy.vanish();
  t.teardown(() => proxy.restore());
  const [raw, typeorm] = await Promise.all([timed(pool.query('SELECT 1')), timed(dataSource.query('SELECT 1'))]);
  for (const outcome of [raw, typeorm]) {
    t.true('error' in outcome, 'the statement fails');
    // mysql2's promise wrapper passes the code on, not the error itself.
    t.is(((outcome as { error: unknown }).error as { code?: string }).code, new StatementTimeoutError(STATEMENT_MS).code);
    t.true(outcome.ms >= STATEMENT_MS - 50 && outcome.ms < STATEMENT_MS + 1000, `failed after ${outcome.ms} ms`);
  }
  t.is(poolState(dataSource)!.open, 0, 'the dead connections are no longer pooled');

  const meanwhile = await timed(pool.query('SELECT 1'));
  t.true('error' in meanwhile, 'a new connection during the fault fails too');
  t.is(((meanwhile as { error: unknown }).error as { code?: string }).code, 'ETIMEDOUT');
  t.true(meanwhile.ms < 1000 + STATEMENT_MS + 500, `within its bounds (${meanwhile.ms} ms)`);

  proxy.restore();
  const after = await timed(pool.query('SELECT 1 AS one'));
  t.false('error' in after, 'answered once the network is back');
  t.true(after.ms < 1000, `at once (${after.ms} ms)`);
});

test.serial('When a pooled connection died while it was idle, Then it is pinged before it is handed out, dropped, and the statement runs on a new one', async (t) => {
  const pool = rawPool(dataSource);
  await pool.query('SELECT 1');
  const openBefore = poolState(dataSource)!.open;
  t.true(openBefore >= 1);
  // The idle connection's path dies; new connections get through again.
  proxy.vanish();
  proxy.restore();
  await new Promise((resolve) => setTimeout(resolve, CHECK_IDLE_AFTER_MS + 200));
  const outcome = await timed(dataSource.query('SELECT 2 AS two'));
  t.false('error' in outcome, `answered: ${'error' in outcome ? String(outcome.error) : ''}`);
  t.is(Number((outcome as { value: { two: unknown }[] }).value[0]!.two), 2);
  t.true(outcome.ms < 2000 + 1000, `the ping's bound and a new connection (${outcome.ms} ms)`);
  t.true(proxy.counts.cutOff >= openBefore, 'the old connections were cut off');
});

test.serial('When a connection vanishes inside a transaction that holds a row lock, Then once the server can be reached its session is ended, so the lock goes and the same row can be written again', async (t) => {
  const table = `${shop.prefix}sidecar_bounds_probe`;
  await shop.db.query(`CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY, n int NOT NULL) ENGINE=InnoDB`);
  await shop.db.query(`REPLACE INTO ${table} VALUES (1, 0)`);
  const connection = await rawPool(dataSource).getConnection();
  const threadId = connection.threadId;
  await connection.query('START TRANSACTION');
  await connection.query(`UPDATE ${table} SET n = n + 1 WHERE id = 1`);
  proxy.vanish();
  t.teardown(() => proxy.restore());
  const stuck = await timed(connection.query('SELECT 1'));
  connection.release();
  t.true('error' in stuck, 'the statement on the vanished connection fails');
  const session = async () => ((await shop.db.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [threadId])) as any)[0][0].n;
  t.is(Number(await session()), 1, 'the server still has the session (nothing told it)');

  proxy.restore();
  const started = Date.now();
  while (Number(await session()) && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(Number(await session()), 0, 'the session was ended');
  t.log(`session ended ${Date.now() - started} ms after the network came back`);
  const admin = await shop.db.getConnection();
  try {
    await admin.query('SET SESSION innodb_lock_wait_timeout = 2');
    await admin.query(`UPDATE ${table} SET n = n + 10 WHERE id = 1`);
    const [[row]] = await admin.query(`SELECT n FROM ${table} WHERE id = 1`) as any;
    t.is(Number(row.n), 10, 'the dropped transaction was rolled back, and the row is free');
  } finally {
    admin.release();
  }
});
