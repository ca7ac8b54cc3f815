import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { WooCommerceChange } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots, sqlNames } from './prepared-statement';
import { Transaction, write, type Executor } from './transaction';
import type { ScheduledActionRepository } from './scheduled-action-repository';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';
import type { PluginPaymentMetas } from '../payments/plugin-payment-metas';

/** The companion plugin's Action Scheduler hook; its one argument is the change's row ID. */
export const APPLY_CHANGE_HOOK = 'shop_sidecar_apply_change';
export const CHANGE_ACTION_GROUP = 'shop-sidecar';
/** The first companion version with the hand-over route (`/?rest_route=/shop-sidecar/v1/apply`). */
const HANDOVER_COMPANION_VERSION = 2;

/** The first companion version that sends the dunning e-mail and cancels after dunning (`customer_payment_method_needed`, `subscription_cancel_after_dunning`). */
const DUNNING_COMPANION_VERSION = 3;

/** The first companion version that adds a staff member's order note in their name (`order_note`). */
const STAFF_NOTE_COMPANION_VERSION = 4;

/** The first companion version that sends the e-mail before a renewal (`customer_payment_method_needed` of kind `pre_renewal`) and tells the service of a shop payment at once. */
const PRE_RENEWAL_COMPANION_VERSION = 5;

/** Whether WooCommerce can be asked to e-mail the customer before a renewal whose payment method will not work. */
export function companionSendsPreRenewal(settings: ShopSettings): boolean {
  return (settings.companionVersion ?? 0) >= PRE_RENEWAL_COMPANION_VERSION;
}

/** Whether WooCommerce can be asked to add a staff member's order note itself (`add_order_note($note, 0, true)`, its hooks heard). */
export function companionAddsStaffNotes(settings: ShopSettings): boolean {
  return (settings.companionVersion ?? 0) >= STAFF_NOTE_COMPANION_VERSION;
}

/** Whether WooCommerce can be asked to e-mail the customer for a new payment method and to cancel after dunning. */
export function companionRunsDunning(settings: ShopSettings): boolean {
  return (settings.companionVersion ?? 0) >= DUNNING_COMPANION_VERSION;
}

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
  | { op: 'order_payment_authorized'; objectId: number; payload: { transaction_id: string; note: string; meta?: PluginPaymentMetas } }
  /**
   * `$order->payment_complete(transaction_id)` for an order awaiting payment; Subscriptions reactivates a renewal's
   * subscription. `paid_at` (unix seconds), when the provider says when it took the money, becomes the order's date_paid.
   * `meta`, for a charge of the service's own: the metas the provider's WooCommerce plugin reads to find the money
   * (src/payments/plugin-payment-metas.ts), set on the order whatever its status, before payment_complete().
   */
  | { op: 'order_payment_complete'; objectId: number; payload: { transaction_id: string; note: string; paid_at?: number; meta?: PluginPaymentMetas } }
  /** `wc_create_refund()` for what the provider refunded beyond the refunds the order already has. */
  /**
   * credit_note_ids: the card invoice's credit notes this refunded total stands for, registered where the card
   * plugin registers its own (`_reepay_credit_note_ids`), so that its webhook handler does not refund them again.
   */
  | { op: 'order_refunded'; objectId: number; payload: { refunded_total: string; reason: string; credit_note_ids?: string[] } }
  /** On hold until `auto_reactivation`, next payment moved to `next_payment` (GMT), in the staff member's name. */
  | { op: 'subscription_pause'; objectId: number; payload: { next_payment: string; auto_reactivation: string; note: string; user_id: number } }
  /** `update_status('active', note)`, the pause end cleared; by a staff member (`user_id`) or by the service (0). */
  | { op: 'subscription_activate'; objectId: number; payload: { note: string; user_id: number } }
  /**
   * WooCommerce e-mails the subscription's customer (the companion's `shop_sidecar_payment_method_needed` e-mail)
   * with the link to the subscription's change-payment-method page, and notes it on the subscription:
   * `failed_renewal` when only the customer can fix a failed renewal, `final_reminder` before the deadline at
   * which the subscription is cancelled, `card_expiring` when the stored card expires before the next renewal.
   */
  | { op: 'customer_payment_method_needed'; objectId: number; payload: PaymentMethodNeeded }
  /** Dunning ended unpaid: `update_status('cancelled', note)` on a subscription still on hold. */
  | { op: 'subscription_cancel_after_dunning'; objectId: number; payload: { note: string; order_id: number } }
  /** A staff member's action on an order: `add_order_note(note, 0, true)` as that user (`user_id`), as WP admin notes it. */
  | { op: 'order_note'; objectId: number; payload: { note: string; user_id: number } };

/** Why the customer is asked for a new payment method, in the words the e-mail picks its text by. */
export type PaymentMethodNeededReason =
  /** The card was declined for good (lost, stolen, blocked, refused by the bank, needs authentication). */
  | 'card_declined'
  /** The card has expired, or will before the next renewal. */
  | 'card_expired'
  /** The wallet needs the customer in the app (funds, blocked card, expired card). */
  | 'wallet_action_required'
  /** The renewal is above the wallet agreement's maximum amount. */
  | 'wallet_amount_too_high'
  /** The wallet could not charge for a reason only the customer can resolve. */
  | 'wallet_unavailable'
  /** The retries ended without the renewal being paid. */
  | 'retries_exhausted';

