import fs from 'node:fs';
import type http from 'node:http';
import restify, { type Server } from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { RedisClient } from '../../data-access/redis';
import { redisNamespace } from '../../data-access/redis';
import { poolState } from '../../data-access/data-source';
import { ApiMetrics } from '../../observability/api-metrics';
import { apiProcessName, MetricsExchange } from '../../observability/metrics-exchange';
import { DunningCounts } from '../../observability/dunning-metrics';
import { DunningCaseReportRepository, SHARE_WINDOW_DAYS } from '../../data-access/dunning-case-report-repository';
import { CustomerContactIndex } from '../../data-access/customer-contact-index';
import { LookupOrderStatus } from '../../order-status/lookup-order-status.use-case';
import { StaticBasicCredentials } from '../../security/basic-credentials';
import { FailedAttemptThrottle } from '../../security/failed-attempt-throttle';
import { buildShopData } from '../composition/shop-data';
import { errorBody, sendError } from './http-io';
import { AddressList } from './address-list';
import { healthRoute } from './routes/health.route';
import { metricsRoute } from './routes/metrics.route';
import { openApiRoute } from './routes/openapi.route';
import { orderStatusRoute } from './routes/order-status.route';
import { webhookRoute } from './routes/webhook.route';
import { shopOrderNoticeRoute } from './routes/shop-notice.route';
import { register } from './contract/route-contract';
import { orderStatusContract } from './routes/helpdesk.contract';
import { healthContract, metricsContract, openApiContract } from './routes/operations.contract';
import { webhookContract } from './routes/webhook.contract';
import { shopOrderNoticeContract } from './routes/shop-notice.contract';
import { registerStaffRoutes } from './routes/staff-routes';
import { buildStaffServices } from '../composition/staff-services';
import { buildHelpdeskCard } from '../composition/helpdesk-card';
import { helpdeskCardRoute } from './routes/helpdesk-card.route';
import { helpdeskCardActionRoutes } from './routes/helpdesk-card-actions.route';
import { CARD_TOKEN_MAX_LENGTH, helpdeskCardActionContract, helpdeskCardActionPageContract, helpdeskCardContract } from './routes/helpdesk-card.contract';
import { buildPaymentHub } from '../composition/payment-hub';
import { GracefulShutdown } from './graceful-shutdown';
import { Transport } from './transport';
import { observeRequests } from './request-observer';

export interface ApiDeps {
  config: Config;
  dataSource: DataSource;
  redis: RedisClient;
  log: Logger;
  /** The time the use cases and staff authentication see; tests pin it. */
  clock?: () => Date;
}

export interface Api {
  server: Server;
  /** Stops taking requests and ends keep-alive connections (see GracefulShutdown), then lets go of the queue connection. */
  close(): Promise<void>;
}

