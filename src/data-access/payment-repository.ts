import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { Agreement, Payment, PaymentMeta, type AgreementDisableReason, type AgreementStatus, type PaymentStatus, type Provider } from '../../entities';
import { rawPool } from './data-source';
import { page, PreparedStatement, selectEntity, slots, sqlNames } from './prepared-statement';
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
  externalId: row.externalId,
  status: row.status,
  orderId: row.orderId === null ? null : Number(row.orderId),
  agreementId: row.agreementId === null ? null : Number(row.agreementId),
  amountMinor: row.amountMinor === null ? null : Number(row.amountMinor),
  currency: row.currency,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const toAgreement = (row: RowDataPacket): AgreementRecord => ({
  id: Number(row.id),
  provider: row.provider,
  externalId: row.externalId,
  status: row.status,
  disableReason: row.disableReason,
  customerHandle: row.customerHandle,
  paymentMethod: row.paymentMethod,
  subscriptionId: row.subscriptionId === null ? null : Number(row.subscriptionId),
});

/** Added to an existing row's id in LAST_INSERT_ID (see lockOrCreate); above any real id, below 2^53. */
const EXISTING_ROW = 2 ** 52;

/** Payments with their meta, and agreements: the service's record of the providers' money and mandates. */
export class PaymentRepository {
  readonly pool: Pool;
  /** Inserts a payment, or finds the existing one (see lockOrCreate): expressions the query builder cannot write. */
  private readonly createPaymentSql: string;
  private readonly lockCreatedPayment: PreparedStatement<'provider' | 'externalId'>;
  private readonly orderOfPayment: PreparedStatement<'provider' | 'externalId'>;
  private readonly setOrderStatement: PreparedStatement<'id' | 'orderId'>;
  private readonly lockPayment: PreparedStatement<'provider' | 'externalId'>;
  private readonly paymentById: PreparedStatement<'id'>;
  private readonly paymentByKey: PreparedStatement<'provider' | 'externalId'>;
  private readonly setStatusStatement: PreparedStatement<'id' | 'status' | 'now'>;
  /** Sets one meta key: an upsert on the (payment, key) index. */
  private readonly setMetaSql: string;
  private readonly metaOfPayment: PreparedStatement<'paymentId'>;
  private readonly dueByMeta: PreparedStatement<'key' | 'now'>;
  private readonly deletingMeta: PreparedStatement<'paymentId' | 'key'>;
  private readonly paymentsOfOrder: PreparedStatement<'orderId'>;
  /** Inserts a pending agreement, or completes the known one (see lockOrCreateAgreement). */
  private readonly createAgreementSql: string;
  private readonly lockAgreement: PreparedStatement<'provider' | 'externalId'>;
  private readonly activeAgreement: PreparedStatement<'provider' | 'customerHandle'>;
  private readonly agreementsByExternal: PreparedStatement<'provider' | 'externalIds'>;
  private readonly activeAgreementOfSubscriptionStatement: PreparedStatement<'provider' | 'subscriptionId'>;
  private readonly updateAgreementStatement: PreparedStatement<'id' | 'status' | 'disableReason' | 'paymentMethod' | 'now'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const s = slots('id', 'provider', 'externalId', 'orderId', 'status', 'now', 'paymentId', 'customerHandle', 'disableReason', 'paymentMethod', 'subscriptionId', 'key', 'externalIds');
    const byKey = (alias: string) => `${alias}.provider = :provider AND ${alias}.externalId = :externalId`;
    const query = () => dataSource.createQueryBuilder();