export interface PaymentMethodNeeded {
  /** `pre_renewal`: the payment method will not work for the next renewal (src/dunning/pre-renewal-check.use-case.ts). */
  kind: 'failed_renewal' | 'final_reminder' | 'card_expiring' | 'pre_renewal';
  /** The unpaid renewal order, null for `card_expiring` and `pre_renewal`. */
  order_id: number | null;
  /** Null when staff send it for a decline that names no reason for the customer: the e-mail then gives none. */
  reason: PaymentMethodNeededReason | null;
  /** When the subscription is cancelled unless paid (ISO 8601 UTC), null for `card_expiring`. */
  deadline: string | null;
  /** The stored card's `exp_date` (`MM-YY`) and masked number, when known. */
  card_expires: string | null;
  masked_card: string | null;
}

/**
 * The queue of changes handed to WooCommerce. A change is stored together with the Action Scheduler
 * action that runs it, in the caller's transaction: the decision and WooCommerce's work on it commit
 * together or not at all, and the companion applies each row once.
 */
export class WooCommerceChangeRepository {
  private readonly pool: Pool;
  private readonly insertChange: PreparedStatement<'op' | 'objectId' | 'payload' | 'now'>;
  private readonly setAction: PreparedStatement<'id' | 'actionId'>;
  /** Changes stored before a time, oldest first, up to a number: a LIMIT the query builder cannot take as a value. */
  private readonly waitingSql: string;
  private readonly waitingOfObject: PreparedStatement<'objectId' | 'op'>;
  private readonly backlogByStatus: PreparedStatement<never>;
  /** A DELETE with ORDER BY and LIMIT, which the query builder cannot write. */
  private readonly pruneAppliedSql: string;
  /** Told of each change once it is stored for good (its transaction committed), so WooCommerce can be asked to apply it now. */
  private stored: (changeId: number) => void = () => undefined;

  constructor(dataSource: DataSource, private readonly actions: ScheduledActionRepository) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'op', 'objectId', 'payload', 'now', 'actionId');
    this.insertChange = PreparedStatement.from(query().insert().into(WooCommerceChange).values({
      op: s.op, objectId: s.objectId, payload: s.payload, status: 'pending', attempts: 0, createdAt: s.now,
    } as object));
    this.setAction = PreparedStatement.from(query().update(WooCommerceChange).set({ actionId: () => ':actionId' }).where('id = :id').setParameters(s));
    this.waitingOfObject = PreparedStatement.from(query().select('1').from(WooCommerceChange, 'c')
      .where("c.objectId = :objectId AND c.op = :op AND c.status IN ('pending', 'applying')").limit(1).setParameters(s));
    // A range of the status index: applied rows, the great majority, are never read.
    this.backlogByStatus = PreparedStatement.from(query().select('c.status', 'status').addSelect('COUNT(*)', 'n').addSelect('MIN(c.createdAt)', 'oldest')
      .from(WooCommerceChange, 'c').where("c.status IN ('pending', 'applying', 'failed')").groupBy('c.status'));
    const { table, column: c } = sqlNames(dataSource, WooCommerceChange);
    this.waitingSql = `SELECT ${c.id} AS id FROM ${table} WHERE ${c.status} = 'pending' AND ${c.createdAt} < ? ORDER BY ${c.createdAt} LIMIT ?`;
    this.pruneAppliedSql = `DELETE FROM ${table} WHERE ${c.status} = 'applied' AND ${c.createdAt} < ? AND ${c.appliedAt} < ? ORDER BY ${c.createdAt} LIMIT ?`;
  }

  async enqueue(db: Executor, change: ShopChange, settings: ShopSettings, now: Date): Promise<number> {
    const insert = this.insertChange.with({ op: change.op, objectId: change.objectId, payload: JSON.stringify(change.payload), now: gmtDateTimeMs(now) });
    const [inserted] = await db.query<ResultSetHeader>(insert.sql, insert.values);
    const actionId = await this.actions.scheduleSingle(db, {
      hook: APPLY_CHANGE_HOOK, args: JSON.stringify([inserted.insertId]), group: CHANGE_ACTION_GROUP, priority: CHANGE_ACTION_PRIORITY,
    }, now, settings);
    const { sql, values } = this.setAction.with({ id: inserted.insertId, actionId });
    await write(db, sql, values);
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
    const [rows] = await this.pool.query<RowDataPacket[]>(this.waitingSql, [gmtDateTimeMs(new Date(now.getTime() - olderThanSeconds * 1000)), limit]);
    return rows.map((row) => Number(row.id));
  }

  /** Whether a change of `op` for the object still waits for WooCommerce (so a periodic pass does not ask twice). */
  async isWaiting(db: Executor, objectId: number, op: ShopChange['op']): Promise<boolean> {
    const { sql, values } = this.waitingOfObject.with({ objectId, op });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length > 0;
  }

  /**
   * How many changes wait for WooCommerce, how many failed there, and how long the oldest waiting one has
   * waited (how far the shop lags behind the service; 0 when none waits), for /health, /metrics and the CLI.
   */
  async backlog(now = new Date()): Promise<{ waiting: number; failed: number; oldestWaitingSeconds: number }> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.backlogByStatus.sql);
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
    const [result] = await this.pool.query<ResultSetHeader>(this.pruneAppliedSql, [cutoff, cutoff, limit]);
    return result.affectedRows;
  }
}
