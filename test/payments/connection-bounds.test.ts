import test from 'ava';
import type { DataSource } from 'typeorm';
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import { ConnectionWaitTimeoutError, SecondConnectionError } from '../../src/data-access/connection-pool';
import { createShopDataSource, rawPool } from '../../src/data-access/data-source';
import { OrderWriteRepository } from '../../src/data-access/order-write-repository';
import { createTestShop, type TestShop } from '../support/test-shop';

// The pool's two rules, against a real database: work holding a connection never waits for a second one,
// and a wait for a connection ends.

let shop: TestShop;
let dataSource: DataSource;
let orders: OrderWriteRepository;

test.before(async () => {
  shop = await createTestShop('connection_bounds');
  dataSource = createShopDataSource(shop.config().db, 2);
  await dataSource.initialize();
  orders = new OrderWriteRepository(dataSource);
});

test.after.always(async () => {
  await dataSource?.destroy();
  await shop?.drop();
});

test.serial('When work inside a transaction asks the pool for a query or a transaction, Then it is refused at once and the transaction rolls back', async (t) => {
  const table = `${shop.prefix}postmeta`;
  const error = await t.throwsAsync(orders.transaction(async (db) => {
    await db.query(`INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (901, 'inside', 'x')`);
    await orders.pool.query('SELECT 1');
  }));
  t.true(error instanceof SecondConnectionError, String(error));
  const nested = await t.throwsAsync(orders.transaction(() => orders.transaction(async () => 'nested')));
  t.true(nested instanceof SecondConnectionError);
  const [rows] = await shop.db.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE post_id = 901`);
  t.is(Number(rows[0].n), 0, 'the write before the refusal was rolled back');
  // After the transaction the same code may use the pool again.
  t.deepEqual((await orders.pool.query<RowDataPacket[]>('SELECT 1 AS one'))[0][0], { one: 1 });
});

test.serial('When 200 transactions read at once on a pool of 2, Then all finish, each reading on its own connection', async (t) => {
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => orders.transaction(async (db) => {
    const [rows] = await db.query<RowDataPacket[]>('SELECT ? AS i', [i]);
    return Number(rows[0].i);
  })));
  t.is(results.length, 200);
});

test.serial('When every connection stays taken, Then a query waits 5 s at most and fails naming the wait; the pool works again once they are given back', async (t) => {
  const pool = rawPool(dataSource);
  const held: PoolConnection[] = [await pool.getConnection(), await pool.getConnection()];
  try {
    const started = Date.now();
    const error = await t.throwsAsync(pool.query('SELECT 1'));
    t.true(error instanceof ConnectionWaitTimeoutError, String(error));
    t.regex(error!.message, /no database connection became free within 5000 ms \(all 2 in use\)/);
    t.true(Date.now() - started < 15_000);
  } finally {
    held.forEach((connection) => connection.release());
  }
  t.deepEqual((await pool.query<RowDataPacket[]>('SELECT 2 AS two'))[0][0], { two: 2 });
});

test.serial('When a connection\'s server turns read-only under it (a failover), Then its write fails and that connection is never handed out again', async (t) => {
  const pool = rawPool(dataSource);
  const table = `${shop.prefix}postmeta`;
  // One connection held, so every statement below runs on the pool's other one until it is destroyed.
  const held = await pool.getConnection();
  try {
    const connectionId = async () => Number((await pool.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id'))[0][0].id);
    const before = await connectionId();
    t.is(await connectionId(), before, 'the free connection is the one handed out again');
    // What a server that turned read-only answers a write: a session that may only read refuses it the same way (1792).
    await pool.query('SET SESSION TRANSACTION READ ONLY');
    const error = await t.throwsAsync(pool.query(`INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (902, 'read_only', 'x')`));
    t.is((error as { errno?: number }).errno, 1792, String(error));
    const after = await connectionId();
    t.not(after, before, 'the read-only connection was not given back to the pool');
    await pool.query(`INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (902, 'read_only', 'x')`);
    const [rows] = await shop.db.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE post_id = 902`);
    t.is(Number(rows[0].n), 1, 'the next write went through on a new connection');
  } finally {
    held.release();
  }
});
