import test from 'ava';
import mysql from 'mysql2/promise';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase, phpSerialize } from '../../src/demo/woocommerce-schema';
import { localDateTime, ShopSeeder, type OrderSpec } from '../../src/demo/shop-seeder';
import { bulkOrderIdentity, generateBulkOrders } from '../../src/demo/bulk-orders';
import { seedDemoShop } from '../../src/demo/demo-shop';

const dbName = `ss_test_seeder_${process.pid}`;
let db: mysql.Pool;

test.before(async () => {
  const admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
  await dropDatabase(admin, dbName);
  await createDatabase(admin, dbName);
  await admin.end();
  db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: dbName, connectionLimit: 8, dateStrings: true, timezone: 'Z' });
});

test.after.always(async () => {
  await db?.end();
  const admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
  await dropDatabase(admin, dbName);
  await admin.end();
});

type Mode = { hpos: boolean; sync: boolean };

async function shop(prefix: string, mode: Mode): Promise<ShopSeeder> {
  await createWooCommerceTables(db, prefix);
  await configureShop(db, prefix, { ...mode, sequentialPlugin: 'free', siteUrl: 'https://shop.example.dk' });
  return new ShopSeeder(db, prefix, mode, 'Europe/Copenhagen');
}

async function rows(sql: string, params: unknown[] = []): Promise<mysql.RowDataPacket[]> {
  const [result] = await db.query<mysql.RowDataPacket[]>(sql, params);
  return result;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return Number((await rows(sql, params))[0].n);
}

async function postMeta(prefix: string, id: number): Promise<Record<string, string>> {
  const result = await rows(`SELECT meta_key, meta_value FROM ${prefix}postmeta WHERE post_id = ?`, [id]);
  return Object.fromEntries(result.map((row) => [row.meta_key, row.meta_value]));
}

async function hposMeta(prefix: string, id: number): Promise<Record<string, string>> {
  const result = await rows(`SELECT meta_key, meta_value FROM ${prefix}wc_orders_meta WHERE order_id = ?`, [id]);
  return Object.fromEntries(result.map((row) => [row.meta_key, row.meta_value]));
}

// Summer (CEST, UTC+2) so the local columns differ from the GMT ones by two hours.
const CREATED = new Date('2026-07-01T10:00:00Z');
const PAID = new Date('2026-07-01T10:05:00Z');
const COMPLETED = new Date('2026-07-02T08:00:00Z');

const ORDER: OrderSpec = {
  status: 'completed',
  createdGmt: CREATED,
  paidGmt: PAID,
  completedGmt: COMPLETED,
  currency: 'DKK',
  total: '278.00',
  paymentMethod: 'reepay_checkout',
  paymentMethodTitle: 'Betalingskort',
  customerId: 0,
  billing: { first_name: 'Søren', last_name: 'Østergaard', address_1: 'Algade 1', city: 'Roskilde', postcode: '4000', country: 'DK', email: 'soeren@example.dk', phone: '+45 20 12 34 56' },
  shipping: { first_name: 'Søren', last_name: 'Østergaard', address_1: 'Algade 1', city: 'Roskilde', postcode: '4000', country: 'DK', phone: '20123456' },
  lineItems: [{ name: 'Kaffeabonnement', qty: 2, total: '183.20', tax: '45.80', productId: 101 }],
  shipping_lines: [{ methodId: 'dao', title: 'DAO Pakkeshop', total: '39.20', tax: '9.80' }],
  orderNumber: '1042',
  meta: { _reepay_order: 'order-1042' },
};

