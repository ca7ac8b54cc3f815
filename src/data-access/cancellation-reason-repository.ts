import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Post, SubscriptionCancellationReason } from '../../entities';
import { rawPool, tableOf } from './data-source';
import type { Executor } from './transaction';
import { gmtDateTime } from '../shop/shop-time';

/** A selectable reason: a published `cancellation_reason` post. */
export interface CancellationReason {
  id: number;
  title: string;
  slug: string;
}

/** A reason recorded on a subscription. */
export interface RecordedCancellationReason {
  id: number;
  subscriptionId: number;
  reasonId: number;
  title: string;
  slug: string;
  dateGmt: string;
}

export const CANCELLATION_REASON_POST_TYPE = 'cancellation_reason';

/**
 * The global list of cancellation reasons (WordPress posts of type `cancellation_reason`) and the reasons
 * recorded per subscription (the service's own table). A recorded reason shows the post's current title
 * and slug, or the ones it had when recorded if the post has since been deleted.
 */
export class CancellationReasonRepository {
  readonly pool: Pool;
  private readonly t: { posts: string; recorded: string };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = { posts: tableOf(dataSource, Post), recorded: tableOf(dataSource, SubscriptionCancellationReason) };
  }

  /** Published reasons in the order WP admin sorts them (menu order, then title). */
  async published(): Promise<CancellationReason[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ID, post_title, post_name FROM ${this.t.posts} WHERE post_type = ? AND post_status = 'publish' ORDER BY menu_order, post_title, ID`,
      [CANCELLATION_REASON_POST_TYPE]);
    return rows.map(reasonFrom);
  }

  async publishedByIds(ids: number[]): Promise<CancellationReason[]> {
    if (!ids.length) return [];
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ID, post_title, post_name FROM ${this.t.posts} WHERE ID IN (?) AND post_type = ? AND post_status = 'publish'`,
      [ids, CANCELLATION_REASON_POST_TYPE]);
    return rows.map(reasonFrom);
  }

  /** Recorded reasons of a subscription, oldest first; with `id`, only that entry (if it is this subscription's). */
  async recorded(subscriptionId: number, id?: number, db: Executor = this.pool): Promise<RecordedCancellationReason[]> {
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT r.id, r.subscription_id, r.reason_id, COALESCE(p.post_title, r.title) AS title, COALESCE(p.post_name, r.slug) AS slug, r.date_gmt
       FROM ${this.t.recorded} r LEFT JOIN ${this.t.posts} p ON p.ID = r.reason_id AND p.post_type = ?
       WHERE r.subscription_id = ?${id === undefined ? '' : ' AND r.id = ?'} ORDER BY r.id`,
      id === undefined ? [CANCELLATION_REASON_POST_TYPE, subscriptionId] : [CANCELLATION_REASON_POST_TYPE, subscriptionId, id]);
    return rows.map((row) => ({
      id: Number(row.id), subscriptionId: Number(row.subscription_id), reasonId: Number(row.reason_id),
      title: String(row.title), slug: String(row.slug), dateGmt: String(row.date_gmt),
    }));
  }

  /** Records the reasons (call inside a transaction, so all or none are stored); the new row IDs in order. */
  async record(db: Executor, subscriptionId: number, reasons: CancellationReason[], recordedBy: number, now: Date): Promise<number[]> {
    const ids: number[] = [];
    for (const reason of reasons) {
      const [result] = await db.query<ResultSetHeader>(
        `INSERT INTO ${this.t.recorded} (subscription_id, reason_id, title, slug, recorded_by, date_gmt) VALUES (?, ?, ?, ?, ?, ?)`,
        [subscriptionId, reason.id, reason.title, reason.slug, recordedBy, gmtDateTime(now)]);
      ids.push(result.insertId);
    }
    return ids;
  }
}

function reasonFrom(row: RowDataPacket): CancellationReason {
  return { id: Number(row.ID), title: String(row.post_title), slug: String(row.post_name) };
}
