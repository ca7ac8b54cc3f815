import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { ProviderRefusal, type Provider } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, slots } from './prepared-statement';
import { gmtDateTimeMs } from '../shop/shop-time';

export interface ProviderRefusalInput {
  provider: Provider;
  retryId: number;
  orderId: number;
  httpStatus: number | null;
  code: string | null;
  message: string;
}

export interface OpenRefusal extends ProviderRefusalInput {
  at: Date;
  /** How many refusals of attempts still held there are in all. */
  open: number;
}

/**
 * The charge requests a provider refused for a reason of the service's own: one row per refusal, kept (the
 * metrics count them), open until the held attempt's request is accepted.
 */
export class ProviderRefusalRepository {
  readonly pool: Pool;
  private readonly recording: PreparedStatement<'provider' | 'retryId' | 'orderId' | 'httpStatus' | 'code' | 'message' | 'now'>;
  private readonly resolving: PreparedStatement<'retryId' | 'now'>;
  private readonly newestOpen: PreparedStatement<never>;
  private readonly countOpen: PreparedStatement<never>;
  private readonly countsOfProvider: PreparedStatement<never>;
  private readonly ofRetry: PreparedStatement<'retryId'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('provider', 'retryId', 'orderId', 'httpStatus', 'code', 'message', 'now');
    this.recording = PreparedStatement.from(query().insert().into(ProviderRefusal).values({
      provider: s.provider, retryId: s.retryId, orderId: s.orderId, httpStatus: s.httpStatus, code: s.code, message: s.message, createdAt: s.now,
    } as object));
    this.resolving = PreparedStatement.from(query().update(ProviderRefusal).set({ resolvedAt: () => ':now' })
      .where('retryId = :retryId AND resolvedAt IS NULL').setParameters(s));
    this.newestOpen = PreparedStatement.from(query().select('r.provider', 'provider').addSelect('r.retryId', 'retryId').addSelect('r.orderId', 'orderId')
      .addSelect('r.httpStatus', 'httpStatus').addSelect('r.code', 'code').addSelect('r.message', 'message').addSelect('r.createdAt', 'createdAt')
      .from(ProviderRefusal, 'r').where('r.resolvedAt IS NULL').orderBy('r.id', 'DESC').limit(1));
    this.countOpen = PreparedStatement.from(query().select('COUNT(*)', 'n').from(ProviderRefusal, 'r').where('r.resolvedAt IS NULL'));
    this.ofRetry = PreparedStatement.from(query().select('COUNT(*)', 'n').from(ProviderRefusal, 'r').where('r.retryId = :retryId').setParameters(s));
    this.countsOfProvider = PreparedStatement.from(query().select('r.provider', 'provider').addSelect('r.httpStatus', 'status').addSelect('COUNT(*)', 'n')
      .from(ProviderRefusal, 'r').groupBy('r.provider').addGroupBy('r.httpStatus'));
  }

  async record(input: ProviderRefusalInput, now: Date): Promise<void> {
    const { sql, values } = this.recording.with({ ...input, message: input.message.slice(0, 255), code: input.code?.slice(0, 128) ?? null, now: gmtDateTimeMs(now) });
    await this.pool.query(sql, values);
  }

  /** How many times the provider refused the requests of this attempt. */
  async countOfRetry(retryId: number): Promise<number> {
    const { sql, values } = this.ofRetry.with({ retryId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return Number(rows[0]?.n ?? 0);
  }

  /** The held attempt's request was accepted (or the attempt ended): its refusals are closed. */
  async resolve(retryId: number, now: Date): Promise<void> {
    const { sql, values } = this.resolving.with({ retryId, now: gmtDateTimeMs(now) });
    await this.pool.query(sql, values);
  }

  /** The newest refusal of an attempt still held, and how many are open; null when none is. */
  async open(): Promise<OpenRefusal | null> {
    const newest = this.newestOpen.with({});
    const count = this.countOpen.with({});
    const [[rows], [counts]] = await Promise.all([
      this.pool.query<RowDataPacket[]>(newest.sql, newest.values),
      this.pool.query<RowDataPacket[]>(count.sql, count.values),
    ]);
    const row = rows[0];
    if (!row) return null;
    return {
      provider: row.provider, retryId: Number(row.retryId), orderId: Number(row.orderId), httpStatus: row.httpStatus === null ? null : Number(row.httpStatus),
      code: row.code, message: String(row.message), at: new Date(`${String(row.createdAt).replace(' ', 'T')}Z`), open: Number(counts[0]?.n ?? 0),
    };
  }

  /** Every refusal ever recorded, by provider and the HTTP status of the refusal (a counter: rows are never deleted); `status` null when the provider gave none. */
  async countsByProvider(): Promise<{ provider: Provider; status: number | null; count: number }[]> {
    const { sql, values } = this.countsOfProvider.with({});
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({ provider: row.provider, status: row.status === null ? null : Number(row.status), count: Number(row.n) }));
  }
}
