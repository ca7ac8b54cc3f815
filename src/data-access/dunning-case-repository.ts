import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { ChargeAttempt, DunningCase, DunningStaffAction, type DunningArm, type DunningCaseStatus, type DunningPolicy, type DunningStaffActionKind, type Provider, type RecoveryMeans } from '../../entities';
import { rawPool } from './data-source';
import { page, PreparedStatement, selectEntity, slots, sqlNames } from './prepared-statement';
import { write, type Executor } from './transaction';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';

export interface DunningCaseRecord {
  id: number;
  orderId: number;
  subscriptionId: number;
  paymentId: number;
  provider: Provider;
  methodKey: string | null;
  currency: string;
  amountMinor: number;
  firstReason: string;
  policy: DunningPolicy;
  /** The holdout's arm, decided when the case opened. */
  arm: DunningArm;
  status: DunningCaseStatus;
  attempts: number;
  openedAt: string;
  customerAskedAt: string | null;
  customerRemindedAt: string | null;
  deadlineAt: string | null;
  /** The subscription's payment method the case last saw (see the entity). */
  paymentMethodSeen: string | null;
  closedAt: string | null;
  recoveredBy: RecoveryMeans | null;
}

/** One action of staff on a case (charge now, payment link, stop dunning), and who took it. */
export interface StaffActionRecord {
  id: number;
  caseId: number;
  orderId: number;
  action: DunningStaffActionKind;
  attempt: number | null;
  userId: number;
  userName: string;
  createdAt: string;
}

const toStaffAction = (row: RowDataPacket): StaffActionRecord => ({
  id: Number(row.id),
  caseId: Number(row.caseId),
  orderId: Number(row.orderId),
  action: row.action,
  attempt: row.attempt === null || row.attempt === undefined ? null : Number(row.attempt),
  userId: Number(row.userId),
  userName: row.userName,
  createdAt: row.createdAt,
});

const toCase = (row: RowDataPacket): DunningCaseRecord => ({
  id: Number(row.id),
  orderId: Number(row.orderId),
  subscriptionId: Number(row.subscriptionId),
  paymentId: Number(row.paymentId),
  provider: row.provider,
  methodKey: row.methodKey ?? null,
  currency: row.currency,
  amountMinor: Number(row.amountMinor),
  firstReason: row.firstReason,
  policy: row.policy,
  arm: row.arm === 'baseline' ? 'baseline' : 'service',
  status: row.status,
  attempts: Number(row.attempts),
  openedAt: row.openedAt,
  customerAskedAt: row.customerAskedAt ?? null,
  customerRemindedAt: row.customerRemindedAt ?? null,
  deadlineAt: row.deadlineAt ?? null,
  paymentMethodSeen: row.paymentMethodSeen ?? null,
  closedAt: row.closedAt ?? null,
  recoveredBy: row.recoveredBy ?? null,
});

/** A case as it opens: the renewal, what it was charged on, and the first decline's reason and decision. */
export type OpenCase = Pick<DunningCaseRecord, 'orderId' | 'subscriptionId' | 'paymentId' | 'provider' | 'methodKey' | 'currency' | 'amountMinor' | 'policy'>
  & { reason: string; now: Date; arm?: DunningArm };

/**
 * Failed renewals from their first decline to their end, and the charges made on each payment method
 * (for the card schemes' caps). Every write runs in the transaction of the payment change it follows from.
 */
