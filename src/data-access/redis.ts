import crypto from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logger';

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

/** The client of `connectRedis`, connecting in the background; `connecting` settles with the first connection or its failure. */
export function openRedis(url: string, log: Logger) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) },
  });
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

/** Closes gracefully when connected, at once otherwise (a reconnecting client would never drain). */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.isReady) await client.close().catch(() => client.destroy());
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
