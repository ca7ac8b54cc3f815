import { PostMeta } from '../../../entities';
import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { addOrderNumberIndex, orderNumberIndexExists, removeOrderNumberIndex } from '../../data-access/order-number-index';
import { shopPreflight } from '../../installation/shop-preflight';
import { withOnlineAlterProgress } from './progress';

/** `npm run order-number-index -- status|add|remove` (see docs/operators-guide.md: sequential order numbers). */
async function main(): Promise<number> {
  const action = process.argv[2] ?? 'status';
  if (!['status', 'add', 'remove'].includes(action)) {
    process.stderr.write('usage: npm run order-number-index -- status|add|remove\n');
    return 2;
  }
  const config = loadConfigOrExit();
  // Two connections: the index is added on one while its progress is read on the other.
  const dataSource = createShopDataSource(config.db, 2);
  await dataSource.initialize();
  try {
    const preflight = await shopPreflight(dataSource, config, { providers: false });
    if (preflight.kind === 'refused') {
      process.stderr.write(`order-number-index: ${preflight.reason}; nothing was changed\n`);
      return 1;
    }
    const table = dataSource.getMetadata(PostMeta).tableName;
    if (action === 'add') {
      // Adding it reads every row of the table: on a big shop minutes, so its share done and time left are shown (stderr).
      const added = await withOnlineAlterProgress(dataSource, { label: `${table}: adding the index` }, () => addOrderNumberIndex(dataSource));
      process.stdout.write(`${table}: index ${added}\n`);
    } else if (action === 'remove') process.stdout.write(`${table}: index ${await removeOrderNumberIndex(dataSource)}\n`);
    else process.stdout.write(`${table}: index ${(await orderNumberIndexExists(dataSource)) ? 'present' : 'absent'}\n`);
    return 0;
  } finally {
    await dataSource.destroy();
  }
}

main().then((code) => process.exit(code), (error) => {
  process.stderr.write(`order-number-index failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
