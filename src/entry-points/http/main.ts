import v8 from 'node:v8';
import { apiBounds, createShopDataSource } from '../../data-access/data-source';
import { closeRedis, connectRedis } from '../../data-access/redis';
import { exitAfterLogging, logger } from '../../logger';
import { awaitDependencies, shopMissingLine } from '../await-dependencies';
import { CONFIGURATION_EXIT_CODE, serviceConfigOrExit } from '../service-configuration';
import { SHUTDOWN_DEADLINE_MS } from './graceful-shutdown';
import { listen } from './listen';
import { createApi } from './server';

async function main(): Promise<void> {
  const config = await serviceConfigOrExit();
  // Under load V8 lets the heap grow to about four times what is live before a full collection: most of
  // the API's peak memory is garbage waiting for it. Twice what is live costs a few percent of the
  // requests per second at full load (docs/developers-guide.md, "Memory").
  if (config.http.heapGrowthPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.http.heapGrowthPercent}`);
  // PM2 hears 'ready' only once the database and Redis answer: a reload never swaps in a process that cannot serve.
  const dependencies = await awaitDependencies(config, logger);
  if (dependencies.kind === 'misconfigured') return exitAfterLogging(CONFIGURATION_EXIT_CODE, dependencies.line);
  if (dependencies.kind === 'gave_up') {
    logger.error('api_start_failed', { reason: dependencies.line });
    return exitAfterLogging(1);
  }
  const dataSource = createShopDataSource(config.db, 10, apiBounds(config));
  await dataSource.initialize();
  const shopMissing = await shopMissingLine(dataSource, config);
  if (shopMissing) return exitAfterLogging(CONFIGURATION_EXIT_CODE, shopMissing);
  const redis = await connectRedis(config.redisUrl, logger);
  const api = await createApi({ config, dataSource, redis, log: logger });
  const server = api.server;

  // The restify server, not its node server: restify emits the node server's 'error' again on itself.
  const listening = await listen(server, config.http.port, config.http.host, { port: 'PORT', host: 'HOST' });
  if (listening.kind === 'refused') {
    // One line naming the setting, not a stack trace; what it opened is let go of by the exit.
    logger.error('api_cannot_listen', { code: listening.code, message: listening.message });
    return exitAfterLogging(1);
  }
  const scheme = config.http.tlsCertFile ? 'https' : 'http';
  logger.info('api_listening', { url: `${scheme}://${config.http.host}:${(server.address() as { port: number }).port}` });
  process.send?.('ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('api_stopping', { signal });
    // Whatever hangs, the process ends before PM2's kill_timeout (10 s) would kill it.
    setTimeout(() => {
      logger.error('api_stop_forced');
      void exitAfterLogging(1);
    }, SHUTDOWN_DEADLINE_MS + 2000).unref();
    // Finish the requests in flight (cut at the deadline), then let go of the database and Redis.
    await api.close();
    await Promise.allSettled([dataSource.destroy(), closeRedis(redis)]);
    await exitAfterLogging(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  logger.error('api_start_failed', { error });
  void exitAfterLogging(1);
});
