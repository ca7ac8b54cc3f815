import type { Request, Response } from 'restify';
import { databaseUnavailable } from '../../../data-access/connection-pool';
import type { ShowHelpdeskCard } from '../../../helpdesk-card/show-helpdesk-card.use-case';
import { constantTimeEqual } from '../../../security/constant-time';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import type { AddressList } from '../address-list';
import { checkRequest } from '../contract/route-contract';
import { answerInTime, RequestClient, sendAttemptRefusal, sendError, sendJson, sendRefusal } from '../http-io';
import type { Transport } from '../transport';
import { helpdeskCardContract } from './helpdesk-card.contract';

export interface HelpdeskCardRouteDeps {
  transport: Transport;
  /** HELPDESK_CARD_TOKEN; unset refuses every request. */
  token: string | undefined;
  /** HELPDESK_CARD_ALLOW_FROM; null allows any address. */
  allowFrom: AddressList | null;
  throttle: FailedAttemptThrottle;
  card: ShowHelpdeskCard;
}

const UNAVAILABLE = { kind: 'unavailable' as const };

/** The Bearer token of an `Authorization` header, or null. */
function bearer(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/** The service's own origin as the request reached it (the card's links point there): always HTTPS, the card route being HTTPS only. */
function serviceOrigin(req: Request): string {
  const host = String(req.headers.host ?? '').trim();
  return `https://${/^[A-Za-z0-9.:[\]-]+$/.test(host) ? host : 'localhost'}`;
}

/**
 * GET /helpdesk/v1/card: HTTPS, Dixa's addresses (when HELPDESK_CARD_ALLOW_FROM names them), a place under the
 * failed-attempt limit per client address (taken before the token is compared, given back unless it was wrong), the
 * card's own Bearer token compared in constant time, then the card.
 */
export function helpdeskCardRoute({ transport, token, allowFrom, throttle, card }: HelpdeskCardRouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrived = performance.now();
    if (!transport.isHttps(req)) return sendError(res, 401, 'unauthorized', 'This route is served over HTTPS only.');
    if (allowFrom && !allowFrom.has(transport.clientIp(req))) return sendError(res, 403, 'forbidden', 'This address may not ask for the helpdesk card.');
    const supplied = bearer(req.headers.authorization);
    // Compared whether or not a token is configured, so an unset one answers as a wrong one does.
    const authorized = supplied !== null && constantTimeEqual(token ?? '', supplied) && token !== undefined;
    const address = `card-ip:${transport.clientGroup(req)}`;
    const client = new RequestClient(req);
    const verdict = await answerInTime(throttle.reserve(authorized ? [] : [address], authorized ? [address] : [], client), arrived, UNAVAILABLE);
    if (verdict === UNAVAILABLE) return sendAttemptRefusal(res, verdict);
    if (verdict.kind === 'abandoned') return;
    if (verdict.kind !== 'allowed') return sendAttemptRefusal(res, verdict);
    const { reservation } = verdict;
    try {
      if (!authorized) {
        await reservation.failed();
        return sendError(res, 401, 'unauthorized', 'Missing or invalid token.', {}, { 'WWW-Authenticate': 'Bearer realm="helpdesk-card"' });
      }
      const checked = await checkRequest(req, helpdeskCardContract, 0);
      if (checked.kind === 'gone') return;
      if (checked.kind === 'refused') return sendRefusal(res, checked.refusal);
      const { query } = checked.input;
      const answer = await answerInTime(card.execute({
        email: query.email ?? '', phone: query.phone ?? '', agent: query.agent ?? '', serviceOrigin: serviceOrigin(req),
      }).catch((error: unknown) => {
        if (databaseUnavailable(error)) return UNAVAILABLE;
        throw error;
      }), arrived, UNAVAILABLE);
      if (answer === UNAVAILABLE) return sendError(res, 503, 'service_unavailable', 'The card cannot be made right now; try again shortly.', {}, { 'Retry-After': '5' });
      sendJson(res, 200, answer);
    } finally {
      reservation.released();
    }
  };
}
