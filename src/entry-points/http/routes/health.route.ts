import type { Request, Response } from 'restify';
import type { DataSource } from 'typeorm';
import type { RedisClient } from '../../../data-access/redis';
import { sendJson } from '../http-io';

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/** GET /health: `{status, db, redis}`, 503 when either dependency does not answer. */
export function healthRoute(dataSource: DataSource, redis: RedisClient) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [db, cache] = await Promise.all([
      within(dataSource.query('SELECT 1'), 2000).then(() => 'ok', () => 'down'),
      within(redis.ping(), 2000).then(() => 'ok', () => 'down'),
    ]);
    const healthy = db === 'ok' && cache === 'ok';
    sendJson(res, healthy ? 200 : 503, { status: healthy ? 'ok' : 'unavailable', db, redis: cache });
  };
}
