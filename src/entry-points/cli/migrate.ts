import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { logger } from '../../logger';
import { migrateShop } from './migrate-shop';

/** `npm run migrate`: the service's own tables and the customer index; never WooCommerce's tables. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db, 2);
  await dataSource.initialize();
  try {
    await migrateShop(dataSource, logger, (line) => process.stdout.write(`${line}\n`));
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  logger.error('migrate_failed', { error });
  process.exit(1);
});
