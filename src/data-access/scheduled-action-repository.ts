import type { DataSource } from 'typeorm';
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { ScheduledAction, ScheduledActionGroup } from '../../entities';
import { PreparedStatement, slots } from './prepared-statement';
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
 * Scheduled Actions screen shows it, so it must move together with the action's scheduled date.
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
  private readonly pendingActions: PreparedStatement<'hook' | 'args'>;
  private readonly cancelActions: PreparedStatement<'ids'>;
  private readonly moveAction: PreparedStatement<'id' | 'gmt' | 'local' | 'schedule'>;
  private readonly insertAction: PreparedStatement<'hook' | 'gmt' | 'local' | 'priority' | 'args' | 'schedule' | 'groupId'>;
  private readonly groupBySlug: PreparedStatement<'slug'>;
  private readonly insertGroup: PreparedStatement<'slug'>;

  constructor(dataSource: DataSource) {
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'ids', 'hook', 'args', 'gmt', 'local', 'priority', 'schedule', 'groupId', 'slug');
    this.pendingActions = PreparedStatement.from(query().select('a.id', 'id').addSelect('a.schedule', 'schedule').from(ScheduledAction, 'a')
      .where("a.hook = :hook AND a.args = :args AND a.status = 'pending'").orderBy('a.id').setParameters(s).setLock('pessimistic_write'));
    this.cancelActions = PreparedStatement.from(query().update(ScheduledAction).set({ status: 'canceled' }).where('id IN (:ids)').setParameters(s));
    this.moveAction = PreparedStatement.from(query().update(ScheduledAction)
      .set({ scheduledGmt: () => ':gmt', scheduledLocal: () => ':local', schedule: () => ':schedule' }).where('id = :id').setParameters(s));
    this.insertAction = PreparedStatement.from(query().insert().into(ScheduledAction).values({
      hook: s.hook, status: 'pending', scheduledGmt: s.gmt, scheduledLocal: s.local, priority: s.priority, args: s.args, schedule: s.schedule,
      groupId: s.groupId, attempts: 0, claimId: 0,
    } as object));
    this.groupBySlug = PreparedStatement.from(query().select('g.id', 'id').from(ScheduledActionGroup, 'g')
      .where('g.slug = :slug').orderBy('g.id').limit(1).setParameters(s));
    this.insertGroup = PreparedStatement.from(query().insert().into(ScheduledActionGroup).values({ slug: s.slug } as object));
  }

  /**
   * Moves the pending renewal action to `when` (creating it when there is none), or cancels it when
   * `when` is null, as `as_unschedule_all_actions` would. Duplicates beyond the first are canceled.
   */
  async scheduleRenewal(db: Executor, subscriptionId: number, when: Date | null, settings: ShopSettings): Promise<void> {
    const args = subscriptionActionArgs(subscriptionId);
    const pending = this.pendingActions.with({ hook: SUBSCRIPTION_PAYMENT_HOOK, args });
    const [rows] = await db.query<RowDataPacket[]>(pending.sql, pending.values);
    const keep = when === null ? undefined : rows[0];
    const cancel = rows.filter((row) => row !== keep).map((row) => Number(row.id));
    if (cancel.length) {
      const { sql, values } = this.cancelActions.with({ ids: cancel });
      await db.query(sql, values);
    }
    if (when === null) return;
    const timestamp = Math.floor(when.getTime() / 1000);
    const gmt = gmtDateTime(when);
    const local = localDateTime(when, settings.timeZone);
    if (keep) {
      const { sql, values } = this.moveAction.with({ id: keep.id, gmt, local, schedule: rescheduled(keep.schedule ?? null, timestamp) });
      await write(db, sql, values);
      return;
    }
    const groupId = await this.groupId(db, SUBSCRIPTION_ACTION_GROUP);
    const { sql, values } = this.insertAction.with({
      hook: SUBSCRIPTION_PAYMENT_HOOK, gmt, local, priority: SUBSCRIPTION_ACTION_PRIORITY, args, schedule: simpleSchedule(timestamp), groupId,
    });
    await write(db, sql, values);
  }

  /**
   * A new action due at `when`, as `as_schedule_single_action()` stores it, for Action Scheduler in
   * WordPress to run. Returns its ID.
   */
  async scheduleSingle(db: Executor, action: { hook: string; args: string; group: string; priority: number }, when: Date, settings: ShopSettings): Promise<number> {
    const groupId = await this.groupId(db, action.group);
    const { sql, values } = this.insertAction.with({
      hook: action.hook, gmt: gmtDateTime(when), local: localDateTime(when, settings.timeZone), priority: action.priority, args: action.args,
      schedule: simpleSchedule(Math.floor(when.getTime() / 1000)), groupId,
    });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.insertId;
  }

  private async groupId(db: Executor, slug: string): Promise<number> {
    const group = this.groupBySlug.with({ slug });
    const [rows] = await db.query<RowDataPacket[]>(group.sql, group.values);
    if (rows.length) return Number(rows[0].id);
    const { sql, values } = this.insertGroup.with({ slug });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.insertId;
  }
}
