import mysql from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { settingRefusedLine, type Config } from '../config';
import { connectionOptions } from '../data-access/data-source';
import { closeRedis, connectRedis } from '../data-access/redis';
import { InstallationRepository } from '../data-access/installation-repository';
import { databaseProblem } from '../installation/database-problems';
import { noWooCommerce } from '../installation/shop-preflight';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import { DeadlinePassedError, within } from '../shared/within';

/**
 * How long a starting process waits for the database: long enough for a machine's boot (MariaDB after a crash
 * recovers its redo log first), bounded so that a database that never comes ends in a line and an exit, which
 * PM2 answers by starting the process again.
 */
export const DATABASE_WAIT_MS = 10 * 60_000;
/**
 * How long the API waits for Redis; after that it starts without it, as it serves when Redis goes away later
 * (degraded). The worker does not wait (WORKER_REDIS_WAIT_MS): it works from the database, and its queue joins
 * when Redis answers.
 */
export const REDIS_WAIT_MS = 60_000;
export const WORKER_REDIS_WAIT_MS = 0;
/** Between tries: from a quarter of a second, doubling, at most 2 s, so a process serves within seconds of the database's return. */
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 2000;
const TRY_MS = 3000;

export type DependencyWait =
  | { kind: 'ready'; waitedMs: number }
  /** The database refused the configuration (a password, a user's host, a database name): waiting does not mend it. */
  | { kind: 'misconfigured'; line: string }
  /** The database did not come within DATABASE_WAIT_MS. */
  | { kind: 'gave_up'; line: string };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Before the API or the worker opens its pools: waits, with a bounded backoff, for MariaDB and Redis that are
 * not up yet (a machine booting, PM2 started before them), saying once what it waits for and once when they
 * came, instead of failing and being restarted in a loop. A database that answers with a refusal is the
 * configuration's problem, said in one line with its fix.
 */
export async function awaitDependencies(config: Config, log: Logger, bounds = { databaseMs: DATABASE_WAIT_MS, redisMs: REDIS_WAIT_MS }): Promise<DependencyWait> {
  const started = Date.now();
  let pauseMs = FIRST_PAUSE_MS;
  let said = false;
  for (;;) {
    const problem = await databaseAnswers(config);
    if (!problem) break;
    if (!problem.unreachable) return { kind: 'misconfigured', line: settingRefusedLine(problem) };
    const waited = Date.now() - started;
    if (waited >= bounds.databaseMs) {
      return { kind: 'gave_up', line: `${problem.detail} after ${Math.round(waited / 1000)} s of waiting. Fix: ${problem.fix}` };
    }
    if (!said) log.warn('waiting_for_database', { detail: problem.detail, setting: problem.setting, fix: problem.fix, waitsUpToSeconds: bounds.databaseMs / 1000 });
    said = true;
    await pause(pauseMs);
    pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS);
  }
  if (said) log.info('database_available', { waitedMs: Date.now() - started });

  const redisStarted = Date.now();
  const at = new URL(config.redisUrl).host;
  const redis = await connectRedis(config.redisUrl, silentLogger, TRY_MS);
  try {
    let warned = false;
    for (pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS)) {
      const answered = await within(redis.ping(), TRY_MS).then(() => true, () => false);
      if (answered) {
        if (warned) log.info('redis_available', { waitedMs: Date.now() - redisStarted });
        break;
      }
      if (Date.now() - redisStarted >= bounds.redisMs) {
        log.warn('redis_still_unavailable', { at, waitedSeconds: Math.round((Date.now() - redisStarted) / 1000), fix: 'start redis-server, or set REDIS_URL; the process goes on without it meanwhile' });
        break;
      }
      if (!warned) log.warn('waiting_for_redis', { at, setting: 'REDIS_URL', fix: 'start redis-server (systemctl start redis-server), or set REDIS_URL', waitsUpToSeconds: bounds.redisMs / 1000 });
      warned = true;
      await pause(pauseMs);
    }
  } finally {
    await closeRedis(redis).catch(() => undefined);
  }
  return { kind: 'ready', waitedMs: Date.now() - started };
}

/** One connection tried and closed: null when the database took it, else what is wrong. */
async function databaseAnswers(config: Config) {
  let connection: mysql.Connection | undefined;
  try {
    connection = await within(mysql.createConnection({ ...connectionOptions(config.db), connectTimeout: TRY_MS }), TRY_MS + 1000);
    await within(connection.query('SELECT 1'), TRY_MS);
    return null;
  } catch (error) {
    // A connection that hangs unanswered is a server not there, as a refused one is.
    return databaseProblem(error instanceof DeadlinePassedError ? Object.assign(error, { code: 'ETIMEDOUT' }) : error, config.db);
  } finally {
    connection?.destroy();
  }
}

/**
 * Once the pools are open: the database holds a WooCommerce under DB_TABLE_PREFIX, or the process would answer
 * /health while every lookup fails. The line naming the setting, or null.
 */
export async function shopMissingLine(dataSource: DataSource, config: Config): Promise<string | null> {
  const plugins = await new InstallationRepository(dataSource).plugins();
  if (plugins.woocommerce) return null;
  const { detail, fix } = noWooCommerce(config.db);
  return settingRefusedLine({ setting: 'DB_TABLE_PREFIX', detail, fix });
}
