import type { Request, Response } from 'restify';
import type { PaymentHub } from '../../composition/payment-hub';
import { HANDOVER_MAX_SKEW_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../../woocommerce-handover/handover-signature';
import { answerInTime, PAYLOAD_TOO_LARGE, readBody, sendError, sendJson, sendRefusal } from '../http-io';

/** A notice is a few dozen bytes: anything much larger is not one, and is not hashed. */
const NOTICE_BODY_LIMIT_BYTES = 4096;

const REFUSED: Record<string, string> = {
  unsigned: `The ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER} headers are required.`,
  stale: `The ${TIMESTAMP_HEADER} is not within ${HANDOVER_MAX_SKEW_SECONDS} seconds of the service's clock.`,
  mismatch: 'The signature does not verify (the service and WordPress must share LOGGED_IN_KEY and LOGGED_IN_SALT).',
  unverifiable: 'The service does not know the site\'s LOGGED_IN_KEY and LOGGED_IN_SALT, so it cannot verify the notice.',
};

const header = (req: Request, name: string): string | undefined => {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * POST /payment-hub/v1/shop/order-status-changed: the signature first, then the notice checked against its schema
 * (in the use case, so a body nobody signed learns nothing), then the order's open charge settled.
 */
export function shopOrderNoticeRoute(hub: Pick<PaymentHub, 'hearShopOrderNotice'>) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrived = performance.now();
    const body = await readBody(req, NOTICE_BODY_LIMIT_BYTES);
    if (!body.ok) return body.reason === 'too_large' ? sendRefusal(res, PAYLOAD_TOO_LARGE) : undefined;
    const signed = { timestamp: header(req, TIMESTAMP_HEADER), signature: header(req, SIGNATURE_HEADER), body: body.bytes };
    const outcome = await answerInTime(hub.hearShopOrderNotice.execute(signed), arrived, { kind: 'unavailable' as const });
    switch (outcome.kind) {
      case 'heard': {
        const { settling } = outcome;
        return sendJson(res, 202, { outcome: settling.kind, ...('reason' in settling && settling.reason ? { reason: settling.reason } : {}) });
      }
      case 'refused': return sendError(res, 401, 'invalid_signature', REFUSED[outcome.why]);
      case 'malformed': return sendError(res, 400, 'invalid_params', `Not a notice: ${outcome.params.join(', ')}.`, { params: outcome.params });
      case 'unavailable': return sendError(res, 503, 'service_unavailable', 'The notice could not be acted on now; the worker finds the change in the database.', {}, { 'Retry-After': '60' });
    }
  };
}