/** Builds the REST server: HTTPS itself when a certificate is configured, plain HTTP behind a proxy otherwise. */
export async function createApi({ config, dataSource, redis, log, clock }: ApiDeps): Promise<Api> {
  const tls = config.http.tlsCertFile && config.http.tlsKeyFile
    ? { certificate: fs.readFileSync(config.http.tlsCertFile), key: fs.readFileSync(config.http.tlsKeyFile) }
    : {};
  // The router's longest path parameter (find-my-way's default is 100 characters): the helpdesk card's signed links are longer.
  const server = restify.createServer({ name: 'shop-sidecar', handleUncaughtExceptions: false, maxParamLength: CARD_TOKEN_MAX_LENGTH, ...tls } as restify.ServerOptions);
  const shutdown = new GracefulShutdown((server as unknown as { server: http.Server }).server);

  // A request target or Host that makes no URL (`POST http://[x HTTP/1.1`) would otherwise throw inside
  // restify's router, outside any handler, and end the process.
  server.pre((req, res, next) => {
    try {
      req.getUrl();
    } catch {
      sendError(res, 400, 'bad_request', 'The request target is not a valid URL.', {}, { Connection: 'close' });
      return next(false);
    }
    return next();
  });

  const transport = new Transport(config.http.trustedProxies);
  const shop = buildShopData(config, dataSource, log);
  const hub = buildPaymentHub(config, dataSource, log, 'producer', clock, shop);
  const namespace = redisNamespace(config.db.name, config.db.tablePrefix);

  const metrics = new ApiMetrics({ dbPool: () => poolState(dataSource), redisReady: () => redis.isReady, throttleListening: () => throttle.available });
  const exchange = new MetricsExchange(redis, namespace, apiProcessName(), metrics.registry, log);
  // Handled, the order status route writes no line but its access line, unless one of the site's filters fails or
  // answers out of contract: without filters it runs outside the request context (request-observer.ts).
  observeRequests(server, { metrics, log, transport, withoutContext: new Set(shop.extensions.any() ? [] : [orderStatusContract.routerPath]) });

  const throttle = new FailedAttemptThrottle(redis, `${namespace}:helpdesk-throttle`, config.helpdesk.throttle, log, { blocked: () => metrics.throttleBlocked() });
  await throttle.start();
  register(server, orderStatusContract, orderStatusRoute({
    transport,
    credentials: new StaticBasicCredentials(config.helpdesk.apiKey, config.helpdesk.apiSecret),
    throttle,
    lookup: new LookupOrderStatus(shop.orders, shop.settings, shop.extensions),
  }));
  // The helpdesk's custom card (Dixa) and its action links: its own token, its own count of failed attempts.
  const staff = buildStaffServices(config, dataSource, log, clock, shop);
  const helpdeskCard = buildHelpdeskCard({ config, dataSource, shop, staff, hub, redis, namespace, clock: clock ?? (() => new Date()) });
  const cardThrottle = new FailedAttemptThrottle(redis, `${namespace}:helpdesk-card-throttle`, config.helpdesk.throttle, log, { blocked: () => metrics.throttleBlocked() });
  await cardThrottle.start();
  register(server, helpdeskCardContract, helpdeskCardRoute({
    transport,
    token: config.helpdesk.cardToken,
    allowFrom: config.helpdesk.cardAllowFrom.length ? new AddressList(config.helpdesk.cardAllowFrom) : null,
    throttle: cardThrottle,
    card: helpdeskCard.card,
  }));
  if (helpdeskCard.actions) {
    const pages = helpdeskCardActionRoutes(helpdeskCard.actions, () => 'en');
    register(server, helpdeskCardActionPageContract, pages.page);
    register(server, helpdeskCardActionContract, pages.act);
  } else {
    // No token, no links: an address from an older token is simply not valid.
    const gone = async (_req: unknown, res: restify.Response) => sendError(res, 404, 'not_found', 'The helpdesk card is not set up (HELPDESK_CARD_TOKEN).');
    register(server, helpdeskCardActionPageContract, gone);
    register(server, helpdeskCardActionContract, gone);
  }
  register(server, webhookContract, webhookRoute(hub));
  register(server, shopOrderNoticeContract, shopOrderNoticeRoute(hub));
  // Staff routes' failed authentications, per client address, under the same limits.
  const staffThrottle = new FailedAttemptThrottle(redis, `${namespace}:staff-throttle`, config.helpdesk.throttle, log, { blocked: () => metrics.throttleBlocked() });
  await staffThrottle.start();
  registerStaffRoutes(server, { config, dataSource, log, transport, throttle: staffThrottle, clock, shop, hub, staff });
  register(server, healthContract, healthRoute(dataSource, redis, shop));
  register(server, openApiContract, openApiRoute());
  const dunningReports = new DunningCaseReportRepository(dataSource);
  const dunningCounts = new DunningCounts(dunningReports);
  const customerIndex = new CustomerContactIndex(dataSource);
  register(server, metricsContract, metricsRoute({
    allowed: new AddressList(config.http.metricsAllowed),
    transport,
    exchange,
    sources: {
      webhookCounts: () => hub.webhooks.countsByProviderAndStatus(),
      oldestPendingWebhookAgeSeconds: () => hub.webhooks.oldestPendingAgeSeconds(),
      retryCounts: () => hub.retries.countsByStatus(),
      changeBacklog: () => shop.changes.backlog(),
      workers: () => hub.workers.recent(),
      reconciliation: () => hub.reconciliation.metrics(),
      dunning: () => dunningCounts.read(),
      dunningShares: () => {
        const until = clock ? clock() : new Date();
        return dunningReports.armShares(new Date(until.getTime() - SHARE_WINDOW_DAYS * 86_400_000), until);
      },
      customerIndexSweep: () => customerIndex.sweepFigures(),
      providerRefusals: async () => {
        const [counts, open] = await Promise.all([hub.refusals.countsByProvider(), hub.refusals.open()]);
        return { counts, held: open?.open ?? 0 };
      },
      secondCaptures: () => hub.secondCaptureRecords.flagged(),
      // Without Redis the queue would wait for its connection; answer at once instead.
      queueCounts: () => (redis.isReady ? hub.queue.counts() : Promise.reject(new Error('Redis is not connected'))),
    },
  }));
  exchange.start();

  // Restify's own errors (unknown route, wrong method, a handler that failed) in the service's error shape.
  server.on('restifyError', (req, res, err, callback) => {
    const status: number = err.statusCode ?? 500;
    // The request ID named here: a route handled outside the request context (request-observer.ts) fails here too.
    if (status >= 500) log.error('request_failed', { requestId: res.getHeader('X-Request-Id'), method: req.method, path: req.path(), error: err });
    const code = status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : status >= 500 ? 'internal_error' : 'bad_request';
    const message = status >= 500 ? 'Something went wrong on our side; it has been logged.' : err.message;
    err.toJSON = () => errorBody(status, code, message);
    return callback();
  });
  return {
    server,
    async close() {
      await shutdown.stop();
      shop.handOver.close();
      await Promise.all([hub.queue.close(1000), hub.providerLimits.close(), throttle.stop(), staffThrottle.stop(), cardThrottle.stop(), exchange.stop()]);
    },
  };
}
