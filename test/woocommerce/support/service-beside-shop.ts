import { loadConfig, type Config } from '../../../src/config';
import { createShopDataSource } from '../../../src/data-access/data-source';
import { startTestWorker } from '../../support/payment-hub-fixture';
import { startApi, type RunningApi } from '../../support/test-shop';
import { WP_SECRETS_ENV } from '../../support/wordpress-fixtures';
import type { ServedShop } from './serve-over-http';
import type { WooCommerceShop } from './woocommerce-shop';

export interface ServiceBesideShop {
  config: Config;
  api: RunningApi;
  /** The running worker: a test that stops it (to show what the API does alone) puts the one it starts again here. */
  worker: Awaited<ReturnType<typeof startTestWorker>>;
  stop(): Promise<void>;
}

/**
 * The service as an operator runs it beside a served shop: configured for the shop's database and URL (plus
 * `env`), migrated, then the real API and a worker.
 */
export async function startServiceBeside(shop: WooCommerceShop, served: Pick<ServedShop, 'url'>, env: Record<string, string>): Promise<ServiceBesideShop> {
  const config = loadConfig({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: '0', SHOP_URL: served.url, ...WP_SECRETS_ENV, ...env });
  const migrations = createShopDataSource(config.db, 1);
  await migrations.initialize();
  await migrations.runMigrations();
  await migrations.destroy();
  const api = await startApi(config);
  const service: ServiceBesideShop = {
    config, api, worker: await startTestWorker(config),
    async stop() {
      await service.worker.stop();
      await api.stop();
    },
  };
  return service;
}

/** An order's or subscription's status where WooCommerce keeps it (HPOS's orders table, or the posts row). */
export async function statusOf(shop: WooCommerceShop, id: number): Promise<string | undefined> {
  if (shop.mode !== 'posts') return (await shop.sql<{ status: string }>(`SELECT status FROM ${shop.prefix}wc_orders WHERE id = ?`, [id]))[0]?.status;
  return (await shop.sql<{ post_status: string }>(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]))[0]?.post_status;
}
