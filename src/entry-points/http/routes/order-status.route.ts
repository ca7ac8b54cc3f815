import type { Request, Response } from 'restify';
import type { LookupOrderStatus, OrderStatusQuery } from '../../../order-status/lookup-order-status.use-case';
import type { StaticBasicCredentials } from '../../../security/basic-credentials';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import { answerInTime, errorBody, RequestClient, sendAttemptRefusal, sendError, sendJson, sendRefusal, sendText } from '../http-io';
import { checkRequest, type InputOf, type Refusal } from '../contract/route-contract';
import { orderStatusContract } from './helpdesk.contract';
import { databaseUnavailable } from '../../../data-access/connection-pool';
import type { Transport } from '../transport';

export interface OrderStatusRouteDeps {
  transport: Transport;
  credentials: StaticBasicCredentials;
  throttle: FailedAttemptThrottle;
  lookup: LookupOrderStatus;
}

export const ORDER_STATUS_BODY_LIMIT_BYTES = 16 * 1024;
// One precomputed answer for "no such order" and "not yours": the same status and the same bytes.
const NOT_FOUND = JSON.stringify(errorBody(404, 'order_not_found', 'No order matches that order number and contact detail.'));
/**
 * A failed lookup is answered no sooner than this after the request arrived. Both kinds of failure
 * run the same reads and comparisons, but an existing order still brings back more rows than a
 * missing one; the floor (well above a lookup's own time) hides that difference.
 */
export const FAILED_LOOKUP_FLOOR_MS = 15;

/** Node's timers may fire up to a millisecond early (the loop's clock is cached), so wait again until the moment has passed. */
async function waitUntil(moment: number): Promise<void> {
  for (let left = moment - performance.now(); left > 0; left = moment - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/** The lookup a checked body asks for: trimmed text, an empty field as none (the contract has made sure the needed ones are there). */
function lookupOf(body: InputOf<typeof orderStatusContract>['body']): OrderStatusQuery {
  const text = (value: string | number | null | undefined) => (value === undefined || value === null ? undefined : String(value).trim() || undefined);
  return { orderNumber: text(body.order_number)!, email: text(body.email), phone: text(body.phone) };
}

/**
 * What an attempt counts against, and what it is only checked against (docs/routes.md, "Failed attempts and
 * the limit"). Every failed authentication counts against the client's address (an IPv6 /64), whatever
 * user name it sends: a new name per request must be neither a new count nor a new Redis key. A wrong
 * secret for the helpdesk key's name also counts against that key at that address, never the key alone,
 * so nobody elsewhere can lock the helpdesk out. With the right credentials a failed lookup counts
 * against the API key (SPEC 5.1 item 4); the address is then only checked, so a blocked address gets no
 * answer that would tell a right secret from a wrong one.
 */
function attemptSubjects(credentials: StaticBasicCredentials, authorized: boolean, client: string, supplied: { user: string } | null): { counted: string[]; checked: string[] } {
  const address = `ip:${client}`;
  if (!supplied) return { counted: [address], checked: [] };
  const keyHere = `key:${supplied.user}@${client}`;
  if (authorized) return { counted: [`key:${supplied.user}`], checked: [address, keyHere] };
  return { counted: credentials.namesKey(supplied.user) ? [address, keyHere] : [address], checked: [] };
}

type Prepared =
  | { kind: 'refused'; send: (res: Response) => void }
  | { kind: 'gone' }
  | { kind: 'unavailable' }
  | { kind: 'looked_up'; outcome: Awaited<ReturnType<LookupOrderStatus['execute']>> };

/**
 * What an authorized request asks for, read, checked and looked up. It runs while the request's place is
 * being taken: nothing of it reaches the client before the place is held (a refused attempt gets the
 * throttle's answer whatever its body said), so the limit still decides what is evaluated, and the lookup's
 * round trip to the database overlaps the throttle's to Redis instead of following it.
 */
async function prepare(req: Request, lookup: LookupOrderStatus): Promise<Prepared> {
  const refused = (refusal: Refusal): Prepared => ({ kind: 'refused', send: (res) => sendRefusal(res, refusal) });
  const checked = await checkRequest(req, orderStatusContract, ORDER_STATUS_BODY_LIMIT_BYTES);
  if (checked.kind !== 'input') return checked.kind === 'gone' ? checked : refused(checked.refusal);
  try {
    return { kind: 'looked_up', outcome: await lookup.execute(lookupOf(checked.input.body)) };
  } catch (error) {
    if (databaseUnavailable(error)) return UNAVAILABLE;
    throw error;
  }
}

const UNAVAILABLE = { kind: 'unavailable' as const };

function sendUnavailable(res: Response): void {
  sendError(res, 503, 'service_unavailable', 'Order status cannot be looked up right now; try again shortly.', {}, { 'Retry-After': '5' });
}

/**
 * POST /helpdesk/v1/order-status: HTTPS, then a place under the failed-attempt limit (taken before the
 * credentials or the lookup are evaluated, given back when neither fails), Basic credentials, the lookup.
 */
export function orderStatusRoute({ transport, credentials, throttle, lookup }: OrderStatusRouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrived = performance.now();
    if (!transport.isHttps(req)) {
      return sendError(res, 401, 'unauthorized', 'This route is served over HTTPS only.');
    }
    // Checked here, answered only once the attempt holds its place: the credentials decide what it counts against.
    const { authorized, supplied } = credentials.checkHeader(req.headers.authorization);
    const subjects = attemptSubjects(credentials, authorized, transport.clientGroup(req), supplied);
    const client = new RequestClient(req);
    const reserving = throttle.reserve(subjects.counted, subjects.checked, client);
    const preparing = authorized ? prepare(req, lookup) : null;
    // A lookup whose attempt is refused is never answered; its failure (a database error) must not go unhandled either.
    preparing?.catch(() => undefined);
    // Redis that stopped answering holds no request past the answer deadline; a place granted after it goes back.
    const verdict = await answerInTime(reserving, arrived, UNAVAILABLE);
    if (verdict === UNAVAILABLE) {
      void reserving.then((late) => late.kind === 'allowed' && late.reservation.released(), () => undefined);
      return sendAttemptRefusal(res, verdict);
    }
    // The client left while waiting for a place: there is nobody to answer.
    if (verdict.kind === 'abandoned') return;
    if (verdict.kind !== 'allowed') return sendAttemptRefusal(res, verdict);
    const { reservation } = verdict;
    try {
      if (!preparing) {
        await reservation.failed();
        return sendError(res, 401, 'unauthorized', 'Missing or invalid credentials.', {}, { 'WWW-Authenticate': 'Basic realm="helpdesk"' });
      }
      const prepared = await answerInTime(preparing, arrived, UNAVAILABLE);
      if (prepared.kind === 'unavailable') return sendUnavailable(res);
      if (prepared.kind === 'gone') return;
      if (prepared.kind === 'refused') return prepared.send(res);
      const { outcome } = prepared;
      if (outcome.kind === 'not_found') {
        await reservation.failed();
        await waitUntil(arrived + FAILED_LOOKUP_FLOOR_MS);
        return sendText(res, 404, NOT_FOUND);
      }
      sendJson(res, 200, outcome.data);
    } finally {
      // Anything but a failed attempt (an answer, a refused body, a client gone before its body, an error) gives the place back.
      reservation.released();
    }
  };
}
