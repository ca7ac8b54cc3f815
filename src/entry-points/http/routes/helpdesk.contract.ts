/** The helpdesk's routes: where an order is (Dixa's order status), and who a customer is (the customer lookup). */
import { Type } from '@sinclair/typebox';
import { REFUSAL_KEYWORD } from '../../../shared/json-schema';
import { ref } from '../contract/answers';
import { error, internalError, json, retryAfter, staff, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

/** The longest order number, email or phone the order status reads (longer is 400 invalid_params). */
export const ORDER_STATUS_FIELD_MAX_LENGTH = 320;
/** The longest email or phone the customer lookup reads (longer is 400 invalid_params). */
export const LOOKUP_VALUE_MAX_LENGTH = 320;

const textUpTo = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) });
/** Text that is more than spaces: an empty field counts as missing. */
const given = { type: 'string', pattern: '\\S' };

export const orderStatusContract = defineRoute({
  method: 'post',
  path: '/helpdesk/v1/order-status',
  query: Type.Object({
    order_number: Type.Optional(Type.Never()),
    email: Type.Optional(Type.Never()),
    phone: Type.Optional(Type.Never()),
  }, {
    [REFUSAL_KEYWORD]: 'params_must_be_in_body',
    description: 'Send order_number, email and phone in the JSON body, never in the query string.',
  }),
  body: {
    required: true,
    schema: Type.Object({
      order_number: Type.Optional(Type.Union([textUpTo(ORDER_STATUS_FIELD_MAX_LENGTH), Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])),
      email: Type.Optional(Type.Union([textUpTo(ORDER_STATUS_FIELD_MAX_LENGTH), Type.Null()])),
      phone: Type.Optional(Type.Union([textUpTo(ORDER_STATUS_FIELD_MAX_LENGTH, 'Compared after normalisation: `+45`, spaces and dashes do not matter.'), Type.Null()])),
    }, {
      description: 'A match on either contact detail is enough. A field of the wrong type or too long is 400 `invalid_params`.',
      allOf: [{
        [REFUSAL_KEYWORD]: 'missing_params',
        description: 'order_number and at least one of email or phone are required; empty strings count as missing.',
        type: 'object',
        required: ['order_number'],
        properties: { order_number: { anyOf: [{ type: 'integer' }, given] } },
        anyOf: [
          { type: 'object', required: ['email'], properties: { email: given } },
          { type: 'object', required: ['phone'], properties: { phone: given } },
        ],
      }],
    }),
  },
  operation: {
    operationId: 'orderStatus',
    tags: ['Helpdesk'],
    summary: 'Where is my order?',
    description: 'The order, when the number exists and the billing email or phone matches. A missing order and a mismatch are the same 404, '
      + 'in bytes and in timing. Failed attempts are counted per API key (per client address without credentials); at the limit the route answers 429. '
      + 'The lookup fields must be in the body, never in the query string.',
    security: [{ helpdeskBasic: [] }],
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
});

export const customerLookupContract = defineRoute({
  method: 'get',
  path: '/shop/v3/helpdesk/v1/list',
  query: Type.Object({
    email: Type.Optional(textUpTo(LOOKUP_VALUE_MAX_LENGTH)),
    phone: Type.Optional(textUpTo(LOOKUP_VALUE_MAX_LENGTH, 'Any common notation; compared in E.164.')),
  }, {
    description: 'Give exactly one of email or phone, once; an empty one counts as not given.',
    // Given means not blank; a name given twice is given (and refused for that, by its own schema).
    oneOf: [
      { type: 'object', required: ['email'], properties: { email: { pattern: '\\S' } } },
      { type: 'object', required: ['phone'], properties: { phone: { pattern: '\\S' } } },
    ],
  }),
  operation: staff('basic', {
    operationId: 'customerLookup',
    summary: 'The customer with a billing email or phone',
    description: 'Exactly one of `email` and `phone`, once. Capability `manage_woocommerce`.',
    responses: {
      200: { description: 'The customer, or `{}` when nothing matches.', content: json({ anyOf: [ref('Customer'), ref('NoCustomer')] }) },
      400: error(400, ['invalid_params'], 'Both or neither parameter (`params: ["email","phone"]`), one given twice, or too long.'),
    },
  }),
});
