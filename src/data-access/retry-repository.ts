import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { PaymentRetry, type PaymentRetryStatus, type RetryPlan } from '../../entities';
import { rawPool } from './data-source';
import { byFilters, page, PreparedStatement, selectEntity, slots } from './prepared-statement';
import { write, type Executor } from './transaction';
import { gmtDateTime, parseGmtDateTime } from '../shop/shop-time';

export interface RetryRecord {
  id: number;
  orderId: number;
  subscriptionId: number;
  paymentId: number;
  attempt: number;
  plan: RetryPlan;
  status: PaymentRetryStatus;
  scheduledAt: string;
  idempotencyKey: string;
  result: string | null;
  /** When it was planned, and when it last changed (made, postponed, cancelled): UTC. */
  createdAt: string;
  updatedAt: string;
}

const toRetry = (row: RowDataPacket): RetryRecord => ({
  id: Number(row.id),
  orderId: Number(row.orderId),
  subscriptionId: Number(row.subscriptionId),
  paymentId: Number(row.paymentId),
  attempt: Number(row.attempt),
  plan: row.plan ?? 'soft',
  status: row.status,
  scheduledAt: row.scheduledAt,
  idempotencyKey: row.idempotencyKey,
  result: row.result,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export type ScheduleOutcome =
  /** `planAttempt` counts the attempts of its plan; `plannedFor` is when the plan alone would have put it. */
  | { kind: 'scheduled'; retry: RetryRecord; planAttempt: number; plannedFor: Date; at: Date;
    /** Set when the attempt is the `instead` one (e.g. the payday attempt); `planUsedUp`: the plan itself had none left. */
    instead?: { planUsedUp: boolean } }
  | { kind: 'already_scheduled' }
  | { kind: 'plan_used_up' };

/** The dunning plan's attempts, one row per attempt per renewal order. */
export class RetryRepository {
  readonly pool: Pool;
  private readonly attemptsOfOrder: PreparedStatement<'orderId'>;
  /** Skips an attempt already planned (the unique key on order and attempt). */
  private readonly plan: PreparedStatement<'orderId' | 'subscriptionId' | 'paymentId' | 'attempt' | 'plan' | 'scheduledAt' | 'key' | 'now'>;
  /** A staff member's attempt, taken at once by the request that asked for it (the same unique key). */
  private readonly planTaken: PreparedStatement<'orderId' | 'subscriptionId' | 'paymentId' | 'attempt' | 'scheduledAt' | 'key' | 'now'>;
  /** Due attempts, soonest first; the caller adds the limit. */
  private readonly due: PreparedStatement<'now'>;
  private readonly take: PreparedStatement<'id' | 'now'>;
  private readonly finishing: PreparedStatement<'id' | 'status' | 'result' | 'now'>;
  private readonly cancellingOfOrder: PreparedStatement<'orderId' | 'result' | 'now'>;
  private readonly postponing: PreparedStatement<'id' | 'until' | 'result' | 'now'>;
  private readonly releasing: PreparedStatement<'before'>;
  private readonly countsOfStatus: PreparedStatement<never>;
  private readonly withKey: PreparedStatement<'orderId' | 'key'>;
  private readonly byId: PreparedStatement<'id'>;
  /** In the order they are planned, filtered by status, order, both or neither. */
  private readonly listing: (filter: { status?: PaymentRetryStatus; orderId?: number }) => PreparedStatement<'status' | 'orderId'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'orderId', 'subscriptionId', 'paymentId', 'attempt', 'plan', 'status', 'scheduledAt', 'key', 'result', 'now', 'until', 'before');

    this.attemptsOfOrder = PreparedStatement.from(query().select('r.attempt', 'attempt').addSelect('r.status', 'status').addSelect('r.plan', 'plan')
      .addSelect('r.scheduledAt', 'scheduledAt').from(PaymentRetry, 'r').where('r.orderId = :orderId').setParameters(s).setLock('pessimistic_write'));
    this.plan = PreparedStatement.from(query().insert().orIgnore().into(PaymentRetry).values({
      orderId: s.orderId, subscriptionId: s.subscriptionId, paymentId: s.paymentId, attempt: s.attempt, plan: s.plan, status: 'PENDING',
      scheduledAt: s.scheduledAt, idempotencyKey: s.key, createdAt: s.now, updatedAt: s.now,
    } as object));
    this.planTaken = PreparedStatement.from(query().insert().orIgnore().into(PaymentRetry).values({
      orderId: s.orderId, subscriptionId: s.subscriptionId, paymentId: s.paymentId, attempt: s.attempt, plan: 'staff', status: 'PROCESSING',
      scheduledAt: s.scheduledAt, idempotencyKey: s.key, createdAt: s.now, updatedAt: s.now,
    } as object));
    this.due = PreparedStatement.from(selectEntity(dataSource, PaymentRetry, 'r').where("r.status = 'PENDING' AND r.scheduledAt <= :now")
      .orderBy('r.scheduledAt').setParameters(s));
    this.take = PreparedStatement.from(query().update(PaymentRetry).set({ status: 'PROCESSING', updatedAt: () => ':now' })
      .where("id = :id AND status = 'PENDING'").setParameters(s));
    this.finishing = PreparedStatement.from(query().update(PaymentRetry).set({ status: () => ':status', result: () => ':result', updatedAt: () => ':now' })
      .where('id = :id').setParameters(s));
    this.cancellingOfOrder = PreparedStatement.from(query().update(PaymentRetry).set({ status: 'CANCELED', result: () => ':result', updatedAt: () => ':now' })
      .where("orderId = :orderId AND status = 'PENDING'").setParameters(s));
    this.postponing = PreparedStatement.from(query().update(PaymentRetry)
      .set({ status: 'PENDING', scheduledAt: () => ':until', result: () => ':result', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.releasing = PreparedStatement.from(query().update(PaymentRetry).set({ status: 'PENDING' })
      .where("status = 'PROCESSING' AND updatedAt < :before").setParameters(s));
    this.countsOfStatus = PreparedStatement.from(query().select('r.status', 'status').addSelect('COUNT(*)', 'n').from(PaymentRetry, 'r').groupBy('r.status'));
    this.withKey = PreparedStatement.from(query().select('1').from(PaymentRetry, 'r').where('r.orderId = :orderId AND r.idempotencyKey = :key').limit(1)
      .setParameters(s));
    this.byId = PreparedStatement.from(selectEntity(dataSource, PaymentRetry, 'r').where('r.id = :id').setParameters(s));
    this.listing = byFilters({ status: 'r.status = :status', orderId: 'r.orderId = :orderId' }, (where) => {
      const retries = selectEntity(dataSource, PaymentRetry, 'r');
      for (const condition of where) retries.andWhere(condition);
      return PreparedStatement.from<'status' | 'orderId'>(retries.orderBy('r.scheduledAt').addOrderBy('r.id').setParameters(s));
    });
  }

  /**
   * Plans the order's next attempt of `plan` after `planSeconds[n]`, n being the attempts of that plan so far,
   * and no sooner than `notBefore` allows (the card schemes' caps). Attempts are numbered across plans; the
   * unique (order, attempt) key keeps two deliveries of one failure from planning two attempts.
   */
  async scheduleNext(db: Executor, input: {
    orderId: number; subscriptionId: number; paymentId: number; plan: RetryPlan; planSeconds: number[]; now: Date;
    notBefore?: (at: Date) => Promise<Date>;
    /**
     * An attempt of another plan at a set moment (the payday attempt: src/dunning/dunning.ts), planned instead of the
     * plan's next when, within the caps, it comes sooner than that, or when the plan is used up; never after `until`,
     * and only once: not when an attempt of its plan was already planned for `since` or later (one payday attempt
     * per payday, however often the renewal fails before it).
     */
    instead?: { plan: RetryPlan; at: Date; until: Date; since: Date };
  }): Promise<ScheduleOutcome> {
    const attempts = this.attemptsOfOrder.with({ orderId: input.orderId });
    const [rows] = await db.query<RowDataPacket[]>(attempts.sql, attempts.values);
    if (rows.some((row) => row.status === 'PENDING' || row.status === 'PROCESSING')) return { kind: 'already_scheduled' };
    const ofPlan = rows.filter((row) => (row.plan ?? 'soft') === input.plan).length;
    const planUsedUp = ofPlan >= input.planSeconds.length;
    const attempt = rows.length + 1;
    const plannedFor = planUsedUp ? null : new Date(input.now.getTime() + input.planSeconds[ofPlan] * 1000);
    const insteadMadeAlready = (instead: { plan: RetryPlan; since: Date }) => rows.some((row) => (row.plan ?? 'soft') === instead.plan
      && (parseGmtDateTime(String(row.scheduledAt))?.getTime() ?? 0) >= instead.since.getTime());
    if (input.instead && (plannedFor === null || input.instead.at.getTime() < plannedFor.getTime()) && !insteadMadeAlready(input.instead)) {
      const { plan, at: wanted, until } = input.instead;
      const at = input.notBefore ? await input.notBefore(wanted) : wanted;
      if (at.getTime() <= until.getTime() && (plannedFor === null || at.getTime() < plannedFor.getTime())) {
        const ofInstead = rows.filter((row) => (row.plan ?? 'soft') === plan).length;
        const retry = await this.insertPlanned(db, { ...input, plan }, attempt, at);
        if (!retry) return { kind: 'already_scheduled' };
        return { kind: 'scheduled', retry, planAttempt: ofInstead + 1, plannedFor: wanted, at, instead: { planUsedUp } };
      }
    }
    if (plannedFor === null) return { kind: 'plan_used_up' };
    const at = input.notBefore ? await input.notBefore(plannedFor) : plannedFor;
    const retry = await this.insertPlanned(db, input, attempt, at);
    if (!retry) return { kind: 'already_scheduled' };
    return { kind: 'scheduled', retry, planAttempt: ofPlan + 1, plannedFor, at };
  }

  /**
   * Plans one attempt of `plan` at `at` (within the caps, `notBefore`), whatever the plan's attempts so far: the one
   * charge after something changed that a decline waited for (src/dunning/dunning.ts, chargeAgainAfterChange). Null
   * when an attempt of the order is planned or being made already.
   */
  async scheduleOne(db: Executor, input: {
    orderId: number; subscriptionId: number; paymentId: number; plan: RetryPlan; at: Date; now: Date; notBefore?: (at: Date) => Promise<Date>;
  }): Promise<RetryRecord | null> {
    const attempts = this.attemptsOfOrder.with({ orderId: input.orderId });
    const [rows] = await db.query<RowDataPacket[]>(attempts.sql, attempts.values);
    if (rows.some((row) => row.status === 'PENDING' || row.status === 'PROCESSING')) return null;
    const at = input.notBefore ? await input.notBefore(input.at) : input.at;
    return this.insertPlanned(db, input, rows.length + 1, at);
  }

  /** Plans attempt number `attempt` of the order for `at`; null when it is planned already (the unique key). */
  private async insertPlanned(
    db: Executor, input: { orderId: number; subscriptionId: number; paymentId: number; plan: RetryPlan; now: Date }, attempt: number, at: Date,
  ): Promise<RetryRecord | null> {
    const { sql, values } = this.plan.with({
      orderId: input.orderId, subscriptionId: input.subscriptionId, paymentId: input.paymentId, attempt, plan: input.plan,
      scheduledAt: gmtDateTime(at), key: `retry-${input.orderId}-${attempt}`, now: gmtDateTime(input.now),
    });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.affectedRows ? this.find(result.insertId, db) : null;
  }

  /**
   * One attempt staff asked for now (plan `staff`), already taken (PROCESSING) by the caller, which makes it at
   * once: numbered after the order's attempts so far, whatever is still planned, which stays planned. Null when
   * an attempt of the order is being made already. Run under the order's case lock.
   */
  async takeStaffAttempt(db: Executor, input: { orderId: number; subscriptionId: number; paymentId: number; now: Date }): Promise<RetryRecord | null> {
    const attempts = this.attemptsOfOrder.with({ orderId: input.orderId });
    const [rows] = await db.query<RowDataPacket[]>(attempts.sql, attempts.values);
    if (rows.some((row) => row.status === 'PROCESSING')) return null;
    const attempt = rows.reduce((max, row) => Math.max(max, Number(row.attempt)), 0) + 1;
    const { sql, values } = this.planTaken.with({
      orderId: input.orderId, subscriptionId: input.subscriptionId, paymentId: input.paymentId, attempt,
      scheduledAt: gmtDateTime(input.now), key: `retry-${input.orderId}-${attempt}`, now: gmtDateTime(input.now),
    });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.affectedRows ? this.find(result.insertId, db) : null;
  }

  /** Takes the due attempts (PENDING → PROCESSING), each by one worker only. */
  async claimDue(now: Date, limit: number): Promise<RetryRecord[]> {
    const due = page(this.due.with({ now: gmtDateTime(now) }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(due.sql, due.values);
    const claimed: RetryRecord[] = [];
    for (const row of rows) {
      const { sql, values } = this.take.with({ id: row.id, now: gmtDateTime(now) });
      const [result] = await this.pool.query<ResultSetHeader>(sql, values);
      // The row read above is the claimed attempt: what identifies it (order, payment, attempt, key) never changes.
      if (result.affectedRows) claimed.push({ ...toRetry(row), status: 'PROCESSING' });
    }
    return claimed;
  }

  async finish(db: Executor, id: number, status: Exclude<PaymentRetryStatus, 'PENDING' | 'PROCESSING'>, result: string, now: Date): Promise<void> {
    const { sql, values } = this.finishing.with({ id, status, result: result.slice(0, 255), now: gmtDateTime(now) });
    await write(db, sql, values);
  }

  /** The order's attempts still waiting are dropped (its payment came in); one being made is left to finish. */
  async cancelPendingOfOrder(db: Executor, orderId: number, result: string, now: Date): Promise<void> {
    const { sql, values } = this.cancellingOfOrder.with({ orderId, result: result.slice(0, 255), now: gmtDateTime(now) });
    await write(db, sql, values);
  }

  /** The provider could not be reached: the same attempt (same idempotency key) runs again later. */
  async postpone(id: number, until: Date, result: string, now: Date): Promise<void> {
    const { sql, values } = this.postponing.with({ id, until: gmtDateTime(until), result: result.slice(0, 255), now: gmtDateTime(now) });
    await this.pool.query(sql, values);
  }

  /** Attempts that were taken but whose worker died before finishing go back to PENDING. */
  async releaseStale(olderThanSeconds: number, now: Date): Promise<number> {
    const { sql, values } = this.releasing.with({ before: gmtDateTime(new Date(now.getTime() - olderThanSeconds * 1000)) });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows;
  }

  /** How many dunning attempts are in each status, for the metrics; covered by the index on status and schedule. */
  async countsByStatus(): Promise<{ status: string; count: number }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.countsOfStatus.sql);
    return rows.map((row) => ({ status: String(row.status), count: Number(row.n) }));
  }

  /** Whether a dunning attempt of `orderId` has `key` as its idempotency key. */
  async hasKey(orderId: number, key: string): Promise<boolean> {
    const { sql, values } = this.withKey.with({ orderId, key });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length > 0;
  }

  async find(id: number, db: Executor = this.pool): Promise<RetryRecord | null> {
    const { sql, values } = this.byId.with({ id });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toRetry(rows[0]) : null;
  }

  async list(filter: { status?: PaymentRetryStatus; orderId?: number } = {}, db: Executor = this.pool): Promise<RetryRecord[]> {
    const { sql, values } = this.listing(filter).with({ status: filter.status, orderId: filter.orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toRetry);
  }
}
