import crypto from 'node:crypto';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config';
import { createShopDataSource, rawPool } from '../../src/data-access/data-source';
import { ScheduledActionRepository } from '../../src/data-access/scheduled-action-repository';
import { ShopSettingsRepository, type ShopSettings } from '../../src/data-access/shop-settings-repository';
import { WooCommerceChangeRepository, type ShopChange } from '../../src/data-access/woocommerce-change-repository';
import { handOverKey, signHandOver } from '../../src/woocommerce-handover/handover-signature';
import { WP_SECRETS } from '../support/wordpress-fixtures';
import { serveOverHttp, type ServedShop } from './support/serve-over-http';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop, type WooCommerceStack } from './support/woocommerce-shop';

/**
 * The companion's hand-over route on a real shop served over HTTP (PHP's built-in server, WP-Cron on as a shop
 * has it): a request signed as the companion's header describes makes WooCommerce apply the change inside the
 * request, once, and the Action Scheduler action stored with the change later completes without doing more.
 * The change's action is scheduled an hour ahead, so nothing but the route can have applied it; WooCommerce is
 * read through the CLI driver, which never runs WP-Cron.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const ROUTE = '/?rest_route=/shop-sidecar/v1/apply';
const HOUR = 3600_000;

// Signed here from the companion's header, independently of the service's own code (compared with it below).
const KEY = crypto.createHmac('sha256', WP_SECRETS.loggedInKey + WP_SECRETS.loggedInSalt).update('shop-sidecar-handover-v1').digest('hex');
const sign = (timestamp: number, body: string, key = KEY) => crypto.createHmac('sha256', key).update(`${timestamp}\n${body}`).digest('hex');
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Answer { status: number; json: any; ms: number }

export function handOverOverHttp(stack: WooCommerceStack, mode: StorageMode): void {
  let shop: WooCommerceShop;
  let served: ServedShop;
  let dataSource: DataSource;
  let changes: WooCommerceChangeRepository;
  let settings: ShopSettings;

  test.before(async () => {
    shop = await createWooCommerceShop(`handover_${stack}_${mode}`.replace('-', '_'), stack, mode, { companion: COMPANION });
    const config = loadConfig({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: 'https://shop.example.dk' });
    dataSource = createShopDataSource(config.db, 2);
    await dataSource.initialize();
    await dataSource.runMigrations();
    changes = new WooCommerceChangeRepository(dataSource, new ScheduledActionRepository(dataSource));
    settings = await new ShopSettingsRepository(dataSource).current();
    served = await serveOverHttp(shop);
  });

  test.after.always(async () => {
    await served?.stop();
    await dataSource?.destroy();
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop?.drop();
  });

  const q = async <T = Record<string, any>>(sql: string, values: unknown[] = []) =>
    (await rawPool(dataSource).query(sql.replace(/\{prefix\}/g, shop.prefix), values))[0] as T[];

  async function post(body: string, headers: Record<string, string>): Promise<Answer> {
    const started = Date.now();
    const response = await fetch(`${served.url}${ROUTE}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`not JSON (HTTP ${response.status}): ${text.slice(0, 2000)}\n--- server output ---\n${served.output().slice(-4000)}`);
    }
    return { status: response.status, json, ms: Date.now() - started };
  }

  /** A request signed as the service signs it. */
  function handOver(ids: unknown, timestamp = nowSeconds(), key = KEY): Promise<Answer> {
    const body = JSON.stringify({ changes: ids });
    return post(body, { 'X-Shop-Sidecar-Timestamp': String(timestamp), 'X-Shop-Sidecar-Signature': sign(timestamp, body, key) });
  }

  /** Stored as the service stores it (row and Action Scheduler action in one go), the action due at `actionDue`. */
  async function store(change: ShopChange, actionDue = new Date(Date.now() + HOUR)): Promise<{ id: number; actionId: number }> {
    const id = await changes.enqueue(rawPool(dataSource), change, settings, actionDue);
    const [row] = await q<{ action_id: string }>('SELECT action_id FROM {prefix}sidecar_woocommerce_changes WHERE id = ?', [id]);
    return { id, actionId: Number(row.action_id) };
  }

  const changeRow = async (id: number) =>
    (await q<{ status: string; attempts: number; result: string | null }>('SELECT status, attempts, result FROM {prefix}sidecar_woocommerce_changes WHERE id = ?', [id]))[0];
  const actionRow = async (actionId: number) =>
    (await q<{ status: string; scheduled_date_gmt: string }>('SELECT status, scheduled_date_gmt FROM {prefix}actionscheduler_actions WHERE action_id = ?', [actionId]))[0];
  const order = async (id: number) => (await shop.snapshot([id])).by_id[id];
  const hooks = (recorded: Array<{ kind: string; name: string }>, name: string) => recorded.filter((event) => event.kind === 'hook' && event.name === name).length;

  test.serial('the route: refused unsigned, stale or malformed; applies a signed change once; an empty list is a ping', async (t) => {
    // The service's own signing is the same as the companion's header says.
    t.is(handOverKey(WP_SECRETS.loggedInKey + WP_SECRETS.loggedInSalt), KEY);
    t.is(signHandOver(KEY, 1700000000, '{"changes":[1]}'), sign(1700000000, '{"changes":[1]}'));

    const { order_id: orderId } = await shop.fixture({ kind: 'order', gateway: 'reepay_checkout' });
    const note = `Payment order-${orderId} failed: insufficient_funds.`;
    const { id, actionId } = await store({ op: 'order_payment_failed', objectId: orderId, payload: { note } });

    const wrongKey = await handOver([id], nowSeconds(), crypto.createHmac('sha256', 'another site').update('shop-sidecar-handover-v1').digest('hex'));
    t.is(wrongKey.status, 401);
    t.is(wrongKey.json.code, 'shop_sidecar_unauthorized');
    const body = JSON.stringify({ changes: [id] });
    const ts = nowSeconds();
    const tampered = await post(JSON.stringify({ changes: [id, id] }), { 'X-Shop-Sidecar-Timestamp': String(ts), 'X-Shop-Sidecar-Signature': sign(ts, body) });
    t.is(tampered.status, 401, 'the signature covers the body');
    const unsigned = await post(body, {});
    t.is(unsigned.status, 401);
    t.is(unsigned.json.code, 'shop_sidecar_unauthorized');
    for (const skew of [-301, 400]) {
      const stale = await handOver([id], nowSeconds() + skew);
      t.is(stale.status, 401, `a timestamp ${skew} s off is refused`);
      t.is(stale.json.code, 'shop_sidecar_unauthorized');
    }
    t.like(await changeRow(id), { status: 'pending', attempts: 0 }, 'nothing applied');
    t.is((await order(orderId)).status, 'pending');

    for (const bad of [[String(id)], [0], [1.5], Array.from({ length: 101 }, (_, i) => i + 1), { 0: id }]) {
      const answer = await handOver(bad);
      t.is(answer.status, 400, `bad body ${JSON.stringify(bad).slice(0, 40)}`);
      t.is(answer.json.code, 'shop_sidecar_bad_request');
    }
    const extra = JSON.stringify({ changes: [id], more: true });
    const extraTs = nowSeconds();
    t.is((await post(extra, { 'X-Shop-Sidecar-Timestamp': String(extraTs), 'X-Shop-Sidecar-Signature': sign(extraTs, extra) })).status, 400);
    t.like(await changeRow(id), { status: 'pending', attempts: 0 });

    const applied = await handOver([id]);
    t.is(applied.status, 200, JSON.stringify(applied.json));
    t.deepEqual(applied.json, { version: 5, changes: [{ id, status: 'applied', result: 'order failed' }] });
    t.log(`hand-over answered in ${applied.ms} ms`);
    const after = await order(orderId);
    t.is(after.status, 'failed', 'WooCommerce applied the change inside the request');
    t.like(await actionRow(actionId), { status: 'pending' }, 'not by Action Scheduler: its action is still waiting');

    const again = await handOver([id]);
    t.deepEqual(again.json, { version: 5, changes: [{ id, status: 'applied', result: 'order failed' }] });
    const twice = await order(orderId);
    t.is(twice.notes.filter((n) => n.content.startsWith(note)).length, 1, 'one note');
    t.is(hooks(twice.recorded, 'woocommerce_order_status_failed'), 1, 'one status change');
    t.is(twice.recorded.filter((event) => event.kind === 'mail' && event.name === 'failed_order').length, 1, 'one e-mail');
    t.like(await changeRow(id), { status: 'applied', attempts: 1 });

    const ping = await handOver([]);
    t.is(ping.status, 200);
    t.deepEqual(ping.json, { version: 5, changes: [] });
    const missing = await handOver([id + 100000]);
    t.like(missing.json.changes[0], { id: id + 100000, status: 'missing' });
    t.deepEqual((await shop.sql<{ v: string }>("SELECT option_value AS v FROM {prefix}options WHERE option_name = 'shop_sidecar_companion'")).map((row) => JSON.parse(row.v).version), [5]);
  });

  /**
   * Makes the change's action due and lets the shop run it as a shop does: a visit spawns WP-Cron, which runs Action
   * Scheduler (or Action Scheduler's own async runner, started from an earlier request, gets there first).
   */
  async function wpCronRuns(t: ExecutionContext, actionId: number): Promise<void> {
    await q('UPDATE {prefix}actionscheduler_actions SET scheduled_date_gmt = UTC_TIMESTAMP() - INTERVAL 1 SECOND, scheduled_date_local = NOW() - INTERVAL 1 SECOND WHERE action_id = ?', [actionId]);
    // Action Scheduler's WP-Cron event runs once a minute: its next run is brought forward to now.
    await shop.php('cron_due', { hook: 'action_scheduler_run_queue' });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const visit = await fetch(`${served.url}/robots.txt`);
      await visit.arrayBuffer();
      const { status } = await actionRow(actionId);
      if (status !== 'pending' && status !== 'in-progress') break;
      if (Date.now() > deadline) throw new Error(`WP-Cron did not run action ${actionId}:\n${served.output().slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    t.pass();
  }

  test.serial('a payment applied through the route shows at once; its Action Scheduler action, run later by WP-Cron, does nothing more', async (t) => {
    const { order_id: orderId } = await shop.fixture({ kind: 'order', gateway: 'reepay_checkout' });
    const paidAt = nowSeconds() - 300;
    const note = `Payment order-${orderId} captured at ${new Date(paidAt * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC.`;
    const { id, actionId } = await store({ op: 'order_payment_complete', objectId: orderId, payload: { transaction_id: `order-${orderId}`, note, paid_at: paidAt } });
    t.is((await order(orderId)).status, 'pending');

    const answer = await handOver([id]);
    t.deepEqual(answer.json, { version: 5, changes: [{ id, status: 'applied', result: 'payment complete' }] });
    const paid = await order(orderId);
    t.is(paid.status, 'processing', 'processing right after the answer');
    t.is(paid.data.date_paid, new Date(paidAt * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'), 'date_paid is when the provider took the money');
    t.is(paid.data.transaction_id, `order-${orderId}`);
    t.like(await actionRow(actionId), { status: 'pending' });

    await wpCronRuns(t, actionId);
    t.like(await actionRow(actionId), { status: 'complete' }, 'the safety net completes cleanly');
    const logs = await q<{ message: string }>('SELECT message FROM {prefix}actionscheduler_logs WHERE action_id = ? ORDER BY log_id', [actionId]);
    t.log(`action ${actionId}: ${logs.map((log) => log.message).join(' | ')}`);
    t.log(served.output().split('\n').filter((line) => /^sidecar-http: .*(wp-cron|admin-ajax)/.test(line)).join('\n'));
    // Run by the shop's own machinery: WP-Cron's runner, or the async runner Action Scheduler starts from a request.
    t.true(logs.some((log) => /^action complete via (WP Cron|Async Request)$/i.test(log.message)), 'run by Action Scheduler, from a request to the shop');
    t.false(logs.some((log) => /fail|error/i.test(log.message)), 'no error logged');

    const after = await order(orderId);
    t.is(after.status, 'processing');
    t.is(hooks(after.recorded, 'woocommerce_payment_complete'), 1, 'one payment_complete');
    t.is(after.notes.filter((n) => n.content === note).length, 1, 'one note');
    t.like(await changeRow(id), { status: 'applied', attempts: 1, result: 'payment complete' });
  });

}
