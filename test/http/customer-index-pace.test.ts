import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config';
import { SWEEP_MAX_BATCH, SWEEP_MIN_BATCH, sweepBatchSize } from '../../src/customers/refresh-customer-contacts.use-case';
import type { ContactIndexState } from '../../src/data-access/customer-contact-index';
import { generateBulkOrders } from '../../src/demo/bulk-orders';
import { request } from '../support/http-client';
import { startPacedWorker } from '../support/payment-hub-fixture';
import { parsePrometheusText, total } from '../support/prometheus-text';
import { openStaffServices } from '../support/staff-api';
import { createTestShop, startApi, type TestShop } from '../support/test-shop';

/**
 * The customer index's rolling sweep at CUSTOMER_INDEX_SWEEP_SECONDS's pace, on a fake clock: how many orders
 * it has read by each moment of a pass, when a pass ends and the next starts, what it read (the rows it
 * counts, checked against the shop's own row counts), edits reaching the index while the sweep is slow or
 * off, and the figures on /metrics. Posts storage needs more than the 5,000 newest IDs the change scan
 * re-reads, so an edit to an older order is one only the sweep catches.
 */

/** CUSTOMER_INDEX_SWEEP_SECONDS's default: a pass a day. */
const DAY = 86_400;
const HPOS_ORDERS = 600;
const LEGACY_ORDERS = 6000;
const START = Date.parse('2026-12-01T00:00:00.000Z');
const gmt = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

let clockMs = START;
const clock = () => new Date(clockMs);

interface Store {
  name: 'hpos' | 'legacy';
  shop: TestShop;
  services: Awaited<ReturnType<typeof openStaffServices>>;
  firstId: number;
  lastId: number;
  orders: number;
}
const stores: Partial<Record<'hpos' | 'legacy', Store>> = {};

async function open(name: 'hpos' | 'legacy', orders: number): Promise<Store> {
  const shop = await createTestShop(`cipace_${name}`, { hpos: name === 'hpos' });
  const { firstId, lastId } = await generateBulkOrders(shop.db, shop.prefix, orders, { hpos: name === 'hpos', now: new Date(START - 86_400_000) });
  const services = await openStaffServices(shop.config(), clock);
  return { name, shop, services, firstId, lastId, orders };
}

test.before(async () => {
  const [hpos, legacy] = await Promise.all([open('hpos', HPOS_ORDERS), open('legacy', LEGACY_ORDERS)]);
  Object.assign(stores, { hpos, legacy });
});

test.after.always(async () => {
  for (const store of Object.values(stores)) {
    await store?.services.close();
    await store?.shop.drop();
  }
});

const refresh = (store: Store, sweepSeconds?: number) => store.services.refreshCustomerContacts.execute({ budgetMs: 60_000, sweepSeconds });
const status = (store: Store): Promise<ContactIndexState> => store.services.refreshCustomerContacts.status();

/** The index from nothing, built at `clockMs` (as `npm run migrate` does, without a sweep); the sweep's first pass is then due a pass time later. */
async function freshIndex(store: Store): Promise<void> {
  await store.shop.db.query(`DELETE FROM ${store.shop.prefix}sidecar_customer_contacts`);
  await store.shop.db.query(`DELETE FROM ${store.shop.prefix}sidecar_customer_contact_index`);
  while (!(await status(store)).built) await refresh(store);
}

/** Moves the fake clock `seconds` on in steps of `step`, the worker's refresh running at each; `each` sees every step. */
async function runFor(store: Store, seconds: number, step: number, sweepSeconds: number | undefined, each?: (state: ContactIndexState) => void | Promise<void>): Promise<void> {
  for (let passed = 0; passed < seconds; passed += step) {
    clockMs += step * 1000;
    await refresh(store, sweepSeconds);
    await each?.(await status(store));
  }
}

