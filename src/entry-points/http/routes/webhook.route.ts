import type { Request, Response } from 'restify';
import type { PaymentHub } from '../../composition/payment-hub';
import { answerInTime, PAYLOAD_TOO_LARGE, readBody, sendError, sendJson, sendRefusal } from '../http-io';
import { webhookContract } from './webhook.contract';

export const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * POST /payment-hub/v1/webhook/{provider}: the signature first, then the event checked against its schema (in the
 * provider's use case, so a body nobody signed learns nothing), then store (card gateway) or act (mobile wallet).
 */
export function webhookRoute(hub: Pick<PaymentHub, 'receiveCardGatewayWebhook' | 'receiveMobileWalletWebhook'>) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrived = performance.now();
    const params = webhookContract.checkParams(req.params);
    if (!params.ok) return sendRefusal(res, params.refusal);
    const { provider } = params.value;
    const body = await readBody(req, WEBHOOK_BODY_LIMIT_BYTES);
    if (!body.ok) return body.reason === 'too_large' ? sendRefusal(res, PAYLOAD_TOO_LARGE) : undefined;

    if (provider === 'card_gateway') {
      // A store that has not answered in time may still land: the provider sends the event again, and the repeat is a duplicate.
      const outcome = await answerInTime(hub.receiveCardGatewayWebhook.execute(body.bytes), arrived, { kind: 'database_unavailable' as const });
      switch (outcome.kind) {
        case 'stored': return sendJson(res, 200, { status: 'accepted', id: outcome.id });
        case 'duplicate': return sendJson(res, 200, { status: 'duplicate' });
        case 'invalid_signature': return sendError(res, 401, 'invalid_signature', 'The webhook signature does not verify.');
        case 'malformed': return sendError(res, 400, 'invalid_params', `Not a card gateway event that can be stored: ${outcome.params.join(', ')}.`, { params: outcome.params });
        case 'database_unavailable': return sendError(res, 503, 'service_unavailable', 'The webhook could not be stored; send it again.', {}, { 'Retry-After': '30' });
      }
    }

    const outcome = await answerInTime(hub.receiveMobileWalletWebhook.execute({ method: req.method ?? 'POST', headers: req.headers, body: body.bytes }), arrived, { kind: 'unavailable' as const });
    switch (outcome.kind) {
      case 'handled': return sendJson(res, 200, { status: outcome.outcome.status, note: outcome.outcome.note });
      case 'invalid_signature': return sendError(res, 401, 'invalid_signature', 'The webhook signature does not verify.');
      case 'malformed': return sendError(res, 400, 'invalid_params', 'The body is not a well-formed mobile wallet event.', { params: ['body'] });
      case 'unavailable': return sendError(res, 503, 'service_unavailable', 'The event could not be handled now; send it again.', {}, { 'Retry-After': '60' });
    }
  };
}
