import type { Request, Response } from 'restify';
import type { LookupOrderStatus } from '../../../order-status/lookup-order-status.use-case';
import { parseBasicAuthorization, type StaticBasicCredentials } from '../../../security/basic-credentials';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import { errorBody, parseJsonObject, queryNames, readBody, sendError, sendJson, sendText } from '../http-io';
import type { Transport } from '../transport';

export interface OrderStatusRouteDeps {
  transport: Transport;
  credentials: StaticBasicCredentials;
  throttle: FailedAttemptThrottle;
  lookup: LookupOrderStatus;
}

const LOOKUP_FIELDS = ['order_number', 'email', 'phone'] as const;
// One precomputed answer for "no such order" and "not yours": the same status and the same bytes.
const NOT_FOUND = JSON.stringify(errorBody(404, 'order_not_found', 'No order matches that order number and contact detail.'));
/**
 * A failed lookup is answered no sooner than this after the request arrived. Both kinds of failure
 * run the same reads and comparisons, but an existing order still brings back more rows than a
 * missing one; the floor (well above a lookup's own time) hides that difference.
 */
export const FAILED_LOOKUP_FLOOR_MS = 15;

type Refusal = { ok: false; status: number; code: string; message: string; params?: string[] };
type Parsed = { ok: true; orderNumber: string; email?: string; phone?: string } | Refusal;

/** Rule 1 of SPEC 4.1.1: a lookup field in the query string is refused, whatever the body holds. */
function queryStringRefusal(names: Set<string>): Refusal | null {
  const inQuery = LOOKUP_FIELDS.filter((field) => names.has(field));
  if (!inQuery.length) return null;
  return { ok: false, status: 400, code: 'params_must_be_in_body', message: `Send ${inQuery.join(', ')} in the JSON body, not in the query string.`, params: inQuery };
}

/** Rule 2 of SPEC 4.1.1, plus types: every field a string (an order number may be a JSON number). */
function parseOrderStatusRequest(body: Record<string, unknown>): Parsed {
  const bad: string[] = [];
  const text = (field: string, value: unknown): string | undefined => {
    if (value === undefined || value === null) return undefined;
    if (field === 'order_number' && typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
    if (typeof value !== 'string' || value.length > 320) {
      bad.push(field);
      return undefined;
    }
    return value.trim() === '' ? undefined : value.trim();
  };
  const orderNumber = text('order_number', body.order_number);
  const email = text('email', body.email);
  const phone = text('phone', body.phone);
  if (bad.length) return { ok: false, status: 400, code: 'invalid_params', message: `Invalid parameter(s): ${bad.join(', ')}.`, params: bad };
  if (orderNumber === undefined || (email === undefined && phone === undefined)) {
    return { ok: false, status: 400, code: 'missing_params', message: 'order_number and at least one of email or phone are required.' };
  }
  return { ok: true, orderNumber, email, phone };
}

/** POST /helpdesk/v1/order-status: HTTPS, Basic credentials, throttled failures, then the lookup. */
export function orderStatusRoute({ transport, credentials, throttle, lookup }: OrderStatusRouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrived = performance.now();
    if (!transport.isHttps(req)) {
      return sendError(res, 401, 'unauthorized', 'This route is served over HTTPS only.');
    }
    const supplied = parseBasicAuthorization(req.headers.authorization);
    const subject = supplied ? `key:${supplied.user}` : `ip:${transport.clientIp(req)}`;
    const state = throttle.state(subject);
    if (state.kind === 'unavailable') {
      return sendError(res, 503, 'service_unavailable', 'The service cannot check attempt limits right now; try again shortly.', {}, { 'Retry-After': '5' });
    }
    if (state.kind === 'blocked') {
      return sendError(res, 429, 'rate_limited', 'Too many failed attempts; try again later.', {}, { 'Retry-After': String(state.retryAfterSeconds) });
    }
    if (!credentials.acceptsHeader(req.headers.authorization)) {
      await throttle.recordFailure(subject);
      return sendError(res, 401, 'unauthorized', 'Missing or invalid credentials.', {}, { 'WWW-Authenticate': 'Basic realm="helpdesk"' });
    }

    const refuse = (refusal: Refusal) => sendError(res, refusal.status, refusal.code, refusal.message, refusal.params ? { params: refusal.params } : {});
    const inQuery = queryStringRefusal(queryNames(req));
    if (inQuery) return refuse(inQuery);
    const body = await readBody(req, 16 * 1024);
    if (!body.ok) return sendError(res, 413, 'payload_too_large', 'The body is too large.');
    const json = body.bytes.length ? parseJsonObject(body.bytes) : { ok: true as const, value: {} };
    if (!json.ok) return sendError(res, 400, 'invalid_params', json.message, { params: ['body'] });
    const parsed = parseOrderStatusRequest(json.value);
    if (!parsed.ok) return refuse(parsed);

    const outcome = await lookup.execute(parsed);
    if (outcome.kind === 'not_found') {
      await throttle.recordFailure(subject);
      const wait = arrived + FAILED_LOOKUP_FLOOR_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return sendText(res, 404, NOT_FOUND);
    }
    sendJson(res, 200, outcome.data);
  };
}