/** Changes an order's billing email where its store keeps it, stamped with the fake clock's time as WooCommerce would. */
async function editEmail(store: Store, id: number, email: string): Promise<void> {
  const { db, prefix } = store.shop;
  if (store.name === 'hpos') {
    await db.query(`UPDATE ${prefix}wc_order_addresses SET email = ? WHERE order_id = ? AND address_type = 'billing'`, [email, id]);
    await db.query(`UPDATE ${prefix}wc_orders SET billing_email = ?, date_updated_gmt = ? WHERE id = ?`, [email, gmt(clockMs), id]);
  } else {
    await db.query(`UPDATE ${prefix}postmeta SET meta_value = ? WHERE post_id = ? AND meta_key = '_billing_email'`, [email, id]);
    await db.query(`UPDATE ${prefix}posts SET post_modified_gmt = ? WHERE ID = ?`, [gmt(clockMs), id]);
  }
}

async function indexedEmail(store: Store, id: number): Promise<string | null> {
  const [rows] = await store.shop.db.query<any[]>(`SELECT email FROM ${store.shop.prefix}sidecar_customer_contacts WHERE order_id = ?`, [id]);
  return rows[0]?.email ?? null;
}

/**
 * The rows a whole pass reads, counted in the shop's own tables: each order counted once at the pass's start,
 * then its rows (HPOS: the order and its address rows; posts: the post and its meta rows of the index's five
 * keys) and its index entry twice (compared, and listed for the range's deletions).
 */
async function expectedPassRows(store: Store): Promise<number> {
  const { db, prefix } = store.shop;
  const [[{ indexed }]] = await db.query<any[]>(`SELECT COUNT(*) AS indexed FROM ${prefix}sidecar_customer_contacts`);
  if (store.name === 'hpos') {
    const [[{ addresses }]] = await db.query<any[]>(`SELECT COUNT(*) AS addresses FROM ${prefix}wc_order_addresses`);
    return store.orders * 2 + Number(addresses) + Number(indexed) * 2;
  }
  const [[{ meta }]] = await db.query<any[]>(
    `SELECT COUNT(*) AS meta FROM ${prefix}postmeta WHERE meta_key IN ('_billing_email', '_billing_phone', '_billing_country', '_shipping_country', '_customer_user')`);
  return store.orders * 2 + Number(meta) + Number(indexed) * 2;
}

test.serial('The batch is the store\'s orders over the pass time, a batch a minute, within 100 and 2,000', (t) => {
  t.is(sweepBatchSize(1_000_000, 86_400_000), 695, 'a million orders a day: 695 a minute');
  t.is(sweepBatchSize(600, 360_000), 100);
  t.is(sweepBatchSize(6000, 360_000), 1000);
  t.is(sweepBatchSize(600, 86_400_000), SWEEP_MIN_BATCH, 'a small store: a few batches a pass, not an order at a time');
  t.is(sweepBatchSize(10_000_000, 3_600_000), SWEEP_MAX_BATCH);
});

