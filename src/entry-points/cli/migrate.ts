import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { logger } from '../../logger';

/** `npm run migrate`: applies the service's own pending migrations; safe to run again. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db, 1);
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    process.stdout.write(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}\n` : 'schema is up to date\n');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  logger.error('migrate_failed', { error });
  process.exit(1);
});
