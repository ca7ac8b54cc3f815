import test from 'ava';
import { generateBulkOrders } from '../../src/demo/bulk-orders';
import { runCommand } from '../support/cli-process';
import { createTestShop, type TestShop } from '../support/test-shop';

// `npm run migrate` as the operator runs it (the npm script, in a child process, stderr not a terminal) on shops of
// a few thousand orders: the contact index build shows its share done and the time left, and ends at 100%.
const ORDERS = 7000;
const shops: TestShop[] = [];

test.after.always(async () => {
  await Promise.all(shops.map((shop) => shop.drop()));
});

for (const hpos of [false, true]) {
  const storage = hpos ? 'HPOS' : 'posts';
  test(`When npm run migrate builds the customer index of a ${ORDERS.toLocaleString('en')}-order shop in ${storage} storage, Then it prints its share done and the time left, up to 100%`, async (t) => {
    const shop = await createTestShop(`migrate_progress_${hpos ? 'hpos' : 'posts'}`, { hpos });
    shops.push(shop);
    const { firstId, lastId } = await generateBulkOrders(shop.db, shop.prefix, ORDERS, { hpos });

    const run = await runCommand('npm', ['run', '--silent', 'migrate'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PROGRESS_INTERVAL_SECONDS: '0' },
    });
    t.is(run.code, 0, run.stderr);

    const lines = run.stderr.split('\n').filter((line) => line.startsWith('customer contact index: '));
    const shares = lines.map((line) => Number(/^customer contact index: ([\d.]+)%/.exec(line)?.[1]));
    t.true(lines.length >= 3, run.stderr);
    // A line per chunk of 2,000 orders, each further along, with the time left once the build has moved.
    t.regex(lines[0], /^customer contact index: \d+\.\d% done, about (\d+ ms|\d+ s) left, at ID [\d,]+ of [\d,]+$/);
    t.true(shares.every((share, i) => i === 0 || share >= shares[i - 1]), lines.join('\n'));
    t.true(shares[0] > 0 && shares[0] < 100);
    const last = lines[lines.length - 1];
    t.regex(last, /^customer contact index: 100% done in (\d+ ms|\d+ s), at ID [\d,]+ of [\d,]+$/);
    t.true(last.endsWith(`at ID ${lastId.toLocaleString('en')} of ${lastId.toLocaleString('en')}`), last);
    t.regex(run.stdout, /customer contact index: up to date \(\d+ entries written or removed\)/);
    t.false(run.stdout.includes('%'), 'progress stays off stdout');

    const [[indexed]] = await shop.db.query(`SELECT COUNT(*) AS n, MIN(order_id) AS first, MAX(order_id) AS last FROM ${shop.prefix}sidecar_customer_contacts`) as any[];
    t.is(Number(indexed.last), lastId);
    t.true(Number(indexed.first) >= firstId);

    // Run again: nothing left to build, so no progress at all.
    const again = await runCommand('npm', ['run', '--silent', 'migrate'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PROGRESS_INTERVAL_SECONDS: '0' },
    });
    t.is(again.code, 0, again.stderr);
    t.false(again.stderr.includes('customer contact index:'), again.stderr);
    t.regex(again.stdout, /schema is up to date/);
  });
}
