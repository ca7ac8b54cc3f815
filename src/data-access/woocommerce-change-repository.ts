import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { WooCommerceChange } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { Transaction, write, type Executor } from './transaction';
import type { ScheduledActionRepository } from './scheduled-action-repository';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';

/** The companion plugin's Action Scheduler hook; its one argument is the change's row ID. */
export const APPLY_CHANGE_HOOK = 'shop_sidecar_apply_change';
export const CHANGE_ACTION_GROUP = 'shop-sidecar';
/** The first companion version with the hand-over route (`/?rest_route=/shop-sidecar/v1/apply`). */
const HANDOVER_COMPANION_VERSION = 2;

/** Whether WordPress can be asked to apply a change at once; an older companion has Action Scheduler alone apply it. */
export function companionTakesHandOver(settings: ShopSettings): boolean {
  return (settings.companionVersion ?? 0) >= HANDOVER_COMPANION_VERSION;
}
/** Ahead of WooCommerce's own default (10), so a shop's backlog of renewals does not hold back a payment's consequences. */
const CHANGE_ACTION_PRIORITY = 5;

/**
 * What WooCommerce is asked to do, one case per WooCommerce or Subscriptions call the companion makes.
 * Field names are the companion's (PHP) names.
 */
export type ShopChange =
  /** `$order->update_status('failed', note)`: Subscriptions puts a renewal's subscription on hold from its own listener. */
  | { op: 'order_payment_failed'; objectId: number; payload: { note: string } }
  /** Money reserved, not yet taken: `set_transaction_id()` and `update_status('on-hold', note)` for an order awaiting payment. */
  | { op: 'order_payment_authorized'; objectId: number; payload: { transaction_id: string; note: string } }
  /**
   * `$order->payment_complete(transaction_id)` for an order awaiting payment; Subscriptions reactivates a renewal's
   * subscription. `paid_at` (unix seconds), when the provider says when it took the money, becomes the order's date_paid.
   */
  | { op: 'order_payment_complete'; objectId: number; payload: { transaction_id: string; note: string; paid_at?: number } }
  /** `wc_create_refund()` for what the provider refunded beyond the refunds the order already has. */
  | { op: 'order_refunded'; objectId: number; payload: { refunded_total: string; reason: string } }
  /** On hold until `auto_reactivation`, next payment moved to `next_payment` (GMT), in the staff member's name. */
  | { op: 'subscription_pause'; objectId: number; payload: { next_payment: string; auto_reactivation: string; note: string; user_id: number } }
  /** `update_status('active', note)`, the pause end cleared; by a staff member (`user_id`) or by the service (0). */
  | { op: 'subscription_activate'; objectId: number; payload: { note: string; user_id: number } };

/**
 * The queue of changes handed to WooCommerce. A change is stored together with the Action Scheduler
 * action that runs it, in the caller's transaction: the decision and WooCommerce's work on it commit
 * together or not at all, and the companion applies each row once.
 */
export class WooCommerceChangeRepository {
  private readonly pool: Pool;
  private readonly table: string;
  /** Told of each change once it is stored for good (its transaction committed), so WooCommerce can be asked to apply it now. */
  private stored: (changeId: number) => void = () => undefined;

  constructor(dataSource: DataSource, private readonly actions: ScheduledActionRepository) {
    this.pool = rawPool(dataSource);
    this.table = tableOf(dataSource, WooCommerceChange);
  }

  async enqueue(db: Executor, change: ShopChange, settings: ShopSettings, now: Date): Promise<number> {
    const [inserted] = await db.query<ResultSetHeader>(
      `INSERT INTO ${this.table} (op, object_id, payload, status, attempts, created_at) VALUES (?, ?, ?, 'pending', 0, ?)`,
      [change.op, change.objectId, JSON.stringify(change.payload), gmtDateTimeMs(now)]);
    const actionId = await this.actions.scheduleSingle(db, {
      hook: APPLY_CHANGE_HOOK, args: JSON.stringify([inserted.insertId]), group: CHANGE_ACTION_GROUP, priority: CHANGE_ACTION_PRIORITY,
    }, now, settings);
    await write(db, `UPDATE ${this.table} SET action_id = ? WHERE id = ?`, [actionId, inserted.insertId]);
    const changeId = inserted.insertId;
    if (companionTakesHandOver(settings)) {
      if (db instanceof Transaction) db.afterCommit(() => this.stored(changeId));
      else this.stored(changeId);
    }
    return changeId;
  }

  /** `listener` hears of each change as soon as it is stored for good. */
  onStored(listener: (changeId: number) => void): void {
    this.stored = listener;
  }

  /** Changes still waiting for WooCommerce that were stored more than `olderThanSeconds` ago, oldest first. */
  async waitingIds(olderThanSeconds: number, limit: number, now: Date): Promise<number[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT id FROM ${this.table} WHERE status = 'pending' AND created_at < ? ORDER BY created_at LIMIT ?`,
      [gmtDateTimeMs(new Date(now.getTime() - olderThanSeconds * 1000)), limit]);
    return rows.map((row) => Number(row.id));
  }

  /** Whether a change of `op` for the object still waits for WooCommerce (so a periodic pass does not ask twice). */
  async isWaiting(db: Executor, objectId: number, op: ShopChange['op']): Promise<boolean> {
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT 1 FROM ${this.table} WHERE object_id = ? AND op = ? AND status IN ('pending', 'applying') LIMIT 1`, [objectId, op]);
    return rows.length > 0;
  }

  /**
   * How many changes wait for WooCommerce, how many failed there, and how long the oldest waiting one has
   * waited (how far the shop lags behind the service; 0 when none waits), for /health, /metrics and the CLI.
   */
  async backlog(now = new Date()): Promise<{ waiting: number; failed: number; oldestWaitingSeconds: number }> {
    // A range of the status index: applied rows, the great majority, are never read.
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest FROM ${this.table} WHERE status IN ('pending', 'applying', 'failed') GROUP BY status`);
    const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
    const oldest = rows.filter((row) => row.status !== 'failed').map((row) => parseGmtDateTime(row.oldest)?.getTime() ?? Infinity);
    const since = Math.min(Infinity, ...oldest);
    return {
      waiting: count('pending') + count('applying'),
      failed: count('failed'),
      oldestWaitingSeconds: Number.isFinite(since) ? Math.max(0, Math.round((now.getTime() - since) / 1000)) : 0,
    };
  }

  /**
   * Deletes up to `limit` changes WooCommerce applied before `before`, oldest first; returns how many.
   * Pending and failed ones stay, whatever their age. A range of the status index.
   */
  async pruneApplied(before: Date, limit: number): Promise<number> {
    const cutoff = gmtDateTimeMs(before);
    const [result] = await this.pool.query<ResultSetHeader>(
      `DELETE FROM ${this.table} WHERE status = 'applied' AND created_at < ? AND applied_at < ? ORDER BY created_at LIMIT ?`, [cutoff, cutoff, limit]);
    return result.affectedRows;
  }
}
