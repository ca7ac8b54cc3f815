/**
 * The OpenAPI 3.1 description of every route, served at GET /openapi.json. The tests hold it to the
 * server: every route restify has registered must be described here and nothing else, the document must
 * pass an OpenAPI 3.1 validator, and real answers must match the schemas it gives for them.
 */
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../routes/renewal-discounts.route';
import { LOOKUP_VALUE_MAX_LENGTH } from '../routes/customer-lookup.route';
import { SANE_REQUEST_ID } from '../request-observer';
import { components, ref, type Schema } from './schemas';

type Operation = Record<string, unknown>;

const json = (schema: Schema) => ({ 'application/json': { schema } });

/** An error answer: the service's error shape with `data.status` fixed and `code` one of `codes`. */
function error(status: number, codes: string[], description: string, headers?: Record<string, unknown>) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: json({
      allOf: [ref('Error')],
      properties: { code: { enum: codes }, data: { type: 'object', properties: { status: { const: status } } } },
    }),
  };
}

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } } };
const internalError = error(500, ['internal_error'], 'Something failed on the service\'s side; it has been logged.');
const tooLarge = error(413, ['payload_too_large'], 'The body is larger than the route reads.');
const invalidBody = (what: string) => error(400, ['invalid_params'], `${what}; \`data.params\` names each field at fault (\`body\` when it is not a JSON object).`);

const staffBasicSecurity = [{ wooBasic: [] }, { wooConsumerKey: [], wooConsumerSecret: [] }];
const staffCookieSecurity = [{ wpLoggedIn: [], wpNonce: [] }, { wpLoggedIn: [], wpNonceQuery: [] }];
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
const METHOD_OVERRIDE_NOTE = 'From WP admin, `apiFetch` sends it as POST with `X-HTTP-Method-Override: DELETE`, which the service takes as DELETE (as for PUT and PATCH on any staff route).';

const idPath = (name: string, description: string) => ({
  name, in: 'path', required: true, description: `${description} Anything but a positive number is answered as not found.`,
  schema: { type: 'integer', minimum: 1 },
});
const subscriptionIdParam = idPath('subscriptionId', 'The subscription\'s ID.');
const subscriptionNotFound = error(404, ['subscription_not_found'], 'No subscription with that ID.');

type StaffKind = 'basic' | 'cookie' | 'discounts' | 'order_payments';
const STAFF_TAGS: Record<StaffKind, string> = {
  basic: 'Staff (API key)', cookie: 'Subscription support', discounts: 'Renewal discounts', order_payments: 'Order payments',
};

/**
 * A staff operation: its tag, security and the refusals every staff route shares. `basic`: API key or application
 * password; `cookie`: the logged-in cookie and nonce; `discounts` and `order_payments`: either, as the request offers.
 */
function staff(kind: StaffKind, operation: Operation & { responses: Record<string, unknown> }): Operation {
  return {
    tags: [STAFF_TAGS[kind]],
    security: kind === 'basic' ? staffBasicSecurity : kind === 'cookie' ? staffCookieSecurity : staffEitherSecurity,
    ...operation,
    responses: { ...operation.responses, ...(kind === 'basic' ? staffRefusals : cookieRefusals) },
  };
}

const orderIdParam = idPath('orderId', 'The order\'s ID (in whichever storage WooCommerce uses).');
const orderNotFound = error(404, ['order_not_found'], 'No order with that ID.');

