import type { DataSource } from 'typeorm';
import { RefreshCustomerContacts } from '../../customers/refresh-customer-contacts.use-case';
import { CustomerContactIndex } from '../../data-access/customer-contact-index';
import { ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import type { Logger } from '../../logger';

/**
 * Applies the service's own pending migrations, then builds (or brings up to date) the customer
 * lookup's contact index, so the lookup answers fully from the first request. Safe to run again.
 */
export async function migrateShop(dataSource: DataSource, log: Logger, say: (line: string) => void): Promise<void> {
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  say(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}` : 'schema is up to date');
  const refresh = new RefreshCustomerContacts({ index: new CustomerContactIndex(dataSource), settings: new ShopSettingsRepository(dataSource), log });
  let written = 0;
  for (;;) {
    written += await refresh.execute({ budgetMs: 10_000 });
    const state = await refresh.status();
    if (state.built) break;
    say(`customer contact index: building, at ID ${state.buildCursor}`);
  }
  say(`customer contact index: up to date (${written} entries written or removed)`);
}
