import test, { type ExecutionContext } from 'ava';
import mysql, { type Pool, type RowDataPacket } from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { buildPaymentHub, type PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { buildShopData, type ShopData } from '../../src/entry-points/composition/shop-data';
import { createShopDataSource, rawPool } from '../../src/data-access/data-source';
import { DunningCaseReportRepository } from '../../src/data-access/dunning-case-report-repository';
import { DunningCounts } from '../../src/observability/dunning-metrics';
import { generateBulkOrders } from '../../src/demo/bulk-orders';
import { silentLogger } from '../../src/logger';
import { createTestShop, type TestShop } from '../support/test-shop';

// At rest the worker's periodic checks and the metrics' counts run every few seconds beside the shop's
// database. Each statement they send is taken here from the repositories as they run (every query of the
// data source's pool is recorded), on a shop holding a few thousand rows of each kind that is at rest
// (orders over two years, webhooks PROCESSED, dunning attempts FAILED, reconciliation items CLOSED, changes
// applied, dunning cases ended), and MariaDB's ANALYZE FORMAT=JSON says how it ran: through an index, never a
// full scan of a table that grows with the shop, no temporary table, and a sort only of the rows returned.

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Tables that hold a row per worker process or per counter, never more than a few dozen: a scan of one is a read of what is used. */
const SMALL_TABLES = new Set(['sidecar_workers', 'sidecar_reconcile_counts', 'sidecar_reconcile_state', 'options']);

interface Recorded { sql: string; values: unknown[] }

/** A data source whose pool records each statement sent through it. */
class RecordingSource {
  readonly recorded: Recorded[] = [];
  private constructor(readonly dataSource: DataSource, readonly pool: Pool) {}

  static async open(shop: TestShop, env: Record<string, string>, poolSize: number): Promise<RecordingSource> {
    const dataSource = createShopDataSource(shop.config(env).db, poolSize);
    await dataSource.initialize();
    const pool = rawPool(dataSource);
    const source = new RecordingSource(dataSource, pool);
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      const [first, second] = args;
      if (typeof first === 'string') source.recorded.push({ sql: first, values: Array.isArray(second) ? second : [] });
      else if (first && typeof first === 'object' && 'sql' in first) source.recorded.push({ sql: String(first.sql), values: (first as { values?: unknown[] }).values ?? [] });
      return query(...args);
    }) as Pool['query'];
    return source;
  }

  /** The statements `work` sent. */
  async statementsOf(work: () => Promise<unknown>): Promise<Recorded[]> {
    this.recorded.length = 0;
    await work();
    return this.recorded.splice(0);
  }
}

interface TableAccess { table: string; access: string; index: string | null; rowsRead: number }
interface Analysis { sql: string; tables: TableAccess[]; temporary: boolean; sorted: { rows: number }[]; returned: number }

/** The tables of a statement by the names its plan gives them (an alias, or the table itself), without the site's prefix. */
function tablesByAlias(sql: string, prefix: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [, table, alias] of sql.matchAll(/(?:FROM|JOIN|UPDATE|INTO)\s+`(\w+)`(?:\s+(?:AS\s+)?`(\w+)`)?/gi)) {
    const bare = table.startsWith(prefix) ? table.slice(prefix.length) : table;
    names.set(alias ?? table, bare);
    names.set(table, bare);
  }
  return names;
}

/** Every table access, temporary table and sort in an ANALYZE FORMAT=JSON plan. */
function walk(node: unknown, out: { tables: TableAccess[]; temporary: boolean; sorted: { rows: number }[] }, names: Map<string, string>): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, out, names);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (key === 'table' && value && typeof value === 'object') {
      const table = value as Record<string, unknown>;
      const name = String(table.table_name ?? '');
      // Derived tables and unions' results are the statement's own, not the shop's.
      if (!name.startsWith('<')) {
        const loops = Number(table.r_loops ?? 1);
        const rows = Number(table.r_rows ?? 0);
        out.tables.push({ table: names.get(name) ?? name, access: String(table.access_type), index: (table.key as string) ?? null, rowsRead: Math.round(loops * rows) });
      }
    }
    if (key === 'temporary_table' || (key === 'using_temporary_table' && value === true)) out.temporary = true;
    if (key === 'filesort' && value && typeof value === 'object') {
      // The rows that reached the sort: what its inputs read and kept.
      out.sorted.push({ rows: sortInputRows(value as Record<string, unknown>) });
    }
    walk(value, out, names);
  }
}

