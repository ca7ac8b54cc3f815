import fs from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { loadConfig } from '../../../src/config';
import { createShopDataSource } from '../../../src/data-access/data-source';
import { startServiceProcess, type ServiceProcess } from '../../support/service-process';
import { WP_SECRETS_ENV } from '../../support/wordpress-fixtures';
import { startAdminOrigin, type AdminOrigin } from './admin-origin';
import { freePort } from '../../support/free-port';
import type { WooCommerceShop } from './woocommerce-shop';

const COMPANION_LOADER = path.resolve(__dirname, '../../../../src/woocommerce-companion/shop-sidecar-companion.php');
const COMPANION_FOLDER = path.resolve(__dirname, '../../../../src/woocommerce-companion/shop-sidecar-companion');
const STARTED_WITHIN_MS = 60_000;

/** The companion installed as docs/companion.md says: the loader and its folder copied into wp-content/mu-plugins/. */
export async function installCompanion(shop: WooCommerceShop): Promise<void> {
  const muPlugins = path.join(shop.siteDir, 'wp-content', 'mu-plugins');
  await fs.copyFile(COMPANION_LOADER, path.join(muPlugins, 'shop-sidecar-companion.php'));
  await fs.cp(COMPANION_FOLDER, path.join(muPlugins, 'shop-sidecar-companion'), { recursive: true });
}

/**
 * The service as staff's panels reach it: its tables migrated, nginx serving WordPress and the service's routes on
 * one HTTPS origin, and the API and the worker as their own processes on the real clock, configured by `env` (the
 * database, the port, SHOP_URL and WordPress's secrets are filled in). Parts started before a failure are kept, so
 * that `stop()` ends them and `log()` shows what they said.
 */
export class PanelsService {
  origin?: AdminOrigin;
  api?: ServiceProcess;
  worker?: ServiceProcess;
  /** The API's own plain-HTTP address, for what the providers send it. */
  apiUrl = '';

  async start(shop: WooCommerceShop, env: Record<string, string>): Promise<this> {
    const port = await freePort();
    const apiPort = await freePort();
    this.apiUrl = `http://127.0.0.1:${apiPort}`;
    const full: Record<string, string> = {
      DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, PORT: String(apiPort), SHOP_URL: `https://127.0.0.1:${port}`, ...WP_SECRETS_ENV, ...env,
    };
    const migrations = createShopDataSource(loadConfig(full).db, 1);
    await migrations.initialize();
    try {
      await migrations.runMigrations();
    } finally {
      await migrations.destroy();
    }
    this.origin = await startAdminOrigin({ shop, apiUrl: this.apiUrl, port });
    // The hand-over goes to the shop's HTTPS address: the services trust the origin's own certificate.
    const serviceEnv = { ...full, NODE_EXTRA_CA_CERTS: this.origin.certificate };
    this.api = startServiceProcess('api', serviceEnv);
    this.worker = startServiceProcess('worker', serviceEnv);
    await this.api.logged('api_listening', STARTED_WITHIN_MS);
    await this.worker.logged('worker_started', STARTED_WITHIN_MS);
    return this;
  }

  /** What nginx, PHP and the two processes said last, for a failed test's log. */
  async log(t: ExecutionContext): Promise<void> {
    if (this.origin) t.log((await this.origin.output()).slice(-6000));
    if (this.api) t.log(JSON.stringify(this.api.logs.slice(-20)).slice(-4000));
    if (this.worker) t.log(JSON.stringify(this.worker.logs.slice(-20)).slice(-4000));
  }

  /** The API killed; the worker asked to stop (SIGTERM) and killed after 15 s; nginx and PHP stopped. */
  async stop(): Promise<void> {
    await this.api?.kill();
    if (this.worker) {
      this.worker.signal('SIGTERM');
      await Promise.race([this.worker.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      await this.worker.kill();
    }
    await this.origin?.stop();
  }
}
