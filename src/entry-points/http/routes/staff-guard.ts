import type { Request, Response } from 'restify';
import type { Logger } from '../../../logger';
import { parseBasicAuthorization } from '../../../security/basic-credentials';
import type { AuthenticateStaff } from '../../../staff-auth/authenticate-staff.use-case';
import type { StaffIdentity, UnauthenticatedReason } from '../../../staff-auth/staff-identity';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import { PasswordChecksBusyError } from '../../../wordpress/password-check-pool';
import { userCan } from '../../../wordpress/capabilities';
import { sendAttemptRefusal, sendError, sendRefusal } from '../http-io';
import { checkRequest, type InputOf, type RouteContract } from '../contract/route-contract';
import { arrivalMethod } from '../method-override';
import type { Transport } from '../transport';

/**
 * `basic`: WooCommerce API key or application password. `cookie`: the logged-in cookie with a `wp_rest` nonce.
 * `basic_or_cookie`: either, decided per request (see `schemeOf`).
 */
export type StaffScheme = 'basic' | 'cookie' | 'basic_or_cookie';

export interface StaffGuardDeps {
  authenticate: AuthenticateStaff;
  transport: Transport;
  /** Failed authentications per client address, as on the order status route. */
  throttle: FailedAttemptThrottle;
  log: Logger;
}

/** Refusals that are no guess at a credential: plain HTTP (refused before anything is checked), and the site's own secrets missing. */
const NOT_COUNTED: ReadonlySet<UnauthenticatedReason> = new Set(['https_required', 'secrets_unavailable']);

/** A staff route's own work, given its checked input (`InputOf` its contract) and who asks. */
export type StaffHandler<C> = (input: InputOf<C>, res: Response, identity: StaffIdentity) => Promise<void>;

export const STAFF_BODY_LIMIT_BYTES = 64 * 1024;

export function query(req: Request): URLSearchParams {
  return new URL(req.url ?? '/', 'http://localhost').searchParams;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The scheme a request to a `basic_or_cookie` route is checked with: Basic when it carries an Authorization
 * header or WooCommerce's `consumer_key`/`consumer_secret` query pair (as WooCommerce itself looks for them),
 * the logged-in cookie otherwise.
 */
export function schemeOf(req: Request, params: URLSearchParams, scheme: StaffScheme): 'basic' | 'cookie' {
  if (scheme !== 'basic_or_cookie') return scheme;
  return req.headers.authorization !== undefined || params.has('consumer_key') || params.has('consumer_secret') ? 'basic' : 'cookie';
}

/**
 * A staff route: a place under the client address's failed-attempt limit (429 `rate_limited` when it is
 * blocked, 503 when Redis cannot count), 401 `unauthorized` without valid credentials of its scheme (a
 * failed attempt), 403 `rest_cookie_invalid_nonce` for a valid logged-in cookie whose nonce is missing, stale
 * or foreign (WordPress's own answer, not counted), 403 `forbidden` without the capability, then the
 * request checked against the route's contract (its refusal answered), then the handler with the checked
 * input; anything unexpected becomes a logged, clean JSON 500.
 */
export function staffRoute<C extends RouteContract<any, any, any>>(
  deps: StaffGuardDeps, route: { name: string; scheme: StaffScheme; capability: string }, contract: C, handler: StaffHandler<C>,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const verdict = await deps.throttle.reserve([`ip:${deps.transport.clientGroup(req)}`], [], req);
    // The client left while waiting for a place: there is nobody to answer.
    if (verdict.kind === 'abandoned') return;
    if (verdict.kind !== 'allowed') return sendAttemptRefusal(res, verdict);
    const { reservation } = verdict;
    try {
      const https = deps.transport.isHttps(req);
      const params = query(req);
      const scheme = schemeOf(req, params, route.scheme);
      const authentication = scheme === 'basic'
        ? await deps.authenticate.withBasicCredentials({
          https, method: req.method ?? 'GET', basic: parseBasicAuthorization(req.headers.authorization),
          queryKey: params.has('consumer_key') || params.has('consumer_secret')
            ? { consumerKey: params.get('consumer_key') ?? '', consumerSecret: params.get('consumer_secret') ?? '' } : null,
          clientIp: deps.transport.clientIp(req),
        })
        : await deps.authenticate.withCookie({
          // The cookie's grace period is a POST's (wp_validate_auth_cookie reads REQUEST_METHOD, before any override).
          https, method: arrivalMethod(req), cookieHeader: header(req, 'cookie'), nonce: params.get('_wpnonce') || header(req, 'x-wp-nonce'),
        });
      if (authentication.kind === 'invalid_nonce') {
        // The cookie was verified: a stale nonce is a browser left open past a day, not a guess, so it is not counted.
        deps.log.info('staff_request_invalid_nonce', { route: route.name, reason: authentication.reason, userId: authentication.userId, ip: deps.transport.clientIp(req) });
        return sendError(res, 403, 'rest_cookie_invalid_nonce', 'Cookie check failed');
      }
      if (authentication.kind !== 'authenticated') {
        if (!NOT_COUNTED.has(authentication.reason)) await reservation.failed();
        deps.log.info('staff_request_unauthenticated', { route: route.name, reason: authentication.reason, ip: deps.transport.clientIp(req) });
        // A challenge only where Basic was tried: to a browser calling with its cookie it would open a sign-in dialog.
        const challenge: Record<string, string> = scheme === 'basic' ? { 'WWW-Authenticate': 'Basic realm="WooCommerce REST API"' } : {};
        return sendError(res, 401, 'unauthorized', 'Missing or invalid credentials.', {}, challenge);
      }
      const identity = authentication.identity;
      if (!userCan(identity.capabilities, route.capability)) {
        deps.log.info('staff_request_forbidden', { route: route.name, userId: identity.userId, capability: route.capability });
        return sendError(res, 403, 'forbidden', 'You are not allowed to do that.');
      }
      const checked = await checkRequest(req, contract, STAFF_BODY_LIMIT_BYTES);
      if (checked.kind === 'input') await handler(checked.input, res, identity);
      else if (checked.kind === 'refused') sendRefusal(res, checked.refusal);
    } catch (error) {
      if (error instanceof PasswordChecksBusyError) {
        deps.log.warn('staff_password_checks_busy', { route: route.name, ip: deps.transport.clientIp(req) });
        if (!res.headersSent) sendError(res, 503, 'service_unavailable', 'Too many sign-ins are being checked; try again shortly.', {}, { 'Retry-After': '5' });
        return;
      }
      deps.log.error('staff_request_failed', { route: route.name, method: req.method, error });
      if (!res.headersSent) sendError(res, 500, 'internal_error', 'Something went wrong on our side; it has been logged.');
    } finally {
      // Anything but a failed authentication gives the place back.
      reservation.released();
    }
  };
}
