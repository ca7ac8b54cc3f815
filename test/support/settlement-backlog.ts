import type { ExecutionContext } from 'ava';
import { setOption } from '../../src/demo/woocommerce-schema';
import { FakeCardGateway, sendInvoiceSettled } from './fake-card-gateway';
import { eventually } from './payment-hub-fixture';
import { startServiceProcess, type ServiceProcess } from './service-process';
import { createTestShop, startApi, type RunningApi, type TestShop } from './test-shop';

/**
 * A shop whose pending orders are settled at the card gateway, each by an `invoice_settled` webhook with
 * the handle `order-<id>` (the gateway plugin's default, so the order is found by its number): the most
 * common event of a real shop, queued while no worker runs, for real `npm run worker` processes to take on.
 */
export class SettlementBacklog {
  readonly fake = new FakeCardGateway();
  private api: RunningApi | undefined;
  private readonly workers: ServiceProcess[] = [];

  private constructor(readonly shop: TestShop) {}

  static async open(name: string): Promise<SettlementBacklog> {
    const backlog = new SettlementBacklog(await createTestShop(name, {}));
    const { shop, fake } = backlog;
    await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(Date.now() / 1000) }), 'no');
    await fake.start();
    backlog.api = await startApi(shop.config(backlog.gatewayEnv()));
    return backlog;
  }

  /** `count` pending orders, each with its settlement stored and queued through the API; their ids. */
  async queue(t: ExecutionContext, count: number): Promise<number[]> {
    const orderIds: number[] = [];
    for (let i = 0; i < count; i++) orderIds.push(await this.shop.seeder.createOrder({ status: 'pending', total: '10.00' }));
    for (let i = 0; i < orderIds.length; i += 25) {
      const answers = await Promise.all(orderIds.slice(i, i + 25).map((id) => sendInvoiceSettled(this.api!.url, this.fake, `order-${id}`)));
      for (const { res } of answers) t.is(res.status, 200);
    }
    return orderIds;
  }

  /** Starts `count` workers and waits until each has started. */
  async startWorkers(count: number): Promise<ServiceProcess[]> {
    const started = Array.from({ length: count }, () => startServiceProcess('worker', { DB_NAME: this.shop.dbName, DB_TABLE_PREFIX: this.shop.prefix, ...this.gatewayEnv() }));
    this.workers.push(...started);
    await Promise.all(started.map((worker) => worker.logged('worker_started')));
    return started;
  }

  /** Waits (at most `timeoutMs`) until no webhook is left to process, failing at once if a worker exits; the seconds it took. */
  async allFinal(timeoutMs: number): Promise<number> {
    const started = Date.now();
    await eventually(async () => {
      const gone = this.workers.find((worker) => worker.hasExited());
      if (gone) throw new Error(`a worker exited: ${JSON.stringify(gone.logs.slice(-10))}`);
      const [[row]] = await this.shop.db.query(`SELECT COUNT(*) AS open FROM ${this.shop.prefix}sidecar_webhooks WHERE status NOT IN ('PROCESSED', 'SKIPPED')`) as any[];
      return Number(row.open) === 0;
    }, timeoutMs, 'every webhook to be final');
    return (Date.now() - started) / 1000;
  }

  /** Every webhook PROCESSED, and each order captured once and handed to WooCommerce as paid once. */
  async assertEachPaidOnce(t: ExecutionContext, orderIds: number[]): Promise<void> {
    const { db, prefix } = this.shop;
    const [webhooks] = await db.query(`SELECT status, COUNT(*) AS n FROM ${prefix}sidecar_webhooks GROUP BY status`) as any[];
    t.deepEqual(webhooks.map((row: any) => [row.status, Number(row.n)]), [['PROCESSED', orderIds.length]]);
    const [payments] = await db.query(`SELECT order_id, status FROM ${prefix}sidecar_payments ORDER BY order_id`) as any[];
    t.deepEqual(payments.map((row: any) => [Number(row.order_id), row.status]), orderIds.map((id) => [id, 'CAPTURED']), 'one captured payment on each order');
    const [completions] = await db.query(
      `SELECT object_id, COUNT(*) AS n FROM ${prefix}sidecar_woocommerce_changes WHERE op = 'order_payment_complete' GROUP BY object_id ORDER BY object_id`) as any[];
    t.deepEqual(completions.map((row: any) => [Number(row.object_id), Number(row.n)]), orderIds.map((id) => [id, 1]), 'each order handed to WooCommerce as paid once');
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.kill()));
    await this.api?.stop();
    await this.fake.stop();
    await this.shop.drop();
  }

  private gatewayEnv() {
    return { CARD_GATEWAY_API_URL: this.fake.url, CARD_GATEWAY_API_KEY: this.fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: this.fake.webhookSecret };
  }
}
