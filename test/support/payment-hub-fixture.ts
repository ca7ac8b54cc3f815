import type { Config } from '../../src/config';
import { buildPaymentHub, type PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { createShopDataSource } from '../../src/data-access/data-source';
import { silentLogger } from '../../src/logger';
import { startWorker, type RunningWorker } from '../../src/entry-points/worker/worker';
import type { DataSource } from 'typeorm';
import type { Pool } from 'mysql2/promise';
import { setOption } from '../../src/demo/woocommerce-schema';
import { cardGatewayDelivery, type CardGatewayDeliveryEvent } from './fake-card-gateway';
import { mobileWalletDelivery, type MobileWalletDeliveryEvent } from './fake-mobile-wallet';

/** Polls until `check` returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A worker in this process with fast loops, and its own data source. */
export async function startTestWorker(config: Config, options: { clock?: () => Date; poolSize?: number; concurrency?: number } = {}): Promise<RunningWorker & { dataSource: DataSource }> {
  const dataSource = createShopDataSource(config.db, options.poolSize ?? 4);
  await dataSource.initialize();
  const worker = startWorker({
    config, dataSource, log: silentLogger, sweepIntervalMs: 200, sweepGraceSeconds: 1, dunningIntervalMs: 200, clock: options.clock, concurrency: options.concurrency,
  });
  return {
    dataSource,
    name: worker.name,
    tick: () => worker.tick(),
    async stop() {
      // The worker closes its data source as it stops.
      await worker.stop();
    },
  };
}

/** The payment hub's use cases without HTTP, for driving processing and dunning directly with a pinned clock. */
export async function openHub(config: Config, clock: () => Date): Promise<PaymentHub & { close(): Promise<void> }> {
  const dataSource = createShopDataSource(config.db, 4);
  await dataSource.initialize();
  const hub = buildPaymentHub(config, dataSource, silentLogger, 'producer', clock);
  return Object.assign(hub, {
    async close() {
      hub.handOver.close();
      await Promise.all([hub.queue.close(500), hub.providerLimits.close()]);
      await dataSource.destroy();
    },
  });
}

/** One card-gateway event, signed, stored and processed as the worker does it; the outcome's status (PROCESSED, SKIPPED...). */
export async function processCardGatewayEvent(hub: PaymentHub, event: CardGatewayDeliveryEvent, secret: string): Promise<string> {
  const delivery = cardGatewayDelivery(event, secret);
  const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
  if (stored.kind !== 'stored') throw new Error('not stored');
  const outcome = await hub.processCardGatewayWebhook.execute(stored.id);
  if (outcome.kind !== 'done') throw new Error(`not done: ${JSON.stringify(outcome)}`);
  return outcome.status;
}

/** One signed mobile-wallet delivery, handled inside the request as the API does it; the outcome's status. */
export async function handleWalletEvent(hub: PaymentHub, event: MobileWalletDeliveryEvent, signing: { secret: string; url: string }): Promise<string> {
  const delivery = mobileWalletDelivery(event, signing);
  const outcome = await hub.receiveMobileWalletWebhook.execute({ method: 'POST', headers: delivery.headers, body: delivery.body });
  if (outcome.kind !== 'handled') throw new Error(`not handled: ${JSON.stringify(outcome)}`);
  return outcome.outcome.status;
}

/** The worker as main.ts starts it, its own loops slowed down so that only `tick()` (with the pinned clock) acts. */
export async function startPacedWorker(config: Config, clock: () => Date): Promise<RunningWorker & { dataSource: DataSource }> {
  const dataSource = createShopDataSource(config.db, 4);
  await dataSource.initialize();
  const slow = 3_600_000;
  const worker = startWorker({
    config, dataSource, log: silentLogger, clock,
    sweepIntervalMs: slow, dunningIntervalMs: slow, customerIndexIntervalMs: slow, pauseEndsIntervalMs: slow, handOverIntervalMs: slow, changesPruneIntervalMs: slow,
    preRenewalCheckIntervalMs: slow,
  });
  return Object.assign(worker, { dataSource });
}

/** The companion plugin heard from at `version` (or gone); the service re-reads the shop's settings after a second. */
export async function announceCompanion(shop: { db: Pool; prefix: string }, present: boolean, version = 3): Promise<void> {
  if (present) await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version, seen: Math.floor(Date.now() / 1000) }), 'no');
  else await shop.db.query(`DELETE FROM ${shop.prefix}options WHERE option_name = 'shop_sidecar_companion'`);
  await new Promise((resolve) => setTimeout(resolve, 1100));
}
