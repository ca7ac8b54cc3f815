import type { Request, Response, Next } from 'restify';

/** The staff routes' prefixes, where WordPress's `apiFetch` sends PUT, PATCH and DELETE as POST with an override header. */
export const STAFF_ROUTE_PREFIXES = ['/subscription-support/', '/renewal-discounts/', '/payment-hub/v1/orders/'] as const;

const OVERRIDABLE = new Set(['DELETE', 'PUT', 'PATCH']);

/** What each overridden request came as on the wire (a cookie's grace period depends on it being a POST). */
const arrivedAs = new WeakMap<Request, string>();

/** The method the request arrived with, before any `X-HTTP-Method-Override`. */
export function arrivalMethod(req: Request): string {
  return arrivedAs.get(req) ?? req.method ?? 'GET';
}

/**
 * A `server.pre` handler: a POST to a staff route carrying `X-HTTP-Method-Override: DELETE` (or PUT, PATCH; any
 * case) is routed as that method, as WordPress's REST server takes what `apiFetch` sends. Any other method, path
 * or header value leaves the request as it is. It runs before routing, since restify routes by method.
 */
export function staffMethodOverride(req: Request, _res: Response, next: Next): void {
  if (req.method !== 'POST') return next();
  const raw = req.headers['x-http-method-override'];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim().toUpperCase();
  if (!value || !OVERRIDABLE.has(value)) return next();
  const path = (req.url ?? '').split('?', 1)[0];
  if (!STAFF_ROUTE_PREFIXES.some((prefix) => path.startsWith(prefix))) return next();
  arrivedAs.set(req, req.method);
  req.method = value;
  return next();
}
