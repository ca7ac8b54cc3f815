import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { logger } from '../../logger';
import { startWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db);
  await dataSource.initialize();
  const worker = startWorker({ config, dataSource, log: logger });
  logger.info('worker_started');
  process.send?.('ready');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('worker_stopping', { signal });
    // Jobs in progress finish (up to QUEUE_CLOSE_TIMEOUT_MS); an unfinished one is picked up again later.
    await worker.stop();
    await dataSource.destroy().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  logger.error('worker_start_failed', { error });
  process.exit(1);
});
