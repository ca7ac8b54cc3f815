import { createShopDataSource } from '../../data-access/data-source';
import { exitAfterLogging, logger } from '../../logger';
import { awaitDependencies, DATABASE_WAIT_MS, shopMissingLine, WORKER_REDIS_WAIT_MS } from '../await-dependencies';
import { CONFIGURATION_EXIT_CODE, serviceConfigOrExit } from '../service-configuration';
import { QUEUE_CLOSE_TIMEOUT_MS, STOP_STEP_MS, startWorker } from './worker';

/** PM2 kills the worker this long after SIGTERM (ecosystem.config.js); the process ends before, whatever it waits for. */
const KILL_TIMEOUT_MS = 40_000;
const EXIT_DEADLINE_MS = Math.min(KILL_TIMEOUT_MS - 2000, QUEUE_CLOSE_TIMEOUT_MS + 3 * STOP_STEP_MS + 2000);

async function main(): Promise<void> {
  const config = await serviceConfigOrExit();
  const dependencies = await awaitDependencies(config, logger, { databaseMs: DATABASE_WAIT_MS, redisMs: WORKER_REDIS_WAIT_MS });
  if (dependencies.kind === 'misconfigured') return exitAfterLogging(CONFIGURATION_EXIT_CODE, dependencies.line);
  if (dependencies.kind === 'gave_up') {
    logger.error('worker_start_failed', { reason: dependencies.line });
    return exitAfterLogging(1);
  }
  const dataSource = createShopDataSource(config.db);
  await dataSource.initialize();
  const shopMissing = await shopMissingLine(dataSource, config);
  if (shopMissing) return exitAfterLogging(CONFIGURATION_EXIT_CODE, shopMissing);
  let stopping = false;
  /** `graceMs`: how long jobs in progress may take to finish; a stalled worker's are stuck, so it gives them none. */
  const stop = async (signal: string, code: number, graceMs = QUEUE_CLOSE_TIMEOUT_MS) => {
    if (stopping) return;
    stopping = true;
    logger.info('worker_stopping', { signal });
    // Whatever a step waits for, the process ends in time; a job still running stays PENDING for the next worker.
    setTimeout(() => {
      logger.warn('worker_stop_deadline', { afterMs: EXIT_DEADLINE_MS });
      void exitAfterLogging(code);
    }, EXIT_DEADLINE_MS).unref();
    await worker.stop(graceMs);
    await exitAfterLogging(code);
  };
  const worker = startWorker({
    config, dataSource, log: logger,
    // A stuck worker is replaced: PM2 starts a fresh process once this one has exited.
    onStall: () => void stop('watchdog', 1, 0),
  });
  logger.info('worker_started', { name: worker.name });
  process.send?.('ready');

  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  process.on('SIGINT', () => void stop('SIGINT', 0));
}

main().catch((error) => {
  logger.error('worker_start_failed', { error });
  void exitAfterLogging(1);
});
