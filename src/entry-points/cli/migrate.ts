import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { logger, type Logger } from '../../logger';
import { shopPreflight } from '../../installation/shop-preflight';
import { migrateShop } from './migrate-shop';
import { StderrLine } from './progress';

/** `npm run migrate`: the service's own tables and the customer index; never WooCommerce's tables. */
async function main(): Promise<number> {
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
    const preflight = await shopPreflight(dataSource, config, { providers: false });
    if (preflight.kind === 'refused') {
      process.stderr.write(`migrate: ${preflight.reason}; nothing was changed\n`);
      return 1;
    }
    await migrateShop(dataSource, log, (line) => process.stdout.write(`${line}\n`), { live });
    return 0;
  } finally {
    await dataSource.destroy();
  }
}

main().then((code) => {
  process.exitCode = code;
}, (error) => {
  process.stderr.write(`migrate failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
