import type { Config } from '../config';
import { createShopDataSource, databaseAddress } from '../data-access/data-source';
import { InstallationRepository } from '../data-access/installation-repository';
import { redisDoesNotAnswer } from '../data-access/redis';
import { providerSetup } from '../payments/providers/configured';
import { providerClients } from '../payments/providers/clients';
import { within } from '../shared/within';
import { databaseProblem } from './database-problems';
import { noWooCommerce } from './shop-preflight';

/** What the check is for: a first start may wait for a database or Redis that is still starting; a reload may not. */
export type StartCheckPurpose = 'start' | 'reload';

/** A reason not to go on: the setting to change and what to do. One line each. */
export interface StartRefusal {
  setting: string;
  detail: string;
  fix: string;
}

export interface StartCheckOutcome {
  /** Null: PM2 may go on. */
  refusal: StartRefusal | null;
  /** What was checked and found in order, for the operator. */
  checked: string[];
  /** What does not stop the command (a provider that did not answer; at a first start, a database still starting). */
  warnings: string[];
}

/** Each step's bound: the whole check ends within a minute whatever hangs. */
const DATABASE_MS = 10_000;
const REDIS_MS = 3000;
const PROVIDER_MS = 5000;

const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/**
 * `npm start` and `npm run reload` try the configuration for real before PM2 touches a process, so that one
 * that cannot run never replaces one that does: with these credentials the database must hold this shop under
 * this prefix, the user must have the service's privileges, the service's migrations must be current, and Redis
 * must answer. Providers are asked too, but one that does not answer (or refuses) is only a warning: a
 * provider's outage must not block a reload, and the service serves the shop without it. At a first start, a
 * database or Redis that does not answer yet is a warning as well: the processes wait for them (docs/operators-guide.md,
 * "Boot order"). Reads only.
 */
export async function checkBeforeStart(config: Config, purpose: StartCheckPurpose): Promise<StartCheckOutcome> {
  const outcome: StartCheckOutcome = { refusal: null, checked: [], warnings: [] };
  const refuse = (refusal: StartRefusal) => ({ ...outcome, refusal });
  const where = databaseAddress(config.db);

  const dataSource = createShopDataSource(config.db, 1, { statementMs: DATABASE_MS, connectMs: DATABASE_MS });
  let connected = false;
  try {
    try {
      await within(dataSource.initialize(), DATABASE_MS + 1000);
      connected = true;
    } catch (error) {
      const problem = databaseProblem(error, config.db);
      if (!problem.unreachable || purpose === 'reload') return refuse(problem);
      outcome.warnings.push(`${problem.detail}: the processes wait for it and start serving when it answers`);
    }
    if (connected) {
      const installation = new InstallationRepository(dataSource);
      const plugins = await within(installation.plugins(), DATABASE_MS);
      if (!plugins.woocommerce) {
        const { detail, fix } = noWooCommerce(config.db);
        return refuse({ setting: 'DB_TABLE_PREFIX', detail, fix });
      }
      const missing = await within(installation.missingPrivileges(), DATABASE_MS);
      if (missing.length) {
        return refuse({
          setting: 'DB_USER', detail: `${config.db.user} lacks ${missing.join(', ')} on ${config.db.name}`,
          fix: `GRANT ${missing.join(', ')} ON \`${config.db.name}\`.* TO the service's user (docs/operators-guide.md, "The database user")`,
        });
      }
      const pending = await within(installation.pendingMigrations(), DATABASE_MS);
      if (pending.length) {
        return refuse({
          setting: 'DB_NAME', detail: `the service's tables in ${config.db.name} (prefix ${config.db.tablePrefix}) are not current for this release (${pending.length} migration(s) to apply)`,
          fix: 'npm run migrate, then run this again',
        });
      }
      outcome.checked.push(`database ${config.db.name} at ${where} (WooCommerce ${plugins.woocommerce}, prefix ${config.db.tablePrefix}, privileges, migrations current)`);
    }
  } catch (error) {
    return refuse({ setting: 'DB_HOST', detail: `the database at ${where} did not answer the check: ${detailOf(error)}`, fix: 'check that MariaDB runs and answers, then run this again' });
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }

  const redisAt = new URL(config.redisUrl).host;
  const silent = await redisDoesNotAnswer(config.redisUrl, REDIS_MS);
  if (silent === null) {
    outcome.checked.push(`redis at ${redisAt}`);
  } else {
    const detail = `no answer from Redis at ${redisAt}: ${silent}`;
    if (purpose === 'reload') return refuse({ setting: 'REDIS_URL', detail, fix: 'start redis-server (systemctl start redis-server), or set REDIS_URL to where it listens' });
    outcome.warnings.push(`${detail}: the processes wait for it`);
  }

  outcome.warnings.push(...await providerWarnings(config));
  return outcome;
}

/** The configured providers, each asked one cheap read: what did not answer, or refused the credentials, is said. */
async function providerWarnings(config: Config): Promise<string[]> {
  const setup = providerSetup(config);
  const clients = providerClients(config, { timeoutMs: PROVIDER_MS });
  const asks: Promise<string | null>[] = [];
  if (setup.card_gateway.configured) {
    asks.push(clients.cardGateway.getWebhookSettings().then((read) => (read.ok ? null : read.status === 401 || read.status === 403
      ? `card_gateway: the API key was refused (${read.message}); set CARD_GATEWAY_API_KEY to the account's private API key`
      : `card_gateway: did not answer (${read.message}); card payments wait until it does`)));
  }
  if (setup.mobile_wallet.configured) {
    asks.push(clients.mobileWallet.listWebhooks().then((read) => (read.ok ? null : read.status === 401 || read.status === 403
      ? `mobile_wallet: the credentials were refused (${read.message}); check MOBILE_WALLET_CLIENT_ID, _CLIENT_SECRET, _SUBSCRIPTION_KEY and _MSN`
      : `mobile_wallet: did not answer (${read.message}); wallet payments wait until it does`)));
  }
  const answers = await Promise.all(asks.map((ask) => within(ask, PROVIDER_MS + 2000).catch((error: unknown) => `a provider did not answer: ${detailOf(error)}`)));
  return answers.filter((answer): answer is string => answer !== null);
}