export class DunningCaseRepository {
  readonly pool: Pool;
  /** Opens the order's case, or leaves the one it has (the unique order key). */
  private readonly openSql: string;
  private readonly lockOfOrder: PreparedStatement<'orderId'>;
  private readonly ofOrder: PreparedStatement<'orderId'>;
  private readonly staffActionsOf: PreparedStatement<'orderId'>;
  private readonly recordingStaffAction: PreparedStatement<'caseId' | 'orderId' | 'action' | 'attempt' | 'userId' | 'userName' | 'now'>;
  private readonly updating: PreparedStatement<'id' | 'policy' | 'attempts' | 'paymentId' | 'now'>;
  private readonly asking: PreparedStatement<'id' | 'deadline' | 'now'>;
  private readonly reminding: PreparedStatement<'id' | 'now'>;
  private readonly recovering: PreparedStatement<'id' | 'means' | 'amount' | 'now'>;
  private readonly losing: PreparedStatement<'id' | 'now'>;
  private readonly openOfMethodStatement: PreparedStatement<'methodKey'>;
  private readonly openOfSubscriptionStatement: PreparedStatement<'subscriptionId'>;
  /** Open cases whose deadline is at or before `until`, soonest first (the status and deadline index). */
  private readonly deadlineBy: PreparedStatement<'until'>;
  /** The same, of those whose customer was asked and not yet reminded. */
  private readonly reminderBy: PreparedStatement<'until'>;
  private readonly recordAttemptSql: string;
  private readonly chargesSince: PreparedStatement<'methodKey' | 'since'>;
  private readonly seeing: PreparedStatement<'id' | 'method' | 'now'>;
  /** Open cases, oldest first (the status and deadline index). */
  private readonly openStatement: PreparedStatement<never>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'paymentId', 'orderId', 'subscriptionId', 'policy', 'attempts', 'now', 'deadline', 'means', 'amount', 'methodKey', 'until', 'since', 'method');

    const cases = sqlNames(dataSource, DunningCase);
    const c = cases.column;
    this.openSql = `INSERT IGNORE INTO ${cases.table} (${c.orderId}, ${c.subscriptionId}, ${c.paymentId}, ${c.provider}, ${c.methodKey}, ${c.currency}, ${c.amountMinor},
      ${c.firstReason}, ${c.policy}, ${c.arm}, ${c.status}, ${c.attempts}, ${c.openedAt}, ${c.updatedAt}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'OPEN', 1, ?, ?)`;
    this.lockOfOrder = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c').where('c.orderId = :orderId').setParameters(s).setLock('pessimistic_write'));
    this.ofOrder = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c').where('c.orderId = :orderId').setParameters(s));
    const staff = slots('caseId', 'orderId', 'action', 'attempt', 'userId', 'userName', 'now');
    this.staffActionsOf = PreparedStatement.from(selectEntity(dataSource, DunningStaffAction, 'a').where('a.orderId = :orderId')
      .orderBy('a.createdAt').addOrderBy('a.id').setParameters(staff));
    this.recordingStaffAction = PreparedStatement.from(query().insert().into(DunningStaffAction).values({
      caseId: staff.caseId, orderId: staff.orderId, action: staff.action, attempt: staff.attempt, userId: staff.userId, userName: staff.userName, createdAt: staff.now,
    } as object));
    this.updating = PreparedStatement.from(query().update(DunningCase)
      .set({ policy: () => ':policy', attempts: () => `GREATEST(${c.attempts}, :attempts)`, paymentId: () => ':paymentId', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.asking = PreparedStatement.from(query().update(DunningCase)
      .set({ customerAskedAt: () => ':now', deadlineAt: () => ':deadline', policy: 'ask_customer', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.reminding = PreparedStatement.from(query().update(DunningCase).set({ customerRemindedAt: () => ':now', updatedAt: () => ':now' })
      .where("id = :id AND status = 'OPEN'").setParameters(s));
    this.recovering = PreparedStatement.from(query().update(DunningCase).set({
      status: 'RECOVERED', recoveredBy: () => ':means', recoveredAmountMinor: () => ':amount', closedAt: () => ':now', updatedAt: () => ':now',
    } as object).where("id = :id AND status = 'OPEN'").setParameters(s));
    this.losing = PreparedStatement.from(query().update(DunningCase).set({ status: 'LOST', closedAt: () => ':now', updatedAt: () => ':now' } as object)
      .where("id = :id AND status = 'OPEN'").setParameters(s));
    this.openOfMethodStatement = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c')
      .where("c.methodKey = :methodKey AND c.status = 'OPEN'").orderBy('c.id').setParameters(s));
    this.openOfSubscriptionStatement = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c')
      .where("c.subscriptionId = :subscriptionId AND c.status = 'OPEN'").orderBy('c.id').setParameters(s));
    this.deadlineBy = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c')
      .where("c.status = 'OPEN' AND c.deadlineAt <= :until").orderBy('c.deadlineAt').setParameters(s));
    this.reminderBy = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c')
      .where("c.status = 'OPEN' AND c.deadlineAt <= :until AND c.customerRemindedAt IS NULL AND c.customerAskedAt IS NOT NULL").orderBy('c.deadlineAt').setParameters(s));

    this.seeing = PreparedStatement.from(query().update(DunningCase).set({ paymentMethodSeen: () => ':method', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.openStatement = PreparedStatement.from(selectEntity(dataSource, DunningCase, 'c').where("c.status = 'OPEN'").orderBy('c.id'));

    const attempts = sqlNames(dataSource, ChargeAttempt);
    const a = attempts.column;
    this.recordAttemptSql = `INSERT IGNORE INTO ${attempts.table} (${a.methodKey}, ${a.orderId}, ${a.paymentId}, ${a.attemptedAt}) VALUES (?, ?, ?, ?)`;
    this.chargesSince = PreparedStatement.from(query().select('a.attemptedAt', 'attemptedAt').from(ChargeAttempt, 'a')
      .where('a.methodKey = :methodKey AND a.attemptedAt > :since').setParameters(s));
  }

  /** The order's case, locked, opened first when it has none (a case already ended stays ended). */
  async open(db: Executor, input: OpenCase): Promise<{ case: DunningCaseRecord; opened: boolean }> {
    const now = gmtDateTimeMs(input.now);
    const [result] = await db.query(this.openSql, [input.orderId, input.subscriptionId, input.paymentId, input.provider, input.methodKey, input.currency, input.amountMinor,
      input.reason.slice(0, 64), input.policy, input.arm ?? 'service', now, now]) as unknown as [{ affectedRows: number }];
    const found = await this.lockCaseOfOrder(db, input.orderId);
    return { case: found!, opened: result.affectedRows > 0 };
  }

  /** The payment method the case saw last (see the entity). */
  async seeMethod(db: Executor, id: number, method: string, now: Date): Promise<void> {
    const { sql, values } = this.seeing.with({ id, method: method.slice(0, 255), now: gmtDateTimeMs(now) });
    await db.query(sql, values);
  }

  /** Open cases, oldest first, at most `limit`. */
  async openCases(limit: number): Promise<DunningCaseRecord[]> {
    const { sql, values } = page(this.openStatement.with({}), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toCase);
  }

  async lockCaseOfOrder(db: Executor, orderId: number): Promise<DunningCaseRecord | null> {
    const { sql, values } = this.lockOfOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toCase(rows[0]) : null;
  }

  /** The order's case, read without a lock (for showing it). */
  async ofOrderUnlocked(orderId: number, db: Executor = this.pool): Promise<DunningCaseRecord | null> {
    const { sql, values } = this.ofOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toCase(rows[0]) : null;
  }

  /** What staff did on the order's case, oldest first. */
  async staffActionsOfOrder(orderId: number, db: Executor = this.pool): Promise<StaffActionRecord[]> {
    const { sql, values } = this.staffActionsOf.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toStaffAction);
  }

  /** A staff member's action on a case, in the transaction that takes it. */
  async recordStaffAction(db: Executor, action: { caseId: number; orderId: number; action: DunningStaffActionKind; attempt: number | null; userId: number; userName: string; at: Date }): Promise<void> {
    const { sql, values } = this.recordingStaffAction.with({
      caseId: action.caseId, orderId: action.orderId, action: action.action, attempt: action.attempt, userId: action.userId,
      userName: action.userName.slice(0, 250), now: gmtDateTimeMs(action.at),
    });
    await write(db, sql, values);
  }

  /** The latest decision on the case, its charges so far and its latest failed payment. */
  async update(db: Executor, id: number, fields: { policy: DunningPolicy; attempts: number; paymentId: number }, now: Date): Promise<void> {
    const { sql, values } = this.updating.with({ ...fields, id, now: gmtDateTimeMs(now) });
    await write(db, sql, values);
  }

  async markAsked(db: Executor, id: number, deadline: Date, now: Date): Promise<void> {
    const { sql, values } = this.asking.with({ id, deadline: gmtDateTimeMs(deadline), now: gmtDateTimeMs(now) });
    await write(db, sql, values);
  }

  async markReminded(db: Executor, id: number, now: Date): Promise<void> {
    const { sql, values } = this.reminding.with({ id, now: gmtDateTimeMs(now) });
    await write(db, sql, values);
  }

  async recover(db: Executor, id: number, means: RecoveryMeans, amountMinor: number | null, now: Date): Promise<void> {
    const { sql, values } = this.recovering.with({ id, means, amount: amountMinor, now: gmtDateTimeMs(now) });
    await write(db, sql, values);
  }

  async lose(db: Executor, id: number, now: Date): Promise<void> {
    const { sql, values } = this.losing.with({ id, now: gmtDateTimeMs(now) });
    await write(db, sql, values);
  }

  /** Open cases charged on `methodKey` (a customer's cards, a subscription's wallet), oldest first. */
  async openOfMethod(db: Executor, methodKey: string): Promise<DunningCaseRecord[]> {
    const { sql, values } = this.openOfMethodStatement.with({ methodKey });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toCase);
  }

  async openOfSubscription(db: Executor, subscriptionId: number): Promise<DunningCaseRecord[]> {
    const { sql, values } = this.openOfSubscriptionStatement.with({ subscriptionId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toCase);
  }

  /** Open cases whose deadline is at or before `until`. */
  async deadlineWithin(until: Date, limit: number): Promise<DunningCaseRecord[]> {
    const { sql, values } = page(this.deadlineBy.with({ until: gmtDateTimeMs(until) }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toCase);
  }

  /** Open cases whose deadline is at or before `until` and whose customer is still to be reminded. */
  async reminderWithin(until: Date, limit: number): Promise<DunningCaseRecord[]> {
    const { sql, values } = page(this.reminderBy.with({ until: gmtDateTimeMs(until) }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toCase);
  }

  /** A charge made on `methodKey`; a payment is counted once, however often it is seen. */
  async recordCharge(db: Executor, charge: { methodKey: string; orderId: number | null; paymentId: number | null; at: Date }): Promise<void> {
    await write(db, this.recordAttemptSql, [charge.methodKey, charge.orderId, charge.paymentId, gmtDateTimeMs(charge.at)]);
  }

  /** When the charges on `methodKey` in the last 30 days were made: what the caps count. */
  async chargesOfMethodSince(db: Executor, methodKey: string, since: Date): Promise<Date[]> {
    const { sql, values } = this.chargesSince.with({ methodKey, since: gmtDateTimeMs(since) });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => parseGmtDateTime(row.attemptedAt)).filter((at): at is Date => at !== null);
  }
}
