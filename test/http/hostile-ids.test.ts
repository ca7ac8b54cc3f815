import { CARD_TOKEN_MAX_LENGTH } from '../../src/entry-points/http/routes/helpdesk-card.contract';
import test from 'ava';
import { ApiDescription, registeredOperations } from '../support/api-description';
import { basic, request, type TestResponse } from '../support/http-client';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import {
  createApiKey, createCancellationReason, createStaffUser, logIn, WP_SECRETS_ENV, type ApiKey, type StaffSession,
} from '../support/wordpress-fixtures';

// Every ID and paging number of every route, in its path and its query string, given what is not one: each is the
// route's documented 4xx with a code, never a 5xx, and nothing is written. The routes and their numbers are read
// from the API's own document (which the server's route table is held to), so a new route is covered as it is added.

const HTTPS = { 'x-forwarded-proto': 'https' };
/** Not an ID, nor a page: what ajv's coercion or the database would take for a number, and numbers past the bound. */
const HOSTILE = [
  '1e309', 'Infinity', '-Infinity', 'NaN', '-1', '0', '-0', '1.5', '1.0', '0x10', '0b1', '1e3', '+1', ' 1', '1 ', '007',
  '123456789012345678901234567890', '9007199254740992', '9'.repeat(400), 'abc',
];
const BATCH = 10;
/**
 * restify's router takes a path segment of at most CARD_TOKEN_MAX_LENGTH characters (find-my-way's `maxParamLength`, raised
 * from its 100 for the helpdesk card's signed links): a longer one is a path the service does not have, answered 404
 * `not_found` before any route, as the document's introduction says.
 */
const ROUTER_SEGMENT_LIMIT = CARD_TOKEN_MAX_LENGTH;

let shop: TestShop;
let api: RunningApi;
let description: ApiDescription;
let key: ApiKey;
let session: StaffSession;
/** A real thing for each path parameter, so that only the parameter under test is not one. */
const real: Record<string, number> = {};

interface NumberParameter {
  method: string;
  /** The documented path, `{name}` for each parameter. */
  path: string;
  name: string;
  in: 'path' | 'query';
  schema: { type: string; minimum?: number; maximum?: number; 'x-refusal'?: string };
}

/** Each integer path parameter and query string parameter of each documented operation. */
function numberParameters(): NumberParameter[] {
  return description.operations().flatMap((operation) => {
    const [method, path] = operation.split(' ');
    const parameters: any[] = description.document.paths[path][method.toLowerCase()].parameters ?? [];
    return parameters.flatMap((parameter): NumberParameter[] => {
      if (parameter.in === 'path' && parameter.schema.type === 'integer') return [{ method, path, name: parameter.name, in: 'path', schema: parameter.schema }];
      if (parameter.in !== 'query') return [];
      return Object.entries(parameter.schema.properties as Record<string, NumberParameter['schema']>)
        .filter(([, schema]) => schema.type === 'integer')
        .map(([name, schema]) => ({ method, path, name, in: 'query', schema }));
    });
  });
}

/** Valid credentials of the kind the operation takes, so that the request reaches its contract. */
function credentials(method: string, path: string): Record<string, string> {
  const schemes: string[] = description.document.paths[path][method.toLowerCase()].security.flatMap(Object.keys);
  if (schemes.includes('wooBasic')) return { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) };
  if (schemes.includes('wpLoggedIn')) return session.headers;
  if (schemes.includes('helpdeskBasic')) return { ...HTTPS, authorization: basic(HELPDESK_KEY, HELPDESK_SECRET) };
  return {};
}

/** The parameter given `value` (as a client would encode it), every other path parameter a real thing. */
function send(parameter: NumberParameter, value: string): Promise<TestResponse> {
  const { method, path } = parameter;
  const given = (name: string) => encodeURIComponent(parameter.in === 'path' && name === parameter.name ? value : String(real[name] ?? 1));
  const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => given(name))
    + (parameter.in === 'query' ? `?${parameter.name}=${encodeURIComponent(value)}` : '');
  const operation = description.document.paths[path][method.toLowerCase()];
  return request(api.url, method, url, { headers: credentials(method, path), body: operation.requestBody ? {} : undefined, timeoutMs: 10_000 });
}

/** Every `[parameter, value]` sent, `BATCH` at a time; the answers in the same order. */
async function sendAll(cases: [NumberParameter, string][]): Promise<TestResponse[]> {
  const answers: TestResponse[] = [];
  for (let at = 0; at < cases.length; at += BATCH) {
    answers.push(...await Promise.all(cases.slice(at, at + BATCH).map(([parameter, value]) => send(parameter, value))));
  }
  return answers;
}

/** Each table's row count: what a request that was refused must not have changed. */
async function rowCounts(): Promise<Record<string, number>> {
  const [tables] = await shop.db.query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name", [shop.dbName]);
  const counts: Record<string, number> = {};
  for (const { name } of tables as { name: string }[]) counts[name] = Number(((await shop.db.query(`SELECT COUNT(*) AS n FROM \`${name}\``))[0] as any[])[0].n);
  return counts;
}