/** How many rows a sort took in: the rows its table access kept after its conditions. */
function sortInputRows(sort: Record<string, unknown>): number {
  let total = 0;
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.table && typeof record.table === 'object') {
      const table = record.table as Record<string, unknown>;
      total += Number(table.r_loops ?? 1) * Number(table.r_rows ?? 0) * Number(table.r_filtered ?? 100) / 100;
      return;
    }
    Object.values(record).forEach(visit);
  };
  visit(sort);
  return Math.round(total);
}

/** The statements of a recorded round trip with their values in place (values are escaped: a `;` ending a line is a statement's end). */
function bound(statement: Recorded): Recorded[] {
  return mysql.format(statement.sql, statement.values as Parameters<typeof mysql.format>[1])
    .split(/;\s*\n/).map((sql) => ({ sql, values: [] })).filter((part) => part.sql.trim());
}

async function analyze(db: Pool, prefix: string, statement: Recorded): Promise<Analysis> {
  const { sql } = statement;
  const [rows] = await db.query<RowDataPacket[]>(`ANALYZE FORMAT=JSON ${sql}`);
  const json = JSON.parse(String(Object.values(rows[0])[0]));
  const out = { tables: [] as TableAccess[], temporary: false, sorted: [] as { rows: number }[] };
  walk(json, out, tablesByAlias(sql, prefix));
  // What the statement returns (a SELECT) or changes: how many rows its sort may see at most.
  let returned = 0;
  if (/^\s*\(?\s*SELECT/i.test(statement.sql)) {
    const [result] = await db.query<RowDataPacket[]>(sql);
    returned = result.length;
  }
  return { sql: statement.sql.replace(/\s+/g, ' ').trim(), ...out, returned };
}

/**
 * The statement uses an index on every table that grows with the shop, makes no temporary table, sorts at
 * most the rows it returns, and reads at most `maxRead` rows of any one table.
 */
function assertQuiet(t: ExecutionContext, what: string, analysis: Analysis, maxRead: number): void {
  const label = `${what}: ${analysis.sql.slice(0, 160)}`;
  for (const access of analysis.tables) {
    if (SMALL_TABLES.has(access.table)) continue;
    t.not(access.access, 'ALL', `${label}: a full scan of ${access.table}`);
    t.truthy(access.index, `${label}: no index on ${access.table}`);
    t.true(access.rowsRead <= maxRead, `${label}: ${access.rowsRead} rows of ${access.table} read (at most ${maxRead})`);
  }
  t.false(analysis.temporary, `${label}: a temporary table`);
  for (const sort of analysis.sorted) t.true(sort.rows <= Math.max(analysis.returned, 1), `${label}: ${sort.rows} rows sorted for ${analysis.returned} returned`);
}

const ENV = {
  CARD_GATEWAY_API_KEY: 'priv_idle', CARD_GATEWAY_API_URL: 'http://127.0.0.1:9',
  MOBILE_WALLET_CLIENT_ID: 'idle', MOBILE_WALLET_CLIENT_SECRET: 'idle', MOBILE_WALLET_SUBSCRIPTION_KEY: 'idle', MOBILE_WALLET_MSN: '123456',
  MOBILE_WALLET_API_URL: 'http://127.0.0.1:9',
};

const ORDERS = 4000;
const ROWS = 3000;

/** The service's own tables as a shop at rest has them: a few thousand rows each, all of them done with. */
async function fillAtRest(shop: TestShop, now: Date): Promise<void> {
  const p = shop.prefix;
  const q = (sql: string) => shop.db.query(sql);
  const at = (expression: string) => `FROM_UNIXTIME(${Math.floor(now.getTime() / 1000)}) - INTERVAL ${expression}`;
  await q(`INSERT INTO ${p}sidecar_webhooks (provider, external_id, event_type, status, raw_body, attempts, outcome, created_at, updated_at, processed_at)
    SELECT IF(seq % 4 = 0, 'mobile_wallet', 'card_gateway'), CONCAT('evt-', seq), 'invoice_settled', IF(seq % 20 = 0, 'SKIPPED', 'PROCESSED'),
      CONCAT('{"invoice":"inv-', seq, '"}'), 1, 'done', ${at('seq * 7 MINUTE')}, ${at('seq * 7 MINUTE')}, ${at('seq * 7 MINUTE')} FROM seq_1_to_${ROWS}`);
  // Failed for good: left for the operator, no retry planned.
  await q(`INSERT INTO ${p}sidecar_webhooks (provider, external_id, event_type, status, raw_body, attempts, last_error, created_at, updated_at)
    SELECT 'card_gateway', CONCAT('evt-failed-', seq), 'invoice_settled', 'FAILED', '{}', 5, 'gave up', ${at('seq HOUR')}, ${at('seq HOUR')} FROM seq_1_to_20`);
  await q(`INSERT INTO ${p}sidecar_payments (provider, external_id, status, order_id, amount_minor, currency, created_at, updated_at)
    SELECT IF(seq % 4 = 0, 'mobile_wallet', 'card_gateway'), CONCAT('inv-', seq), IF(seq % 9 = 0, 'FAILED', 'CAPTURED'), 1000000 + seq, 14900, 'DKK',
      ${at('seq * 3 HOUR')}, ${at('seq * 3 HOUR')} FROM seq_1_to_${ROWS}`);
  // An order captured twice a month ago, flagged then (the later capture refunded since).
  await q(`INSERT INTO ${p}sidecar_payments (provider, external_id, status, order_id, amount_minor, currency, created_at, updated_at)
    VALUES ('card_gateway', 'inv-twice', 'CAPTURED', 999999, 14900, 'DKK', ${at('30 DAY')}, ${at('30 DAY')}),
      ('mobile_wallet', 'charge-twice', 'REFUNDED', 999999, 14900, 'DKK', ${at('30 DAY')}, ${at('29 DAY')})`);
  await q(`INSERT INTO ${p}sidecar_payment_meta (payment_id, meta_key, meta_value)
    SELECT twice.id, 'second_capture_of', first.id FROM ${p}sidecar_payments twice JOIN ${p}sidecar_payments first ON first.external_id = 'inv-twice'
    WHERE twice.external_id = 'charge-twice'`);
  await q(`INSERT INTO ${p}sidecar_agreements (provider, external_id, status, customer_handle, subscription_id, created_at, updated_at)
    SELECT IF(seq % 2 = 0, 'mobile_wallet', 'card_gateway'), CONCAT('agr-', seq), 'DISABLED', CONCAT('cust-', seq), 2000000 + seq,
      ${at('seq * 5 HOUR')}, ${at('seq * 5 HOUR')} FROM seq_1_to_1000`);
  await q(`INSERT INTO ${p}sidecar_payment_retries (order_id, subscription_id, payment_id, attempt, status, scheduled_at, idempotency_key, plan, result, created_at, updated_at)
    SELECT 1000000 + seq, 2000000 + seq, seq, 1 + seq % 3, IF(seq % 10 = 0, 'SUCCEEDED', 'FAILED'), ${at('seq * 3 HOUR')}, CONCAT('retry-', seq), 'soft', 'declined',
      ${at('seq * 3 HOUR')}, ${at('seq * 3 HOUR')} FROM seq_1_to_${ROWS}`);
  await q(`INSERT INTO ${p}sidecar_reconcile_items (kind, ref_id, provider, status, opened_at, next_at, checks, failures, created_at, updated_at)
    SELECT 'payment', seq, IF(seq % 4 = 0, 'mobile_wallet', 'card_gateway'), IF(seq % 10 = 0, 'EXPIRED', 'CLOSED'), ${at('seq * 3 HOUR')}, NULL, 3, 0,
      ${at('seq * 3 HOUR')}, ${at('seq * 3 HOUR')} FROM seq_1_to_${ROWS}`);
  await q(`INSERT INTO ${p}sidecar_woocommerce_changes (op, object_id, payload, status, action_id, attempts, created_at, applied_at)
    SELECT 'order_payment_complete', 1000000 + seq, '{}', 'applied', seq, 1, ${at('seq * 10 MINUTE')}, ${at('seq * 10 MINUTE - INTERVAL 5 SECOND')} FROM seq_1_to_${ROWS}`);
  await q(`INSERT INTO ${p}sidecar_dunning_cases (order_id, subscription_id, payment_id, provider, method_key, currency, amount_minor, first_reason, policy, status, attempts,
      opened_at, customer_asked_at, deadline_at, closed_at, recovered_by, recovered_amount_minor, updated_at)
    SELECT 1000000 + seq, 2000000 + seq, seq, IF(seq % 4 = 0, 'mobile_wallet', 'card_gateway'), CONCAT('card_gateway:cust-', seq), 'DKK', 14900,
      IF(seq % 3 = 0, 'credit_card_expired', 'insufficient_funds'), IF(seq % 3 = 0, 'ask_customer', 'retry'), IF(seq % 2 = 0, 'LOST', 'RECOVERED'), 1 + seq % 4,
      ${at('seq * 3 HOUR')}, IF(seq % 3 = 0, ${at('seq * 3 HOUR')}, NULL), IF(seq % 3 = 0, ${at('seq * 3 HOUR - INTERVAL 14 DAY')}, NULL), ${at('seq * 3 HOUR - INTERVAL 2 DAY')},
      IF(seq % 2 = 0, NULL, 'service_retry'), IF(seq % 2 = 0, NULL, 14900), ${at('seq * 3 HOUR')} FROM seq_1_to_${ROWS}`);
  await q(`INSERT INTO ${p}sidecar_workers (name, host, pid, started_at, seen_at, jobs_in_flight, jobs_finished, progress_at)
    VALUES ('idleworker000001', 'app1', 4242, ${at('1 DAY')}, ${at('1 SECOND')}, 0, 12000, ${at('1 HOUR')}),
      ('oldworker0000001', 'app1', 4141, ${at('9 DAY')}, ${at('2 DAY')}, 0, 99, ${at('2 DAY')})`);
  const [tables] = await shop.db.query<RowDataPacket[]>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()');
  await q(`ANALYZE TABLE ${tables.map((row) => `\`${row.name}\``).join(', ')}`);
}

interface Stage { shop: TestShop; source: RecordingSource; hub: PaymentHub; data: ShopData; now: Date }
let posts: Stage;
let hpos: Stage;

async function stage(name: string, storage: { hpos: boolean }): Promise<Stage> {
  const now = new Date();
  const shop = await createTestShop(name, storage);
  await generateBulkOrders(shop.db, shop.prefix, ORDERS, { hpos: storage.hpos, now });
  await fillAtRest(shop, now);
  // One connection: the session's statement counters are then the service's own.
  const source = await RecordingSource.open(shop, ENV, 1);
  const config = shop.config(ENV);
  const data = buildShopData(config, source.dataSource, silentLogger);
  const stageNow = { value: now };
  const hub = buildPaymentHub(config, source.dataSource, silentLogger, 'producer', () => stageNow.value, data);
  return { shop, source, hub, data, get now() { return stageNow.value; }, set now(value: Date) { stageNow.value = value; } };
}

test.before(async () => {
  posts = await stage('idle_statements_posts', { hpos: false });
  hpos = await stage('idle_statements_hpos', { hpos: true });
});

test.after.always(async () => {
  for (const one of [posts, hpos]) {
    if (!one) continue;
    one.data.handOver.close();
    await Promise.allSettled([one.hub.queue.close(500), one.hub.providerLimits.close()]);
    await one.source.dataSource.destroy().catch(() => undefined);
    await one.shop.drop();
  }
});

/**
 * The periodic checks of a worker at rest and of a metrics scrape, each as it runs, with how many rows of one
 * table each statement may read: a count reads every row it counts; anything else at most what a shop at rest
 * has to look at (here: a handful of orders pending in the window, the newest changes before the marks).
 */
function periodicChecks(s: Stage): [string, number, () => Promise<unknown>][] {
  const { hub, data } = s;
  return [
    ['webhook sweep', AT_REST, () => hub.webhooks.dueIds(10, 200)],
    ['dunning attempts', AT_REST, () => hub.runDueRetries.execute()],
    ['dunning deadlines', AT_REST, () => hub.dunningDeadlines.execute()],
    ['heartbeat', AT_REST, () => hub.workers.report({ name: 'idleworker000001', host: 'app1', pid: 4242, upMs: DAY, jobsInFlight: 0, jobsFinished: 12000, sinceProgressMs: 3_600_000 })],
    ['hand-over waiting', AT_REST, () => data.changes.waitingIds(60, 200, s.now)],
    ['changes prune', AT_REST, async () => {
      await data.changes.pruneApplied(new Date(s.now.getTime() - 30 * DAY), 1000);
      await hub.workers.prune();
    }],
    ['reconciliation pass', AT_REST, () => hub.reconciliation.pass()],
    ['second-capture sweep', AT_REST, () => hub.secondCaptures.pass()],
    ['metrics: webhooks', COUNTS, () => hub.webhooks.countsByProviderAndStatus()],
    ['metrics: oldest pending webhook', AT_REST, () => hub.webhooks.oldestPendingAgeSeconds()],
    ['metrics: dunning attempts', COUNTS, () => hub.retries.countsByStatus()],
    ['metrics: hand-over backlog', AT_REST, () => data.changes.backlog(s.now)],
    ['metrics: workers', AT_REST, () => hub.workers.recent()],
    ['metrics: reconciliation', AT_REST, () => hub.reconciliation.metrics()],
    ['metrics: second captures', AT_REST, () => hub.secondCaptureRecords.flagged()],
  ];
}

/** Rows a count may read of one table: every row it counts. */
const COUNTS = ROWS + 100;
/** Rows any other periodic statement may read of one table at rest. */
const AT_REST = 50;

for (const storage of ['posts', 'hpos'] as const) {
  test.serial(`Each periodic statement of a worker at rest and of a metrics scrape uses an index, makes no temporary table and sorts only what it returns (${storage} storage)`, async (t) => {
    const s = storage === 'posts' ? posts : hpos;
    // The first pass puts what is open on the schedule, and each item has had its checks of the day (at rest,
    // none is due for hours); the one measured is a pass a minute later.
    await s.hub.reconciliation.discover(s.now);
    // The second-capture sweep's first pass on a shop looks a week back; the one measured follows it.
    await s.hub.secondCaptures.pass();
    await s.shop.db.query(`UPDATE ${s.shop.prefix}sidecar_reconcile_items SET next_at = ? WHERE next_at IS NOT NULL`, [new Date(s.now.getTime() + DAY).toISOString().slice(0, 23).replace('T', ' ')]);
    s.now = new Date(s.now.getTime() + MINUTE + 1000);
    let seen = 0;
    for (const [what, maxRead, run] of periodicChecks(s)) seen += await checkStatements(t, s, what, maxRead, run);
    t.true(seen >= 20, `${seen} statements looked at`);
  });
}

// The dunning counters read the cases through the opened_at index a page at a time and group them in code:
// the whole table once (and daily), then on each scrape only the cases dunning may still change.
test('The dunning counters of a metrics scrape use an index, make no temporary table and sort only what they return', async (t) => {
  const dunningCounts = new DunningCounts(new DunningCaseReportRepository(posts.source.dataSource), () => posts.now);
  await checkStatements(t, posts, 'metrics: dunning cases, first', COUNTS, () => dunningCounts.read());
  await checkStatements(t, posts, 'metrics: dunning cases', AT_REST, () => dunningCounts.read());
});

/** Runs one periodic check and looks at each statement it sent; how many it looked at. */
async function checkStatements(t: ExecutionContext, s: Stage, what: string, maxRead: number, run: () => Promise<unknown>): Promise<number> {
  let seen = 0;
  const statements = (await s.source.statementsOf(run)).flatMap(bound);
  for (const statement of statements) {
    if (/^\s*(INSERT|SET|SHOW|START|COMMIT|ROLLBACK)\b/i.test(statement.sql) && !/\bSELECT\b/i.test(statement.sql)) {
      // A single-row upsert by its key (the heartbeat): nothing to look for.
      t.regex(statement.sql, /ON DUPLICATE KEY UPDATE|^\s*(SET|SHOW|START|COMMIT|ROLLBACK)/i, `${what}: ${statement.sql}`);
      continue;
    }
    const analysis = await analyze(s.shop.db, s.shop.prefix, statement);
    t.log(`${what}: ${describePlan(analysis)}`);
    assertQuiet(t, what, analysis, maxRead);
    seen += 1;
  }
  return seen;
}

function describePlan(analysis: Analysis): string {
  const tables = analysis.tables.map((a) => `${a.table} ${a.access}${a.index ? `(${a.index})` : ''} ${a.rowsRead} read`).join(', ');
  const sorts = analysis.sorted.length ? `, sorted ${analysis.sorted.map((x) => x.rows).join('+')} for ${analysis.returned} returned` : '';
  return `${tables}${sorts}${analysis.temporary ? ', TEMPORARY TABLE' : ''} :: ${analysis.sql.slice(0, 120)}`;
}

const WRITES = ['Com_insert', 'Com_insert_select', 'Com_replace', 'Com_update', 'Com_update_multi', 'Com_delete', 'Com_delete_multi'];

/** The writing statements the service's one connection has run so far, by kind, and which connection that is. */
async function writesSoFar(s: Stage): Promise<{ connection: number; counts: Record<string, number> }> {
  const [[{ id }]] = await s.source.pool.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  const [rows] = await s.source.pool.query<RowDataPacket[]>(`SHOW SESSION STATUS WHERE Variable_name IN (${WRITES.map(() => '?').join(', ')})`, WRITES);
  return { connection: Number(id), counts: Object.fromEntries(rows.map((row) => [String(row.Variable_name), Number(row.Value)])) };
}

/** The writes a discovery pass at `now` made: each kind's count, and the rows of the reconciliation's tables as they are after it. */
async function discoveryWrites(s: Stage, now: Date) {
  s.now = now;
  const before = await writesSoFar(s);
  await s.hub.reconciliation.discover(now);
  const after = await writesSoFar(s);
  if (after.connection !== before.connection) throw new Error('the service changed connection during the pass: its session counters do not say what it wrote');
  const counts = Object.fromEntries(WRITES.map((name) => [name, after.counts[name] - before.counts[name]]));
  const [items] = await s.shop.db.query<RowDataPacket[]>(`SELECT kind, ref_id, status, opened_at, next_at, updated_at FROM ${s.shop.prefix}sidecar_reconcile_items ORDER BY id`);
  const [marks] = await s.shop.db.query<RowDataPacket[]>(`SELECT name, value, updated_at FROM ${s.shop.prefix}sidecar_reconcile_state ORDER BY name`);
  return { counts, items, marks };
}

const gmt = (date: Date) => date.toISOString().slice(0, 23).replace('T', ' ');

for (const storage of ['posts', 'hpos'] as const) {
  test.serial(`A discovery pass over what did not change writes nothing; a changed order is put on the schedule again with one write (${storage} storage)`, async (t) => {
    const s = storage === 'posts' ? posts : hpos;
    const p = s.shop.prefix;
    // Something new of each kind: a card order awaiting the gateway, a payment with no status yet, an agreement pending.
    const start = new Date(s.now.getTime() + 2 * MINUTE);
    s.now = start;
    const orderId = await s.shop.seeder.createOrder({ status: 'pending', total: '99.00', paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Betalingskort', createdGmt: start });
    await s.shop.db.query(`INSERT INTO ${p}sidecar_payments (provider, external_id, status, order_id, created_at, updated_at) VALUES ('card_gateway', 'inv-new', NULL, 999999, ?, ?)`, [gmt(start), gmt(start)]);
    const [agreement] = await s.shop.db.query<mysql.ResultSetHeader>(`INSERT INTO ${p}sidecar_agreements (provider, external_id, status, created_at, updated_at) VALUES ('mobile_wallet', 'agr-new', 'PENDING', ?, ?)`, [gmt(start), gmt(start)]);
    const [[payment]] = await s.shop.db.query<RowDataPacket[]>(`SELECT id FROM ${p}sidecar_payments WHERE external_id = 'inv-new'`);

    const first = await discoveryWrites(s, new Date(start.getTime() + 1000));
    t.true(first.counts.Com_insert >= 3, `the new payment, agreement and order put on the schedule: ${JSON.stringify(first.counts)}`);
    const refs = first.items.filter((row) => row.status === 'OPEN').map((row) => `${row.kind}:${row.ref_id}`);
    for (const ref of [`order:${orderId}`, `payment:${payment.id}`, `agreement:${agreement.insertId}`]) t.true(refs.includes(ref), `${ref} is open`);

    // A minute later (the orders are looked at again too), nothing having changed: no statement writes.
    const second = await discoveryWrites(s, new Date(start.getTime() + MINUTE + 2000));
    t.deepEqual(second.counts, Object.fromEntries(WRITES.map((name) => [name, 0])), 'no INSERT, UPDATE or DELETE');
    t.deepEqual(second.items, first.items, 'every item as it was, its updated_at included');
    t.deepEqual(second.marks, first.marks, 'every mark as it was, its updated_at included');

    // And again, past the overlap the marks are read back by.
    const third = await discoveryWrites(s, new Date(start.getTime() + 7 * MINUTE));
    t.deepEqual(third.counts, Object.fromEntries(WRITES.map((name) => [name, 0])));
    t.deepEqual(third.items, first.items);

    // The order changes (put on hold): its item opens again from that change, and that is all that is written
    // besides the orders' mark.
    const changed = new Date(Math.floor((start.getTime() + 8 * MINUTE) / 1000) * 1000);
    const stamp = changed.toISOString().slice(0, 19).replace('T', ' ');
    if (storage === 'hpos') await s.shop.db.query(`UPDATE ${p}wc_orders SET status = 'wc-on-hold', date_updated_gmt = ? WHERE id = ?`, [stamp, orderId]);
    else await s.shop.db.query(`UPDATE ${p}posts SET post_status = 'wc-on-hold', post_modified_gmt = ?, post_modified = ? WHERE ID = ?`, [stamp, stamp, orderId]);
    const fourth = await discoveryWrites(s, new Date(changed.getTime() + MINUTE));
    t.deepEqual(fourth.counts, { ...Object.fromEntries(WRITES.map((name) => [name, 0])), Com_insert: 2 }, 'the order\'s item and the orders\' mark');
    const item = fourth.items.find((row) => row.kind === 'order' && Number(row.ref_id) === orderId)!;
    t.is(item.opened_at, `${stamp}.000`, 'its schedule counts from the change');
    t.is(item.next_at, gmt(new Date(changed.getTime() + MINUTE)), 'first asked a minute after it');
    t.deepEqual(fourth.items.filter((row) => !(row.kind === 'order' && Number(row.ref_id) === orderId)), first.items.filter((row) => !(row.kind === 'order' && Number(row.ref_id) === orderId)),
      'the other items untouched');
  });
}
