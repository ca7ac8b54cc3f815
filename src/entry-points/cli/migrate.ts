import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { logger, type Logger } from '../../logger';
import { migrateShop } from './migrate-shop';
import { StderrLine } from './progress';

/** `npm run migrate`: the service's own tables and the customer index; never WooCommerce's tables. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db, 2);
  await dataSource.initialize();
  // The build's progress line on a terminal; log lines written meanwhile go above it.
  const live = new StderrLine();
  const log: Logger = {
    info: (event, fields) => live.around(() => logger.info(event, fields)),
    warn: (event, fields) => live.around(() => logger.warn(event, fields)),
    error: (event, fields) => live.around(() => logger.error(event, fields)),
  };
  try {
    await migrateShop(dataSource, log, (line) => process.stdout.write(`${line}\n`), { live });
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  logger.error('migrate_failed', { error });
  process.exit(1);
});
