import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setOption } from '../../src/demo/woocommerce-schema';
import { DOCTOR_CHECKS } from '../../src/installation/check-installation.use-case';
import { MOBILE_WALLET_EVENT_TYPES } from '../../src/payments/providers/events';
import { paymentHub } from '../support/cli-process';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { FakeWordPress, LOGGED_IN_KEY, LOGGED_IN_SALT } from '../support/fake-wordpress';
import { createTestShop, type TestShop } from '../support/test-shop';

// `payment-hub doctor` against a whole installation: the shop's database, Redis, WordPress with the companion
// (played by a small server that checks the hand-over's signature), and both providers, then with faults.

const PUBLIC = 'https://sidecar.shop.example.dk';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let wordpress: FakeWordPress;
let cwd: string;

test.before(async () => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-'));
  shop = await createTestShop('doctor');
  await setOption(shop.db, shop.prefix, 'woocommerce_version', '10.0.2', 'yes');
  // As Subscriptions 7.9.0 records itself: its own version, and (under the older name) its bundled subscriptions-core's.
  await setOption(shop.db, shop.prefix, 'wcs_plugin_version', '7.9.0', 'yes');
  await setOption(shop.db, shop.prefix, 'woocommerce_subscriptions_active_version', '8.3.0', 'yes');
  await setOption(shop.db, shop.prefix, 'active_plugins', 'a:2:{i:0;s:27:"woocommerce/woocommerce.php";i:1;s:55:"woocommerce-subscriptions/woocommerce-subscriptions.php";}', 'yes');
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) }), 'no');
  card = new FakeCardGateway();
  await card.start();
  card.webhookUrls = [`${PUBLIC}/payment-hub/v1/webhook/card_gateway`];
  wallet = new FakeMobileWallet();
  await wallet.start();
  wordpress = new FakeWordPress(shop);
  await wordpress.start();
});

test.after.always(async () => {
  await Promise.allSettled([card?.stop(), wallet?.stop(), wordpress?.stop()]);
  await shop?.drop();
});

function environment(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DB_NAME: shop.dbName,
    DB_TABLE_PREFIX: shop.prefix,
    HELPDESK_API_KEY: 'helpdesk', HELPDESK_API_SECRET: 'helpdesk-secret-0123456789',
    SHOP_URL: wordpress.url, WP_LOGGED_IN_KEY: LOGGED_IN_KEY, WP_LOGGED_IN_SALT: LOGGED_IN_SALT,
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: `${PUBLIC}/payment-hub/v1/webhook/mobile_wallet`,
    ...overrides,
  };
}

interface Doctor {
  code: number | null;
  report: { ok: boolean; checks: { check: string; status: string; detail: string; fix: string | null }[] };
  stderr: string;
}

/** The CLI in a folder of its own (no .env), configured by `env` alone. */
const cli = (args: string[], env: Record<string, string>) => paymentHub(args, env, cwd);

async function doctor(env: Record<string, string>): Promise<Doctor> {
  const run = await cli(['doctor', '--json'], env);
  return { code: run.code, report: JSON.parse(run.stdout), stderr: run.stderr };
}

const statusOf = (run: Doctor) => Object.fromEntries(run.report.checks.map((check) => [check.check, check.status]));
const checkOf = (run: Doctor, name: string) => run.report.checks.find((check) => check.check === name)!;

async function registerWalletWebhook() {
  const registered = await cli(['mobile_wallet', 'webhooks', 'register', '--yes', '--json'], environment());
  if (registered.code !== 0) throw new Error(registered.stderr);
}

test.serial('When everything is in place, Then every check passes (Node 20 only warned about) and doctor exits 0', async (t) => {
  await registerWalletWebhook();
  const run = await doctor(environment());
  t.is(run.code, 0, JSON.stringify(run.report, null, 2));
  t.true(run.report.ok);
  t.like(statusOf(run), {
    configuration: 'ok', trusted_proxies: 'ok', database: 'ok', clock: 'ok', woocommerce: 'ok', migrations: 'ok', redis: 'ok',
    companion: 'ok', handover: 'ok', card_gateway: 'ok', mobile_wallet: 'ok',
  });
  t.true(['ok', 'warn'].includes(statusOf(run).node));
  t.regex(checkOf(run, 'woocommerce').detail, /WooCommerce 10\.0\.2, Subscriptions 7\.9\.0, storage: posts/);
  t.regex(checkOf(run, 'handover').detail, /companion version 3/);
  t.deepEqual(wordpress.received.at(-1)!.ids, [], 'the hand-over check hands nothing over');
});

