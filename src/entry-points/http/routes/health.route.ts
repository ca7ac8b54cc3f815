import type { Request, Response } from 'restify';
import type { DataSource } from 'typeorm';
import type { RedisClient } from '../../../data-access/redis';
import type { ShopData } from '../../composition/shop-data';
import { sendJson } from '../http-io';
import { within } from '../../../shared/within';

/**
 * GET /health: `{status, db, redis, woocommerce}`, 503 when the database or Redis does not answer.
 * `woocommerce` says whether WooCommerce makes the order changes (`companion`) or the service writes
 * them itself without WooCommerce's e-mails and hooks (`no_companion`), and how many changes wait for
 * WooCommerce or failed there, and how long the oldest waiting one has waited (`handover_lag_seconds`: how
 * far the shop lags behind the service); the service works either way, so it never makes the answer 503.
 */
export function healthRoute(dataSource: DataSource, redis: RedisClient, shop: Pick<ShopData, 'settings' | 'changes'>) {
  const woocommerce = async () => {
    const [settings, backlog] = await Promise.all([shop.settings.current(), shop.changes.backlog()]);
    return {
      mode: settings.companion ? 'companion' : 'no_companion',
      changes_waiting: backlog.waiting,
      changes_failed: backlog.failed,
      handover_lag_seconds: backlog.oldestWaitingSeconds,
    };
  };
  return async (_req: Request, res: Response): Promise<void> => {
    const [db, cache, shopState] = await Promise.all([
      within(dataSource.query('SELECT 1'), 2000).then(() => 'ok', () => 'down'),
      within(redis.ping(), 2000).then(() => 'ok', () => 'down'),
      within(woocommerce(), 2000).catch(() => 'unknown'),
    ]);
    const healthy = db === 'ok' && cache === 'ok';
    sendJson(res, healthy ? 200 : 503, { status: healthy ? 'ok' : 'unavailable', db, redis: cache, woocommerce: shopState });
  };
}