    const payment = sqlNames(dataSource, Payment);
    const p = payment.column;
    this.createPaymentSql = `INSERT INTO ${payment.table} (${p.provider}, ${p.externalId}, ${p.status}, ${p.orderId}, ${p.agreementId}, ${p.amountMinor}, ${p.currency}, ${p.createdAt}, ${p.updatedAt})
      VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)
      ON DUPLICATE KEY UPDATE ${p.id} = LAST_INSERT_ID(${p.id} + ${EXISTING_ROW}) - ${EXISTING_ROW},
        ${p.orderId} = COALESCE(${p.orderId}, VALUES(${p.orderId})), ${p.amountMinor} = COALESCE(${p.amountMinor}, VALUES(${p.amountMinor})),
        ${p.currency} = COALESCE(${p.currency}, VALUES(${p.currency}))`;
    // A locking read sees the latest committed row, not the transaction's snapshot.
    this.lockCreatedPayment = PreparedStatement.from(selectEntity(dataSource, Payment, 'p').addSelect(`LAST_INSERT_ID() < ${EXISTING_ROW}`, 'created')
      .where(byKey('p')).setParameters(s).setLock('pessimistic_write'));
    this.orderOfPayment = PreparedStatement.from(query().select('p.orderId', 'orderId').from(Payment, 'p').where(byKey('p')).setParameters(s));
    this.setOrderStatement = PreparedStatement.from(query().update(Payment).set({ orderId: () => ':orderId' }).where('id = :id AND orderId IS NULL').setParameters(s));
    this.lockPayment = PreparedStatement.from(selectEntity(dataSource, Payment, 'p').where(byKey('p')).setParameters(s).setLock('pessimistic_write'));
    this.paymentById = PreparedStatement.from(selectEntity(dataSource, Payment, 'p').where('p.id = :id').setParameters(s));
    this.paymentByKey = PreparedStatement.from(selectEntity(dataSource, Payment, 'p').where(byKey('p')).setParameters(s));
    this.setStatusStatement = PreparedStatement.from(query().update(Payment).set({ status: () => ':status', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.paymentsOfOrder = PreparedStatement.from(selectEntity(dataSource, Payment, 'p').where('p.orderId = :orderId').orderBy('p.id').setParameters(s));

    const meta = sqlNames(dataSource, PaymentMeta);
    const m = meta.column;
    this.setMetaSql = `INSERT INTO ${meta.table} (${m.paymentId}, ${m.key}, ${m.value}) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ${m.value} = VALUES(${m.value})`;
    this.metaOfPayment = PreparedStatement.from(query().select('m.key', 'key').addSelect('m.value', 'value')
      .from(PaymentMeta, 'm').where('m.paymentId = :paymentId').setParameters(s));
    // On the (key, payment) index: the few payments with a step of the service's due by this meta's time.
    this.dueByMeta = PreparedStatement.from(query().select('m.paymentId', 'paymentId').from(PaymentMeta, 'm')
      .where("m.key = :key AND m.value <> '' AND m.value <= :now").orderBy('m.paymentId').setParameters(s));
    this.deletingMeta = PreparedStatement.from(query().delete().from(PaymentMeta).where('paymentId = :paymentId AND key = :key').setParameters(s));

    const agreement = sqlNames(dataSource, Agreement);
    const a = agreement.column;
    this.createAgreementSql = `INSERT INTO ${agreement.table} (${a.provider}, ${a.externalId}, ${a.status}, ${a.customerHandle}, ${a.subscriptionId}, ${a.createdAt}, ${a.updatedAt})
      VALUES (?, ?, 'PENDING', ?, ?, ?, ?)
      ON DUPLICATE KEY UPDATE ${a.customerHandle} = COALESCE(${a.customerHandle}, VALUES(${a.customerHandle})),
        ${a.subscriptionId} = COALESCE(${a.subscriptionId}, VALUES(${a.subscriptionId}))`;
    this.lockAgreement = PreparedStatement.from(selectEntity(dataSource, Agreement, 'a').where(byKey('a')).setParameters(s).setLock('pessimistic_write'));
    this.activeAgreementOfSubscriptionStatement = PreparedStatement.from(selectEntity(dataSource, Agreement, 'a')
      .where("a.subscriptionId = :subscriptionId AND a.provider = :provider AND a.status = 'ACTIVE'")
      .orderBy('a.updatedAt', 'DESC').addOrderBy('a.id', 'DESC').limit(1).setParameters(s));
    this.agreementsByExternal = PreparedStatement.from(selectEntity(dataSource, Agreement, 'a')
      .where('a.provider = :provider AND a.externalId IN (:externalIds)').setParameters(s));
    this.activeAgreement = PreparedStatement.from(selectEntity(dataSource, Agreement, 'a')
      .where("a.provider = :provider AND a.customerHandle = :customerHandle AND a.status = 'ACTIVE'")
      .orderBy('a.updatedAt', 'DESC').addOrderBy('a.id', 'DESC').limit(1).setParameters(s));
    this.updateAgreementStatement = PreparedStatement.from(query().update(Agreement).set({
      status: () => ':status', disableReason: () => ':disableReason', paymentMethod: () => 'COALESCE(:paymentMethod, paymentMethod)', updatedAt: () => ':now',
    }).where('id = :id').setParameters(s));
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
    const key = { provider: fields.provider, externalId: fields.externalId };
    const orderOf = this.orderOfPayment.with(key);
    const search = searchOrder?.({ sql: `(${orderOf.sql}) IS NULL`, values: orderOf.values });
    const { sql, values } = together([
      {
        sql: this.createPaymentSql,
        values: [key.provider, key.externalId, fields.orderId ?? null, fields.agreementId ?? null, fields.amountMinor ?? null, fields.currency ?? null, now, now],
      },
      this.lockCreatedPayment.with(key),
      ...(search ? [search] : []),
    ]);
    const [results] = await db.query<RowDataPacket[][]>(sql, values);
    const [, rows, found] = results;
    if (!rows.length) throw new Error(`payment ${fields.provider}/${fields.externalId} vanished after insert`);
    return { payment: toPayment(rows[0]), created: Number(rows[0].created) === 1, foundOrders: (found ?? []).map((row) => Number(row.id)) };
  }

  /** Links a payment that has no order yet to `orderId`. */
  async setOrder(db: Executor, id: number, orderId: number): Promise<void> {
    const { sql, values } = this.setOrderStatement.with({ id, orderId });
    await write(db, sql, values);
  }

  async lock(db: Executor, provider: Provider, externalId: string): Promise<PaymentRecord | null> {
    const { sql, values } = this.lockPayment.with({ provider, externalId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async findById(id: number): Promise<PaymentRecord | null> {
    const { sql, values } = this.paymentById.with({ id });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async find(provider: Provider, externalId: string): Promise<PaymentRecord | null> {
    const { sql, values } = this.paymentByKey.with({ provider, externalId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? toPayment(rows[0]) : null;
  }

  async setStatus(db: Executor, id: number, status: PaymentStatus, now: string): Promise<void> {
    const { sql, values } = this.setStatusStatement.with({ id, status, now });
    await write(db, sql, values);
  }

  async setMeta(db: Executor, paymentId: number, values: Record<string, string | null | undefined>): Promise<void> {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      await write(db, this.setMetaSql, [paymentId, key, value]);
    }
  }

  /** The payments whose meta `key` holds a shop time (GMT, as gmtDateTimeMs writes it) at or before `now`, at most `limit`. */
  async dueByMetaTime(key: string, now: string, limit: number): Promise<number[]> {
    const { sql, values } = page(this.dueByMeta.with({ key, now }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => Number(row.paymentId));
  }

  async deleteMeta(db: Executor, paymentId: number, key: string): Promise<void> {
    const { sql, values } = this.deletingMeta.with({ paymentId, key });
    await write(db, sql, values);
  }

  async meta(paymentId: number, db: Executor = this.pool): Promise<Record<string, string>> {
    const { sql, values } = this.metaOfPayment.with({ paymentId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return Object.fromEntries(rows.map((row) => [row.key, row.value ?? '']));
  }

  /** The order's payments without their meta: one statement. */
  async ofOrder(orderId: number, db: Executor = this.pool): Promise<PaymentRecord[]> {
    const { sql, values } = this.paymentsOfOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toPayment);
  }

  async listByOrder(orderId: number, db: Executor = this.pool): Promise<(PaymentRecord & { meta: Record<string, string> })[]> {
    const { sql, values } = this.paymentsOfOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    const payments: (PaymentRecord & { meta: Record<string, string> })[] = [];
    // One after another: on a transaction's connection statements cannot overlap.
    for (const row of rows) {
      const payment = toPayment(row);
      payments.push({ ...payment, meta: await this.meta(payment.id, db) });
    }
    return payments;
  }

  /** The agreement, locked; created pending when unknown. */
  async lockOrCreateAgreement(db: Executor, fields: { provider: Provider; externalId: string; customerHandle?: string | null; subscriptionId?: number | null }, now: string): Promise<AgreementRecord> {
    // A known agreement only gains the customer and subscription it did not have yet.
    await write(db, this.createAgreementSql, [fields.provider, fields.externalId, fields.customerHandle ?? null, fields.subscriptionId ?? null, now, now]);
    const { sql, values } = this.lockAgreement.with({ provider: fields.provider, externalId: fields.externalId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return toAgreement(rows[0]);
  }

  /** The newest active card-gateway payment method of a customer, to charge a retry on. */
  /** The agreements of this provider with these IDs, by ID (unknown ones left out). */
  async agreementsByExternalIds(provider: Provider, externalIds: string[]): Promise<Map<string, AgreementRecord>> {
    if (!externalIds.length) return new Map();
    const { sql, values } = this.agreementsByExternal.with({ provider, externalIds });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return new Map(rows.map((row) => [String(row.externalId), toAgreement(row)]));
  }

  async activeAgreementOfCustomer(provider: Provider, customerHandle: string): Promise<AgreementRecord | null> {
    const { sql, values } = this.activeAgreement.with({ provider, customerHandle });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? toAgreement(rows[0]) : null;
  }

  /** The newest active agreement of a subscription (a wallet agreement the customer activated after a failure). */
  async activeAgreementOfSubscription(provider: Provider, subscriptionId: number): Promise<AgreementRecord | null> {
    const { sql, values } = this.activeAgreementOfSubscriptionStatement.with({ provider, subscriptionId });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? toAgreement(rows[0]) : null;
  }

  async updateAgreement(db: Executor, id: number, fields: { status: AgreementStatus; disableReason: AgreementDisableReason | null; paymentMethod?: string | null }, now: string): Promise<void> {
    const { sql, values } = this.updateAgreementStatement.with({
      id, status: fields.status, disableReason: fields.disableReason, paymentMethod: fields.paymentMethod ?? null, now,
    });
    await write(db, sql, values);
  }
}
