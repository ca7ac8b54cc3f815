import type { Config } from '../../src/config';
import { buildPaymentHub, type PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { createShopDataSource } from '../../src/data-access/data-source';
import { silentLogger } from '../../src/logger';
import { startWorker, type RunningWorker } from '../../src/entry-points/worker/worker';
import type { DataSource } from 'typeorm';

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
