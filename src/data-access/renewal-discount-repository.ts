import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { RenewalDiscount, RenewalDiscountType } from '../../entities';
import { rawPool } from './data-source';
import { byFilters, page, PreparedStatement, selectEntity, slots } from './prepared-statement';
import { gmtDateTimeMs } from '../shop/shop-time';

export interface DiscountTypeRecord {
  id: number;
  slug: string;
  name: string;
  scheme: string;
  description: string | null;
}

export interface DiscountRecord {
  id: number;
  subscriptionId: number;
  orderId: number | null;
  typeId: number;
  amount: string;
  currency: string;
  status: DiscountStatus;
  appliedAmount: string | null;
  appliedAt: string | null;
  createdVia: string;
  createdBy: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A discount's life: created pending; applied when Subscriptions creates the next renewal order (the
 * companion plugin lowers that order and links it); cancelled by staff, or when its subscription ends.
 */
export type DiscountStatus = 'pending' | 'applied' | 'cancelled';

export interface NewDiscount {
  subscriptionId: number;
  orderId: number | null;
  typeId: number;
  amount: string;
  currency: string;
  createdVia: string;
  createdBy: number;
}

export interface DiscountFilter {
  subscriptionId?: number;
  orderId?: number;
}


/** Renewal discount types and discounts (the service's own tables). */
export class RenewalDiscountRepository {
  private readonly pool: Pool;
  private readonly allTypes: PreparedStatement<never>;
  private readonly typesById: PreparedStatement<'ids'>;
  private readonly insertDiscount: PreparedStatement<'subscriptionId' | 'orderId' | 'typeId' | 'amount' | 'currency' | 'createdVia' | 'createdBy' | 'now'>;
  private readonly cancelPendingDiscount: PreparedStatement<'id' | 'now'>;
  private readonly discountById: PreparedStatement<'id'>;
  /** A page of discounts, newest first, and how many there are, by the filters given. */
  private readonly discountPages: (filter: DiscountFilter) => Record<'rows' | 'count', PreparedStatement<'subscriptionId' | 'orderId'>>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'ids', 'subscriptionId', 'orderId', 'typeId', 'amount', 'currency', 'createdVia', 'createdBy', 'now');
    const types = () => query().select('t.id', 'id').addSelect('t.slug', 'slug').addSelect('t.name', 'name').addSelect('t.scheme', 'scheme')
      .addSelect('t.description', 'description').from(RenewalDiscountType, 't');
    this.allTypes = PreparedStatement.from(types().orderBy('t.id'));
    this.typesById = PreparedStatement.from(types().where('t.id IN (:ids)').setParameters(s));
    this.insertDiscount = PreparedStatement.from(query().insert().into(RenewalDiscount).values({
      subscriptionId: s.subscriptionId, orderId: s.orderId, typeId: s.typeId, amount: s.amount, currency: s.currency, status: 'pending',
      createdVia: s.createdVia, createdBy: s.createdBy, createdAt: s.now, updatedAt: s.now,
    } as object));
    this.cancelPendingDiscount = PreparedStatement.from(query().update(RenewalDiscount).set({ status: 'cancelled', updatedAt: () => ':now' })
      .where("id = :id AND status = 'pending'").setParameters(s));
    this.discountById = PreparedStatement.from(selectEntity(dataSource, RenewalDiscount, 'd').where('d.id = :id').setParameters(s));
    this.discountPages = byFilters({ subscriptionId: 'd.subscriptionId = :subscriptionId', orderId: 'd.orderId = :orderId' }, (where) => {
      const filtered = <Query extends SelectQueryBuilder<ObjectLiteral>>(discounts: Query) => {
        for (const condition of where) discounts.andWhere(condition);
        return PreparedStatement.from<'subscriptionId' | 'orderId'>(discounts.setParameters(s));
      };
      return {
        rows: filtered(selectEntity(dataSource, RenewalDiscount, 'd').orderBy('d.id', 'DESC')),
        count: filtered(query().select('COUNT(*)', 'n').from(RenewalDiscount, 'd')),
      };
    });
  }

  async types(): Promise<DiscountTypeRecord[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.allTypes.sql);
    return rows.map(typeFrom);
  }

  async typesByIds(ids: number[]): Promise<Map<number, DiscountTypeRecord>> {
    if (!ids.length) return new Map();
    const { sql, values } = this.typesById.with({ ids });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return new Map(rows.map((row) => [Number(row.id), typeFrom(row)]));
  }

  /** A new pending discount; its ID. */
  async insert(discount: NewDiscount, now: Date): Promise<number> {
    const { sql, values } = this.insertDiscount.with({ ...discount, now: gmtDateTimeMs(now) });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.insertId;
  }

  /** Cancels a pending discount; false when it was not pending (applied or cancelled already, or gone). */
  async cancelPending(id: number, now: Date): Promise<boolean> {
    const { sql, values } = this.cancelPendingDiscount.with({ id, now: gmtDateTimeMs(now) });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows === 1;
  }

  async findById(id: number): Promise<DiscountRecord | null> {
    const { sql, values } = this.discountById.with({ id });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? discountFrom(rows[0]) : null;
  }

  /** Newest first, one page, with the total count for the filter. */
  async list(filter: DiscountFilter, pageNumber: number, perPage: number): Promise<{ discounts: DiscountRecord[]; total: number }> {
    const statements = this.discountPages(filter);
    const values = { subscriptionId: filter.subscriptionId, orderId: filter.orderId };
    const listed = page(statements.rows.with(values), perPage, (pageNumber - 1) * perPage);
    const counted = statements.count.with(values);
    const [[rows], [count]] = await Promise.all([
      this.pool.query<RowDataPacket[]>(listed.sql, listed.values),
      this.pool.query<RowDataPacket[]>(counted.sql, counted.values),
    ]);
    return { discounts: rows.map(discountFrom), total: Number(count[0].n) };
  }
}

function typeFrom(row: RowDataPacket): DiscountTypeRecord {
  return { id: Number(row.id), slug: String(row.slug), name: String(row.name), scheme: String(row.scheme), description: row.description ?? null };
}

function discountFrom(row: RowDataPacket): DiscountRecord {
  return {
    id: Number(row.id),
    subscriptionId: Number(row.subscriptionId),
    orderId: row.orderId === null ? null : Number(row.orderId),
    typeId: Number(row.typeId),
    amount: String(row.amount),
    currency: String(row.currency),
    status: String(row.status) as DiscountStatus,
    appliedAmount: row.appliedAmount === null || row.appliedAmount === undefined ? null : String(row.appliedAmount),
    appliedAt: row.appliedAt ? String(row.appliedAt) : null,
    createdVia: String(row.createdVia),
    createdBy: Number(row.createdBy),
    createdAt: String(row.createdAt),
    updatedAt: String(row.updatedAt),
  };
}
