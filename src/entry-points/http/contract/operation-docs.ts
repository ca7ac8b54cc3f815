/**
 * The pieces of the routes' contracts that many share: documented error answers, the staff routes'
 * security and refusals, and the path and request schemas several routes take.
 */
import { Type, type IntegerOptions, type TSchema } from '@sinclair/typebox';
import { REFUSAL_KEYWORD } from '../../../shared/json-schema';
import { notFound as notFoundRefusal, type NotFoundCode, type OperationDoc } from './route-contract';
import { ref, type Schema } from './answers';

export const json = (schema: Schema | TSchema) => ({ 'application/json': { schema } });

/** An error answer: the service's error shape with `data.status` fixed and `code` one of `codes`. */
export function error(status: number, codes: string[], description: string, headers?: Record<string, unknown>) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: json({
      allOf: [ref('Error')],
      properties: { code: { enum: codes }, data: { type: 'object', properties: { status: { const: status } } } },
    }),
  };
}

export const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } } };
export const internalError = error(500, ['internal_error'], 'Something failed on the service\'s side; it has been logged.');
export const tooLarge = error(413, ['payload_too_large'], 'The body is larger than the route reads.');
/** The 404 of one not-found refusal, documented in the words its answer carries. */
export const notFound = (code: NotFoundCode) => error(404, [code], notFoundRefusal(code).message);
export const invalidBody = (what: string) => error(400, ['invalid_params'], `${what}; \`data.params\` names each field at fault (\`body\` when it is not a JSON object).`);

type Security = Record<string, string[]>[];
const staffBasicSecurity: Security = [{ wooBasic: [] }, { wooConsumerKey: [], wooConsumerSecret: [] }];
const staffCookieSecurity: Security = [{ wpLoggedIn: [], wpNonce: [] }, { wpLoggedIn: [], wpNonceQuery: [] }];
const staffEitherSecurity = [...staffBasicSecurity, ...staffCookieSecurity];
const staffRefusals = {
  401: error(401, ['unauthorized'], 'No valid credentials of the route\'s kind, or not HTTPS.'),
  403: error(403, ['forbidden'], 'Authenticated, without the capability the route needs.'),
  500: internalError,
};
/** Routes the logged-in cookie opens: WordPress's own refusal of a valid cookie with a bad nonce, too. */
const cookieRefusals = {
  ...staffRefusals,
  401: error(401, ['unauthorized'], 'No valid credentials (no valid logged-in cookie, no valid key or password), or not HTTPS.'),
  403: error(403, ['forbidden', 'rest_cookie_invalid_nonce'],
    '`forbidden`: authenticated, without the capability the route needs. `rest_cookie_invalid_nonce` (message `Cookie check failed`): a valid logged-in cookie '
    + 'whose `wp_rest` nonce is missing, older than two ticks, or another user\'s, session\'s or action\'s; WordPress\'s own answer, on which `apiFetch` fetches a fresh nonce and retries.'),
};

/** Staff routes reached from WP admin through `apiFetch`, which sends DELETE, PUT and PATCH as POST with this header. */
export const METHOD_OVERRIDE_NOTE = 'From WP admin, `apiFetch` sends it as POST with `X-HTTP-Method-Override: DELETE`, which the service takes as DELETE (as for PUT and PATCH on any staff route).';

export type StaffKind = 'basic' | 'cookie' | 'discounts' | 'order_payments';
const STAFF_TAGS: Record<StaffKind, string> = {
  basic: 'Staff (API key)', cookie: 'Subscription support', discounts: 'Renewal discounts', order_payments: 'Order payments',
};

/**
 * A staff operation: its tag, security and the refusals every staff route shares. `basic`: API key or application
 * password; `cookie`: the logged-in cookie and nonce; `discounts` and `order_payments`: either, as the request offers.
 */
export function staff(kind: StaffKind, operation: Omit<OperationDoc, 'tags' | 'security'>): OperationDoc {
  return {
    tags: [STAFF_TAGS[kind]],
    security: kind === 'basic' ? staffBasicSecurity : kind === 'cookie' ? staffCookieSecurity : staffEitherSecurity,
    ...operation,
    responses: { ...operation.responses, ...(kind === 'basic' ? staffRefusals : cookieRefusals) },
  };
}

/**
 * The largest ID a route takes. The shop's IDs (WordPress's and the service's own) are BIGINT UNSIGNED, but a
 * JavaScript number holds whole numbers exactly only up to 2^53 - 1, far beyond any shop's.
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * An ID, defined once for every route's path, query string and body: a whole number from 1 to MAX_ID. In a path
 * or query string that is plain decimal digits without a leading zero (`PLAIN_INTEGER`, shared/json-schema.ts);
 * anything else is refused.
 */
const id = (options: IntegerOptions = {}) => Type.Integer({ ...options, minimum: 1, maximum: MAX_ID });

/**
 * An ID in the path. Anything else is answered as `notFound` (no such thing has that "ID"), never as a bad
 * parameter: the path names a thing, and a thing that cannot exist is not there.
 */
export const pathId = (description: string, notFound: string) => id({
  [REFUSAL_KEYWORD]: notFound,
  description: `${description} Anything but an ID (digits, 1 to ${MAX_ID}) is answered as not found.`,
});

/** An ID in the query string, which may be left out; anything else is 400 `invalid_params` naming it. */
export const queryId = (description: string) => Type.Optional(id({ description }));

/** An ID in a JSON body: a JSON number, or a digit string as WordPress coerces it. */
export const bodyId = (description: string) => Type.Union([
  id(),
  Type.String({ pattern: '^\\s*\\d{1,15}\\s*$' }),
], { description });

/**
 * Paging in a query string, defined once for every listing: `page` from 1, `per_page` from 1 to the route's
 * `maxPerPage`, each plain digits as an ID is; anything else is 400 `invalid_params` naming it. The last page is
 * the last whose first row, `(page - 1) * per_page`, a number still holds exactly.
 */
export const paging = (maxPerPage: number, defaultPerPage: number) => ({
  page: Type.Integer({ minimum: 1, maximum: Math.floor(Number.MAX_SAFE_INTEGER / maxPerPage), default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: maxPerPage, default: defaultPerPage }),
});

/** The number a checked `bodyId` holds. */
export const idValue = (id: number | string): number => (typeof id === 'number' ? id : Number(id.trim()));
