import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { Agreement, Payment, PaymentMeta, type AgreementDisableReason, type AgreementStatus, type PaymentStatus, type Provider } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { together, write, type Executor, type Statement } from './transaction';

export interface PaymentRecord {
  id: number;
  provider: Provider;
  externalId: string;
  status: PaymentStatus | null;
  orderId: number | null;
  agreementId: number | null;
  amountMinor: number | null;
  currency: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AgreementRecord {
  id: number;
  provider: Provider;
  externalId: string;
  status: AgreementStatus;
  disableReason: AgreementDisableReason | null;
  customerHandle: string | null;
  paymentMethod: string | null;
  subscriptionId: number | null;
}

const toPayment = (row: RowDataPacket): PaymentRecord => ({
  id: Number(row.id),
  provider: row.provider,
  externalId: row.external_id,
  status: row.status,
  orderId: row.order_id === null ? null : Number(row.order_id),
  agreementId: row.agreement_id === null ? null : Number(row.agreement_id),
  amountMinor: row.amount_minor === null ? null : Number(row.amount_minor),
  currency: row.currency,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toAgreement = (row: RowDataPacket): AgreementRecord => ({
  id: Number(row.id),
  provider: row.provider,
  externalId: row.external_id,
  status: row.status,
  disableReason: row.disable_reason,
  customerHandle: row.customer_handle,
  paymentMethod: row.payment_method,
  subscriptionId: row.subscription_id === null ? null : Number(row.subscription_id),
});

/** Added to an existing row's id in LAST_INSERT_ID (see lockOrCreate); above any real id, below 2^53. */
const EXISTING_ROW = 2 ** 52;

/** Payments with their meta, and agreements: the service's record of the providers' money and mandates. */
export class PaymentRepository {
  readonly pool: Pool;
  private readonly t: { payments: string; meta: string; agreements: string };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = { payments: tableOf(dataSource, Payment), meta: tableOf(dataSource, PaymentMeta), agreements: tableOf(dataSource, Agreement) };
  }

  /**
   * The payment, locked for the rest of the transaction; created (without a status) when unknown, and
   * given the order, amount and currency an earlier, thinner event could not know. One round trip.
   *
   * One statement takes the row's exclusive lock whether it inserts the row or finds it: with INSERT
   * IGNORE, concurrent events for a new payment each took a shared lock on the row another had just
   * inserted, then all asked for the exclusive one (SELECT ... FOR UPDATE) and deadlocked one another.
   * Whether it inserted shows in LAST_INSERT_ID: the duplicate branch sets it to the existing row's id
   * offset by EXISTING_ROW (with mysql2's FOUND_ROWS an unchanged duplicate counts one affected row,
   * as an insert does).
   *
   * `searchOrder`, given a condition that holds while the payment has no order, is a search for its
   * order sent in the same round trip; what it found comes back as `foundOrders` (the database skips
   * the search when the condition does not hold, as it does not depend on the rows searched).
   */
  async lockOrCreate(
    db: Executor,
    fields: { provider: Provider; externalId: string; orderId?: number | null; agreementId?: number | null; amountMinor?: number | null; currency?: string | null },
    now: string,
    searchOrder?: (withoutOrder: Statement) => Statement,
  ): Promise<{ payment: PaymentRecord; created: boolean; foundOrders: number[] }> {
    const key = [fields.provider, fields.externalId];
    const search = searchOrder?.({ sql: `(SELECT order_id FROM ${this.t.payments} WHERE provider = ? AND external_id = ?) IS NULL`, values: key });
    const { sql, values } = together([
      {
        sql: `INSERT INTO ${this.t.payments} (provider, external_id, status, order_id, agreement_id, amount_minor, currency, created_at, updated_at)
              VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)
              ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + ${EXISTING_ROW}) - ${EXISTING_ROW},
                order_id = COALESCE(order_id, VALUES(order_id)), amount_minor = COALESCE(amount_minor, VALUES(amount_minor)), currency = COALESCE(currency, VALUES(currency))`,
        values: [...key, fields.orderId ?? null, fields.agreementId ?? null, fields.amountMinor ?? null, fields.currency ?? null, now, now],
      },
      // A locking read sees the latest committed row, not the transaction's snapshot.
      { sql: `SELECT *, LAST_INSERT_ID() < ${EXISTING_ROW} AS created FROM ${this.t.payments} WHERE provider = ? AND external_id = ? FOR UPDATE`, values: key },
      ...(search ? [search] : []),
    ]);
    const [results] = await db.query<RowDataPacket[][]>(sql, values);
    const [, rows, found] = results;
    if (!rows.length) throw new Error(`payment ${fields.provider}/${fields.externalId} vanished after insert`);
    return { payment: toPayment(rows[0]), created: Number(rows[0].created) === 1, foundOrders: (found ?? []).map((row) => Number(row.id)) };
  }

  /** Links a payment that has no order yet to `orderId`. */
  async setOrder(db: Executor, id: number, orderId: number): Promise<void> {
    await write(db, `UPDATE ${this.t.payments} SET order_id = ? WHERE id = ? AND order_id IS NULL`, [orderId, id]);
  }

  async lock(db: Executor, provider: Provider, externalId: string): Promise<PaymentRecord | null> {
    const [rows] = await db.query<RowDataPacket[]>(`SELECT * FROM ${this.t.payments} WHERE provider = ? AND external_id = ? FOR UPDATE`, [provider, externalId]);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async findById(id: number): Promise<PaymentRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.payments} WHERE id = ?`, [id]);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async find(provider: Provider, externalId: string): Promise<PaymentRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.payments} WHERE provider = ? AND external_id = ?`, [provider, externalId]);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async setStatus(db: Executor, id: number, status: PaymentStatus, now: string): Promise<void> {
    await write(db, `UPDATE ${this.t.payments} SET status = ?, updated_at = ? WHERE id = ?`, [status, now, id]);
  }

  async setMeta(db: Executor, paymentId: number, values: Record<string, string | null | undefined>): Promise<void> {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      await write(db, `INSERT INTO ${this.t.meta} (payment_id, meta_key, meta_value) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE meta_value = VALUES(meta_value)`,
        [paymentId, key, value]);
    }
  }

