import { loadConfigOrExit } from '../../config';
import { CustomerContactIndex } from '../../data-access/customer-contact-index';
import { createShopDataSource } from '../../data-access/data-source';
import { ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import { RefreshCustomerContacts } from '../../customers/refresh-customer-contacts.use-case';
import { logger } from '../../logger';

/**
 * `npm run migrate`: applies the service's own pending migrations, then builds (or brings up to date) the
 * customer lookup's contact index, so the lookup answers fully from the first request. Safe to run again.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db, 2);
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    process.stdout.write(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}\n` : 'schema is up to date\n');
    const refresh = new RefreshCustomerContacts({ index: new CustomerContactIndex(dataSource), settings: new ShopSettingsRepository(dataSource), log: logger });
    let written = 0;
    do {
      written += await refresh.execute({ budgetMs: 10_000 });
      const state = await refresh.status();
      if (!state.built) process.stdout.write(`customer contact index: building, at ID ${state.buildCursor}\n`);
    } while (!(await refresh.status()).built);
    process.stdout.write(`customer contact index: up to date (${written} entries written or removed)\n`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  logger.error('migrate_failed', { error });
  process.exit(1);
});