for (const name of ['hpos', 'legacy'] as const) {
  test.serial(`${name}: a pass reads the store's N orders at N per pass time, never more, ends within the pass time, and the next starts a pass time after`, async (t) => {
    const store = stores[name]!;
    const P = 360;
    await freshIndex(store);
    const built = clockMs;
    const batch = sweepBatchSize(store.orders, P * 1000);
    await runFor(store, P - 5, 5, P, (state) => { t.is(state.sweep.finishedAt, built, 'no pass before a pass time after the build'); });

    clockMs += 5000;
    await refresh(store, P);
    let state = await status(store);
    const start = state.sweep.startedAt!;
    t.is(start, built + P * 1000, 'the first pass starts a pass time after the build');
    t.is(state.sweep.orders, store.orders, 'counted at its start');
    t.is(state.sweep.endId, store.lastId);

    const reads: [number, number][] = [];
    await runFor(store, P, 5, P, (s) => {
      if (s.sweep.startedAt === start) reads.push([(clockMs - start) / 1000, s.sweep.ordersRead]);
    });
    for (const [elapsed, read] of reads) {
      const share = (store.orders * elapsed) / P;
      t.true(read <= share, `at ${elapsed} s, ${read} read: never more than N × elapsed / P (${share})`);
      t.true(read >= share - batch, `at ${elapsed} s, ${read} read: about N × elapsed / P (${share}), one batch behind at most`);
    }
    t.is(reads[reads.length - 1][1], store.orders - batch, 'all but the last batch read by the step before the end');
    state = await status(store);
    t.is(state.sweep.passes, 1);
    t.is(state.sweep.lastPassMs, P * 1000, 'the whole pass took the pass time, its last batch read at its end');
    t.is(state.sweep.lastPassRows, await expectedPassRows(store));
    // The next pass started as this one ended, a pass time after it started: its orders counted, none read yet.
    t.is(state.sweep.startedAt, start + P * 1000);
    t.is(state.sweep.finishedAt, null);
    t.is(state.sweep.ordersRead, 0);
    t.is(state.sweep.rowsRead, state.sweep.lastPassRows + store.orders);
    t.is(state.sweepCursor, 0);
  });

  test.serial(`${name}: a worker away for half a pass, or the pass time shortened mid-pass, does not make the sweep read faster`, async (t) => {
    const store = stores[name]!;
    const P = 3600;
    await freshIndex(store);
    clockMs += P * 1000;
    await refresh(store, P);
    const start = (await status(store)).sweep.startedAt!;
    await runFor(store, P / 4, 10, P);
    const before = (await status(store)).sweep.ordersRead;
    const batch = sweepBatchSize(store.orders, P * 1000);
    const gap = (P * batch) / store.orders;

    clockMs += (P / 2) * 1000; // the worker stopped: nothing runs
    const reads: number[] = [];
    await runFor(store, P / 8, 10, P, (state) => { reads.push(state.sweep.ordersRead); });
    const caughtUp = reads[reads.length - 1] - before;
    t.true(caughtUp <= batch * (1 + Math.ceil((P / 8) / gap)), `${caughtUp} read in ${P / 8} s after the stop: the pace, not the time lost`);

    // 3600 s → 360 s mid-pass: the next batches follow at the new pace from the last one, not all at once.
    const at = (await status(store)).sweep.ordersRead;
    clockMs += 10_000;
    await refresh(store, 360);
    const read = (await status(store)).sweep.ordersRead - at;
    t.true(read <= sweepBatchSize(store.orders, 360_000), `${read} read in the first 10 s at the shorter pace: a batch at most`);
    t.is((await status(store)).sweep.startedAt, start, 'the same pass');
  });
}

test.serial('hpos: while the sweep is slow (a pass a day), an edited order reaches the index at the next run, wherever the sweep stands', async (t) => {
  const store = stores.hpos!;
  await freshIndex(store);
  clockMs += DAY * 1000;
  await refresh(store, DAY);
  await runFor(store, 6 * 3600, 60, DAY);
  const { sweep } = await status(store);
  t.true(sweep.ordersRead > 0 && sweep.ordersRead < store.orders, 'a pass under way');
  const swept = store.firstId;
  const notYet = store.lastId;
  await editEmail(store, swept, 'swept-already@example.dk');
  await editEmail(store, notYet, 'not-swept-yet@example.dk');
  clockMs += 5000;
  await refresh(store, DAY);
  t.is(await indexedEmail(store, swept), 'swept-already@example.dk', 'through the orders\' date-updated index, one run (5 s) later');
  t.is(await indexedEmail(store, notYet), 'not-swept-yet@example.dk');
  t.is((await status(store)).sweep.ordersRead, sweep.ordersRead, 'the sweep went no faster for it');
});