test.serial('When the installation has faults, Then each failed check says what is wrong and how to fix it, and doctor exits 1', async (t) => {
  card.webhookUrls = ['https://old-php-shop.example.dk/wc-api/WC_Gateway_Reepay/'];
  const run = await doctor(environment({
    WP_LOGGED_IN_SALT: 'not-the-site-salt',
    MOBILE_WALLET_WEBHOOK_URL: `${PUBLIC}/elsewhere`,
    HELPDESK_API_SECRET: '',
    HOST: '0.0.0.0',
  }));
  card.webhookUrls = [`${PUBLIC}/payment-hub/v1/webhook/card_gateway`];
  t.is(run.code, 1);
  t.false(run.report.ok);
  t.like(statusOf(run), { configuration: 'warn', trusted_proxies: 'warn', handover: 'fail', card_gateway: 'fail', mobile_wallet: 'fail', database: 'ok' });
  t.regex(checkOf(run, 'handover').fix!, /LOGGED_IN_KEY and LOGGED_IN_SALT/);
  t.regex(checkOf(run, 'card_gateway').detail, /no webhook URL ends in \/payment-hub\/v1\/webhook\/card_gateway/);
  t.regex(checkOf(run, 'mobile_wallet').fix!, /payment-hub mobile_wallet webhooks register/);
  t.regex(checkOf(run, 'configuration').detail, /HELPDESK_API_KEY\/SECRET unset/);
  // No worker runs here; pm2 is not on PATH, so the fix runs it through npx.
  t.like(checkOf(run, 'workers'), { status: 'warn', fix: 'npm start (PM2 runs the worker), or npx pm2 logs shop-sidecar-worker' });
  t.true(run.report.checks.filter((check) => check.status === 'fail').every((check) => Boolean(check.fix)));
});

test.serial('The table shows each detail whole, wrapped, with the fixes below it', async (t) => {
  card.webhookUrls = ['https://old-php-shop.example.dk/wc-api/WC_Gateway_Reepay/'];
  try {
    const env = environment({ MOBILE_WALLET_WEBHOOK_URL: `${PUBLIC}/elsewhere` });
    const long = (await doctor(env)).report.checks.map((check) => check.detail).filter((detail) => detail.length > 100);
    t.true(long.length > 0, 'a detail longer than a line');
    const table = await cli(['doctor'], env);
    t.is(table.code, 1);
    const rows = table.stdout.split('\n').filter((line) => !/^\w+: fix: /.test(line));
    t.true(rows.every((line) => line.length <= 140), table.stdout);
    // Wrapped lines of a detail follow each other in the DETAIL column: without the spaces, each detail reads whole.
    const squeezed = table.stdout.replace(/\s+/g, '');
    for (const detail of long) t.true(squeezed.includes(detail.replace(/\s+/g, '')), detail);
  } finally {
    card.webhookUrls = [`${PUBLIC}/payment-hub/v1/webhook/card_gateway`];
  }
});

test.serial('When Redis is down, Then doctor prints only its own table: no log line of the service before it', async (t) => {
  const run = await cli(['doctor'], environment({ REDIS_URL: 'redis://127.0.0.1:1' }));
  t.is(run.code, 1);
  t.is(run.stderr, '');
  t.regex(run.stdout, /^CHECK\s+STATUS\s+DETAIL\n/);
  t.regex(run.stdout, /\nredis\s+FAIL\s+no answer at 127\.0\.0\.1:1/);
});

test.serial('When the database cannot be reached, Then doctor says so with the address and still checks Redis and Node', async (t) => {
  const run = await doctor(environment({ DB_PORT: '1' }));
  t.is(run.code, 1);
  t.like(statusOf(run), { database: 'fail', redis: 'ok' });
  t.regex(checkOf(run, 'database').detail, /cannot connect to .* at 127\.0\.0\.1:1/);
});

test.serial('When the database cannot be reached, or a setting cannot be read (PORT=abc), Then doctor still lists every check, each one it could not run as skipped with the reason', async (t) => {
  const unreachable = await doctor(environment({ DB_PORT: '1' }));
  t.deepEqual(unreachable.report.checks.map((check) => check.check), [...DOCTOR_CHECKS]);
  t.like(statusOf(unreachable), { database: 'fail', redis: 'ok', migrations: 'skip', workers: 'skip', card_gateway: 'skip', provider_refusals: 'skip' });
  t.is(checkOf(unreachable, 'migrations').detail, 'needs the database (see database)');
  t.regex(checkOf(unreachable, 'database').fix!, /start MariaDB|DB_HOST/);

  const badPort = await doctor(environment({ PORT: 'abc' }));
  t.is(badPort.code, 1);
  t.deepEqual(badPort.report.checks.map((check) => check.check), [...DOCTOR_CHECKS]);
  t.like(statusOf(badPort), { configuration: 'fail', database: 'skip', redis: 'skip' });
  t.regex(checkOf(badPort, 'configuration').detail, /PORT/);
  t.is(checkOf(badPort, 'redis').detail, 'needs a configuration that can be read (see configuration)');
  const table = await cli(['doctor'], environment({ PORT: 'abc' }));
  for (const check of DOCTOR_CHECKS) t.regex(table.stdout, new RegExp(`\\n${check}\\s+(OK|WARN|FAIL|SKIP)\\s`), check);
});

