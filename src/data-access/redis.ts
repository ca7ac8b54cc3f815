import crypto from 'node:crypto';
import { createClient } from 'redis';
import { silentLogger, type Logger } from '../logger';
import { DeadlinePassedError, within } from '../shared/within';

/**
 * A connection that stops answering without closing (a pulled cable, a firewall dropping the flow, a
 * failover whose old primary vanished) looks healthy to the client: its commands are written and wait
 * for answers that never come. So every client is asked PING this often, and a connection whose answer
 * (to the PING, or to the hello of a new connection) takes longer than REDIS_ANSWER_BOUND_MS is dropped
 * and opened afresh. TCP keep-alive (REDIS_KEEPALIVE_MS) finds a dead peer too, but only where nothing
 * between acknowledges for it; the PING finds it either way.
 */
export const REDIS_CHECK_EVERY_MS = 2000;
export const REDIS_ANSWER_BOUND_MS = 2000;
export const REDIS_KEEPALIVE_MS = 5000;

/**
 * The service's Redis client. Commands fail at once while Redis is away (no offline queue), so a
 * request never hangs on it; the client keeps reconnecting in the background. Start-up waits a
 * moment for the first connection but goes on without it: Redis is needed for throttling, the
 * queue and the providers' shared request limits, and each degrades on its own terms.
 */
export async function connectRedis(url: string, log: Logger, waitMs = 3000) {
  const { client, connecting } = openRedis(url, log);
  await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
  return client;
}

/**
 * Whether Redis at `url` answers a PING within `waitMs` (the connection and the answer each bounded): null when it
 * does, else why not. A client of its own, closed after; for checks (doctor, the start check), not for work.
 */
export async function redisDoesNotAnswer(url: string, waitMs: number): Promise<string | null> {
  // The client does not throw when Redis is away: it keeps trying, and the ping says whether it got there.
  const redis = await connectRedis(url, silentLogger, waitMs);
  try {
    await within(redis.ping(), waitMs);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await closeRedis(redis).catch(() => undefined);
  }
}

/** The client of `connectRedis`, connecting in the background; `connecting` settles with the first connection or its failure. */
export function openRedis(url: string, log: Logger) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      keepAlive: true,
      keepAliveInitialDelay: REDIS_KEEPALIVE_MS,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  });
  watchRedisConnection(client, log);
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) log.warn('redis_unavailable', { error: error.message });
    down = true;
  });
  client.on('ready', () => {
    if (down) log.info('redis_available');
    down = false;
  });
  const connecting: Promise<unknown> = client.connect().catch(() => undefined);
  return { client, connecting };
}

export type RedisClient = ReturnType<typeof openRedis>['client'];

/**
 * Drops and reopens `client`'s connection when it stops answering (REDIS_CHECK_EVERY_MS): a PING not
 * answered within REDIS_ANSWER_BOUND_MS, or a new connection not ready that long after it was opened. Its
 * commands waiting for an answer fail at once, and its subscriptions come back with the new connection.
 * A duplicate of a client is a client of its own and is watched on its own. The check ends with the client.
 */
export function watchRedisConnection(client: RedisClient, log: Logger): void {
  const check = pingWithin(() => client.ping(), () => {
    if (client.isReady) reopen('PING was not answered');
  });
  let notReadySince: number | null = null;
  let said = false;
  const reopen = (why: string) => {
    if (!said) log.warn('redis_connection_dead', { why, boundMs: REDIS_ANSWER_BOUND_MS });
    said = true;
    notReadySince = null;
    client.destroy();
    client.connect().catch(() => undefined);
  };
  const timer = setInterval(() => {
    // Closed by its owner (reopen opens it again in the same turn): nothing to watch.
    if (!client.isOpen) {
      notReadySince = null;
      return;
    }
    if (!client.isReady) {
      notReadySince ??= Date.now();
      // Refused connections are retried by the client itself; one that connected but never answered its hello is not.
      if (Date.now() - notReadySince > REDIS_ANSWER_BOUND_MS) reopen('the connection did not become ready');
      return;
    }
    notReadySince = null;
    said = false;
    check();
  }, REDIS_CHECK_EVERY_MS).unref();
  watched.set(client, timer);
}

/**
 * A check of a connection by `ping`, one at a time (a call while one is in flight does nothing): an answer
 * not come within REDIS_ANSWER_BOUND_MS calls `unanswered`. A PING that fails outright is the client's own
 * outage, which it handles itself.
 */
export function pingWithin(ping: () => Promise<unknown>, unanswered: () => void): () => void {
  let checking = false;
  return () => {
    if (checking) return;
    checking = true;
    within(ping(), REDIS_ANSWER_BOUND_MS).catch((error: unknown) => {
      if (error instanceof DeadlinePassedError) unanswered();
    }).finally(() => { checking = false; });
  };
}

const watched = new WeakMap<object, NodeJS.Timeout>();

/** Closes gracefully when connected and answering, at once otherwise (a reconnecting or dead connection would never drain). */
export async function closeRedis(client: RedisClient): Promise<void> {
  clearInterval(watched.get(client));
  if (client.isReady) await within(client.close(), REDIS_ANSWER_BOUND_MS).catch(() => client.isOpen && client.destroy());
  else if (client.isOpen) client.destroy();
}

/** Redis keys of one shop (its database name), so several shops or test runs can share one Redis. */
export function redisNamespace(databaseName: string, prefix: string): string {
  return `shop-sidecar:${databaseName}:${prefix}`;
}

/** A script run by its SHA1 (EVALSHA), sent whole only when Redis does not have it (first use, a restart). */
export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = crypto.createHash('sha1').update(source).digest('hex');
  }

  async run(redis: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await redis.evalSha(this.sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, { keys, arguments: args });
    }
  }
}
