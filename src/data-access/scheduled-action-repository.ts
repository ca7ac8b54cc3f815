import type { DataSource } from 'typeorm';
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { ScheduledAction, ScheduledActionGroup } from '../../entities';
import { tableOf } from './data-source';
import { write, type Executor } from './transaction';
import { gmtDateTime, localDateTime } from '../shop/shop-time';
import type { ShopSettings } from './shop-settings-repository';

/** WooCommerce Subscriptions' renewal hook, its group and its priority (`WCS_Action_Scheduler`). */
export const SUBSCRIPTION_PAYMENT_HOOK = 'woocommerce_scheduled_subscription_payment';
export const SUBSCRIPTION_ACTION_GROUP = 'wc_subscription_scheduled_event';
export const SUBSCRIPTION_ACTION_PRIORITY = 5;

/** The args WCS schedules a subscription's renewal with, JSON-encoded as Action Scheduler stores them. */
export function subscriptionActionArgs(subscriptionId: number): string {
  return JSON.stringify({ subscription_id: subscriptionId });
}

/**
 * An `ActionScheduler_SimpleSchedule` as PHP serializes it (protected and private properties carry NUL-
 * delimited prefixes). Action Scheduler reads the action's date from this object, and WP admin's
 * Scheduled Actions screen shows it, so it must move together with `scheduled_date_gmt`.
 */
export function simpleSchedule(timestamp: number): string {
  const scheduled = '\0*\0scheduled_timestamp';
  const own = '\0ActionScheduler_SimpleSchedule\0timestamp';
  return `O:30:"ActionScheduler_SimpleSchedule":2:{s:${scheduled.length}:"${scheduled}";i:${timestamp};s:${own.length}:"${own}";i:${timestamp};}`;
}

/** The stored schedule moved to `timestamp`: a simple schedule keeps its form; anything else becomes one. */
export function rescheduled(stored: string | null, timestamp: number): string {
  if (stored && stored.startsWith('O:30:"ActionScheduler_SimpleSchedule":')) {
    return stored.replace(/(timestamp";i:)-?\d+;/g, `$1${timestamp};`);
  }
  return simpleSchedule(timestamp);
}

/**
 * A subscription's pending renewal action in Action Scheduler's tables. Changing `_schedule_next_payment`
 * alone does not move it, so every next-payment change goes through here in the same transaction.
 */
export class ScheduledActionRepository {
  private readonly t: { actions: string; groups: string };

  constructor(dataSource: DataSource) {
    this.t = { actions: tableOf(dataSource, ScheduledAction), groups: tableOf(dataSource, ScheduledActionGroup) };
  }

  /**
   * Moves the pending renewal action to `when` (creating it when there is none), or cancels it when
   * `when` is null, as `as_unschedule_all_actions` would. Duplicates beyond the first are canceled.
   */
  async scheduleRenewal(db: Executor, subscriptionId: number, when: Date | null, settings: ShopSettings): Promise<void> {
    const args = subscriptionActionArgs(subscriptionId);
    const [pending] = await db.query<RowDataPacket[]>(
      `SELECT action_id, schedule FROM ${this.t.actions} WHERE hook = ? AND args = ? AND status = 'pending' ORDER BY action_id FOR UPDATE`,
      [SUBSCRIPTION_PAYMENT_HOOK, args]);
    const keep = when === null ? undefined : pending[0];
    const cancel = pending.filter((row) => row !== keep).map((row) => Number(row.action_id));
    if (cancel.length) await db.query(`UPDATE ${this.t.actions} SET status = 'canceled' WHERE action_id IN (?)`, [cancel]);
    if (when === null) return;
    const timestamp = Math.floor(when.getTime() / 1000);
    const gmt = gmtDateTime(when);
    const local = localDateTime(when, settings.timeZone);
    if (keep) {
      await write(db, `UPDATE ${this.t.actions} SET scheduled_date_gmt = ?, scheduled_date_local = ?, schedule = ? WHERE action_id = ?`,
        [gmt, local, rescheduled(keep.schedule ?? null, timestamp), keep.action_id]);
      return;
    }
    const groupId = await this.groupId(db, SUBSCRIPTION_ACTION_GROUP);
    await write(
      db,
      `INSERT INTO ${this.t.actions} (hook, status, scheduled_date_gmt, scheduled_date_local, priority, args, schedule, group_id, attempts, claim_id)
       VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, 0, 0)`,
      [SUBSCRIPTION_PAYMENT_HOOK, gmt, local, SUBSCRIPTION_ACTION_PRIORITY, args, simpleSchedule(timestamp), groupId]);
  }

  /**
   * A new action due at `when`, as `as_schedule_single_action()` stores it, for Action Scheduler in
   * WordPress to run. Returns its ID.
   */
  async scheduleSingle(db: Executor, action: { hook: string; args: string; group: string; priority: number }, when: Date, settings: ShopSettings): Promise<number> {
    const groupId = await this.groupId(db, action.group);
    const [result] = await db.query<ResultSetHeader>(
      `INSERT INTO ${this.t.actions} (hook, status, scheduled_date_gmt, scheduled_date_local, priority, args, schedule, group_id, attempts, claim_id)
       VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, 0, 0)`,
      [action.hook, gmtDateTime(when), localDateTime(when, settings.timeZone), action.priority, action.args, simpleSchedule(Math.floor(when.getTime() / 1000)), groupId]);
    return result.insertId;
  }

  private async groupId(db: Executor, slug: string): Promise<number> {
    const [rows] = await db.query<RowDataPacket[]>(`SELECT group_id FROM ${this.t.groups} WHERE slug = ? ORDER BY group_id LIMIT 1`, [slug]);
    if (rows.length) return Number(rows[0].group_id);
    const [result] = await db.query<ResultSetHeader>(`INSERT INTO ${this.t.groups} (slug) VALUES (?)`, [slug]);
    return result.insertId;
  }
}
