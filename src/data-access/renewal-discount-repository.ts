import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { RenewalDiscount, RenewalDiscountType } from '../../entities';
import { rawPool, tableOf } from './data-source';
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
  private readonly t: { types: string; discounts: string };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = { types: tableOf(dataSource, RenewalDiscountType), discounts: tableOf(dataSource, RenewalDiscount) };
  }

  async types(): Promise<DiscountTypeRecord[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT id, slug, name, scheme, description FROM ${this.t.types} ORDER BY id`);
    return rows.map(typeFrom);
  }

  async typesByIds(ids: number[]): Promise<Map<number, DiscountTypeRecord>> {
    if (!ids.length) return new Map();
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT id, slug, name, scheme, description FROM ${this.t.types} WHERE id IN (?)`, [ids]);
    return new Map(rows.map((row) => [Number(row.id), typeFrom(row)]));
  }

  /** A new pending discount; its ID. */
  async insert(discount: NewDiscount, now: Date): Promise<number> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `INSERT INTO ${this.t.discounts} (subscription_id, order_id, type_id, amount, currency, status, created_via, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
      [discount.subscriptionId, discount.orderId, discount.typeId, discount.amount, discount.currency, discount.createdVia,
        discount.createdBy, gmtDateTimeMs(now), gmtDateTimeMs(now)]);
    return result.insertId;
  }

  /** Cancels a pending discount; false when it was not pending (applied or cancelled already, or gone). */
  async cancelPending(id: number, now: Date): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE ${this.t.discounts} SET status = 'cancelled', updated_at = ? WHERE id = ? AND status = 'pending'`, [gmtDateTimeMs(now), id]);
    return result.affectedRows === 1;
  }

  async findById(id: number): Promise<DiscountRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.discounts} WHERE id = ?`, [id]);
    return rows.length ? discountFrom(rows[0]) : null;
  }

  /** Newest first, one page, with the total count for the filter. */
  async list(filter: DiscountFilter, page: number, perPage: number): Promise<{ discounts: DiscountRecord[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.subscriptionId !== undefined) { where.push('subscription_id = ?'); params.push(filter.subscriptionId); }
    if (filter.orderId !== undefined) { where.push('order_id = ?'); params.push(filter.orderId); }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [[rows], [count]] = await Promise.all([
      this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.discounts} ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`, [...params, perPage, (page - 1) * perPage]),
      this.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${this.t.discounts} ${clause}`, params),
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
    subscriptionId: Number(row.subscription_id),
    orderId: row.order_id === null ? null : Number(row.order_id),
    typeId: Number(row.type_id),
    amount: String(row.amount),
    currency: String(row.currency),
    status: String(row.status) as DiscountStatus,
    appliedAmount: row.applied_amount === null || row.applied_amount === undefined ? null : String(row.applied_amount),
    appliedAt: row.applied_at ? String(row.applied_at) : null,
    createdVia: String(row.created_via),
    createdBy: Number(row.created_by),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}
