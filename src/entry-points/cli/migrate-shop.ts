import { MigrationExecutor, type DataSource } from 'typeorm';
import { HposOrder, Post } from '../../../entities';
import { RefreshCustomerContacts } from '../../customers/refresh-customer-contacts.use-case';
import { CustomerContactIndex } from '../../data-access/customer-contact-index';
import { ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import type { Logger } from '../../logger';
import { count, formatDuration, idRange, ProgressReporter, type ProgressOptions } from './progress';

/**
 * While the index is being built, each call builds one chunk (2,000 orders) and returns, so the progress line
 * moves with every chunk; a call costs two small reads besides its chunk.
 */
const BUILD_SLICE_MS = 0;
/** Once built: new orders and changes since the index last looked (the rolling sweep is the worker's alone). */
const CATCH_UP_MS = 10_000;

/**
 * Applies the service's own pending migrations, then builds (or brings up to date) the customer
 * lookup's contact index, so the lookup answers fully from the first request. Safe to run again.
 * The build shows its share done and the time left (`progress`: where that goes; stderr by default).
 */
export async function migrateShop(dataSource: DataSource, log: Logger, say: (line: string) => void, progress: Partial<ProgressOptions> = {}): Promise<void> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  if (pending.length) say(`applying ${pending.length} migration${pending.length === 1 ? '' : 's'}: ${pending.map((m) => m.name).join(', ')}`);
  const migrationsStarted = Date.now();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  say(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')} (in ${formatDuration(Date.now() - migrationsStarted)})` : 'schema is up to date');
  const refresh = new RefreshCustomerContacts({ index: new CustomerContactIndex(dataSource), settings: new ShopSettingsRepository(dataSource), log });
  let state = await refresh.status();
  let written = 0;
  if (!state.built) {
    // The build walks the store's primary key in ID order: its cursor against the store's ID range is its share done.
    const store = state.store === 'hpos' ? HposOrder : Post;
    const range = await idRange(dataSource, store);
    const from = Math.max(0, range.min - 1);
    const reporter = new ProgressReporter({
      label: 'customer contact index', from, to: range.max, position: Math.max(from, state.buildCursor), alwaysFinal: true,
      describe: (position, to) => `at ID ${count(position)} of ${count(to)}`, ...progress,
    });
    try {
      while (!state.built) {
        written += await refresh.execute({ budgetMs: BUILD_SLICE_MS });
        state = await refresh.status();
        if (!state.built) reporter.update(state.buildCursor, (await idRange(dataSource, store)).max);
      }
      reporter.finish();
    } finally {
      reporter.stop();
    }
  }
  written += await refresh.execute({ budgetMs: CATCH_UP_MS });
  say(`customer contact index: up to date (${written} entries written or removed)`);
}