  async meta(paymentId: number): Promise<Record<string, string>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT meta_key, meta_value FROM ${this.t.meta} WHERE payment_id = ?`, [paymentId]);
    return Object.fromEntries(rows.map((row) => [row.meta_key, row.meta_value ?? '']));
  }

  async listByOrder(orderId: number): Promise<(PaymentRecord & { meta: Record<string, string> })[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.t.payments} WHERE order_id = ? ORDER BY id`, [orderId]);
    return Promise.all(rows.map(async (row) => {
      const payment = toPayment(row);
      return { ...payment, meta: await this.meta(payment.id) };
    }));
  }

  /** The agreement, locked; created pending when unknown. */
  async lockOrCreateAgreement(db: Executor, fields: { provider: Provider; externalId: string; customerHandle?: string | null; subscriptionId?: number | null }, now: string): Promise<AgreementRecord> {
    // A known agreement only gains the customer and subscription it did not have yet.
    await write(
      db,
      `INSERT INTO ${this.t.agreements} (provider, external_id, status, customer_handle, subscription_id, created_at, updated_at)
       VALUES (?, ?, 'PENDING', ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE customer_handle = COALESCE(customer_handle, VALUES(customer_handle)), subscription_id = COALESCE(subscription_id, VALUES(subscription_id))`,
      [fields.provider, fields.externalId, fields.customerHandle ?? null, fields.subscriptionId ?? null, now, now],
    );
    const [rows] = await db.query<RowDataPacket[]>(`SELECT * FROM ${this.t.agreements} WHERE provider = ? AND external_id = ? FOR UPDATE`, [fields.provider, fields.externalId]);
    return toAgreement(rows[0]);
  }

  /** The newest active card-gateway payment method of a customer, to charge a retry on. */
  async activeAgreementOfCustomer(provider: Provider, customerHandle: string): Promise<AgreementRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.t.agreements} WHERE provider = ? AND customer_handle = ? AND status = 'ACTIVE' ORDER BY updated_at DESC, id DESC LIMIT 1`, [provider, customerHandle]);
    return rows.length ? toAgreement(rows[0]) : null;
  }

  async updateAgreement(db: Executor, id: number, fields: { status: AgreementStatus; disableReason: AgreementDisableReason | null; paymentMethod?: string | null }, now: string): Promise<void> {
    await write(db, `UPDATE ${this.t.agreements} SET status = ?, disable_reason = ?, payment_method = COALESCE(?, payment_method), updated_at = ? WHERE id = ?`,
      [fields.status, fields.disableReason, fields.paymentMethod ?? null, now, id]);
  }
}
