import test from 'ava';
import { basic, request, type TestResponse } from '../support/http-client';
import { openStaffServices, startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop, type TestShopOptions } from '../support/test-shop';
import { createApiKey, createStaffUser, WP_SECRETS_ENV, type ApiKey } from '../support/wordpress-fixtures';
import type { OrderSpec } from '../../src/demo/shop-seeder';

const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** Changes an order's billing email where WooCommerce keeps it (and in the mirror when sync is on), bumping the modified date. */
async function editBillingEmail(shop: TestShop, mode: { hpos: boolean; sync: boolean }, id: number, email: string): Promise<void> {
  const now = gmt(new Date());
  if (mode.hpos || mode.sync) {
    await shop.db.query(`UPDATE ${shop.prefix}wc_order_addresses SET email = ? WHERE order_id = ? AND address_type = 'billing'`, [email, id]);
    await shop.db.query(`UPDATE ${shop.prefix}wc_orders SET billing_email = ?, date_updated_gmt = ? WHERE id = ?`, [email, now, id]);
  }
  if (!mode.hpos || mode.sync) {
    await shop.db.query(`UPDATE ${shop.prefix}postmeta SET meta_value = ? WHERE post_id = ? AND meta_key = '_billing_email'`, [email, id]);
    await shop.db.query(`UPDATE ${shop.prefix}posts SET post_modified_gmt = ? WHERE ID = ?`, [now, id]);
  }
}

/** Moves an order to the bin (status `trash`) in every store in use. */
async function trashOrder(shop: TestShop, mode: { hpos: boolean; sync: boolean }, id: number): Promise<void> {
  const now = gmt(new Date());
  if (mode.hpos || mode.sync) await shop.db.query(`UPDATE ${shop.prefix}wc_orders SET status = 'trash', date_updated_gmt = ? WHERE id = ?`, [now, id]);
  if (!mode.hpos || mode.sync) await shop.db.query(`UPDATE ${shop.prefix}posts SET post_status = 'trash', post_modified_gmt = ? WHERE ID = ?`, [now, id]);
}

/** Deletes an order for good (as "Delete permanently" does), leaving nothing to signal the change. */
async function deleteOrder(shop: TestShop, id: number): Promise<void> {
  await shop.db.query(`DELETE FROM ${shop.prefix}wc_orders WHERE id = ?`, [id]);
  await shop.db.query(`DELETE FROM ${shop.prefix}wc_order_addresses WHERE order_id = ?`, [id]);
  await shop.db.query(`DELETE FROM ${shop.prefix}postmeta WHERE post_id = ?`, [id]);
  await shop.db.query(`DELETE FROM ${shop.prefix}posts WHERE ID = ?`, [id]);
}