const paths: Record<string, Record<string, Operation>> = {
  '/helpdesk/v1/order-status': {
    post: {
      operationId: 'orderStatus',
      tags: ['Helpdesk'],
      summary: 'Where is my order?',
      description: 'The order, when the number exists and the billing email or phone matches. A missing order and a mismatch are the same 404, '
        + 'in bytes and in timing. Failed attempts are counted per API key (per client address without credentials); at the limit the route answers 429. '
        + 'The lookup fields must be in the body, never in the query string.',
      security: [{ helpdeskBasic: [] }],
      requestBody: { required: true, content: json(ref('OrderStatusRequest')) },
      responses: {
        200: { description: 'The order.', content: json(ref('OrderStatus')) },
        400: error(400, ['params_must_be_in_body', 'missing_params', 'invalid_params'], 'A lookup field in the query string, a missing field, or a field of the wrong type or too long.'),
        401: error(401, ['unauthorized'], 'No or wrong credentials, or not HTTPS.', { 'WWW-Authenticate': { schema: { type: 'string' } } }),
        404: error(404, ['order_not_found'], 'No such order, or the email/phone does not match: the same answer.'),
        413: tooLarge,
        429: error(429, ['rate_limited'], 'Too many failed attempts.', retryAfter),
        500: internalError,
        503: error(503, ['service_unavailable'], 'Failed attempts cannot be counted (Redis is away), or the database did not answer within the answer deadline (4.5 s); the route refuses rather than let guesses through or keep the helpdesk waiting.', retryAfter),
      },
    },
  },

  '/payment-hub/v1/webhook/{provider}': {
    post: {
      operationId: 'paymentWebhook',
      tags: ['Payment webhooks'],
      summary: 'A payment provider\'s webhook delivery',
      description: 'Authenticated by the provider\'s own signature (no other credentials). Card gateway deliveries are stored before they are answered '
        + 'and processed by the worker; mobile wallet events are handled in the request.',
      security: [],
      parameters: [{ name: 'provider', in: 'path', required: true, schema: { enum: ['card_gateway', 'mobile_wallet'] } }],
      requestBody: { required: true, content: json({ oneOf: [ref('CardGatewayEvent'), ref('MobileWalletEvent')] }) },
      responses: {
        200: { description: 'Taken: stored (or a repeat), or handled.', content: json(ref('WebhookAccepted')) },
        400: error(400, ['invalid_params'], 'Mobile wallet: signed, but not a well-formed event.'),
        401: error(401, ['invalid_signature'], 'The signature does not verify; nothing is stored.'),
        404: error(404, ['unknown_provider'], 'Not one of the providers.'),
        413: tooLarge,
        500: internalError,
        503: error(503, ['service_unavailable'], 'Card gateway: the database could not store it, or did not answer within 4.5 s. Mobile wallet: the wallet (or the database) could not be asked in time. The provider sends it again.', retryAfter),
      },
    },
  },

  '/shop/v3/helpdesk/v1/list': {
    get: staff('basic', {
      operationId: 'customerLookup',
      summary: 'The customer with a billing email or phone',
      description: 'Exactly one of `email` and `phone`, once. Capability `manage_woocommerce`.',
      parameters: [
        { name: 'email', in: 'query', schema: { type: 'string', maxLength: LOOKUP_VALUE_MAX_LENGTH } },
        { name: 'phone', in: 'query', schema: { type: 'string', maxLength: LOOKUP_VALUE_MAX_LENGTH }, description: 'Any common notation; compared in E.164.' },
      ],
      responses: {
        200: { description: 'The customer, or `{}` when nothing matches.', content: json({ anyOf: [ref('Customer'), ref('NoCustomer')] }) },
        400: error(400, ['invalid_params'], 'Both or neither parameter (`params: ["email","phone"]`), one given twice, or too long.'),
      },
    }),
  },

  '/subscription-support/v1/cancellation-reasons': {
    get: staff('cookie', {
      operationId: 'listCancellationReasons',
      summary: 'The selectable cancellation reasons (published `cancellation_reason` posts)',
      responses: { 200: { description: 'The reasons.', content: json({ type: 'array', items: ref('CancellationReason') }) } },
    }),
  },

  '/subscription-support/v1/subscription/{subscriptionId}/cancellation-reasons': {
    get: staff('cookie', {
      operationId: 'listRecordedCancellationReasons',
      summary: 'The reasons recorded on a subscription, oldest first',
      parameters: [subscriptionIdParam],
      responses: {
        200: { description: 'The recorded reasons.', content: json({ type: 'array', items: ref('RecordedCancellationReason') }) },
        404: subscriptionNotFound,
      },
    }),
    post: staff('cookie', {
      operationId: 'recordCancellationReasons',
      summary: 'Records reasons on a subscription, all or none',
      parameters: [subscriptionIdParam],
      requestBody: { required: true, content: json(ref('RecordCancellationReasonsRequest')) },
      responses: {
        201: { description: 'The reasons recorded by this request.', content: json({ type: 'array', items: ref('RecordedCancellationReason') }) },
        400: invalidBody('Not a list of published reason IDs (`data.invalid_ids` names those that are not)'),
        404: subscriptionNotFound,
        413: tooLarge,
      },
    }),
  },

  '/subscription-support/v1/subscription/{subscriptionId}/cancellation-reasons/{entryId}': {
    get: staff('cookie', {
      operationId: 'getRecordedCancellationReason',
      summary: 'One reason recorded on the subscription',
      parameters: [subscriptionIdParam, idPath('entryId', 'The recorded reason\'s ID.')],
      responses: {
        200: { description: 'The recorded reason.', content: json(ref('RecordedCancellationReason')) },
        404: error(404, ['subscription_not_found', 'cancellation_reason_not_found'], 'No such subscription, or no such reason recorded on it.'),
      },
    }),
  },

  '/subscription-support/v1/subscription/{subscriptionId}/pause': {
    post: staff('cookie', {
      operationId: 'pauseSubscription',
      summary: 'On hold until a date; the next payment moves to the day after',
      parameters: [subscriptionIdParam],
      requestBody: { required: true, content: json(ref('PauseRequest')) },
      responses: {
        200: { description: 'The subscription after the change.', content: json(ref('SubscriptionState')) },
        400: invalidBody('`end_date` is not a future `YYYY-MM-DD`, or falls after the subscription ends'),
        404: subscriptionNotFound,
        409: error(409, ['invalid_state'], 'The subscription\'s status does not allow a pause, e.g. it has ended (`data.subscription_status`).'),
        413: tooLarge,
      },
    }),
  },

  '/subscription-support/v1/subscription/{subscriptionId}/force-activate': {
    post: staff('cookie', {
      operationId: 'forceActivateSubscription',
      summary: 'An on-hold subscription active again',
      parameters: [subscriptionIdParam],
      requestBody: { required: false, content: json({ type: 'object', description: 'Ignored.' }) },
      responses: {
        200: { description: 'The subscription after the change.', content: json(ref('SubscriptionState')) },
        400: invalidBody('The body is not a JSON object'),
        404: subscriptionNotFound,
        409: error(409, ['invalid_state'], 'The subscription is not on hold, or its end has passed (`data.subscription_status`).'),
        413: tooLarge,
      },
    }),
  },

  '/renewal-discounts/v1/renewal-discount-types': {
    get: staff('discounts', {
      operationId: 'listDiscountTypes',
      summary: 'Discount types with their scheme',
      responses: { 200: { description: 'The types.', content: json({ type: 'array', items: ref('DiscountType') }) } },
    }),
  },

  '/renewal-discounts/v1/discounts': {
    get: staff('discounts', {
      operationId: 'listDiscounts',
      summary: 'Discounts, newest first, a page at a time',
      parameters: [
        { name: 'subscription', in: 'query', schema: { type: 'integer', minimum: 1 } },
        { name: 'order', in: 'query', schema: { type: 'integer', minimum: 1 } },
        { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
        { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE } },
      ],
      responses: {
        200: {
          description: 'One page of discounts.',
          headers: {
            'X-WP-Total': { description: 'How many discounts match.', schema: { type: 'integer' } },
            'X-WP-TotalPages': { description: 'How many pages of `per_page` that makes.', schema: { type: 'integer' } },
          },
          content: json({ type: 'array', items: ref('Discount') }),
        },
        400: error(400, ['invalid_params'], '`data.params` names each parameter that is not a positive whole number (or `per_page` over the maximum).'),
      },
    }),
    post: staff('discounts', {
      operationId: 'createDiscount',
      summary: 'A pending discount on a subscription\'s next renewal',
      requestBody: { required: true, content: json(ref('CreateDiscountRequest')) },
      responses: {
        201: { description: 'The discount created.', content: json(ref('Discount')) },
        400: invalidBody('A missing or malformed field, an amount out of bounds, or a `subscription`/`order` that names none of the shop\'s (then nothing is stored)'),
        409: error(409, ['invalid_state'], 'The subscription no longer renews (`data.subscription_status`).'),
        413: tooLarge,
      },
    }),
  },

  '/renewal-discounts/v1/discounts/{id}': {
    get: staff('discounts', {
      operationId: 'getDiscount',
      summary: 'One discount',
      parameters: [idPath('id', 'The discount\'s ID.')],
      responses: {
        200: { description: 'The discount.', content: json(ref('Discount')) },
        404: error(404, ['discount_not_found'], 'No discount with that ID.'),
      },
    }),
    delete: staff('discounts', {
      operationId: 'cancelDiscount',
      summary: 'Cancels a pending discount, so no renewal carries it',
      description: METHOD_OVERRIDE_NOTE,
      parameters: [idPath('id', 'The discount\'s ID.')],
      responses: {
        200: { description: 'The discount, now cancelled.', content: json(ref('Discount')) },
        404: error(404, ['discount_not_found'], 'No discount with that ID.'),
        409: error(409, ['invalid_state'], 'The discount is applied or cancelled already.'),
      },
    }),
  },

  '/payment-hub/v1/orders/{orderId}/payments': {
    get: staff('order_payments', {
      operationId: 'orderPayments',
      summary: 'One order\'s payments, dunning attempts and webhooks',
      description: 'What `payment-hub payments list --order` and `retries list --order` show, with the webhooks stored about the order\'s payments; '
        + 'each newest first. Capability `edit_shop_orders`.',
      parameters: [orderIdParam],
      responses: {
        200: { description: 'The order\'s payments (empty lists when it has none).', content: json(ref('OrderPayments')) },
        404: orderNotFound,
      },
    }),
  },

  '/payment-hub/v1/orders/{orderId}/reconcile': {
    post: staff('order_payments', {
      operationId: 'reconcileOrder',
      summary: 'Asks the providers about one order now and makes the shop agree with them',
      description: 'As `payment-hub reconcile --order=N --yes --json`: everything open about the order (its payments, agreements, an invoice awaiting the gateway) is asked '
        + 'about, and what the provider says is handed to the same handlers as its webhooks. Only reads from the providers. A provider that cannot be asked '
        + 'is reported in the answer (`summary.unreachable`, the item\'s `outcome` and `error`), the item left as it was. No body is read. Capability `edit_shop_orders`.',
      parameters: [orderIdParam],
      responses: {
        200: { description: 'What asking came to.', content: json(ref('ReconcileResult')) },
        404: orderNotFound,
      },
    }),
  },

  '/health': {
    get: {
      operationId: 'health',
      tags: ['Operations'],
      summary: 'Whether the database and Redis answer',
      security: [],
      responses: {
        200: { description: 'Both answer.', content: json(ref('Health')) },
        503: { description: 'The database or Redis does not answer (the same body, saying which).', content: json(ref('Health')) },
      },
    },
  },

  '/metrics': {
    get: {
      operationId: 'metrics',
      tags: ['Operations'],
      summary: 'Prometheus metrics',
      description: 'Only for client addresses in `METRICS_ALLOWED` (through a trusted proxy, the address it forwards for). '
        + 'Each API process\'s own series carry an `api_process` label; the shop-wide counts (webhooks, queue, dunning, WooCommerce hand-over) are read at scrape time.',
      security: [],
      responses: {
        200: { description: 'The metrics, in Prometheus\'s text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
        403: error(403, ['forbidden'], 'The client address is not in `METRICS_ALLOWED`.'),
      },
    },
  },

  '/openapi.json': {
    get: {
      operationId: 'openApiDocument',
      tags: ['Operations'],
      summary: 'This document',
      security: [],
      responses: { 200: { description: 'The OpenAPI 3.1 description of every route.', content: json({ type: 'object', required: ['openapi', 'paths'] }) } },
    },
  },
};

/** Every operation takes X-Request-Id (from a trusted proxy) and every answer carries it. */
function withRequestId(operations: typeof paths): typeof paths {
  const header = { $ref: '#/components/headers/RequestId' };
  return Object.fromEntries(Object.entries(operations).map(([path, item]) => [path, Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, {
    ...operation,
    parameters: [...((operation.parameters as unknown[] | undefined) ?? []), { $ref: '#/components/parameters/RequestId' }],
    responses: Object.fromEntries(Object.entries(operation.responses as Record<string, { headers?: Record<string, unknown> }>)
      .map(([status, response]) => [status, { ...response, headers: { ...response.headers, 'X-Request-Id': header } }])),
  }]))]));
}

