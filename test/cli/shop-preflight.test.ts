import test from 'ava';
import { paymentHub, runCommand } from '../support/cli-process';
import { createTestShop, type TestShop } from '../support/test-shop';

// The commands that change the shop's database or ask the providers, run as the operator runs them, against a
// database and prefix that are not a WooCommerce's (the shop's own tables are under wp_): they change nothing and
// say why in one line.

const WRONG_PREFIX = 'xx_';
let shop: TestShop;

test.before(async () => {
  shop = await createTestShop('preflight');
});

test.after.always(async () => {
  await shop?.drop();
});

/** The names of the database's tables. */
async function tables(): Promise<string[]> {
  const [rows] = await shop.db.query('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name') as any[];
  return (rows as { name: string }[]).map((row) => row.name);
}

const environment = (env: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DB_NAME: shop.dbName, DB_TABLE_PREFIX: WRONG_PREFIX, ...env });

test.serial('When npm run migrate runs with a prefix that has no WooCommerce, Then it creates no table and says so in one line, exit 1', async (t) => {
  const before = await tables();
  const run = await runCommand('npm', ['run', '--silent', 'migrate'], { env: environment() });
  t.is(run.code, 1, run.stdout);
  t.is(run.stderr, `migrate: no WooCommerce in ${shop.dbName} with prefix ${WRONG_PREFIX} (check DB_NAME and DB_TABLE_PREFIX ($table_prefix) against wp-config.php); nothing was changed\n`);
  t.is(run.stdout, '');
  t.deepEqual(await tables(), before);
  t.deepEqual((await tables()).filter((name) => name.startsWith(WRONG_PREFIX)), []);
});

test.serial('When order-number-index runs with a prefix that has no WooCommerce, Then it changes nothing and says so in one line, exit 1', async (t) => {
  const before = await tables();
  for (const action of ['status', 'add']) {
    const run = await runCommand('npm', ['run', '--silent', 'order-number-index', '--', action], { env: environment() });
    t.is(run.code, 1, run.stdout);
    t.is(run.stderr, `order-number-index: no WooCommerce in ${shop.dbName} with prefix ${WRONG_PREFIX} (check DB_NAME and DB_TABLE_PREFIX ($table_prefix) against wp-config.php); nothing was changed\n`);
  }
  t.deepEqual(await tables(), before);
});

test.serial('When reconcile runs with a prefix that has no WooCommerce, Then it asks no provider and says so in one line, exit 1', async (t) => {
  const before = await tables();
  // A provider that is configured, at an address where nothing answers: were it asked, the run would say unreachable.
  const run = await paymentHub(['reconcile', '--all', '--dry-run'], environment({ CARD_GATEWAY_API_KEY: 'priv_x', CARD_GATEWAY_API_URL: 'http://127.0.0.1:1' }));
  t.is(run.code, 1);
  t.is(run.stderr, `payment-hub: no WooCommerce in ${shop.dbName} with prefix ${WRONG_PREFIX} (check DB_NAME and DB_TABLE_PREFIX ($table_prefix) against wp-config.php); nothing was changed\n`);
  t.is(run.stdout, '');
  t.deepEqual(await tables(), before);
});

test.serial('When reconcile runs with no provider configured, Then it says that in one line and exits 1', async (t) => {
  const run = await paymentHub(['reconcile', '--all', '--dry-run'], environment({ DB_TABLE_PREFIX: shop.prefix }));
  t.is(run.code, 1);
  t.is(run.stderr, 'payment-hub: no payment provider is configured (CARD_GATEWAY_API_KEY unset; MOBILE_WALLET_CLIENT_ID, MOBILE_WALLET_CLIENT_SECRET, '
    + 'MOBILE_WALLET_SUBSCRIPTION_KEY, MOBILE_WALLET_MSN unset), so there is no one to ask; nothing was changed\n');
  t.is(run.stdout, '');
});