test.before(async () => {
  shop = await createTestShop('hostile_ids');
  const billing = { first_name: 'Mette', last_name: 'Hansen', country: 'DK', email: 'mette@example.dk', phone: '20123456' };
  real.orderId = await shop.seeder.createOrder({ status: 'processing', billing, total: '199.00' });
  real.subscriptionId = await shop.seeder.createSubscription({ status: 'active', parentId: real.orderId, billing, total: '199.00', currency: 'DKK' });
  const reason = await createCancellationReason(shop, 'Too expensive');
  const manager = await createStaffUser(shop, { login: 'anna.manager', roles: ['shop_manager'] });
  key = await createApiKey(shop, manager.id, 'read_write');
  session = await logIn(shop, manager);
  api = await startApi(shop.config(WP_SECRETS_ENV));
  description = new ApiDescription((await request(api.url, 'GET', '/openapi.json')).json);

  const staff = { ...HTTPS, authorization: basic(key.consumerKey, key.consumerSecret) };
  const discount = await request(api.url, 'POST', '/renewal-discounts/v1/discounts', { headers: staff, body: { subscription: real.subscriptionId, type: 1, amount: 10 } });
  const recorded = await request(api.url, 'POST', `/subscription-support/v1/subscription/${real.subscriptionId}/cancellation-reasons`, {
    headers: session.headers, body: { reason_post_ids: [reason] },
  });
  if (discount.status !== 201 || recorded.status !== 201) throw new Error(`fixtures: ${discount.text} ${recorded.text}`);
  real.id = discount.json.id;
  real.entryId = recorded.json[0].id;
});

test.after.always(async () => {
  await api?.stop();
  await shop?.drop();
});

test.serial('The document lists every route the server has, and each ID and paging number in a path or query string is bounded', (t) => {
  t.deepEqual(description.operations(), registeredOperations(api.server));
  const parameters = numberParameters();
  t.true(parameters.length >= 17, `${parameters.length} numbers found in paths and query strings`);
  for (const { method, path, name, schema } of parameters) {
    t.true(schema.minimum !== undefined && schema.minimum >= 1, `${method} ${path} ${name}: minimum ${schema.minimum}`);
    t.true(schema.maximum !== undefined && schema.maximum <= Number.MAX_SAFE_INTEGER, `${method} ${path} ${name}: maximum ${schema.maximum}`);
  }
});

test.serial('When any ID or paging number of any route is not one, Then the answer is the documented 4xx with its code, and nothing is written', async (t) => {
  const before = await rowCounts();
  const cases = numberParameters().flatMap((parameter) => HOSTILE.map((value): [NumberParameter, string] => [parameter, value]));
  const answers = await sendAll(cases);
  cases.forEach(([parameter, value], at) => {
    const res = answers[at];
    const what = `${parameter.method} ${parameter.path} ${parameter.name}=${JSON.stringify(value).slice(0, 40)}: ${res.status} ${res.text.slice(0, 300)}`;
    t.true(res.status >= 400 && res.status < 500, what);
    t.is(typeof res.json?.code, 'string', what);
    if (parameter.in === 'path' && encodeURIComponent(value).length > ROUTER_SEGMENT_LIMIT) return void t.like(res.json, { code: 'not_found', data: { status: 404 } }, what);
    description.checkResponse(t, parameter.method, parameter.path, res);
    // Refused by the contract itself: an ID in the path as the route's not-found, a query parameter as invalid_params naming it.
    if (parameter.in === 'path') t.like(res.json, { code: parameter.schema['x-refusal'], data: { status: 404 } }, what);
    else t.like(res.json, { code: 'invalid_params', data: { status: 400, params: [parameter.name] } }, what);
  });
  t.deepEqual(await rowCounts(), before);
});

test.serial('When an ID or paging number is the largest it may be, Then the route looks for it and answers as for a thing it does not have, never a 5xx', async (t) => {
  const parameters = numberParameters();
  const answers = await sendAll(parameters.map((parameter) => [parameter, String(parameter.schema.maximum)]));
  parameters.forEach((parameter, at) => {
    const res = answers[at];
    const what = `${parameter.method} ${parameter.path} ${parameter.name}=${parameter.schema.maximum}: ${res.status} ${res.text}`;
    description.checkResponse(t, parameter.method, parameter.path, res);
    const body = description.document.paths[parameter.path][parameter.method.toLowerCase()].requestBody?.content['application/json'].schema;
    // A route whose body needs fields refuses the empty one sent, once the ID has passed.
    if (body?.required?.length) t.like(res.json, { code: 'invalid_params', data: { status: 400, params: body.required } }, what);
    else if (parameter.in === 'path') t.like(res.json, { code: parameter.schema['x-refusal'], data: { status: 404 } }, what);
    else t.is(res.status, 200, what);
  });
});