test('creates every table with a non-default prefix, with WordPress / WooCommerce indexes', async (t) => {
  await createWooCommerceTables(db, 'shop7_');
  await createWooCommerceTables(db, 'shop7_'); // idempotent
  const tables = (await rows(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE 'shop7\\_%'`, [dbName]))
    .map((row) => String(row.name)).sort();
  t.deepEqual(tables, [
    'actionscheduler_actions', 'actionscheduler_groups', 'commentmeta', 'comments', 'options', 'postmeta', 'posts', 'usermeta', 'users',
    'wc_order_addresses', 'wc_order_operational_data', 'wc_orders', 'wc_orders_meta', 'wcs_payment_retries', 'woocommerce_api_keys',
    'woocommerce_order_itemmeta', 'woocommerce_order_items', 'woocommerce_payment_tokenmeta', 'woocommerce_payment_tokens',
  ].map((name) => `shop7_${name}`).sort());

  const index = async (table: string) => (await rows(
    `SELECT index_name AS idx, GROUP_CONCAT(CONCAT(column_name, IFNULL(CONCAT('(', sub_part, ')'), '')) ORDER BY seq_in_index) AS cols
     FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? GROUP BY index_name ORDER BY index_name`, [dbName, table]))
    .map((row) => `${row.idx}:${row.cols}`);
  t.deepEqual(await index('shop7_postmeta'), ['meta_key:meta_key(191)', 'post_id:post_id', 'PRIMARY:meta_id']);
  t.deepEqual(await index('shop7_posts'), ['post_author:post_author', 'post_name:post_name(191)', 'post_parent:post_parent', 'PRIMARY:ID', 'type_status_date:post_type,post_status,post_date,ID']);
  t.deepEqual(await index('shop7_wc_orders_meta'), [
    'meta_key_value:meta_key(100),meta_value(82)', 'order_id_meta_key_meta_value:order_id,meta_key(100),meta_value(82)', 'PRIMARY:id',
  ]);
  const collation = await rows(`SELECT table_collation AS c, engine AS e FROM information_schema.tables WHERE table_schema = ? AND table_name = 'shop7_wc_orders'`, [dbName]);
  t.deepEqual([collation[0].c, collation[0].e], ['utf8mb4_unicode_520_ci', 'InnoDB']);
  const decimal = await rows(`SELECT column_type AS type FROM information_schema.columns WHERE table_schema = ? AND table_name = 'shop7_wc_orders' AND column_name = 'total_amount'`, [dbName]);
  t.is(decimal[0].type, 'decimal(26,8)');

  await t.throwsAsync(createWooCommerceTables(db, 'wp-; DROP'), { message: /invalid table prefix/ });
});

test('configureShop writes the options WooCommerce would hold, active_plugins PHP-serialized', async (t) => {
  await createWooCommerceTables(db, 'opt_');
  await configureShop(db, 'opt_', { hpos: true, sync: false, sequentialPlugin: 'pro', siteUrl: 'https://butik.example.dk' });
  const options = Object.fromEntries((await rows(`SELECT option_name, option_value FROM opt_options`)).map((row) => [row.option_name, row.option_value]));
  t.is(options.woocommerce_custom_orders_table_enabled, 'yes');
  t.is(options.woocommerce_custom_orders_table_data_sync_enabled, 'no');
  t.is(options.woocommerce_default_country, 'DK');
  t.is(options.timezone_string, 'Europe/Copenhagen');
  t.is(options.woocommerce_currency, 'DKK');
  t.is(options.woocommerce_price_num_decimals, '2');
  t.is(options.siteurl, 'https://butik.example.dk');
  t.is(options.active_plugins,
    'a:3:{i:0;s:27:"woocommerce/woocommerce.php";i:1;s:55:"woocommerce-subscriptions/woocommerce-subscriptions.php";' +
    'i:2;s:85:"woocommerce-sequential-order-numbers-pro/woocommerce-sequential-order-numbers-pro.php";}');
  t.true(options.opt_user_roles.includes('s:12:"shop_manager";a:2:{s:4:"name";s:12:"Shop manager";'));
  t.true(options.opt_user_roles.includes('s:16:"edit_shop_orders";b:1;'));

  // Reconfiguring replaces values rather than duplicating rows.
  await configureShop(db, 'opt_', { hpos: false, sync: true });
  t.is(await count(`SELECT COUNT(*) AS n FROM opt_options WHERE option_name = 'woocommerce_custom_orders_table_enabled' AND option_value = 'no'`), 1);
  t.is(phpSerialize({ Søren: 'Ø', 7: true }), 'a:2:{i:7;b:1;s:6:"Søren";s:2:"Ø";}');
});

test('legacy storage: a posts row and postmeta, no HPOS rows', async (t) => {
  const seeder = await shop('leg_', { hpos: false, sync: false });
  const id = await seeder.createOrder(ORDER);

  const [post] = await rows(`SELECT * FROM leg_posts WHERE ID = ?`, [id]);
  t.is(post.post_type, 'shop_order');
  t.is(post.post_status, 'wc-completed');
  t.is(post.post_date_gmt, '2026-07-01 10:00:00');
  t.is(post.post_date, '2026-07-01 12:00:00');
  t.is(post.post_author, 1);
  t.regex(post.post_title, /^Order &ndash; Jul 01, 2026 @ 10:00 AM$/);

  const meta = await postMeta('leg_', id);
  t.is(post.post_password, meta._order_key);
  t.regex(meta._order_key, /^wc_order_[A-Za-z0-9]{13}$/);
  t.is(meta._customer_user, '0');
  t.is(meta._billing_email, 'soeren@example.dk');
  t.is(meta._billing_phone, '+45 20 12 34 56');
  t.is(meta._shipping_phone, '20123456');
  t.is(meta._order_total, '278.00');
  t.is(meta._order_currency, 'DKK');
  t.is(meta._date_paid, String(PAID.getTime() / 1000));
  t.is(meta._date_completed, String(COMPLETED.getTime() / 1000));
  t.is(meta._paid_date, '2026-07-01 12:05:00');
  t.is(meta._completed_date, '2026-07-02 10:00:00');
  t.is(meta._order_number, '1042');
  t.is(meta._reepay_order, 'order-1042');
  t.is(meta._billing_address_index, 'Søren Østergaard  Algade 1  Roskilde  4000 DK soeren@example.dk +45 20 12 34 56');
  t.false('_billing_company' in meta, 'empty values are not stored, as update_or_delete_post_meta() does');
  t.is(await count(`SELECT COUNT(*) AS n FROM leg_wc_orders`), 0);

  const items = await rows(
    `SELECT i.order_item_type AS type, i.order_item_name AS name, m.meta_key AS k, m.meta_value AS v FROM leg_woocommerce_order_items i
     JOIN leg_woocommerce_order_itemmeta m ON m.order_item_id = i.order_item_id WHERE i.order_id = ? ORDER BY m.meta_id`, [id]);
  const itemMeta = (type: string) => Object.fromEntries(items.filter((row) => row.type === type).map((row) => [row.k, row.v]));
  t.is(itemMeta('line_item')._qty, '2');
  t.is(itemMeta('line_item')._line_total, '183.20');
  t.is(itemMeta('line_item')._line_tax_data, 'a:2:{s:5:"total";a:1:{i:1;s:4:"45.8";}s:8:"subtotal";a:1:{i:1;s:4:"45.8";}}');
  t.is(itemMeta('shipping').method_id, 'dao');
  t.is(itemMeta('shipping').cost, '39.20');

  // An unpaid order has neither date.
  const pending = await seeder.createOrder({ status: 'pending', billing: { email: 'x@example.dk' } });
  const pendingMeta = await postMeta('leg_', pending);
  t.false('_date_paid' in pendingMeta);
  t.false('_paid_date' in pendingMeta);
});

test('HPOS without sync: a placeholder post, then the wc_orders tables', async (t) => {
  const seeder = await shop('hpos_', { hpos: true, sync: false });
  const id = await seeder.createOrder({ ...ORDER, status: 'processing', completedGmt: null });

  const [post] = await rows(`SELECT post_type, post_status, post_date_gmt FROM hpos_posts WHERE ID = ?`, [id]);
  t.deepEqual({ ...post }, { post_type: 'shop_order_placehold', post_status: 'draft', post_date_gmt: '2026-07-01 10:00:00' });
  t.is(await count(`SELECT COUNT(*) AS n FROM hpos_postmeta`), 0);

  const [order] = await rows(`SELECT * FROM hpos_wc_orders WHERE id = ?`, [id]);
  t.is(order.status, 'wc-processing');
  t.is(order.type, 'shop_order');
  t.is(order.total_amount, '278.00000000');
  t.is(order.tax_amount, '45.80000000');
  t.is(order.billing_email, 'soeren@example.dk');
  t.is(order.date_created_gmt, '2026-07-01 10:00:00');

  const addresses = await rows(`SELECT address_type, email, phone, country FROM hpos_wc_order_addresses WHERE order_id = ? ORDER BY address_type`, [id]);
  t.deepEqual(addresses.map((row) => ({ ...row })), [
    { address_type: 'billing', email: 'soeren@example.dk', phone: '+45 20 12 34 56', country: 'DK' },
    { address_type: 'shipping', email: null, phone: '20123456', country: 'DK' },
  ]);
  const [operational] = await rows(`SELECT * FROM hpos_wc_order_operational_data WHERE order_id = ?`, [id]);
  t.is(operational.date_paid_gmt, '2026-07-01 10:05:00');
  t.is(operational.date_completed_gmt, null);
  t.regex(operational.order_key, /^wc_order_/);
  t.is(operational.shipping_total_amount, '39.20000000');

  const meta = await hposMeta('hpos_', id);
  t.is(meta._order_number, '1042');
  t.is(meta._reepay_order, 'order-1042');
  t.truthy(meta._billing_address_index);
  for (const internal of ['_billing_email', '_order_total', '_paid_date', '_date_paid', '_order_key']) t.false(internal in meta, internal);

  const itemCount = await count(`SELECT COUNT(*) AS n FROM hpos_woocommerce_order_items WHERE order_id = ?`, [id]);
  t.is(itemCount, 2);
});

test('HPOS with sync: the real post type with full postmeta, and the HPOS rows', async (t) => {
  const seeder = await shop('sync_', { hpos: true, sync: true });
  const id = await seeder.createOrder(ORDER);

  const [post] = await rows(`SELECT post_type, post_status, post_modified_gmt FROM sync_posts WHERE ID = ?`, [id]);
  t.is(post.post_type, 'shop_order');
  t.is(post.post_status, 'wc-completed');
  const meta = await postMeta('sync_', id);
  t.is(meta._billing_email, 'soeren@example.dk');
  t.is(meta._order_number, '1042');
  t.is(meta._recorded_sales, 'yes');

  const [order] = await rows(`SELECT status, date_updated_gmt FROM sync_wc_orders WHERE id = ?`, [id]);
  t.is(order.status, 'wc-completed');
  t.is(order.date_updated_gmt, post.post_modified_gmt, 'both stores carry the same modified date');
  t.is((await hposMeta('sync_', id))._order_number, '1042');

  // Legacy authoritative with sync: posts first, HPOS mirror.
  const mirror = await shop('mirror_', { hpos: false, sync: true });
  const mirrored = await mirror.createOrder(ORDER);
  t.is((await rows(`SELECT post_type FROM mirror_posts WHERE ID = ?`, [mirrored]))[0].post_type, 'shop_order');
  t.is((await rows(`SELECT status FROM mirror_wc_orders WHERE id = ?`, [mirrored]))[0].status, 'wc-completed');
});

test('refunds: partial keeps the status, full refunds the order in both stores', async (t) => {
  for (const [prefix, mode] of [['rleg_', { hpos: false, sync: false }], ['rsync_', { hpos: true, sync: true }]] as [string, Mode][]) {
    const seeder = await shop(prefix, mode);
    const partial = await seeder.createOrder(ORDER);
    const refundId = await seeder.createRefund(partial, '25', { reason: 'Forsinket' });
    const full = await seeder.createOrder(ORDER);
    await seeder.createRefund(full, '278.00', { fullyRefunded: true, refundedPayment: true });

    const [refundPost] = await rows(`SELECT post_type, post_status, post_parent, post_excerpt FROM ${prefix}posts WHERE ID = ?`, [refundId]);
    t.deepEqual({ ...refundPost }, { post_type: 'shop_order_refund', post_status: 'wc-completed', post_parent: partial, post_excerpt: 'Forsinket' });
    const refundMeta = await postMeta(prefix, refundId);
    t.is(refundMeta._refund_amount, '25.00');
    t.is(refundMeta._order_total, '-25.00');
    t.is(refundMeta._refund_reason, 'Forsinket');
    t.is((await rows(`SELECT post_status FROM ${prefix}posts WHERE ID = ?`, [partial]))[0].post_status, 'wc-completed');
    t.is((await rows(`SELECT post_status FROM ${prefix}posts WHERE ID = ?`, [full]))[0].post_status, 'wc-refunded');
    if (mode.hpos) {
      const [refund] = await rows(`SELECT type, status, parent_order_id, total_amount FROM ${prefix}wc_orders WHERE id = ?`, [refundId]);
      t.deepEqual({ ...refund }, { type: 'shop_order_refund', status: 'wc-completed', parent_order_id: partial, total_amount: '-25.00000000' });
      t.is((await hposMeta(prefix, refundId))._refund_amount, '25.00');
      t.is((await rows(`SELECT status FROM ${prefix}wc_orders WHERE id = ?`, [full]))[0].status, 'wc-refunded');
      t.is((await rows(`SELECT status FROM ${prefix}wc_orders WHERE id = ?`, [partial]))[0].status, 'wc-completed');
    }
  }
});

test('subscriptions carry their schedule meta in GMT, in both stores', async (t) => {
  const seeder = await shop('sub_', { hpos: true, sync: true });
  const parentId = await seeder.createOrder(ORDER);
  const id = await seeder.createSubscription({
    ...ORDER, parentId, status: 'active', billingPeriod: 'month', billingInterval: 1, startGmt: CREATED,
    nextPaymentGmt: new Date('2026-08-01T10:00:00Z'),
  });
  for (const meta of [await hposMeta('sub_', id), await postMeta('sub_', id)]) {
    t.is(meta._schedule_next_payment, '2026-08-01 10:00:00');
    t.is(meta._schedule_start, '2026-07-01 10:00:00');
    t.is(meta._schedule_end, '0');
    t.is(meta._billing_period, 'month');
    t.is(meta._requires_manual_renewal, 'false');
  }
  const [order] = await rows(`SELECT type, status, parent_order_id FROM sub_wc_orders WHERE id = ?`, [id]);
  t.deepEqual({ ...order }, { type: 'shop_subscription', status: 'wc-active', parent_order_id: parentId });

  const userId = await seeder.createUser({ login: 'butik', email: 'butik@example.dk', pass: 'hemmelig', roles: ['shop_manager'] });
  const [user] = await rows(`SELECT user_pass FROM sub_users WHERE ID = ?`, [userId]);
  t.regex(user.user_pass, /^\$wp\$2y\$10\$/);
  const caps = await rows(`SELECT meta_key, meta_value FROM sub_usermeta WHERE user_id = ? AND meta_key LIKE 'sub\\_%'`, [userId]);
  t.deepEqual(Object.fromEntries(caps.map((row) => [row.meta_key, row.meta_value])), { sub_capabilities: 'a:1:{s:12:"shop_manager";b:1;}', sub_user_level: '9' });
});

test('bulk generation writes the right rows in both storage modes', async (t) => {
  await createWooCommerceTables(db, 'bulk_');
  await configureShop(db, 'bulk_', { hpos: false, sync: false });
  const progress: number[] = [];
  const { firstId, lastId } = await generateBulkOrders(db, 'bulk_', 2000, { batchSize: 800, onProgress: (done) => progress.push(done) });
  t.deepEqual([firstId, lastId], [1, 2000]);
  t.deepEqual(progress, [800, 1600, 2000]);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_posts WHERE post_type = 'shop_order'`), 2000);
  // 29 rows per order, plus _date_paid/_paid_date when paid and _date_completed/_completed_date when completed.
  const expectedMeta = await count(`SELECT SUM(29 + IF(post_status IN ('wc-processing', 'wc-completed', 'wc-refunded'), 2, 0)
    + IF(post_status IN ('wc-completed', 'wc-refunded'), 2, 0)) AS n FROM bulk_posts`);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_postmeta`), expectedMeta);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_woocommerce_order_items`), 6000);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_woocommerce_order_itemmeta`), 2000 * 24);
  t.is(await count(`SELECT COUNT(DISTINCT meta_value) AS n FROM bulk_woocommerce_order_itemmeta WHERE meta_key = 'method_id'`), 5);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_wc_orders`), 0);
  for (const id of [1, 7, 13, 17, 1234]) {
    const meta = await postMeta('bulk_', id);
    const identity = bulkOrderIdentity(id);
    t.deepEqual([meta._billing_email, meta._billing_phone, meta._billing_country], [identity.email, identity.phone, identity.country]);
  }
  const dates = await rows(`SELECT post_date, post_date_gmt, post_modified, post_modified_gmt FROM bulk_posts`);
  const wrong = dates.filter((row) => row.post_date !== localDateTime(new Date(`${row.post_date_gmt}Z`), 'Europe/Copenhagen')
    || row.post_modified !== localDateTime(new Date(`${row.post_modified_gmt}Z`), 'Europe/Copenhagen'));
  t.deepEqual(wrong, [], 'local dates follow Copenhagen summer and winter time');

  // A second run continues above the existing IDs; HPOS this time.
  const hpos = await generateBulkOrders(db, 'bulk_', 2000, { hpos: true, orderNumbers: true });
  t.deepEqual([hpos.firstId, hpos.lastId], [2001, 4000]);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_posts WHERE post_type = 'shop_order_placehold' AND post_status = 'draft'`), 2000);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_wc_orders WHERE type = 'shop_order'`), 2000);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_wc_order_addresses`), 4000);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_wc_order_operational_data`), 2000);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_wc_orders_meta`), 2000 * 3);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_postmeta WHERE post_id > 2000`), 0);
  t.is(await count(`SELECT COUNT(*) AS n FROM bulk_woocommerce_order_items WHERE order_id > 2000`), 6000);
  const identity = bulkOrderIdentity(2345);
  const [address] = await rows(`SELECT email, phone FROM bulk_wc_order_addresses WHERE order_id = 2345 AND address_type = 'billing'`);
  t.deepEqual([address.email, address.phone], [identity.email, identity.phone]);
  t.is((await hposMeta('bulk_', 2345))._order_number, identity.orderNumber);
});

