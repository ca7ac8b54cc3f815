import test from 'ava';
import sinon from 'sinon';
import type { DataSource } from 'typeorm';
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import { createShopDataSource } from '../../src/data-access/data-source';
import { OrderWriteRepository } from '../../src/data-access/order-write-repository';
import { write } from '../../src/data-access/transaction';
import { createTestShop, type TestShop } from '../support/test-shop';

let shop: TestShop;
let dataSource: DataSource;
let orders: OrderWriteRepository;
let table: string;

test.before(async () => {
  shop = await createTestShop('tx_round_trips');
  dataSource = createShopDataSource(shop.config().db, 2);
  await dataSource.initialize();
  orders = new OrderWriteRepository(dataSource);
  table = `${shop.prefix}postmeta`;
});

test.after.always(async () => {
  await dataSource?.destroy();
  await shop?.drop();
});

/** The SQL of every round trip the transactions of `work` send, one string per round trip. */
async function roundTrips(work: () => Promise<unknown>): Promise<{ sent: string[]; outcome: PromiseSettledResult<unknown> }> {
  const sent: string[] = [];
  const getConnection = orders.pool.getConnection.bind(orders.pool);
  const stub = sinon.stub(orders.pool, 'getConnection').callsFake(async () => {
    const connection = await getConnection();
    const query = connection.query.bind(connection) as PoolConnection['query'];
    const counting = sinon.stub(connection, 'query').callsFake(((sql: string, values: unknown) => {
      sent.push(sql);
      return query(sql, values as never);
    }) as never);
    const release = connection.release.bind(connection);
    sinon.stub(connection, 'release').callsFake(() => {
      counting.restore();
      (connection.release as sinon.SinonStub).restore();
      release();
    });
    return connection;
  });
  try {
    const [outcome] = await Promise.allSettled([work()]);
    return { sent, outcome };
  } finally {
    stub.restore();
  }
}

const metaOf = async (postId: number) =>
  ((await shop.db.query<RowDataPacket[]>(`SELECT meta_key, meta_value FROM ${table} WHERE post_id = ? ORDER BY meta_id`, [postId]))[0]).map((row) => `${row.meta_key}=${row.meta_value}`);

test.serial('Writes whose answer is not read travel with the next read, in order, and the rest with COMMIT: two round trips for four statements', async (t) => {
  const { sent, outcome } = await roundTrips(() => orders.transaction(async (db) => {
    await write(db, `INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, [101, 'first', 'a']);
    const [rows] = await db.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE post_id = ?`, [101]);
    await write(db, `INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, [101, 'second', String(rows[0].n)]);
    return Number(rows[0].n);
  }, (n) => ({ sql: `INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, values: [101, 'last', String(n + 1)] })));

  t.deepEqual(outcome, { status: 'fulfilled', value: 1 }, 'the read saw the write sent ahead of it');
  t.is(sent.length, 2);
  t.regex(sent[0], /^(SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;\nSET SESSION innodb_lock_wait_timeout = \d+, SESSION lock_wait_timeout = \d+;\n)?START TRANSACTION;\nINSERT .*;\nSELECT COUNT/s);
  t.regex(sent[1], /^INSERT .*;\nINSERT .*;\nCOMMIT$/s);
  t.deepEqual(await metaOf(101), ['first=a', 'second=1', 'last=2']);
});

test.serial('A write that fails while waiting fails the transaction as a whole: nothing of it is stored, and the error is the write\'s own', async (t) => {
  const { outcome } = await roundTrips(() => orders.transaction(async (db) => {
    await write(db, `INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, [102, 'kept?', 'no']);
    await write(db, `INSERT INTO ${table} (meta_id, post_id, meta_key, meta_value) VALUES (?, ?, ?, ?)`, ['not a number', 102, 'bad', 'x']);
    await write(db, `INSERT INTO ${table} (post_id, meta_key, meta_value) VALUES (?, ?, ?)`, [102, 'after', 'no']);
  }));

  t.is(outcome.status, 'rejected');
  t.regex(String((outcome as PromiseRejectedResult).reason?.message), /Incorrect integer value|Truncated incorrect/i);
  t.deepEqual(await metaOf(102), [], 'the write before the failing one was rolled back with it');
});

test.serial('A transaction that neither reads nor writes sends nothing; one that only reads still commits', async (t) => {
  const idle = await roundTrips(() => orders.transaction(async () => 'nothing'));
  t.deepEqual(idle.outcome, { status: 'fulfilled', value: 'nothing' });
  t.deepEqual(idle.sent, []);

  const reading = await roundTrips(() => orders.transaction(async (db) => (await db.query<RowDataPacket[]>('SELECT 1 AS one'))[0][0].one));
  t.deepEqual(reading.outcome, { status: 'fulfilled', value: 1 });
  t.is(reading.sent.length, 2);
  t.regex(reading.sent[1], /^COMMIT$/);
});

test.serial('Every transaction runs READ COMMITTED, on a new connection and on one that served before; the level is sent once per connection', async (t) => {
  const { sent, outcome } = await roundTrips(() => Promise.all(Array.from({ length: 6 }, () =>
    orders.transaction(async (db) => (await db.query<RowDataPacket[]>('SELECT @@tx_isolation AS level'))[0][0].level))));
  t.deepEqual(outcome, { status: 'fulfilled', value: Array(6).fill('READ-COMMITTED') });
  const levelsSent = sent.filter((sql) => sql.includes('ISOLATION LEVEL')).length;
  t.true(levelsSent >= 1 && levelsSent <= 2, `the pool has two connections; the level was sent ${levelsSent} times`);
});