test.serial('When the configuration is malformed, Then doctor reports it as a failed check instead of stopping', async (t) => {
  const run = await doctor(environment({ DB_HOST: '[::1' , MYSQL_CLIENT_FLAGS: 'NOT_A_FLAG' }));
  t.is(run.code, 1);
  t.is(checkOf(run, 'configuration').status, 'fail');
});

test.serial('When the wallet\'s registration misses events, Then doctor names them', async (t) => {
  const events = MOBILE_WALLET_EVENT_TYPES.filter((event) => !event.includes('refunded'));
  const url = `${PUBLIC}/payment-hub/v1/webhook/mobile_wallet-partial`;
  const registered = await cli(['mobile_wallet', 'webhooks', 'register', '--yes', '--url', url, '--events', events.join(',')], environment());
  t.is(registered.code, 0, registered.stderr);
  const run = await doctor(environment({ MOBILE_WALLET_WEBHOOK_URL: url }));
  t.is(checkOf(run, 'mobile_wallet').status, 'fail');
  t.regex(checkOf(run, 'mobile_wallet').detail, /events not sent: recurring\.charge-refunded\.v1/);
});

test.serial('Each broken part on its own: Redis, refused provider credentials, migrations behind, too few privileges, no companion', async (t) => {
  const redis = await doctor(environment({ REDIS_URL: 'redis://127.0.0.1:1' }));
  t.is(redis.code, 1);
  t.like(checkOf(redis, 'redis'), { status: 'fail' });
  t.regex(checkOf(redis, 'redis').fix!, /REDIS_URL/);

  const refused = await doctor(environment({ CARD_GATEWAY_API_KEY: 'priv_wrong', MOBILE_WALLET_CLIENT_SECRET: 'wrong' }));
  t.is(refused.code, 1);
  t.like(statusOf(refused), { card_gateway: 'fail', mobile_wallet: 'fail' });
  t.regex(checkOf(refused, 'card_gateway').detail, /API key was refused/);
  t.regex(checkOf(refused, 'mobile_wallet').detail, /credentials were refused/);

  const migrations = `${shop.prefix}sidecar_migrations`;
  const [[last]] = await shop.db.query(`SELECT * FROM ${migrations} ORDER BY id DESC LIMIT 1`) as any;
  await shop.db.query(`DELETE FROM ${migrations} WHERE id = ?`, [last.id]);
  try {
    const behind = await doctor(environment());
    t.is(behind.code, 1);
    t.like(checkOf(behind, 'migrations'), { status: 'fail', fix: 'npm run migrate' });
    // What reads the service's own tables says so, instead of "Table ... doesn't exist".
    for (const check of ['workers', 'mobile_wallet', 'provider_refusals']) {
      t.like(checkOf(behind, check), { status: 'skip', detail: 'needs the service\'s tables, which are not current: run npm run migrate first' }, check);
    }
  } finally {
    await shop.db.query(`INSERT INTO ${migrations} (id, timestamp, name) VALUES (?, ?, ?)`, [last.id, last.timestamp, last.name]);
  }

  await shop.db.query(`CREATE USER IF NOT EXISTS 'doctor_ro'@'127.0.0.1' IDENTIFIED BY 'ro-password'`);
  await shop.db.query(`GRANT SELECT ON \`${shop.dbName}\`.* TO 'doctor_ro'@'127.0.0.1'`);
  try {
    const readOnly = await doctor(environment({ DB_USER: 'doctor_ro', DB_PASSWORD: 'ro-password' }));
    t.is(readOnly.code, 1);
    t.is(checkOf(readOnly, 'database').status, 'fail');
    t.regex(checkOf(readOnly, 'database').detail, /doctor_ro lacks INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP/);
    t.regex(checkOf(readOnly, 'database').fix!, /^GRANT INSERT/);
  } finally {
    await shop.db.query(`DROP USER 'doctor_ro'@'127.0.0.1'`);
  }

  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) - 30 * 86400 }), 'no');
  try {
    const noCompanion = await doctor(environment());
    t.is(noCompanion.code, 0, 'the service works without the companion, writing the rows itself');
    t.like(statusOf(noCompanion), { companion: 'warn', handover: 'skip' });
    t.regex(checkOf(noCompanion, 'companion').fix!, /wp-content\/mu-plugins/);
    // An older companion still hands over, but cannot send the dunning e-mails.
    await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 2, seen: Math.floor(Date.now() / 1000) }), 'no');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const older = await doctor(environment());
    t.like(statusOf(older), { companion: 'warn', handover: 'ok' });
    t.regex(checkOf(older, 'companion').detail, /version 2: customers whose renewal only they can fix are not e-mailed/);
  } finally {
    await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) }), 'no');
  }
});
