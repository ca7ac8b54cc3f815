import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { RenewalDiscount, RenewalDiscountType } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, selectEntity, slots, sqlNames } from './prepared-statement';
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
  /** Every discount, each column under its property's name; a page adds its filter, order and LIMIT, which vary per call. */
  private readonly everyDiscount: string;
  private readonly discounts: ReturnType<typeof sqlNames<RenewalDiscount>>;

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
    const discounts = selectEntity(dataSource, RenewalDiscount, 'd');
    this.everyDiscount = PreparedStatement.from(discounts).sql;
    this.discountById = PreparedStatement.from(discounts.where('d.id = :id').setParameters(s));
    this.discounts = sqlNames(dataSource, RenewalDiscount);
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
  async list(filter: DiscountFilter, page: number, perPage: number): Promise<{ discounts: DiscountRecord[]; total: number }> {
    const { table, column } = this.discounts;
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.subscriptionId !== undefined) { where.push(`${column.subscriptionId} = ?`); params.push(filter.subscriptionId); }
    if (filter.orderId !== undefined) { where.push(`${column.orderId} = ?`); params.push(filter.orderId); }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [[rows], [count]] = await Promise.all([
      this.pool.query<RowDataPacket[]>(`${this.everyDiscount} ${clause} ORDER BY ${column.id} DESC LIMIT ? OFFSET ?`, [...params, perPage, (page - 1) * perPage]),
      this.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} ${clause}`, params),
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
