import type { DataSource } from 'typeorm';
import type { Config } from '../config';
import { InstallationRepository } from '../data-access/installation-repository';
import { providerSetup } from '../payments/providers/configured';

/** DB_NAME and DB_TABLE_PREFIX do not lead to a WooCommerce: what `doctor` and the commands that change the shop say. */
export function noWooCommerce(db: Pick<Config['db'], 'name' | 'tablePrefix'>): { detail: string; fix: string } {
  return { detail: `no WooCommerce in ${db.name} with prefix ${db.tablePrefix}`, fix: 'check DB_NAME and DB_TABLE_PREFIX ($table_prefix) against wp-config.php' };
}

export type Preflight = { kind: 'ready' } | { kind: 'refused'; reason: string };

/**
 * Before a command changes the shop's database or asks a provider (`npm run migrate`, `order-number-index`,
 * `payment-hub reconcile`): the database must hold a WooCommerce under DB_TABLE_PREFIX, and, when the command asks
 * the providers, one of them must be configured. Reads only, so a wrong prefix or database changes nothing (a
 * migration run against one would create the service's tables beside another site, or none).
 */
export async function shopPreflight(dataSource: DataSource, config: Pick<Config, 'db' | 'cardGateway' | 'mobileWallet'>, needs: { providers: boolean }): Promise<Preflight> {
  const plugins = await new InstallationRepository(dataSource).plugins();
  if (!plugins.woocommerce) {
    const { detail, fix } = noWooCommerce(config.db);
    return { kind: 'refused', reason: `${detail} (${fix})` };
  }
  if (needs.providers) {
    const setups = Object.values(providerSetup(config));
    if (setups.every((setup) => !setup.configured)) {
      const unset = setups.map((setup) => (setup.configured ? '' : setup.unset)).join('; ');
      return { kind: 'refused', reason: `no payment provider is configured (${unset}), so there is no one to ask` };
    }
  }
  return { kind: 'ready' };
}
