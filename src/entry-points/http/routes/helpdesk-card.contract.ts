/** The helpdesk's custom card (Dixa): one conversation's customer, and the agent's actions from it (CONTRACT.md, "The helpdesk card"). */
import { Type } from '@sinclair/typebox';
import { ref } from '../contract/answers';
import { error, internalError, json, retryAfter } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

/** The longest e-mail, phone or agent e-mail the card reads (longer is 400 invalid_params). */
export const CARD_FIELD_MAX_LENGTH = 320;
/** The longest action token the action pages read: longer is never one the service made (403). */
export const CARD_TOKEN_MAX_LENGTH = 1024;

const field = (description: string) => Type.Optional(Type.String({ maxLength: CARD_FIELD_MAX_LENGTH, description }));
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const page = (status: number, description: string) => ({ [status]: html(description) });

export const helpdeskCardContract = defineRoute({
  method: 'get',
  path: '/helpdesk/v1/card',
  query: Type.Object({
    email: field('The conversation\'s e-mail (Dixa\'s `{{customer_email}}`); may be empty.'),
    phone: field('The conversation\'s phone in any form (E.164, national, with spaces); may be empty.'),
    agent: field('The agent\'s e-mail (Dixa\'s `{{agent_email}}`): action links only for a WordPress user with `edit_shop_orders`.'),
  }),
  operation: {
    operationId: 'helpdeskCard',
    tags: ['Helpdesk'],
    summary: 'The helpdesk card of one conversation',
    description: 'The customer matched by the e-mail, else by the phone (as the customer lookup matches, guests included), their subscriptions '
      + 'with a failed renewal\'s story, their last 5 orders, and the action links the agent may use. Failed authentications are counted per client '
      + 'address; at the limit the route answers 429.',
    security: [{ helpdeskCardBearer: [] }],
    responses: {
      200: { description: 'The card; `customer` is null (and the lists empty) when nothing matches.', content: json(ref('HelpdeskCard')) },
      400: error(400, ['invalid_params'], 'A field given twice or too long.'),
      401: error(401, ['unauthorized'], 'No or wrong token (or HELPDESK_CARD_TOKEN unset), or not HTTPS.', { 'WWW-Authenticate': { schema: { type: 'string' } } }),
      403: error(403, ['forbidden'], 'The client address is not in HELPDESK_CARD_ALLOW_FROM.'),
      429: error(429, ['rate_limited'], 'Too many failed attempts.', retryAfter),
      500: internalError,
      503: error(503, ['service_unavailable'], 'Failed attempts cannot be counted (Redis is away), or the database did not answer in time.', retryAfter),
    },
  },
});

const tokenParams = { token: Type.String({ minLength: 1, description: 'The signed link\'s token.' }) };
const actionPages = {
  ...page(403, 'The link was altered, or the agent is no longer shop staff: a page saying so; nothing changed.'),
  ...page(404, 'The subscription or order is gone.'),
  ...page(409, 'The action is not possible now (the same refusal as in WP admin): a page saying why; nothing changed.'),
  ...page(410, 'The link was used already, or has expired: a page saying so; nothing changed.'),
  ...page(503, 'The service cannot check the link right now (Redis or the database is away).'),
};

export const helpdeskCardActionPageContract = defineRoute({
  method: 'get',
  path: '/helpdesk/v1/card/actions/{token}',
  params: tokenParams,
  operation: {
    operationId: 'helpdeskCardActionPage',
    tags: ['Helpdesk'],
    summary: 'An action link\'s confirmation page',
    description: 'The page an agent opens from the card, in the card\'s language: what will be done, to which subscription, with the fields the action needs. Nothing is done until its form is sent.',
    security: [],
    responses: { ...page(200, 'The confirmation page.'), ...actionPages },
  },
});

export const helpdeskCardActionContract = defineRoute({
  method: 'post',
  path: '/helpdesk/v1/card/actions/{token}',
  params: tokenParams,
  operation: {
    operationId: 'helpdeskCardAction',
    tags: ['Helpdesk'],
    summary: 'Does an action link\'s action',
    description: 'The confirmation page\'s form (`application/x-www-form-urlencoded`: `end_date` for a pause, `reason_post_ids` for a cancellation reason). '
      + 'Done once, as the agent\'s WordPress user, with the same rules and refusals as in WP admin; the note says "via Dixa".',
    security: [],
    responses: { ...page(200, 'What was done.'), ...page(400, 'A field of the form is missing or malformed: the page again, saying which.'), ...actionPages },
  },
});
