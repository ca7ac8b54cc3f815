/** The companion plugin's notices of what happened in the shop. */
import { ShopOrderNoticeSchema } from '../../../payments/shop-order-notice.use-case';
import { HANDOVER_MAX_SKEW_SECONDS } from '../../../woocommerce-handover/handover-signature';
import { ref } from '../contract/answers';
import { error, internalError, json, retryAfter, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

export const shopOrderNoticeContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/shop/order-status-changed',
  // Checked by the use case once the signature verifies (a body nobody signed learns nothing), with this same schema.
  body: {
    required: true,
    description: 'Checked once its signature verifies: a notice nobody signed is 401 whatever it holds.',
    schema: ShopOrderNoticeSchema,
  },
  operation: {
    operationId: 'shopOrderStatusChanged',
    tags: ['Shop notices'],
    summary: 'The companion\'s notice that a renewal order no longer awaits payment',
    description: 'Sent by the companion plugin when a renewal order that awaited payment (`pending`, `failed`, `on-hold`) moved to another status: paid '
      + 'through any gateway, marked paid by staff, cancelled. The service reads the order\'s status from the database (the notice\'s `from` and `to` '
      + 'are only logged) and, when the order no longer awaits payment, withdraws the charge it has open for it and cancels it at the provider at once, '
      + 'instead of at the worker\'s next look at the database. Signed as the hand-over is, with the key '
      + '`HMAC-SHA256(wp_salt(\'logged_in\'), "shop-sidecar-shop-events-v1")`: `X-Shop-Sidecar-Timestamp` (Unix seconds, within '
      + `${HANDOVER_MAX_SKEW_SECONDS} s of the service's clock) and \`X-Shop-Sidecar-Signature\` (lowercase hex HMAC-SHA256 of the timestamp, a line feed and the raw body).`,
    security: [],
    responses: {
      202: { description: 'Heard: what it came to for the order\'s open charge. The provider\'s answer to the cancel is not waited for.', content: json(ref('ShopOrderNoticeHeard')) },
      400: error(400, ['invalid_params'], 'Signed, but not a notice; `data.params` names each field at fault (`body` when it is not a JSON object).'),
      401: error(401, ['invalid_signature'], 'A signature header missing, a timestamp too far from the service\'s clock, a signature that does not verify, or a service that does not know the site\'s salts; nothing is read.'),
      413: tooLarge,
      500: internalError,
      503: error(503, ['service_unavailable'], 'The database did not answer within 4.5 s. The worker finds the order\'s change in the database all the same.', retryAfter),
    },
  },
});
