import type { Request, Response } from 'restify';
import type { Logger } from '../../../logger';
import { parseBasicAuthorization } from '../../../security/basic-credentials';
import type { AuthenticateStaff } from '../../../staff-auth/authenticate-staff.use-case';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import { userCan } from '../../../wordpress/capabilities';
import { parseJsonObject, readBody, sendError } from '../http-io';
import type { Transport } from '../transport';

/** `basic`: WooCommerce API key or application password. `cookie`: the logged-in cookie with a `wp_rest` nonce. */
export type StaffScheme = 'basic' | 'cookie';

export interface StaffGuardDeps {
  authenticate: AuthenticateStaff;
  transport: Transport;
  log: Logger;
}

export type StaffHandler = (req: Request, res: Response, identity: StaffIdentity) => Promise<void>;

const BODY_LIMIT_BYTES = 64 * 1024;

export function query(req: Request): URLSearchParams {
  return new URL(req.url ?? '/', 'http://localhost').searchParams;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A staff route: 401 `unauthorized` without valid credentials of its scheme, 403 `forbidden` without the
 * capability, then the handler; anything unexpected becomes a logged, clean JSON 500.
 */
export function staffRoute(deps: StaffGuardDeps, route: { name: string; scheme: StaffScheme; capability: string }, handler: StaffHandler) {
  return async (req: Request, res: Response): Promise<void> => {
    try {
      const https = deps.transport.isHttps(req);
      const params = query(req);
      const authentication = route.scheme === 'basic'
        ? await deps.authenticate.withBasicCredentials({
          https, method: req.method ?? 'GET', basic: parseBasicAuthorization(req.headers.authorization),
          queryKey: params.has('consumer_key') || params.has('consumer_secret')
            ? { consumerKey: params.get('consumer_key') ?? '', consumerSecret: params.get('consumer_secret') ?? '' } : null,
          clientIp: deps.transport.clientIp(req),
        })
        : await deps.authenticate.withCookie({
          https, method: req.method ?? 'GET', cookieHeader: header(req, 'cookie'), nonce: params.get('_wpnonce') || header(req, 'x-wp-nonce'),
        });
      if (authentication.kind !== 'authenticated') {
        deps.log.info('staff_request_unauthenticated', { route: route.name, reason: authentication.reason, ip: deps.transport.clientIp(req) });
        const challenge: Record<string, string> = route.scheme === 'basic' ? { 'WWW-Authenticate': 'Basic realm="WooCommerce REST API"' } : {};
        return sendError(res, 401, 'unauthorized', 'Missing or invalid credentials.', {}, challenge);
      }
      const identity = authentication.identity;
      if (!userCan(identity.capabilities, route.capability)) {
        deps.log.info('staff_request_forbidden', { route: route.name, userId: identity.userId, capability: route.capability });
        return sendError(res, 403, 'forbidden', 'You are not allowed to do that.');
      }
      await handler(req, res, identity);
    } catch (error) {
      deps.log.error('staff_request_failed', { route: route.name, method: req.method, error });
      if (!res.headersSent) sendError(res, 500, 'internal_error', 'Something went wrong on our side; it has been logged.');
    }
  };
}

export type JsonBody = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; code: string; message: string; params?: string[] };

/** The JSON object body; an empty body is `{}`. */
export async function jsonBody(req: Request): Promise<JsonBody> {
  const read = await readBody(req, BODY_LIMIT_BYTES);
  if (!read.ok) return { ok: false, status: 413, code: 'payload_too_large', message: 'The body is too large.' };
  if (!read.bytes.length) return { ok: true, body: {} };
  const parsed = parseJsonObject(read.bytes);
  return parsed.ok ? { ok: true, body: parsed.value } : { ok: false, status: 400, code: 'invalid_params', message: parsed.message, params: ['body'] };
}

export function sendBodyError(res: Response, failure: Extract<JsonBody, { ok: false }>): void {
  sendError(res, failure.status, failure.code, failure.message, failure.params ? { params: failure.params } : {});
}

/** A path ID: digits only, positive; null otherwise. */
export function pathId(value: unknown): number | null {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return null;
  const id = Number(value);
  return id > 0 ? id : null;
}
