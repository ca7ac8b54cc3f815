import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Post, SubscriptionCancellationReason } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots } from './prepared-statement';
import type { Executor, Statement } from './transaction';
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
  private readonly publishedAll: Statement;
  private readonly publishedOf: PreparedStatement<'ids'>;
  private readonly recordedOf: PreparedStatement<'subscriptionId'>;
  private readonly recordedOne: PreparedStatement<'subscriptionId' | 'id'>;
  private readonly insert: PreparedStatement<'subscriptionId' | 'reasonId' | 'title' | 'slug' | 'recordedBy' | 'dateGmt'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const reasons = () => dataSource.createQueryBuilder().select('p.id', 'id').addSelect('p.title', 'title').addSelect('p.slug', 'slug')
      .from(Post, 'p').where('p.type = :type AND p.status = :status');
    const reason = { type: CANCELLATION_REASON_POST_TYPE, status: 'publish' };
    this.publishedAll = PreparedStatement.from(reasons().orderBy('p.menuOrder').addOrderBy('p.title').addOrderBy('p.id').setParameters(reason)).with({});
    this.publishedOf = PreparedStatement.from(reasons().andWhere('p.id IN (:ids)').setParameters({ ...reason, ...slots('ids') }));
    // The post's title and slug while it exists, else those recorded with the reason.
    const recorded = () => dataSource.createQueryBuilder().select('r.id', 'id').addSelect('r.subscriptionId', 'subscriptionId').addSelect('r.reasonId', 'reasonId')
      .addSelect('COALESCE(p.title, r.title)', 'title').addSelect('COALESCE(p.slug, r.slug)', 'slug').addSelect('r.dateGmt', 'dateGmt')
      .from(SubscriptionCancellationReason, 'r').leftJoin(Post, 'p', 'p.id = r.reasonId AND p.type = :type')
      .where('r.subscriptionId = :subscriptionId').orderBy('r.id').setParameters({ type: CANCELLATION_REASON_POST_TYPE, ...slots('subscriptionId', 'id') });
    this.recordedOf = PreparedStatement.from(recorded());
    this.recordedOne = PreparedStatement.from(recorded().andWhere('r.id = :id'));
    const value = slots('subscriptionId', 'reasonId', 'title', 'slug', 'recordedBy', 'dateGmt');
    this.insert = PreparedStatement.from(dataSource.createQueryBuilder().insert().into(SubscriptionCancellationReason).values(value as never));
  }

  /** Published reasons in the order WP admin sorts them (menu order, then title). */
  async published(): Promise<CancellationReason[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.publishedAll.sql, this.publishedAll.values);
    return rows.map(reasonFrom);
  }

  async publishedByIds(ids: number[]): Promise<CancellationReason[]> {
    if (!ids.length) return [];
    const { sql, values } = this.publishedOf.with({ ids });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(reasonFrom);
  }

  /** Recorded reasons of a subscription, oldest first; with `id`, only that entry (if it is this subscription's). */
  async recorded(subscriptionId: number, id?: number, db: Executor = this.pool): Promise<RecordedCancellationReason[]> {
    const { sql, values } = id === undefined ? this.recordedOf.with({ subscriptionId }) : this.recordedOne.with({ subscriptionId, id });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({
      id: Number(row.id), subscriptionId: Number(row.subscriptionId), reasonId: Number(row.reasonId),
      title: String(row.title), slug: String(row.slug), dateGmt: String(row.dateGmt),
    }));
  }

  /** Records the reasons (call inside a transaction, so all or none are stored); the new row IDs in order. */
  async record(db: Executor, subscriptionId: number, reasons: CancellationReason[], recordedBy: number, now: Date): Promise<number[]> {
    const ids: number[] = [];
    for (const reason of reasons) {
      const { sql, values } = this.insert.with({ subscriptionId, reasonId: reason.id, title: reason.title, slug: reason.slug, recordedBy, dateGmt: gmtDateTime(now) });
      const [result] = await db.query<ResultSetHeader>(sql, values);
      ids.push(result.insertId);
    }
    return ids;
  }
}

function reasonFrom(row: RowDataPacket): CancellationReason {
  return { id: Number(row.id), title: String(row.title), slug: String(row.slug) };
}