/** The whole document; `version` is the service's package version. */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'shop-sidecar',
      version,
      description: 'The REST back end beside a WooCommerce shop\'s database: the helpdesk\'s order status and customer lookup, subscription support, '
        + 'renewal discounts, one order\'s payments for staff and the payment providers\' webhooks.\n\nEvery refusal and failure has the body `{code, message, data: {status}}`. '
        + 'A path the service does not have is 404 `not_found`; a known path with another method is 405 `method_not_allowed` with `Allow`.\n\n'
        + 'On the staff routes (`/subscription-support/`, `/renewal-discounts/`, `/payment-hub/v1/orders/`) a POST with `X-HTTP-Method-Override: DELETE`, '
        + '`PUT` or `PATCH` is taken as that method, as WordPress\'s `apiFetch` sends them.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    tags: [
      { name: 'Helpdesk', description: 'Basic `HELPDESK_API_KEY:HELPDESK_API_SECRET`, HTTPS only.' },
      { name: 'Staff (API key)', description: 'A WooCommerce REST API key or an application password, HTTPS only; capability `manage_woocommerce`.' },
      { name: 'Subscription support', description: 'The WordPress logged-in cookie and a `wp_rest` nonce; capability `edit_shop_orders`.' },
      {
        name: 'Renewal discounts',
        description: 'A WooCommerce REST API key or an application password (an `Authorization` header, or `consumer_key`/`consumer_secret`), '
          + 'else the WordPress logged-in cookie and a `wp_rest` nonce; capability `manage_woocommerce`.',
      },
      {
        name: 'Order payments',
        description: 'As renewal discounts (an API key, an application password, or the logged-in cookie and a nonce); capability `edit_shop_orders`.',
      },
      { name: 'Payment webhooks', description: 'Signed by the provider.' },
      { name: 'Operations' },
    ],
    paths: withRequestId(paths),
    components: {
      schemas: components,
      parameters: {
        RequestId: {
          name: 'X-Request-Id', in: 'header', required: false,
          description: 'Taken as the request\'s ID when a trusted proxy (`TRUSTED_PROXIES`) sends it and it is at most 128 of `A-Z a-z 0-9 . _ : -`; otherwise the service makes one.',
          schema: { type: 'string', pattern: SANE_REQUEST_ID.source },
        },
      },
      headers: {
        RequestId: {
          description: 'The request\'s ID, also in every log line written while it was handled (`requestId`).',
          schema: { type: 'string', pattern: SANE_REQUEST_ID.source },
        },
      },
      securitySchemes: {
        helpdeskBasic: { type: 'http', scheme: 'basic', description: '`HELPDESK_API_KEY:HELPDESK_API_SECRET`, over HTTPS (directly, or a trusted proxy\'s `X-Forwarded-Proto: https`).' },
        wooBasic: { type: 'http', scheme: 'basic', description: 'A WooCommerce REST key `ck_…:cs_…` (a `read` key may only GET, a `write` key only POST), or `login:application password`; HTTPS only.' },
        wooConsumerKey: { type: 'apiKey', in: 'query', name: 'consumer_key', description: 'With `consumer_secret`, instead of Basic.' },
        wooConsumerSecret: { type: 'apiKey', in: 'query', name: 'consumer_secret' },
        wpLoggedIn: { type: 'apiKey', in: 'cookie', name: 'wordpress_logged_in_{hash}', description: 'WordPress\'s logged-in cookie; `{hash}` is the MD5 of the site URL, as WordPress names it.' },
        wpNonce: { type: 'apiKey', in: 'header', name: 'X-WP-Nonce', description: 'The `wp_rest` nonce WordPress gives its front end.' },
        wpNonceQuery: { type: 'apiKey', in: 'query', name: '_wpnonce', description: 'The same nonce as a query parameter.' },
      },
    },
  };
}
