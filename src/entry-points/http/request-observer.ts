import crypto from 'node:crypto';
import type { Request, Response, Server } from 'restify';
import type { Logger } from '../../logger';
import type { ApiMetrics } from '../../observability/api-metrics';
import { openRequest } from '../../shared/request-context';
import type { Transport } from './transport';

/** A request ID a proxy may hand on: a sane token, nothing that could break a log line or a header. */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The route a request matched, as registered (`/renewal-discounts/v1/discounts/:id`), so labels stay few. */
export function routeOf(req: Request): string {
  return (req.getRoute?.() as { path?: string } | undefined)?.path ?? 'unmatched';
}

/** The proxy's X-Request-Id when a trusted proxy sent a sane one, else a new one. */
export function requestIdOf(req: Request, transport: Transport): string {
  const given = req.headers['x-request-id'];
  const value = Array.isArray(given) ? given[0] : given;
  if (value !== undefined && SANE_REQUEST_ID.test(value) && transport.fromTrustedProxy(req)) return value;
  return crypto.randomUUID();
}

export interface RequestObserverDeps {
  metrics: ApiMetrics;
  log: Logger;
  transport: Transport;
  /**
   * Registered routes handled outside the request context: routes that write no log line while handled but the
   * access line and `request_failed`, which carry the request ID themselves. On Node 20 an open context costs every
   * answer in the process 3.5% of its instructions (shared/scoped-storage.ts); the helpdesk's order status, its
   * busiest route, does not pay it where the site has no filters to log about.
   */
  withoutContext?: ReadonlySet<string>;
}

/**
 * Watches every request from its arrival (before routing) to the end of its answer. The answer carries
 * X-Request-Id, and every log line written while the request is handled carries it as `requestId`. At the
 * end the request is counted and timed in the metrics by method, route and status, and logged on one
 * `http_request` line. A client that goes away before the answer ends is `aborted`.
 */
export function observeRequests(server: Server, { metrics, log, transport, withoutContext = new Set() }: RequestObserverDeps): void {
  server.pre((req: Request, res: Response, next: () => void) => {
    const arrived = process.hrtime.bigint();
    const requestId = requestIdOf(req, transport);
    res.setHeader('X-Request-Id', requestId);
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - arrived) / 1e9;
      const finished = res.writableFinished;
      const route = routeOf(req);
      const method = req.method ?? 'GET';
      metrics.observeRequest(method, route, finished ? String(res.statusCode) : 'aborted', seconds);
      log.info('http_request', {
        requestId, method, route, status: res.statusCode, durationMs: Math.round(seconds * 10_000) / 10, clientIp: transport.clientIp(req),
        ...(finished ? {} : { aborted: true }),
      });
    });
    next();
  });
  // Once routed (restify runs `use` handlers only for a request a route matched): the rest of the request's handling,
  // and everything it starts, runs in its context until its answer has ended.
  server.use((req: Request, res: Response, next: () => void) => {
    if (withoutContext.has(routeOf(req))) return next();
    const scope = openRequest({ requestId: String(res.getHeader('X-Request-Id')) }, next);
    res.once('close', scope.close);
  });
}
