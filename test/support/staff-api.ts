import restify from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import { closeRedis, connectRedis, redisNamespace } from '../../src/data-access/redis';
import { FailedAttemptThrottle, type ThrottleLimits } from '../../src/security/failed-attempt-throttle';
import { registerStaffRoutes } from '../../src/entry-points/http/routes/staff-routes';
import { Transport } from '../../src/entry-points/http/transport';
import { silentLogger, type Logger } from '../../src/logger';
import { buildStaffServices, type StaffServices } from '../../src/entry-points/composition/staff-services';
import { buildPaymentHub } from '../../src/entry-points/composition/payment-hub';
import { buildShopData } from '../../src/entry-points/composition/shop-data';

export interface RunningStaffApi {
  url: string;
  stop(): Promise<void>;
}

/**
 * A REST server in this process with only the staff routes, registered through `registerStaffRoutes` exactly
 * as server.ts does, on a free port. `clock` pins the time authentication and the use cases see. Failed
 * authentications are limited as in the service, but far above what the tests of the authentication rules
 * send from their one address, unless `throttle` gives the limits (the limit's own tests use the whole API).
 */
export async function startStaffApi(config: Config, options: { clock?: () => Date; log?: Logger; throttle?: ThrottleLimits } = {}): Promise<RunningStaffApi> {
  const log = options.log ?? silentLogger;
  const dataSource = createShopDataSource(config.db, 4);
  await dataSource.initialize();
  const redis = await connectRedis(config.redisUrl, log, 1000);
  const limits = options.throttle ?? { ...config.helpdesk.throttle, maxFailures: 100_000 };
  const throttle = new FailedAttemptThrottle(redis, `${redisNamespace(config.db.name, config.db.tablePrefix)}:staff-throttle`, limits, log);
  await throttle.start();
  const server = restify.createServer({ name: 'shop-sidecar', handleUncaughtExceptions: false });
  const shop = buildShopData(config, dataSource, log);
  const hub = buildPaymentHub(config, dataSource, log, 'producer', options.clock, shop);
  registerStaffRoutes(server, { config, dataSource, log, transport: new Transport(config.http.trustedProxies), throttle, clock: options.clock, shop, hub });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await throttle.stop();
      shop.handOver.close();
      await Promise.allSettled([hub.queue.close(500), hub.providerLimits.close()]);
      await Promise.allSettled([dataSource.destroy(), closeRedis(redis)]);
    },
  };
}

/** The staff use cases without HTTP (the worker's jobs, with a pinned clock), on a data source of their own. */
export async function openStaffServices(config: Config, clock?: () => Date, log: Logger = silentLogger): Promise<StaffServices & { dataSource: DataSource; close(): Promise<void> }> {
  const dataSource = createShopDataSource(config.db, 4);
  await dataSource.initialize();
  return Object.assign(buildStaffServices(config, dataSource, log, clock), { dataSource, close: () => dataSource.destroy() });
}

export interface CapturedLog {
  level: string;
  event: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps what it is told, to check that failures are logged. */
export function capturingLogger(): Logger & { entries: CapturedLog[] } {
  const entries: CapturedLog[] = [];
  return {
    entries,
    info: (event, fields) => { entries.push({ level: 'info', event, fields }); },
    warn: (event, fields) => { entries.push({ level: 'warn', event, fields }); },
    error: (event, fields) => { entries.push({ level: 'error', event, fields }); },
  };
}
