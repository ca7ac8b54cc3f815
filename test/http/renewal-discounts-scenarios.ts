import test from 'ava';
import { basic, request, type TestResponse } from '../support/http-client';
import { capturingLogger, startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, type TestShop, type TestShopOptions } from '../support/test-shop';
import { createApiKey, createStaffUser, WP_SECRETS_ENV, type ApiKey, type StaffUser } from '../support/wordpress-fixtures';

/** Renewal discounts in one storage mode (one test file per mode). */
export function renewalDiscountScenarios(name: string, options: TestShopOptions) {
  const hpos = options.hpos ?? false;
  let shop: TestShop;
  let api: RunningStaffApi;
  const log = capturingLogger();
  let manager: StaffUser;
  let key: ApiKey;
  const ids: Record<string, number> = {};

  const headers = () => ({ 'x-forwarded-proto': 'https', authorization: basic(key.consumerKey, key.consumerSecret) });
  const get = (path: string): Promise<TestResponse> => request(api.url, 'GET', `/renewal-discounts/v1${path}`, { headers: headers() });
  const create = (body: unknown): Promise<TestResponse> => request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: headers(), body });
  const editUrl = (id: number, type: 'shop_order' | 'shop_subscription') => (hpos
    ? `https://shop.example.dk/wp-admin/admin.php?page=${type === 'shop_order' ? 'wc-orders' : 'wc-orders--shop_subscription'}&action=edit&id=${id}`
    : `https://shop.example.dk/wp-admin/post.php?post=${id}&action=edit`);

  test.before(async () => {
    shop = await createTestShop(name, options);
    manager = await createStaffUser(shop, { login: 'anna', roles: ['shop_manager'] });
    key = await createApiKey(shop, manager.id, 'read_write');
    const s = shop.seeder;
    const billing = { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: 'mette@example.dk', phone: '20123456' };
    ids.parentOrder = await s.createOrder({ status: 'completed', billing, total: '199.00' });
    ids.subscription = await s.createSubscription({ status: 'active', parentId: ids.parentOrder, billing, total: '199.00', currency: 'DKK' });
    ids.renewalOrder = await s.createOrder({ status: 'pending', billing, total: '199.00', createdVia: 'subscription', meta: { _subscription_renewal: String(ids.subscription) } });
    ids.unrelatedOrder = await s.createOrder({ status: 'completed', billing, total: '50.00' });
    ids.euroSubscription = await s.createSubscription({ status: 'on-hold', billing, total: '30.00', currency: 'EUR' });
    ids.cancelled = await s.createSubscription({ status: 'cancelled', billing, total: '199.00' });
    ids.listed = await s.createSubscription({ status: 'active', billing, total: '99.00' });
    ids.orderless = await s.createSubscription({ status: 'active', billing, total: '99.00' });
    api = await startStaffApi(shop.config(WP_SECRETS_ENV), { log });
  });

  test.after.always(async () => {
    await api?.stop();
    await shop?.drop();
  });

  test('When the discount types are listed, Then the seeded defaults come with their schemes resolved', async (t) => {
    const res = await get('/renewal-discount-types');
    t.is(res.status, 200);
    t.deepEqual(res.json.slice(0, 3), [
      { id: 1, slug: 'retention-percentage', name: 'Fastholdelsesrabat (procent)', description: 'Procent af næste fornyelse, for at beholde kunden.',
        scheme: { id: 'percentage', label: 'Percentage', amount_type: 'percent', max: 100, decimals: 2 } },
      { id: 2, slug: 'retention-amount', name: 'Fastholdelsesrabat (beløb)', description: 'Fast beløb af næste fornyelse, for at beholde kunden.',
        scheme: { id: 'fixed_amount', label: 'Fixed amount', amount_type: 'currency', max: null, decimals: null } },
      { id: 3, slug: 'compensation', name: 'Kompensation', description: 'Beløb trukket fra næste fornyelse som kompensation, fx for en forsinket levering.',
        scheme: { id: 'fixed_amount', label: 'Fixed amount', amount_type: 'currency', max: null, decimals: null } },
    ]);
  });

  test.serial('When a type row names a scheme the code does not define, Then it is not offered and cannot be used', async (t) => {
    await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_renewal_discount_types (slug, name, scheme, created_at) VALUES ('odd', 'Odd', 'free_shipping', NOW(3))`);
    const [[row]] = await shop.db.query<any[]>(`SELECT id FROM ${shop.prefix}sidecar_renewal_discount_types WHERE slug = 'odd'`);
    t.false((await get('/renewal-discount-types')).json.some((type: { slug: string }) => type.slug === 'odd'));
    const res = await create({ subscription: ids.subscription, type: row.id, amount: 5 });
    t.is(res.status, 400);
    t.deepEqual(res.json.data.params, ['type']);
  });

  test('When a percentage discount is created, Then it is pending, made via rest, with its type and the subscription\'s edit URL', async (t) => {
    const res = await create({ subscription: ids.subscription, type: 1, amount: 15 });
    t.is(res.status, 201, res.text);
    t.like(res.json, {
      subscription: ids.subscription, order: null, amount: '15.00', currency: 'DKK', status: 'pending', created_via: 'rest', created_by: manager.id,
      type: { id: 1, slug: 'retention-percentage', scheme: { id: 'percentage', amount_type: 'percent', max: 100 } },
      order_edit_url: editUrl(ids.subscription, 'shop_subscription'),
    });
    t.regex(res.json.date_created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/);
    const read = await get(`/discounts/${res.json.id}`);
    t.is(read.status, 200);
    t.deepEqual(read.json, res.json);
  });

  test('When a fixed-amount discount is created on a euro subscription, Then the amount is in euros, and created_via is kept', async (t) => {
    const res = await create({ subscription: String(ids.euroSubscription), type: '3', amount: '25.5', created_via: 'helpdesk' });
    t.is(res.status, 201, res.text);
    t.like(res.json, { subscription: ids.euroSubscription, amount: '25.50', currency: 'EUR', created_via: 'helpdesk', type: { id: 3, scheme: { amount_type: 'currency' } } });
  });

  test('When the discount is for a renewal or the parent order of the subscription, Then it is linked and the URL edits that order', async (t) => {
    for (const order of [ids.renewalOrder, ids.parentOrder]) {
      const res = await create({ subscription: ids.subscription, type: 2, amount: 20, order });
      t.is(res.status, 201, res.text);
      t.is(res.json.order, order);
      t.is(res.json.order_edit_url, editUrl(order, 'shop_order'));
    }
    const unrelated = await create({ subscription: ids.subscription, type: 2, amount: 20, order: ids.unrelatedOrder });
    t.is(unrelated.status, 400);
    t.deepEqual(unrelated.json.data.params, ['order']);
  });

  test('When staff cancel a pending discount, Then it is cancelled, is not applied later, and cannot be cancelled again', async (t) => {
    const created = await create({ subscription: ids.subscription, type: 2, amount: 10 });
    t.is(created.status, 201, created.text);
    const remove = (id: number | string) => request(api.url, 'DELETE', `/renewal-discounts/v1/discounts/${id}`, { headers: headers() });
    const cancelled = await remove(created.json.id);
    t.is(cancelled.status, 200, cancelled.text);
    t.like(cancelled.json, { id: created.json.id, status: 'cancelled', applied_amount: null, date_applied_gmt: null, order: null });
    t.is((await get(`/discounts/${created.json.id}`)).json.status, 'cancelled');
    const again = await remove(created.json.id);
    t.is(again.status, 409);
    t.deepEqual(again.json, { code: 'invalid_state', message: again.json.message, data: { status: 409 } });
    for (const id of [999999, 'abc']) {
      const missing = await remove(id);
      t.is(missing.status, 404, String(id));
      t.is(missing.json.code, 'discount_not_found');
    }
    // An applied discount is what its renewal order says it was: it stays.
    await shop.db.query(`UPDATE ${shop.prefix}sidecar_renewal_discounts SET status = 'applied', order_id = ?, applied_amount = 10, applied_at = NOW(3) WHERE id = ?`,
      [ids.renewalOrder, (await create({ subscription: ids.subscription, type: 2, amount: 10 })).json.id]);
    const [[applied]] = await shop.db.query<any[]>(`SELECT id FROM ${shop.prefix}sidecar_renewal_discounts WHERE status = 'applied' ORDER BY id DESC LIMIT 1`);
    const kept = await remove(applied.id);
    t.is(kept.status, 409);
    const read = await get(`/discounts/${applied.id}`);
    t.like(read.json, { status: 'applied', order: ids.renewalOrder, applied_amount: '10.00', order_edit_url: editUrl(ids.renewalOrder, 'shop_order') });
  });

  test('When a read-only key asks to cancel a discount, Then it is refused and the discount stays pending', async (t) => {
    const reader = await createApiKey(shop, manager.id, 'read');
    const created = await create({ subscription: ids.subscription, type: 2, amount: 5 });
    const res = await request(api.url, 'DELETE', `/renewal-discounts/v1/discounts/${created.json.id}`,
      { headers: { 'x-forwarded-proto': 'https', authorization: basic(reader.consumerKey, reader.consumerSecret) } });
    t.true([401, 403].includes(res.status), res.text);
    t.is((await get(`/discounts/${created.json.id}`)).json.status, 'pending');
  });

  const sub = () => ids.subscription;
  for (const [label, body, params] of [
    ['nothing at all', () => ({}), ['subscription', 'type', 'amount']],
    ['every field wrong', () => ({ subscription: 'x', type: [], amount: null, created_via: '', order: -1 }), ['subscription', 'type', 'amount', 'created_via', 'order']],
    ['a percentage over 100', () => ({ subscription: sub(), type: 1, amount: 100.5 }), ['amount']],
    ['a zero amount', () => ({ subscription: sub(), type: 1, amount: 0 }), ['amount']],
    ['a negative amount', () => ({ subscription: sub(), type: 2, amount: -5 }), ['amount']],
    ['an amount that is not a number', () => ({ subscription: sub(), type: 2, amount: 'ten' }), ['amount']],
    ['more decimals than the shop prices have', () => ({ subscription: sub(), type: 2, amount: 10.555 }), ['amount']],
    ['more than the subscription\'s recurring total', () => ({ subscription: sub(), type: 2, amount: 199.01 }), ['amount']],
    ['an unknown type', () => ({ subscription: sub(), type: 999999, amount: 5 }), ['type']],
    ['a created_via of 101 characters', () => ({ subscription: sub(), type: 1, amount: 5, created_via: 'x'.repeat(101) }), ['created_via']],
  ] as [string, () => Record<string, unknown>, string[]][]) {
    test(`When the body has ${label}, Then it is 400 invalid_params naming ${params.join(', ')}`, async (t) => {
      const res = await create(body());
      t.is(res.status, 400, res.text);
      t.deepEqual(res.json, { code: 'invalid_params', message: res.json.message, data: { status: 400, params } });
    });
  }

  test('When a percentage of exactly 100 or the whole recurring total is given, Then it is accepted', async (t) => {
    t.is((await create({ subscription: ids.subscription, type: 1, amount: 100 })).status, 201);
    t.is((await create({ subscription: ids.subscription, type: 2, amount: '199.00' })).status, 201);
  });

  const storedFor = async (column: 'subscription_id' | 'order_id', values: number[]): Promise<number> => {
    const [[row]] = await shop.db.query<any[]>(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_renewal_discounts WHERE ${column} IN (?)`, [values]);
    return Number(row.n);
  };

  test('When the subscription does not exist, Then it is 400 invalid_params naming subscription, and nothing is stored', async (t) => {
    const unknown = 99999999;
    for (const [label, body, params] of [
      ['an unknown ID', { subscription: unknown, type: 1, amount: 5 }, ['subscription']],
      ['an order\'s ID', { subscription: ids.parentOrder, type: 1, amount: 5 }, ['subscription']],
      ['an unknown ID with an order of another subscription', { subscription: unknown, type: 2, amount: 20, order: ids.renewalOrder }, ['subscription']],
      ['an unknown ID and an unknown order', { subscription: unknown, type: 2, amount: 20, order: 99999998 }, ['subscription', 'order']],
    ] as [string, Record<string, unknown>, string[]][]) {
      const res = await create(body);
      t.is(res.status, 400, label);
      t.deepEqual(res.json, { code: 'invalid_params', message: res.json.message, data: { status: 400, params } }, label);
      t.regex(res.json.message, /subscription is not a subscription of the shop/, label);
    }
    t.is(await storedFor('subscription_id', [unknown, ids.parentOrder]), 0, 'no discount row was stored');
    t.is(await storedFor('order_id', [99999998]), 0, 'no discount row names the unknown order');
  });

  test('When the order does not exist, Then it is 400 invalid_params naming order, and nothing is stored', async (t) => {
    const unknownOrder = 99999997;
    for (const [label, body] of [
      ['an unknown order', { subscription: ids.orderless, type: 2, amount: 20, order: unknownOrder }],
      ['a subscription\'s ID as the order', { subscription: ids.orderless, type: 2, amount: 20, order: ids.euroSubscription }],
      ['an unknown order as a digit string', { subscription: ids.orderless, type: 1, amount: 5, order: String(unknownOrder) }],
      ['an unknown order on an ended subscription (400 before 409)', { subscription: ids.cancelled, type: 1, amount: 5, order: unknownOrder }],
    ] as [string, Record<string, unknown>][]) {
      const res = await create(body);
      t.is(res.status, 400, label);
      t.deepEqual(res.json, { code: 'invalid_params', message: res.json.message, data: { status: 400, params: ['order'] } }, label);
      t.regex(res.json.message, /order is not an order of the shop/, label);
    }
    t.is(await storedFor('subscription_id', [ids.orderless, ids.cancelled]), 0, 'no discount row was stored');
    t.is(await storedFor('order_id', [unknownOrder, ids.euroSubscription]), 0, 'no discount row names the order');
  });

  test('When the subscription has ended, Then it is 409 invalid_state', async (t) => {
    const ended = await create({ subscription: ids.cancelled, type: 1, amount: 5 });
    t.is(ended.status, 409);
    t.is(ended.json.code, 'invalid_state');
    t.is(await storedFor('subscription_id', [ids.cancelled]), 0);
  });

  test('When the body is not JSON, Then it is 400 naming the body', async (t) => {
    const res = await request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: { ...headers(), 'content-type': 'application/json' }, body: '{"subscription": ' });
    t.is(res.status, 400);
    t.deepEqual(res.json.data.params, ['body']);
  });

  test('When discounts are listed by subscription and by order, Then only those come, newest first, with the total in X-WP-Total', async (t) => {
    const first = await create({ subscription: ids.listed, type: 1, amount: 5 });
    const second = await create({ subscription: ids.listed, type: 2, amount: 10 });
    const bySubscription = await get(`/discounts?subscription=${ids.listed}`);
    t.is(bySubscription.status, 200);
    t.deepEqual(bySubscription.json.map((d: { id: number }) => d.id), [second.json.id, first.json.id]);
    t.is(bySubscription.headers['x-wp-total'], '2');
    t.deepEqual(bySubscription.json[0], second.json);

    const linked = await create({ subscription: ids.subscription, type: 2, amount: 1, order: ids.renewalOrder });
    const byOrder = await get(`/discounts?order=${ids.renewalOrder}&subscription=${ids.subscription}`);
    t.true(byOrder.json.length >= 1);
    t.true(byOrder.json.every((d: { order: number; subscription: number }) => d.order === ids.renewalOrder && d.subscription === ids.subscription));
    t.true(byOrder.json.some((d: { id: number }) => d.id === linked.json.id));
    t.deepEqual((await get(`/discounts?order=${ids.unrelatedOrder}`)).json, []);

    const page = await get(`/discounts?subscription=${ids.listed}&per_page=1&page=2`);
    t.deepEqual(page.json.map((d: { id: number }) => d.id), [first.json.id]);
    t.is(page.headers['x-wp-totalpages'], '2');
    t.true((await get('/discounts')).json.length >= 2, 'no filter: all discounts');
  });

  test('When a filter or page parameter is not a positive number, Then it is 400 naming it', async (t) => {
    const res = await get('/discounts?subscription=abc&order=0&per_page=500');
    t.is(res.status, 400);
    t.deepEqual(res.json.data.params, ['subscription', 'order', 'per_page']);
  });

  test('When a discount does not exist, Then reading it is 404 discount_not_found', async (t) => {
    for (const id of ['99999999', 'abc']) {
      const res = await get(`/discounts/${id}`);
      t.is(res.status, 404);
      t.deepEqual(res.json, { code: 'discount_not_found', message: res.json.message, data: { status: 404 } });
    }
  });

  test.serial('When creating fails unexpectedly, Then the answer is a clean JSON 500 and the failure is logged', async (t) => {
    await shop.db.query(`RENAME TABLE ${shop.prefix}sidecar_renewal_discounts TO ${shop.prefix}sidecar_renewal_discounts_away`);
    try {
      const res = await create({ subscription: ids.subscription, type: 1, amount: 5 });
      t.is(res.status, 500);
      t.deepEqual(res.json, { code: 'internal_error', message: 'Something went wrong on our side; it has been logged.', data: { status: 500 } });
      t.regex(String(res.headers['content-type']), /^application\/json/);
      t.false(res.text.includes('sidecar_renewal_discounts'), 'no SQL or table names leak');
      const entry = log.entries.find((e) => e.level === 'error' && e.event === 'staff_request_failed' && e.fields?.route === 'create-discount');
      t.truthy(entry);
      t.regex(String((entry!.fields!.error as Error).message), /sidecar_renewal_discounts/);
    } finally {
      await shop.db.query(`RENAME TABLE ${shop.prefix}sidecar_renewal_discounts_away TO ${shop.prefix}sidecar_renewal_discounts`);
    }
  });
}