/** The customer lookup in one storage mode (one test file per mode). */
export function customerLookupScenarios(name: string, options: TestShopOptions) {
  const mode = { hpos: options.hpos ?? false, sync: options.sync ?? false };
  let shop: TestShop;
  let api: RunningStaffApi;
  let key: ApiKey;
  let refresh: () => Promise<number>;
  let services: Awaited<ReturnType<typeof openStaffServices>>;
  let closeServices: () => Promise<void>;
  /** How far the worker's refresh is ahead of the real clock (the rolling sweep goes at a pass a day). */
  let refreshAheadMs = 0;
  const ids: Record<string, number> = {};
  let jensId = 0;

  const address = (first: string, last: string, email: string, phone: string, country = 'DK') =>
    ({ first_name: first, last_name: last, address_1: 'Nørregade 1', city: 'København K', postcode: '1165', country, email, phone });
  const order = (spec: Partial<OrderSpec> & { email: string; phone: string; created: string; first?: string; last?: string; country?: string }): OrderSpec => ({
    status: spec.status ?? 'completed', createdGmt: new Date(spec.created), currency: 'DKK', total: spec.total ?? '250.00', paymentMethodTitle: 'Kort',
    customerId: spec.customerId ?? 0,
    billing: address(spec.first ?? 'Mette', spec.last ?? 'Hansen', spec.email, spec.phone, spec.country),
    shipping: address(spec.first ?? 'Mette', spec.last ?? 'Hansen', '', '', spec.country),
    lineItems: [{ name: 'Kaffe', qty: 1, total: spec.total ?? '250.00' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }],
  });

  const lookup = (query: string, headers?: Record<string, string>): Promise<TestResponse> =>
    request(api.url, 'GET', `/shop/v3/helpdesk/v1/list${query}`, {
      headers: headers ?? { 'x-forwarded-proto': 'https', authorization: basic(key.consumerKey, key.consumerSecret) },
    });

  test.before(async () => {
    shop = await createTestShop(name, options);
    const s = shop.seeder;
    const manager = await createStaffUser(shop, { login: 'helpdesk', roles: ['shop_manager'] });
    key = await createApiKey(shop, manager.id, 'read');
    jensId = await createStaffUser(shop, { login: 'jens', email: 'jens.new@example.dk', roles: ['customer'] }).then((user) => user.id);

    ids.metteOld = await s.createOrder(order({ email: 'mette@example.dk', phone: '+45 20 12 34 56', created: '2026-10-01T08:00:00Z' }));
    await s.createRefund(ids.metteOld, '50.00');
    ids.metteCase = await s.createOrder(order({ status: 'processing', email: ' Mette@Example.DK ', phone: '20-12-34-56', created: '2026-11-01T08:00:00Z' }));
    ids.mettePending = await s.createOrder(order({ status: 'pending', email: 'mette@example.dk', phone: '20123456', created: '2026-11-15T08:00:00Z' }));
    ids.metteTrashed = await s.createOrder(order({ status: 'trash', email: 'mette@example.dk', phone: '20123456', created: '2026-11-16T08:00:00Z' }));
    ids.metteSubscription = await s.createSubscription({
      ...order({ status: 'active', email: 'mette@example.dk', phone: '+4520123456', created: '2026-10-01T08:00:00Z', total: '199.00' }),
      status: 'active', paymentMethodTitle: 'MobilePay', parentId: ids.metteOld, nextPaymentGmt: new Date('2026-12-01T08:00:00Z'),
      lineItems: [{ name: 'Kaffeabonnement', qty: 1, total: '199.00' }],
    });
    ids.jensOld = await s.createOrder(order({ email: 'jens@example.dk', phone: '30303030', created: '2026-09-01T08:00:00Z', first: 'Jens', last: 'Berg', customerId: jensId }));
    ids.jensNew = await s.createOrder(order({ email: 'jens.new@example.dk', phone: '30303031', created: '2026-11-10T08:00:00Z', first: 'Jens', last: 'Berg', customerId: jensId }));
    ids.sven = await s.createOrder(order({ email: 'sven@example.se', phone: '070-123 45 67', country: 'SE', created: '2026-11-02T08:00:00Z', first: 'Sven', last: 'Svensson' }));
    for (let i = 0; i < 12; i += 1) {
      ids[`many${i}`] = await s.createOrder(order({ email: 'many@example.dk', phone: '40404040', created: `2026-0${1 + Math.floor(i / 3)}-1${i % 3}T08:00:00Z`, first: 'Mads' }));
    }
    ids.edited = await s.createOrder(order({ email: 'before@example.dk', phone: '50505050', created: '2026-11-03T08:00:00Z', first: 'Eddie' }));
    ids.doomed = await s.createOrder(order({ email: 'doomed@example.dk', phone: '60606060', created: '2026-11-04T08:00:00Z', first: 'Dorte' }));
    ids.binned = await s.createOrder(order({ email: 'binned@example.dk', phone: '70707070', created: '2026-11-04T08:00:00Z', first: 'Bent' }));

    const config = shop.config(WP_SECRETS_ENV);
    services = await openStaffServices(config, () => new Date(Date.now() + refreshAheadMs));
    refresh = () => services.refreshCustomerContacts.execute();
    closeServices = () => services.close();
    await refresh();
    api = await startStaffApi(config);
  });

  test.after.always(async () => {
    await api?.stop();
    await closeServices?.();
    await shop?.drop();
  });

  test('When the billing email matches, Then the customer comes back in the end-user shape with orders and subscriptions', async (t) => {
    const res = await lookup('?email=mette%40example.dk');
    t.is(res.status, 200, res.text);
    const body = res.json;
    t.like(body, {
      name: 'Mette Hansen', email: 'mette@example.dk', phone: '+4520123456',
      displayName: 'Mette Hansen', firstName: 'Mette', lastName: 'Hansen', phoneNumber: '+4520123456', externalId: null,
      additionalEmails: [], additionalPhoneNumbers: [],
    });
    t.deepEqual(body.orders.map((o: { id: number }) => o.id), [ids.mettePending, ids.metteCase, ids.metteOld], 'newest first; the binned order is left out');
    t.deepEqual(body.orders.map((o: { is_refunded: boolean }) => o.is_refunded), [false, false, true], 'the partly refunded order says so');
    t.deepEqual(body.orders[0], {
      id: ids.mettePending, order_number: String(ids.mettePending), status: 'pending', date_created: '2026-11-15T09:00:00+01:00',
      date_paid: null, date_completed: null, needs_payment: true, payment_method_title: 'Kort', total: '250.00', currency: 'DKK',
      item_count: 1, shipping_method: 'DAO', shipping_country: 'DK', is_refunded: false, estimated_delivery: null, tracking: {},
    });
    t.deepEqual(body.subscriptions, [{
      id: ids.metteSubscription, status: 'active', start_date: '2026-10-01T10:00:00+02:00', next_payment_date: '2026-12-01T09:00:00+01:00',
      end_date: null, auto_reactivation_date: null, recurring_total: '199.00', currency: 'DKK', billing_period: 'month', billing_interval: 1,
      payment_method_title: 'MobilePay', items: [{ name: 'Kaffeabonnement', quantity: 1 }],
    }]);
  });

  test('When the email differs in case and surrounding spaces, Then it is the same customer', async (t) => {
    const res = await lookup(`?email=${encodeURIComponent('  METTE@example.DK ')}`);
    t.is(res.json.orders.length, 3);
  });

  for (const phone of ['20123456', '+4520123456', '+45 20 12 34 56', '0045 20 12 34 56', '20-12-34-56', '45 20 12 34 56']) {
    test(`When the phone is given as "${phone}", Then it matches every spelling stored on the customer's orders`, async (t) => {
      const res = await lookup(`?phone=${encodeURIComponent(phone)}`);
      t.is(res.status, 200, res.text);
      t.is(res.json.phone, '+4520123456');
      t.deepEqual(res.json.orders.map((o: { id: number }) => o.id), [ids.mettePending, ids.metteCase, ids.metteOld]);
      t.is(res.json.subscriptions.length, 1);
    });
  }

  test('When a foreign customer is looked up by their full international number, Then the order stored in national form matches', async (t) => {
    const res = await lookup(`?phone=${encodeURIComponent('+46 70 123 45 67')}`);
    t.is(res.json.name, 'Sven Svensson');
    t.is(res.json.phone, '+46701234567');
  });

  test('When nothing matches, Then the answer is {}', async (t) => {
    for (const query of ['?email=nobody%40example.dk', '?phone=99999999', '?phone=not-a-number']) {
      const res = await lookup(query);
      t.is(res.status, 200);
      t.deepEqual(res.json, {}, query);
    }
  });

  test('When both, neither, an empty or a repeated parameter is given, Then it is 400 invalid_params', async (t) => {
    for (const query of ['?email=mette%40example.dk&phone=20123456', '', '?email=', '?email=%20&phone=', '?other=1']) {
      const res = await lookup(query);
      t.is(res.status, 400, query);
      t.deepEqual(res.json, { code: 'invalid_params', message: res.json.message, data: { status: 400, params: ['email', 'phone'] } }, query);
    }
    const repeated = await lookup('?email=a%40example.dk&email=b%40example.dk');
    t.is(repeated.status, 400);
    t.deepEqual(repeated.json.data.params, ['email']);
  });

  test('When the customer has more than ten orders, Then the ten newest are listed', async (t) => {
    const res = await lookup('?email=many%40example.dk');
    const expected = Array.from({ length: 12 }, (_, i) => ids[`many${i}`]).reverse().slice(0, 10);
    t.deepEqual(res.json.orders.map((o: { id: number }) => o.id), expected);
  });

  test('When a registered customer is found by an old email, Then their orders under the new one are included and listed as additional', async (t) => {
    const res = await lookup('?email=jens%40example.dk');
    t.like(res.json, { name: 'Jens Berg', email: 'jens@example.dk', externalId: String(jensId), additionalEmails: ['jens.new@example.dk'], additionalPhoneNumbers: ['+4530303031'] });
    t.deepEqual(res.json.orders.map((o: { id: number }) => o.id), [ids.jensNew, ids.jensOld]);
  });

  test('When the key lacks credentials or the capability, Then it is 401 / 403', async (t) => {
    t.is((await lookup('?email=mette%40example.dk', { 'x-forwarded-proto': 'https' })).status, 401);
    const customer = await createStaffUser(shop, { login: `cust-${name}`, roles: ['customer'] });
    const customerKey = await createApiKey(shop, customer.id, 'read');
    t.is((await lookup('?email=mette%40example.dk', { 'x-forwarded-proto': 'https', authorization: basic(customerKey.consumerKey, customerKey.consumerSecret) })).status, 403);
  });

  test.serial('When a new order is placed after the index was built, Then it is found at once, without waiting for the worker\'s refresh', async (t) => {
    const id = await shop.seeder.createOrder(order({ email: 'fresh@example.dk', phone: '80808080', created: '2026-11-20T08:00:00Z', first: 'Frida' }));
    t.deepEqual((await lookup('?email=fresh%40example.dk')).json.orders.map((o: { id: number }) => o.id), [id]);
    t.deepEqual((await lookup('?phone=80808080')).json.orders.map((o: { id: number }) => o.id), [id]);
    t.is(await refresh(), 0, 'the lookup indexed it already');
  });

  test.serial('When an order\'s billing email is changed in the shop, Then the old email stops finding it at once and the new one finds it after a refresh', async (t) => {
    await editBillingEmail(shop, mode, ids.edited, 'after@example.dk');
    t.deepEqual((await lookup('?email=before%40example.dk')).json, {}, 'the stale index entry is re-checked against the order');
    await refresh();
    t.deepEqual((await lookup('?email=after%40example.dk')).json.orders.map((o: { id: number }) => o.id), [ids.edited]);
    t.deepEqual((await lookup('?email=before%40example.dk')).json, {});
  });

  test.serial('When an order is moved to the bin or deleted for good, Then it is no longer found, and the index lets go of it (the deleted one at the sweep\'s next pass)', async (t) => {
    await trashOrder(shop, mode, ids.binned);
    await deleteOrder(shop, ids.doomed);
    t.deepEqual((await lookup('?email=binned%40example.dk')).json, {});
    t.deepEqual((await lookup('?email=doomed%40example.dk')).json, {});
    const indexed = async () => (await shop.db.query<any[]>(`SELECT order_id FROM ${shop.prefix}sidecar_customer_contacts WHERE order_id IN (?)`, [[ids.binned, ids.doomed]]))[0]
      .map((row: { order_id: number }) => Number(row.order_id));
    await refresh();
    t.deepEqual(await indexed(), [ids.doomed], 'the move to the bin is a change, let go of at once; a deletion leaves nothing to follow');
    // The worker's sweep at a pass a day (CUSTOMER_INDEX_SWEEP_SECONDS's default): the first pass starts a day after
    // the build, and a store this small is one batch, read at the end of that pass's day.
    const sweep = () => services.refreshCustomerContacts.execute({ sweepSeconds: 86_400 });
    refreshAheadMs += 86_400_000;
    await sweep();
    refreshAheadMs += 86_400_000;
    await sweep();
    t.deepEqual(await indexed(), []);
  });

  test('When the lookup runs, Then it reads the contact index by its key (never a scan of meta values)', async (t) => {
    for (const [column, value, index] of [['email', 'mette@example.dk', 'email_type_date'], ['phone', '+4520123456', 'phone_type_date']]) {
      const [plan] = await shop.db.query<any[]>(`EXPLAIN SELECT order_id, order_type FROM ${shop.prefix}sidecar_customer_contacts WHERE ${column} = ? AND order_type = 'shop_order' ORDER BY date_created_gmt DESC, order_id DESC LIMIT 15`, [value]);
      t.is(plan[0].key, index);
      t.regex(String(plan[0].Extra), /Using index/, 'covered by the index: no table rows read');
    }
  });
}