test.serial('legacy: an edit to one of the newest 5,000 IDs reaches the index at the next run; to an older order, by the sweep within a pass time', async (t) => {
  const store = stores.legacy!;
  const P = 3600;
  await freshIndex(store);
  clockMs += P * 1000;
  await refresh(store, P);
  const batch = sweepBatchSize(store.orders, P * 1000);
  const gap = (P * batch) / store.orders;
  // Just after the sweep has read the oldest order, the worst moment for an edit to it.
  await runFor(store, gap, 5, P);
  t.is((await status(store)).sweep.ordersRead, batch);
  await editEmail(store, store.firstId, 'old-order@example.dk');
  await editEmail(store, store.lastId, 'recent-order@example.dk');
  const edited = clockMs;
  clockMs += 5000;
  await refresh(store, P);
  t.is(await indexedEmail(store, store.lastId), 'recent-order@example.dk', 'the newest IDs\' modified dates are re-read each run');
  t.not(await indexedEmail(store, store.firstId), 'old-order@example.dk', 'posts storage has no index on the modified date: only the sweep finds it');
  let foundAt = 0;
  for (let i = 0; i < (P + 2 * gap) / 10 && !foundAt; i += 1) {
    clockMs += 10_000;
    await refresh(store, P);
    if (await indexedEmail(store, store.firstId) === 'old-order@example.dk') foundAt = clockMs;
  }
  t.true(foundAt > 0, 'the sweep found the edit');
  const waited = (foundAt - edited) / 1000;
  t.true(waited <= P + 10, `found ${waited} s after the edit: within the pass time (${P} s) and the worker's next run`);
  t.true(waited >= P - gap, `found ${waited} s after the edit: by the next pass, not before`);
});

for (const name of ['hpos', 'legacy'] as const) {
  test.serial(`${name}: CUSTOMER_INDEX_SWEEP_SECONDS=0 reads nothing for the sweep, edits still reach the index, and a deletion waits until the sweep is on again`, async (t) => {
    const store = stores[name]!;
    await freshIndex(store);
    const before = await status(store);
    await runFor(store, 3 * DAY, 3600, 0);
    await runFor(store, 3 * DAY, 3600, undefined); // as npm run migrate calls it
    t.deepEqual((await status(store)).sweep, before.sweep, 'no pass, nothing counted, not a row read for the sweep');

    const recent = store.lastId;
    const doomed = store.lastId - 1;
    await editEmail(store, recent, `edited-${name}@example.dk`);
    // Deleted for good, as "Delete permanently" does.
    const { db, prefix } = store.shop;
    if (name === 'hpos') {
      await db.query(`DELETE FROM ${prefix}wc_orders WHERE id = ?`, [doomed]);
      await db.query(`DELETE FROM ${prefix}wc_order_addresses WHERE order_id = ?`, [doomed]);
    } else {
      await db.query(`DELETE FROM ${prefix}posts WHERE ID = ?`, [doomed]);
      await db.query(`DELETE FROM ${prefix}postmeta WHERE post_id = ?`, [doomed]);
    }
    store.orders -= 1;
    clockMs += 5000;
    await refresh(store, 0);
    t.is(await indexedEmail(store, recent), `edited-${name}@example.dk`);
    t.not(await indexedEmail(store, doomed), null, 'an order deleted for good leaves nothing to follow: its entry stays (every hit is re-checked against the order)');

    // On again: a pass is due at once (the last started long ago), and removes the entry.
    const P = 360;
    await runFor(store, P + 5, 5, P);
    t.is(await indexedEmail(store, doomed), null);
    t.is((await status(store)).sweep.passes, 1);
  });
}

