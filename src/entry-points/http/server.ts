import fs from 'node:fs';
import restify, { type Server } from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { RedisClient } from '../../data-access/redis';
import { redisNamespace } from '../../data-access/redis';
import { LookupOrderStatus } from '../../order-status/lookup-order-status.use-case';
import { StaticBasicCredentials } from '../../security/basic-credentials';
import { FailedAttemptThrottle } from '../../security/failed-attempt-throttle';
import { buildShopData } from '../../shop-data';
import { errorBody } from './http-io';
import { healthRoute } from './routes/health.route';
import { orderStatusRoute } from './routes/order-status.route';
import { webhookRoute } from './routes/webhook.route';
import { registerStaffRoutes } from './routes/staff-routes';
import { buildPaymentHub } from '../../composition';
import { Transport } from './transport';

export interface ApiDeps {
  config: Config;
  dataSource: DataSource;
  redis: RedisClient;
  log: Logger;
}

export interface Api {
  server: Server;
  /** Stops taking requests, then lets go of the queue connection. */
  close(): Promise<void>;
}

/** Builds the REST server: HTTPS itself when a certificate is configured, plain HTTP behind a proxy otherwise. */
export async function createApi({ config, dataSource, redis, log }: ApiDeps): Promise<Api> {
  const tls = config.http.tlsCertFile && config.http.tlsKeyFile
    ? { certificate: fs.readFileSync(config.http.tlsCertFile), key: fs.readFileSync(config.http.tlsKeyFile) }
    : {};
  const server = restify.createServer({ name: 'shop-sidecar', handleUncaughtExceptions: false, ...tls });

  const transport = new Transport(config.http.trustedProxies);
  const shop = buildShopData(config, dataSource, log);
  const hub = buildPaymentHub(config, dataSource, log, 'producer', undefined, shop);
  const namespace = redisNamespace(config.db.name, config.db.tablePrefix);

  const throttle = new FailedAttemptThrottle(redis, `${namespace}:helpdesk-throttle`, config.helpdesk.throttle, log);
  await throttle.start();
  server.post('/helpdesk/v1/order-status', orderStatusRoute({
    transport,
    credentials: new StaticBasicCredentials(config.helpdesk.apiKey, config.helpdesk.apiSecret),
    throttle,
    lookup: new LookupOrderStatus(shop.orders, shop.settings, shop.extensions),
  }));
  server.post('/payment-hub/v1/webhook/:provider', webhookRoute(hub));
  registerStaffRoutes(server, { config, dataSource, log, transport, shop });
  server.get('/health', healthRoute(dataSource, redis));

  // Restify's own errors (unknown route, wrong method, a handler that failed) in the service's error shape.
  server.on('restifyError', (req, _res, err, callback) => {
    const status: number = err.statusCode ?? 500;
    if (status >= 500) log.error('request_failed', { method: req.method, path: req.path(), error: err });
    const code = status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : status >= 500 ? 'internal_error' : 'bad_request';
    const message = status >= 500 ? 'Something went wrong on our side; it has been logged.' : err.message;
    err.toJSON = () => errorBody(status, code, message);
    return callback();
  });
  return {
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([hub.queue.close(1000), throttle.stop()]);
    },
  };
}
