import { PostMeta } from '../../../entities';
import { loadConfigOrExit } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { addOrderNumberIndex, orderNumberIndexExists, removeOrderNumberIndex } from '../../data-access/order-number-index';

/** `npm run order-number-index -- status|add|remove` (see the README: sequential order numbers). */
async function main(): Promise<number> {
  const action = process.argv[2] ?? 'status';
  if (!['status', 'add', 'remove'].includes(action)) {
    process.stderr.write('usage: npm run order-number-index -- status|add|remove\n');
    return 2;
  }
  const config = loadConfigOrExit();
  const dataSource = createShopDataSource(config.db, 1);
  await dataSource.initialize();
  try {
    const table = dataSource.getMetadata(PostMeta).tableName;
    if (action === 'add') process.stdout.write(`${table}: index ${await addOrderNumberIndex(dataSource)}\n`);
    else if (action === 'remove') process.stdout.write(`${table}: index ${await removeOrderNumberIndex(dataSource)}\n`);
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
