import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { Charge, Payment, PaymentMeta, type PaymentStatus, type Provider } from '../../entities';
import { rawPool } from './data-source';
import { page, PreparedStatement, slots } from './prepared-statement';
import type { Executor } from './transaction';

/** The payment meta that flags a payment as a second capture of its order: the ID of the payment that had already paid it. */
export const SECOND_CAPTURE_META = 'second_capture_of';
/**
 * The flag's value when what had already paid the order is not one of the service's payments: the renewal was paid
 * or closed in the shop (another gateway, a bank transfer, staff marking it paid, the order cancelled), the service
 * withdrew its charge for that, and the provider took it all the same.
 */
export const PAID_OUTSIDE = '0';

/** A captured payment of an order, with the payment it was flagged a second capture of (null: not flagged). */
export interface CaptureRecord {
  id: number;
  provider: Provider;
  externalId: string;
  amountMinor: number | null;
  currency: string | null;
  /** When the service recorded the capture: the payment's last status change (GMT, with milliseconds). */
  capturedAt: string;
  secondCaptureOf: number | null;
  /**
   * Why the service had withdrawn the ledger's charge that took this money (`order_processing`, `dunning_stopped`, ...):
   * the provider took it after its cancel was asked for. Null for a charge still wanted when it was taken.
   */
  withdrawnBecause: string | null;
}

/** A payment captured since the sweep's mark, with how many captured payments its order has. */
export interface ChangedCapture {
  id: number;
  orderId: number;
  updatedAt: string;
  captures: number;
  /** As CaptureRecord.withdrawnBecause. */
  withdrawnBecause: string | null;
}

/** A payment flagged as a second capture: its provider, and its status and that of the payment it duplicates, as they are now. */
export interface FlaggedCapture {
  provider: Provider;
  status: PaymentStatus | null;
  /** The status of the payment it duplicates; null with `paidOutside`. */
  keptStatus: PaymentStatus | null;
  /** What had paid the order is outside the service (PAID_OUTSIDE). */
  paidOutside: boolean;
}

const toCapture = (row: RowDataPacket): CaptureRecord => ({
  id: Number(row.id),
  provider: row.provider,
  externalId: row.externalId,
  amountMinor: row.amountMinor === null ? null : Number(row.amountMinor),
  currency: row.currency,
  capturedAt: row.capturedAt,
  secondCaptureOf: row.secondCaptureOf === null || row.secondCaptureOf === undefined ? null : Number(row.secondCaptureOf),
  withdrawnBecause: row.withdrawnBecause ?? null,
});

/**
 * The reads of the second-capture sweep (src/payments/second-captures.ts): the payments captured since its mark,
 * along the payments' `updated_at` index, each with its order's count of captured payments through the `order_id`
 * index; an order's captured payments with their flags; and the flagged payments for /metrics, through the meta's
 * (meta_key, payment_id) index. A flag is written with the payment's other meta (PaymentRepository.setMeta).
 */
export class SecondCaptureRepository {
  private readonly pool: Pool;
  private readonly changedStatement: PreparedStatement<'since' | 'afterId'>;
  private readonly ofOrder: PreparedStatement<'orderId'>;
  private readonly lockOfOrder: PreparedStatement<'orderId'>;
  private readonly flaggedStatement: PreparedStatement<never>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('since', 'afterId', 'orderId');
    const capturesOfOrder = query().select('COUNT(*)').from(Payment, 'q').where("q.orderId = p.orderId AND q.status = 'CAPTURED'");
    // The ledger's charge of the payment (through its provider_external_id index), when it was taken after its withdrawal.
    // (The payments' external IDs are utf8mb4_nopad_bin, the ledger's utf8mb4_bin: compared in the ledger's, for its index.)
    const withdrawnBecause = query().select('MAX(c.cancelReason)').from(Charge, 'c')
      .where("c.provider = p.provider AND c.externalId = p.externalId COLLATE utf8mb4_bin AND c.state = 'TAKEN' AND c.cancelWantedAt IS NOT NULL");
    this.changedStatement = PreparedStatement.from(query()
      .select('p.id', 'id').addSelect('p.orderId', 'orderId').addSelect('p.updatedAt', 'updatedAt')
      .addSelect(`(${capturesOfOrder.getQuery()})`, 'captures')
      .addSelect(`(${withdrawnBecause.getQuery()})`, 'withdrawnBecause')
      .from(Payment, 'p')
      .where("(p.updatedAt > :since OR (p.updatedAt = :since AND p.id > :afterId)) AND p.status = 'CAPTURED' AND p.orderId IS NOT NULL")
      .orderBy('p.updatedAt').addOrderBy('p.id').setParameters(s));
    const captures = () => query()
      .select('p.id', 'id').addSelect('p.provider', 'provider').addSelect('p.externalId', 'externalId')
      .addSelect('p.amountMinor', 'amountMinor').addSelect('p.currency', 'currency').addSelect('p.updatedAt', 'capturedAt')
      .addSelect('m.value', 'secondCaptureOf')
      .addSelect(`(${withdrawnBecause.getQuery()})`, 'withdrawnBecause')
      .from(Payment, 'p')
      .leftJoin(PaymentMeta, 'm', `m.paymentId = p.id AND m.key = '${SECOND_CAPTURE_META}'`)
      .where("p.orderId = :orderId AND p.status = 'CAPTURED'")
      .orderBy('p.updatedAt').addOrderBy('p.id').setParameters(s);
    this.ofOrder = PreparedStatement.from(captures());
    this.lockOfOrder = PreparedStatement.from(captures().setLock('pessimistic_write'));
    this.flaggedStatement = PreparedStatement.from(query()
      .select('p.provider', 'provider').addSelect('p.status', 'status').addSelect('k.status', 'keptStatus').addSelect('m.value', 'keptId')
      .from(PaymentMeta, 'm')
      .innerJoin(Payment, 'p', 'p.id = m.paymentId')
      .leftJoin(Payment, 'k', 'k.id = CAST(m.value AS UNSIGNED)')
      .where(`m.key = '${SECOND_CAPTURE_META}'`));
  }

  /** Captured payments of an order changed after (`since`, `afterId`), in the order of their change. */
  async changedCaptures(since: string, afterId: number, limit: number): Promise<ChangedCapture[]> {
    const { sql, values } = page(this.changedStatement.with({ since, afterId }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({
      id: Number(row.id), orderId: Number(row.orderId), updatedAt: row.updatedAt, captures: Number(row.captures), withdrawnBecause: row.withdrawnBecause ?? null,
    }));
  }

  /** The order's captured payments, first captured first. */
  async capturesOfOrder(orderId: number): Promise<CaptureRecord[]> {
    const { sql, values } = this.ofOrder.with({ orderId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toCapture);
  }

  /** The same, locked for the rest of the transaction. */
  async lockCapturesOfOrder(db: Executor, orderId: number): Promise<CaptureRecord[]> {
    const { sql, values } = this.lockOfOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toCapture);
  }

  /** Every payment ever flagged as a second capture (a handful: each is a mistake someone refunds). */
  async flagged(): Promise<FlaggedCapture[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.flaggedStatement.sql);
    return rows.map((row) => ({ provider: row.provider, status: row.status, keptStatus: row.keptStatus ?? null, paidOutside: row.keptId === PAID_OUTSIDE }));
  }
}
