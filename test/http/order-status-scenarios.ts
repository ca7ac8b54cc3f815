import test from 'ava';
import { basic, request, type TestResponse } from '../support/http-client';
import { FAILED_LOOKUP_FLOOR_MS } from '../../src/entry-points/http/routes/order-status.route';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop, type TestShopOptions } from '../support/test-shop';

const AUTH = { authorization: basic(HELPDESK_KEY, HELPDESK_SECRET), 'x-forwarded-proto': 'https' };

export interface Seeded {
  completedDhlDk: number;
  friday: number;
  partialRefund: number;
  fullRefund: number;
  pending: number;
  unpaid: number;
  emptyCountry: number;
  trashed: number;
  bladkompagniet: number;
  seOrder: number;
}

/** The shared order-status behaviour, run against one storage mode / prefix / numbering per test file. */
/**
 * `numbering`: which number the customer knows. With no plugin active the ID is the number even
 * when stale `_order_number` meta exists; with the free plugin `_order_number`; with Pro the
 * formatted `_order_number_formatted`.
 */
export function orderStatusScenarios(name: string, options: TestShopOptions) {
  const numbering = options.sequentialPlugin ?? 'none';
  const numbers = new Map<number, string>();
  let shop: TestShop;
  let api: RunningApi;
  let seeded: Seeded;

  const lookup = (body: unknown, headers: Record<string, string> = AUTH, query = ''): Promise<TestResponse> =>
    request(api.url, 'POST', `/helpdesk/v1/order-status${query}`, { headers, body });

  test.before(async () => {
    shop = await createTestShop(name, options);
    const s = shop.seeder;
    const address = (country: string, phone: string, email: string) => ({
      first_name: 'Mette', last_name: 'Hansen', address_1: 'Nørregade 1', city: 'København K', postcode: '1165', country, email, phone,
    });
    let n = 1000;
    const orderNumbers = (_: number) => {
      n += 1;
      return numbering === 'pro' ? { orderNumber: String(n), orderNumberFormatted: `WEB-${n}` } : { orderNumber: String(n) };
    };
    const make = async (spec: Parameters<typeof s.createOrder>[0]) => {
      const id = await s.createOrder(spec);
      numbers.set(id, numbering === 'none' ? String(id) : numbering === 'pro' ? spec.orderNumberFormatted! : spec.orderNumber!);
      return id;
    };
    seeded = {
      // Completed Tue 2026-11-17 10:00 local, paid the day before; DHL inside Denmark: +3 business days from completion.
      completedDhlDk: await make({
        status: 'completed', createdGmt: new Date('2026-11-16T08:00:00Z'), paidGmt: new Date('2026-11-16T08:05:00Z'),
        completedGmt: new Date('2026-11-17T09:00:00Z'), currency: 'DKK', total: '449.5', paymentMethodTitle: 'Kort',
        billing: address('DK', '+45 20 12 34 56', 'mette@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 2, total: '200' }, { name: 'Filter', qty: 1, total: '200' }],
        shipping_lines: [{ methodId: 'dhl', title: 'DHL Express', total: '49.50' }], ...orderNumbers(0),
      }),
      // Paid Friday 2026-11-20 23:30 local (22:30 UTC); DAO: Friday + 2 = Tuesday.
      friday: await make({
        status: 'processing', createdGmt: new Date('2026-11-20T22:00:00Z'), paidGmt: new Date('2026-11-20T22:30:00Z'),
        currency: 'DKK', total: '99', paymentMethodTitle: 'MobilePay', billing: address('DK', '20-11-22-33', 'fri@example.dk'),
        shipping: address('DK', '', ''), lineItems: [{ name: 'Te', qty: 3, total: '99' }],
        shipping_lines: [{ methodId: 'dao', title: 'DAO pakkeshop' }], ...orderNumbers(0),
      }),
      partialRefund: await make({
        status: 'completed', createdGmt: new Date('2026-11-02T10:00:00Z'), paidGmt: new Date('2026-11-02T10:00:00Z'), completedGmt: new Date('2026-11-03T10:00:00Z'),
        currency: 'DKK', total: '300', paymentMethodTitle: 'Kort', billing: address('DK', '30303030', 'part@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 3, total: '300' }], shipping_lines: [{ methodId: 'flat_rate', title: 'Fast fragt' }], ...orderNumbers(0),
      }),
      fullRefund: await make({
        status: 'completed', createdGmt: new Date('2026-11-02T10:00:00Z'), paidGmt: new Date('2026-11-02T10:00:00Z'),
        currency: 'DKK', total: '100', paymentMethodTitle: 'Kort', billing: address('DK', '40404040', 'full@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }], ...orderNumbers(0),
      }),
      pending: await make({
        status: 'pending', createdGmt: new Date('2026-11-19T10:00:00Z'), currency: 'DKK', total: '250', paymentMethodTitle: 'Kort',
        billing: address('DK', '50505050', 'pending@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 1, total: '250' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }], ...orderNumbers(0),
      }),
      unpaid: await make({
        status: 'on-hold', createdGmt: new Date('2026-11-19T10:00:00Z'), currency: 'DKK', total: '0', paymentMethodTitle: 'Bankoverførsel',
        billing: address('DK', '60606060', 'onhold@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Prøve', qty: 1, total: '0' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }], ...orderNumbers(0),
      }),
      emptyCountry: await make({
        status: 'processing', createdGmt: new Date('2026-11-18T10:00:00Z'), paidGmt: new Date('2026-11-18T10:00:00Z'), currency: 'DKK', total: '10',
        paymentMethodTitle: 'Kort', billing: address('', '70707070', 'nocountry@example.dk'), shipping: address('', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 1, total: '10' }], shipping_lines: [{ methodId: 'dhl', title: 'DHL' }], ...orderNumbers(0),
      }),
      trashed: await make({
        status: 'trash', createdGmt: new Date('2026-11-18T10:00:00Z'), currency: 'DKK', total: '10', paymentMethodTitle: 'Kort',
        billing: address('DK', '80808080', 'trash@example.dk'), shipping: address('DK', '', ''), lineItems: [], shipping_lines: [], ...orderNumbers(0),
      }),
      bladkompagniet: await make({
        status: 'completed', createdGmt: new Date('2026-11-18T10:00:00Z'), paidGmt: new Date('2026-11-18T10:00:00Z'), completedGmt: new Date('2026-11-20T12:00:00Z'),
        currency: 'DKK', total: '59', paymentMethodTitle: 'Kort', billing: address('DK', '90909090', 'blad@example.dk'), shipping: address('DK', '', ''),
        lineItems: [{ name: 'Magasin', qty: 1, total: '59' }], shipping_lines: [{ methodId: 'bladkompagniet', title: 'Bladkompagniet' }], ...orderNumbers(0),
      }),
      seOrder: await make({
        status: 'completed', createdGmt: new Date('2026-11-18T10:00:00Z'), paidGmt: new Date('2026-11-18T10:00:00Z'), completedGmt: new Date('2026-11-19T12:00:00Z'),
        currency: 'SEK', total: '120', paymentMethodTitle: 'Kort', billing: address('SE', '070-123 45 67', 'sven@example.se'), shipping: address('SE', '', ''),
        lineItems: [{ name: 'Kaffe', qty: 1, total: '120' }], shipping_lines: [{ methodId: 'dhl', title: 'DHL' }], ...orderNumbers(0),
      }),
    };
    await s.createRefund(seeded.partialRefund, '50.00');
    await s.createRefund(seeded.fullRefund, '100.00', { fullyRefunded: true });
    // The failure throttle has tests of its own (order-status-guards); here the many deliberate failures,
    // run in any order, must not block the key the other tests use.
    api = await startApi(shop.config({ HELPDESK_THROTTLE_MAX_FAILURES: '1000' }));
  });

  test.after.always(async () => {
    await api?.stop();
    await shop?.drop();
  });

  const num = (id: number) => numbers.get(id)!;

  test('When the billing email matches, Then the whole order status comes back', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' });
    t.is(res.status, 200, res.text);
    t.deepEqual(res.json, {
      order_number: num(seeded.completedDhlDk),
      status: 'completed',
      date_created: '2026-11-16T09:00:00+01:00',
      date_paid: '2026-11-16T09:05:00+01:00',
      date_completed: '2026-11-17T10:00:00+01:00',
      needs_payment: false,
      payment_method_title: 'Kort',
      total: '449.50',
      currency: 'DKK',
      item_count: 3,
      shipping_method: 'DHL Express',
      shipping_country: 'DK',
      is_refunded: false,
      estimated_delivery: '2026-11-20',
      tracking: {},
    });
  });

  test('When the email differs only in case and spaces, Then it still matches', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: '  Mette@Example.DK ' });
    t.is(res.status, 200);
  });

  for (const phone of ['20123456', '+4520123456', '20 12 34 56', '20-12-34-56', '+45 20-12-34-56', '0045 20123456']) {
    test(`When the billing phone is given as "${phone}", Then it matches the stored "+45 20 12 34 56"`, async (t) => {
      const res = await lookup({ order_number: num(seeded.completedDhlDk), phone });
      t.is(res.status, 200, res.text);
    });
  }

  test('When both email and phone are given and only the phone matches, Then the order is shown', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: 'someone@else.dk', phone: '20123456' });
    t.is(res.status, 200);
  });

  test('When both are given and only the email matches, Then the order is shown', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk', phone: '99999999' });
    t.is(res.status, 200);
  });

  test('When the order has no country, Then a fully qualified phone matches through the shop country', async (t) => {
    t.is((await lookup({ order_number: num(seeded.emptyCountry), phone: '+45 70 70 70 70' })).status, 200);
    t.is((await lookup({ order_number: num(seeded.emptyCountry), phone: '70707070' })).status, 200);
  });

  test('When a Swedish customer gives a local number, Then the billing country reads it', async (t) => {
    const res = await lookup({ order_number: num(seeded.seOrder), phone: '070 123 45 67' });
    t.is(res.status, 200);
    t.is(res.json.estimated_delivery, '2026-11-30', 'DHL outside Denmark: Thursday + 7 business days');
  });

  test('When no order exists and when the email is wrong, Then both answers are the same bytes', async (t) => {
    const mismatch = await lookup({ order_number: num(seeded.completedDhlDk), email: 'wrong@example.dk' });
    const missing = await lookup({ order_number: '987654321', email: 'mette@example.dk' });
    const wrongPhone = await lookup({ order_number: num(seeded.completedDhlDk), phone: '+4599999999' });
    t.is(mismatch.status, 404);
    t.deepEqual(mismatch.json, { code: 'order_not_found', message: mismatch.json.message, data: { status: 404 } });
    for (const other of [missing, wrongPhone]) {
      t.is(other.status, 404);
      t.is(other.text, mismatch.text);
      // Date and X-Request-Id differ from one answer to the next whatever the outcome, so they tell nothing.
      const { date: _a, 'x-request-id': idA, ...headersA } = mismatch.headers;
      const { date: _b, 'x-request-id': idB, ...headersB } = other.headers;
      t.deepEqual(headersA, headersB);
      t.truthy(idA && idB);
    }
  });

  test('When many lookups arrive at once (read together), Then each gets its own answer', async (t) => {
    const asked = [
      { body: { order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' }, status: 200, shown: 'completed' },
      { body: { order_number: num(seeded.friday), phone: '20112233' }, status: 200, shown: 'processing' },
      { body: { order_number: num(seeded.completedDhlDk), phone: '20123456' }, status: 200, shown: 'completed' },
      { body: { order_number: num(seeded.pending), email: 'pending@example.dk' }, status: 200, shown: 'pending' },
      { body: { order_number: num(seeded.friday), email: 'mette@example.dk' }, status: 404 },
      { body: { order_number: '987654321', email: 'mette@example.dk' }, status: 404 },
      { body: { order_number: num(seeded.seOrder), email: 'sven@example.se' }, status: 200, shown: 'completed' },
    ];
    const all = [...asked, ...asked];
    const answers = await Promise.all(all.map(({ body }) => lookup(body)));
    answers.forEach((res, index) => {
      const { body, status, shown } = all[index];
      t.is(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
      if (status === 200) {
        t.is(res.json.order_number, body.order_number);
        t.is(res.json.status, shown);
      }
    });
    t.is(answers[0].text, answers[2].text, 'the same order asked twice at once is answered alike');
  });

  test('When a lookup fails, Then the answer never comes sooner than the floor, whether the order exists or not', async (t) => {
    for (const body of [{ order_number: num(seeded.completedDhlDk), email: 'wrong@example.dk' }, { order_number: '987654321', email: 'mette@example.dk' }]) {
      const started = performance.now();
      const res = await lookup(body);
      t.is(res.status, 404);
      t.true(performance.now() - started >= FAILED_LOOKUP_FLOOR_MS, 'a failure is not answered early');
    }
  });

  test('When an order number alone is given, Then it is 400 missing_params', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk) });
    t.is(res.status, 400);
    t.is(res.json.code, 'missing_params');
    t.deepEqual(res.json.data, { status: 400 });
    t.is((await lookup({ order_number: num(seeded.completedDhlDk), email: '', phone: '  ' })).json.code, 'missing_params');
    t.is((await lookup({ email: 'mette@example.dk' })).json.code, 'missing_params');
    t.is((await lookup(undefined)).json.code, 'missing_params');
  });

  if (numbering !== 'none') {
    // Serial: it adds an order, which the test of untouched data must not see happen.
    test.serial('When an order has no number of its own (placed while the numbering plugin was off), Then its ID is its number, and only then', async (t) => {
      const id = await shop.seeder.createOrder({ status: 'processing', total: '10.00', billing: { email: 'no.number@example.dk', phone: '', country: 'DK' } });
      const found = await lookup({ order_number: String(id), email: 'no.number@example.dk' });
      t.is(found.status, 200, found.text);
      t.is(found.json.order_number, String(id));
      t.is((await lookup({ order_number: String(seeded.completedDhlDk), email: 'mette@example.dk' })).status, 404, 'an order with a number is not found by its ID');
    });
  }

  test('When a lookup field is in the query string, Then it is 400 params_must_be_in_body', async (t) => {
    for (const query of ['?email=mette%40example.dk', '?order_number=1', '?phone=20123456']) {
      const res = await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' }, AUTH, query);
      t.is(res.status, 400);
      t.is(res.json.code, 'params_must_be_in_body');
    }
    // Rule 1 comes first, whatever the body is: a form-encoded body is not a second, different error.
    const form = await request(api.url, 'POST', '/helpdesk/v1/order-status?email=mette%40example.dk', {
      headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' }, body: `order_number=${num(seeded.completedDhlDk)}&email=mette%40example.dk`,
    });
    t.is(form.status, 400);
    t.is(form.json.code, 'params_must_be_in_body');
  });

  test('When a field has the wrong type or the body is not JSON, Then it is 400 invalid_params', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: ['mette@example.dk'] });
    t.is(res.status, 400);
    t.is(res.json.code, 'invalid_params');
    t.deepEqual(res.json.data.params, ['email']);
    const broken = await request(api.url, 'POST', '/helpdesk/v1/order-status', { headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"order_number":' });
    t.is(broken.status, 400);
    t.is(broken.json.code, 'invalid_params');
  });

  test('When credentials are missing or wrong, Then it is 401 unauthorized', async (t) => {
    const body = { order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' };
    const attempts: Record<string, string>[] = [
      { 'x-forwarded-proto': 'https' },
      { 'x-forwarded-proto': 'https', authorization: basic(HELPDESK_KEY, 'wrong') },
      { 'x-forwarded-proto': 'https', authorization: basic('other', HELPDESK_SECRET) },
      { 'x-forwarded-proto': 'https', authorization: 'Bearer abc' },
    ];
    for (const headers of attempts) {
      const res = await lookup(body, headers);
      t.is(res.status, 401);
      t.deepEqual(res.json, { code: 'unauthorized', message: res.json.message, data: { status: 401 } });
    }
  });

  test('When the request is plain HTTP, Then it is 401 even with the right credentials', async (t) => {
    const res = await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' }, { authorization: AUTH.authorization });
    t.is(res.status, 401);
    t.is(res.json.code, 'unauthorized');
    const http = await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' }, { ...AUTH, 'x-forwarded-proto': 'http' });
    t.is(http.status, 401);
  });

  test('When the order is paid on a Friday evening, Then DAO delivery is the Tuesday after', async (t) => {
    const res = await lookup({ order_number: num(seeded.friday), phone: '20112233' });
    t.is(res.status, 200);
    t.is(res.json.date_paid, '2026-11-20T23:30:00+01:00');
    t.is(res.json.date_completed, null);
    t.is(res.json.estimated_delivery, '2026-11-24');
    t.is(res.json.item_count, 3);
  });

  test('When an order was completed on a Friday, Then Bladkompagniet adds 6 business days from completion', async (t) => {
    const res = await lookup({ order_number: num(seeded.bladkompagniet), email: 'blad@example.dk' });
    t.is(res.json.estimated_delivery, '2026-11-30');
  });

  test('When an order has neither paid nor completed date, Then there is no estimate and it needs payment', async (t) => {
    const res = await lookup({ order_number: num(seeded.pending), email: 'pending@example.dk' });
    t.is(res.status, 200);
    t.is(res.json.estimated_delivery, null);
    t.is(res.json.date_paid, null);
    t.is(res.json.needs_payment, true);
    t.is(res.json.status, 'pending');
    const free = await lookup({ order_number: num(seeded.unpaid), email: 'onhold@example.dk' });
    t.is(free.json.needs_payment, false);
  });

  test('When the shipping method is not a listed carrier, Then there is no estimate', async (t) => {
    const res = await lookup({ order_number: num(seeded.partialRefund), email: 'part@example.dk' });
    t.is(res.json.shipping_method, 'Fast fragt');
    t.is(res.json.estimated_delivery, null);
  });

  test('When an order has a partial or a full refund, Then it is shown as refunded', async (t) => {
    const partial = await lookup({ order_number: num(seeded.partialRefund), email: 'part@example.dk' });
    t.is(partial.json.is_refunded, true);
    t.is(partial.json.status, 'completed');
    const full = await lookup({ order_number: num(seeded.fullRefund), email: 'full@example.dk' });
    t.is(full.json.is_refunded, true);
    t.is(full.json.status, 'refunded');
  });

  test('When an order is in the bin, Then it is not found', async (t) => {
    const res = await lookup({ order_number: num(seeded.trashed), email: 'trash@example.dk' });
    t.is(res.status, 404);
  });

  test('When bad requests arrive, Then the shop data is untouched', async (t) => {
    const checksum = async () => {
      const [rows] = await shop.db.query(`CHECKSUM TABLE ${shop.prefix}posts, ${shop.prefix}postmeta, ${shop.prefix}wc_orders, ${shop.prefix}wc_orders_meta, ${shop.prefix}woocommerce_order_items`);
      return JSON.stringify(rows);
    };
    const before = await checksum();
    await lookup({ order_number: `${num(seeded.completedDhlDk)}'; DELETE FROM ${shop.prefix}posts; --`, email: "x' OR '1'='1" });
    await lookup({ order_number: num(seeded.completedDhlDk), email: 'mette@example.dk' }, AUTH, '?email=x');
    await lookup({ order_number: { $gt: 0 }, phone: 1 });
    t.is(await checksum(), before);
  });
}
