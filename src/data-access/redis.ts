import { createClient } from 'redis';
import type { Logger } from '../logger';

/**
 * The service's Redis client. Commands fail at once while Redis is away (no offline queue), so a
 * request never hangs on it; the client keeps reconnecting in the background.
 */
export function createRedis(url: string, log: Logger) {
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
  client.connect().catch(() => undefined);
  return client;
}

export type RedisClient = ReturnType<typeof createRedis>;

/** Redis keys of one shop (its database name), so several shops or test runs can share one Redis. */
export function redisNamespace(databaseName: string, prefix: string): string {
  return `shop-sidecar:${databaseName}:${prefix}`;
}