test.serial('/metrics shows the sweep\'s rows read and passes, the share of the pass done, and the last pass\'s duration and rows', async (t) => {
  const store = stores.hpos!;
  const P = 360;
  await freshIndex(store);
  const api = await startApi(store.shop.config());
  try {
    const scrape = async () => parsePrometheusText((await request(api.url, 'GET', '/metrics')).text);
    let samples = await scrape();
    t.is(total(samples, 'sidecar_customer_index_sweep_passes_total', { store: 'hpos' }), 0);
    t.is(total(samples, 'sidecar_customer_index_sweep_rows_read_total', { store: 'hpos' }), 0);
    t.is(total(samples, 'sidecar_customer_index_sweep_position', { store: 'hpos' }), 1, 'the build read it all: no pass under way');

    clockMs += P * 1000;
    await refresh(store, P); // the first pass starts
    await runFor(store, P / 2, 5, P);
    const half = await status(store);
    samples = await scrape();
    t.is(total(samples, 'sidecar_customer_index_sweep_position', { store: 'hpos' }), half.sweep.ordersRead / store.orders);
    t.true(half.sweep.ordersRead / store.orders <= 0.5);
    t.is(total(samples, 'sidecar_customer_index_sweep_pass_orders', { store: 'hpos' }), store.orders);
    t.is(total(samples, 'sidecar_customer_index_sweep_rows_read_total', { store: 'hpos' }), half.sweep.rowsRead);

    await runFor(store, P / 2, 5, P);
    samples = await scrape();
    const passRows = await expectedPassRows(store);
    t.is(total(samples, 'sidecar_customer_index_sweep_passes_total', { store: 'hpos' }), 1);
    t.is(total(samples, 'sidecar_customer_index_sweep_last_pass_rows_read', { store: 'hpos' }), passRows);
    t.is(total(samples, 'sidecar_customer_index_sweep_last_pass_duration_seconds', { store: 'hpos' }), P);
    t.is(total(samples, 'sidecar_customer_index_sweep_position', { store: 'hpos' }), 0, 'the next pass started as it ended');
    t.is(total(samples, 'sidecar_customer_index_sweep_rows_read_total', { store: 'hpos' }), passRows + store.orders, 'and counted the orders');
    t.is(passRows, store.orders * 6, 'HPOS: 6 rows per order (counted, the order and its two addresses, its index entry twice)');
  } finally {
    await api.stop();
  }
});

test.serial('The worker sweeps at CUSTOMER_INDEX_SWEEP_SECONDS: 0 starts no pass, a pass time starts one', async (t) => {
  const store = stores.hpos!;
  await freshIndex(store);
  clockMs += 2 * 86_400_000;
  for (const [seconds, started] of [['0', false], ['3600', true]] as const) {
    const worker = await startPacedWorker(store.shop.config({ CUSTOMER_INDEX_SWEEP_SECONDS: seconds }), clock);
    try {
      await worker.tick();
    } finally {
      await worker.stop();
    }
    const { sweep } = await status(store);
    t.is(sweep.startedAt === clockMs, started, `CUSTOMER_INDEX_SWEEP_SECONDS=${seconds}`);
    if (started) t.is(sweep.orders, store.orders);
  }
});

test('CUSTOMER_INDEX_SWEEP_SECONDS: a day by default, 0 turns the sweep off, and anything but a whole number of at most 30 days stops the start', (t) => {
  const config = (value?: string) => loadConfig({ DB_NAME: 'shop', ...(value === undefined ? {} : { CUSTOMER_INDEX_SWEEP_SECONDS: value }) });
  t.is(config().customerIndex.sweepSeconds, DAY);
  t.is(config('').customerIndex.sweepSeconds, DAY);
  t.is(config('0').customerIndex.sweepSeconds, 0);
  t.is(config('2592000').customerIndex.sweepSeconds, 2_592_000);
  for (const bad of ['-1', '1.5', 'daily', '2592001']) {
    const error = t.throws(() => config(bad), { instanceOf: ConfigError }, bad);
    t.is(error?.message, 'CUSTOMER_INDEX_SWEEP_SECONDS must be a whole number from 0 to 2592000');
  }
});
