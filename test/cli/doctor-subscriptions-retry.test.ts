import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import { paymentHub } from '../support/cli-process';
import { createTestShop, type TestShop } from '../support/test-shop';

// `payment-hub doctor` against a shop database: one dunning engine, so WooCommerce Subscriptions' own retry
// system (the option woocommerce_subscriptions_enable_retry) must be off while the service retries.

const SUBSCRIPTIONS = 'woocommerce-subscriptions/woocommerce-subscriptions.php';
const RETRY_OPTION = 'woocommerce_subscriptions_enable_retry';

let shop: TestShop;
let cwd: string;

test.before(async () => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-retry-'));
  shop = await createTestShop('doctor_retry');
  await setOption(shop.db, shop.prefix, 'woocommerce_version', '10.0.2', 'yes');
  await setOption(shop.db, shop.prefix, 'woocommerce_subscriptions_active_version', '7.9.0', 'yes');
  await activePlugins(['woocommerce/woocommerce.php', SUBSCRIPTIONS]);
});

test.after.always(async () => {
  await shop?.drop();
  if (cwd) fs.rmSync(cwd, { recursive: true, force: true });
});

async function activePlugins(plugins: string[]) {
  const serialized = `a:${plugins.length}:{${plugins.map((plugin, i) => `i:${i};s:${Buffer.byteLength(plugin)}:"${plugin}";`).join('')}}`;
  await setOption(shop.db, shop.prefix, 'active_plugins', serialized, 'yes');
}

interface Check { check: string; status: string; detail: string; fix: string | null }

/** `payment-hub doctor --json` on the test shop, with no provider configured (those checks skip). */
async function doctor(): Promise<{ code: number | null; ok: boolean; retry: Check | undefined }> {
  const run = await paymentHub(['doctor', '--json'], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix }, cwd);
  const report = JSON.parse(run.stdout) as { ok: boolean; checks: Check[] };
  return { code: run.code, ok: report.ok, retry: report.checks.find((check) => check.check === 'subscriptions_retry') };
}

test.serial('When the shop has never set Subscriptions\' retry option (its default is off), Then the check passes', async (t) => {
  await shop.db.query(`DELETE FROM ${shop.prefix}options WHERE option_name = ?`, [RETRY_OPTION]);
  const run = await doctor();
  t.is(run.code, 0);
  t.like(run.retry, { status: 'ok', fix: null });
  t.regex(run.retry!.detail, /retry of failed payments is off/);
});

test.serial('When "Retry Failed Payments" is on, Then doctor fails the check with how to turn it off, and exits 1', async (t) => {
  await setOption(shop.db, shop.prefix, RETRY_OPTION, 'yes', 'yes');
  const run = await doctor();
  t.is(run.code, 1);
  t.false(run.ok);
  t.is(run.retry?.status, 'fail');
  t.regex(run.retry!.detail, /woocommerce_subscriptions_enable_retry = yes/);
  t.regex(run.retry!.fix!, /WooCommerce → Settings → Subscriptions → "Retry Failed Payments"/);
  t.regex(run.retry!.fix!, /wp option update woocommerce_subscriptions_enable_retry no/);
});

test.serial('When it has been turned off again, Then the check passes and doctor exits 0', async (t) => {
  await setOption(shop.db, shop.prefix, RETRY_OPTION, 'no', 'yes');
  const run = await doctor();
  t.is(run.code, 0);
  t.is(run.retry?.status, 'ok');
});

test.serial('When Subscriptions is not active, Then its retry option does not matter and the check is skipped', async (t) => {
  await setOption(shop.db, shop.prefix, RETRY_OPTION, 'yes', 'yes');
  await activePlugins(['woocommerce/woocommerce.php']);
  try {
    const run = await doctor();
    t.is(run.retry?.status, 'skip');
  } finally {
    await activePlugins(['woocommerce/woocommerce.php', SUBSCRIPTIONS]);
  }
});