test('the demo shop covers every carrier, status and country, with refunds and subscriptions', async (t) => {
  await createWooCommerceTables(db, 'demo_');
  await configureShop(db, 'demo_', { hpos: true, sync: true, sequentialPlugin: 'none' });
  const samples = await seedDemoShop(db, 'demo_', { hpos: true, sync: true }, { orders: 120, now: new Date('2026-11-21T12:00:00Z') });

  const [match] = await rows(`SELECT o.status, a.email, a.phone FROM demo_wc_orders o JOIN demo_wc_order_addresses a ON a.order_id = o.id AND a.address_type = 'billing' WHERE o.id = ?`, [Number(samples.match.order_number)]);
  t.deepEqual([match.email, match.phone], [samples.match.email, samples.match.phone]);
  const [phoneMatch] = await rows(`SELECT phone FROM demo_wc_order_addresses WHERE order_id = ? AND address_type = 'billing'`, [Number(samples.phoneMatch.order_number)]);
  t.is(phoneMatch.phone.replace(/\D/g, ''), samples.phoneMatch.phone.replace(/\D/g, '').slice(2));
  t.not(phoneMatch.phone, samples.phoneMatch.phone);
  t.is(await count(`SELECT COUNT(*) AS n FROM demo_wc_orders WHERE id = ?`, [Number(samples.notFound.order_number)]), 0);

  const carriers = (await rows(`SELECT DISTINCT meta_value AS v FROM demo_woocommerce_order_itemmeta WHERE meta_key = 'method_id'`)).map((row) => row.v).sort();
  t.deepEqual(carriers, ['bladkompagniet', 'dao', 'dhl', 'flat_rate', 'local_pickup']);
  const statuses = (await rows(`SELECT DISTINCT status AS v FROM demo_wc_orders WHERE type = 'shop_order'`)).map((row) => row.v).sort();
  t.deepEqual(statuses, ['wc-cancelled', 'wc-completed', 'wc-failed', 'wc-on-hold', 'wc-pending', 'wc-processing', 'wc-refunded']);
  const countries = (await rows(`SELECT DISTINCT country AS v FROM demo_wc_order_addresses WHERE address_type = 'billing'`)).map((row) => row.v);
  for (const country of ['DK', 'SE', 'NO', 'DE', '']) t.true(countries.includes(country), `country ${JSON.stringify(country)}`);
  t.true(await count(`SELECT COUNT(*) AS n FROM demo_wc_orders r JOIN demo_wc_orders o ON o.id = r.parent_order_id WHERE r.type = 'shop_order_refund' AND o.status <> 'wc-refunded'`) > 0, 'partial refunds');
  t.true(await count(`SELECT COUNT(*) AS n FROM demo_wc_orders r JOIN demo_wc_orders o ON o.id = r.parent_order_id WHERE r.type = 'shop_order_refund' AND o.status = 'wc-refunded'`) > 0, 'full refunds');
  t.true(await count(`SELECT COUNT(*) AS n FROM demo_wc_orders o JOIN demo_wc_order_operational_data d ON d.order_id = o.id WHERE o.type = 'shop_order' AND d.date_paid_gmt IS NULL AND d.date_completed_gmt IS NULL`) > 0);
  t.is((await rows(`SELECT status FROM demo_wc_orders WHERE id = ?`, [samples.subscriptions.onHold]))[0].status, 'wc-on-hold');
  t.is((await rows(`SELECT status FROM demo_wc_orders WHERE id = ?`, [samples.subscriptions.active]))[0].status, 'wc-active');

  // Deterministic: the same seed gives the same customers.
  await createWooCommerceTables(db, 'demo2_');
  await configureShop(db, 'demo2_', { hpos: true, sync: true });
  const again = await seedDemoShop(db, 'demo2_', { hpos: true, sync: true }, { orders: 120, now: new Date('2026-11-21T12:00:00Z') });
  t.deepEqual(again.match, samples.match);
});
