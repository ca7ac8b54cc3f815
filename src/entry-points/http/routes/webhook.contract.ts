/** The payment providers' webhook deliveries. */
import { Type } from '@sinclair/typebox';
import { CardGatewayEventSchema, MobileWalletEventSchema } from '../../../payments/providers/events';
import { REFUSAL_KEYWORD } from '../../../shared/json-schema';
import { ref } from '../contract/answers';
import { error, internalError, json, retryAfter, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

export const webhookContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/webhook/{provider}',
  params: { provider: Type.Union([Type.Literal('card_gateway'), Type.Literal('mobile_wallet')], { [REFUSAL_KEYWORD]: 'unknown_provider' }) },
  // Checked by the provider's use case once the signature verifies (a body nobody signed learns nothing), with these same schemas.
  body: {
    required: true,
    description: 'Checked once its signature verifies: a delivery nobody signed is 401 whatever it holds.',
    schema: Type.Union([CardGatewayEventSchema, MobileWalletEventSchema]),
  },
  operation: {
    operationId: 'paymentWebhook',
    tags: ['Payment webhooks'],
    summary: 'A payment provider\'s webhook delivery',
    description: 'Authenticated by the provider\'s own signature (no other credentials). Card gateway deliveries are stored before they are answered '
      + 'and processed by the worker; mobile wallet events are handled in the request.',
    security: [],
    responses: {
      200: { description: 'Taken: stored (or a repeat), or handled.', content: json(ref('WebhookAccepted')) },
      400: error(400, ['invalid_params'], 'Signed, but not a well-formed event; `data.params` names each field at fault (`body` for a mobile wallet event).'),
      401: error(401, ['invalid_signature'], 'The signature does not verify; nothing is stored.'),
      404: error(404, ['unknown_provider'], 'Not one of the providers.'),
      413: tooLarge,
      500: internalError,
      503: error(503, ['service_unavailable'], 'Card gateway: the database could not store it, or did not answer within 4.5 s. Mobile wallet: the wallet (or the database) could not be asked in time. The provider sends it again.', retryAfter),
    },
  },
});
