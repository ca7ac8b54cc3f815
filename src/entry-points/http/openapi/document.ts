/**
 * The OpenAPI 3.1 description of every route, served at GET /openapi.json, made from the routes' contracts:
 * their path parameters, query strings and bodies are the schemas the server checks requests with. The tests
 * hold it to the server: every route restify has registered must be described here and nothing else, the
 * document must pass an OpenAPI 3.1 validator, and real answers must match the schemas it gives for them.
 */
import type { RouteContract } from '../contract/route-contract';
import { components } from '../contract/answers';
import { json, MAX_ID } from '../contract/operation-docs';
import { ROUTES } from '../routes/contracts';
import { SANE_REQUEST_ID } from '../request-observer';

type Operation = Record<string, unknown>;

/** One route's operation: its own words, with its parameters and body from the schemas it is checked with. */
function operationOf(contract: RouteContract<any, any, any>): Operation {
  const { definition, shapes } = contract;
  const parameters: unknown[] = Object.entries(shapes.params).map(([name, segment]) => ({
    name, in: 'path', required: true, ...(segment.schema.description ? { description: segment.schema.description } : {}), schema: segment.schema,
  }));
  // The query string as one object whose properties are the parameters (form style, exploded), so rules across them stay in it.
  if (shapes.query) parameters.push({ name: 'query', in: 'query', style: 'form', explode: true, schema: shapes.query.schema });
  const { responses, ...words } = definition.operation;
  return {
    ...words,
    ...(parameters.length ? { parameters } : {}),
    ...(definition.body && shapes.body
      ? { requestBody: { required: definition.body.required, ...(definition.body.description ? { description: definition.body.description } : {}), content: json(shapes.body.schema) } }
      : {}),
    responses,
  };
}

const paths: Record<string, Record<string, Operation>> = {};
for (const contract of ROUTES) (paths[contract.definition.path] ??= {})[contract.definition.method] = operationOf(contract);

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
        + 'the helpdesk\'s custom card and its action links, renewal discounts, one order\'s payments for staff, the payment providers\' webhooks and the companion plugin\'s notices.\n\nEvery refusal and failure has the body `{code, message, data: {status}}`. '
        + 'A path the service does not have (or with a segment longer than 1,024 characters) is 404 `not_found`; a known path with another method is 405 `method_not_allowed` with `Allow`.\n\n'
        + 'An ID or a paging number (`page`, `per_page`) in a path or query string is plain decimal digits, without a sign, spaces, a leading zero, a fraction '
        + `or an exponent, within its schema's range (an ID from 1 to ${MAX_ID}). Anything else is refused before the route reads or writes anything: `
        + 'in the path as the route\'s not-found (e.g. 404 `discount_not_found`), in the query string as 400 `invalid_params` naming it.\n\n'
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
      { name: 'Shop notices', description: 'Signed by the companion plugin with a key derived from the site\'s `LOGGED_IN_KEY` and `LOGGED_IN_SALT`.' },
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
        helpdeskCardBearer: { type: 'http', scheme: 'bearer', description: '`HELPDESK_CARD_TOKEN`, as the helpdesk\'s custom card sends it, over HTTPS.' },
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
