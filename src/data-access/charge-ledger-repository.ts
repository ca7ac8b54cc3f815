import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Charge, RenewalChargeSlot, type ChargeRequester, type ChargeState, type Provider } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, page, selectEntity, slots } from './prepared-statement';
import type { Executor } from './transaction';
import { gmtDateTimeMs } from '../shop/shop-time';

export interface ChargeRecord {
  id: number;
  orderId: number;
  subscriptionId: number;
  provider: Provider;
  externalId: string;
  idempotencyKey: string;
  amountMinor: number;
  currency: string;
  paymentMethod: string;
  customerHandle: string | null;
  due: string | null;
  /** The wallet charge's `retryDays`, sent with each repeat of its request; null: a card charge, or a wallet charge sent as one attempt. */
  retryDays: number | null;
  description: string;
  requestedBy: ChargeRequester;
  retryId: number | null;
  state: ChargeState;
  paymentId: number | null;
  sends: number;
  unanswered: number;
  lastSentAt: string | null;
  /** See the entity: until when (the database's clock) its last request may still reach the provider. */
  inFlightUntil: string | null;
  cancelWantedAt: string | null;
  cancelReason: string | null;
  result: string | null;
  createdAt: string;
  closedAt: string | null;
}

/** What a new charge is: everything its request sends, fixed before it is first sent. */
export type NewCharge = Pick<ChargeRecord,
  'orderId' | 'subscriptionId' | 'provider' | 'externalId' | 'idempotencyKey' | 'amountMinor' | 'currency' | 'paymentMethod' | 'customerHandle'
  | 'due' | 'description' | 'requestedBy' | 'retryId'> & Partial<Pick<ChargeRecord, 'retryDays'>>;

/** Who holds a renewal's slot when a charge would open: nobody (it opened), an open charge, or the one that took the money. */
export type OpenOutcome =
  | { kind: 'opened'; charge: ChargeRecord }
  | { kind: 'open'; charge: ChargeRecord }
  | { kind: 'taken'; charge: ChargeRecord | null };

const OPEN_STATES: ChargeState[] = ['OPEN', 'CANCELING'];

/**
 * How long, by the database's clock, a request may still reach the provider after it was counted sent: its time to
 * leave this process (SEND_WINDOW_MS, after which request-limits.ts never sends it) plus the call's own bound and a
 * margin. The providers' calls end within seconds of leaving.
 */
export const SEND_WINDOW_MS = 45_000;
const IN_FLIGHT_BOUND_SECONDS = 90;
/** A request that can no longer reach the provider: its call ended, or its bound passed by the database's clock. */
const LANDED = '(inFlightUntil IS NULL OR inFlightUntil < UTC_TIMESTAMP(3))';

const toCharge = (row: RowDataPacket): ChargeRecord => ({
  id: Number(row.id),
  orderId: Number(row.orderId),
  subscriptionId: Number(row.subscriptionId),
  provider: row.provider,
  externalId: row.externalId,
  idempotencyKey: row.idempotencyKey,
  amountMinor: Number(row.amountMinor),
  currency: row.currency,
  paymentMethod: row.paymentMethod,
  customerHandle: row.customerHandle ?? null,
  due: row.due ?? null,
  retryDays: row.retryDays === null || row.retryDays === undefined ? null : Number(row.retryDays),
  description: row.description,
  requestedBy: row.requestedBy,
  retryId: row.retryId === null ? null : Number(row.retryId),
  state: row.state,
  paymentId: row.paymentId === null ? null : Number(row.paymentId),
  sends: Number(row.sends),
  unanswered: Number(row.unanswered),
  lastSentAt: row.lastSentAt ?? null,
  inFlightUntil: row.inFlightUntil ?? null,
  cancelWantedAt: row.cancelWantedAt ?? null,
  cancelReason: row.cancelReason ?? null,
  result: row.result ?? null,
  createdAt: row.createdAt,
  closedAt: row.closedAt ?? null,
});

/**
 * The charge ledger's rows and each renewal's slot. Opening claims the slot with one conditional UPDATE (both of
 * its charges empty), never a read followed by a write; closing frees it in the same transaction as the charge's
 * final state.
 */
export class ChargeLedgerRepository {
  readonly pool: Pool;
  private readonly slotRow: PreparedStatement<'orderId' | 'now'>;
  private readonly insert: PreparedStatement<keyof NewCharge | 'now'>;
  private readonly claim: PreparedStatement<'orderId' | 'chargeId' | 'now'>;
  private readonly slotOf: PreparedStatement<'orderId'>;
  private readonly byId: PreparedStatement<'id'>;
  private readonly openByExternal: PreparedStatement<'provider' | 'externalId'>;
  private readonly closing: PreparedStatement<'id' | 'state' | 'result' | 'now'>;
  private readonly freeing: PreparedStatement<'orderId' | 'chargeId' | 'now'>;
  private readonly freeingTaken: PreparedStatement<'orderId' | 'chargeId' | 'now'>;
  private readonly sent: PreparedStatement<'id' | 'now'>;
  private readonly ended: PreparedStatement<'id'>;
  private readonly closingNeverMade: PreparedStatement<'id' | 'result' | 'now'>;
  private readonly byIdLocked: PreparedStatement<'id'>;
  private readonly takenFor: PreparedStatement<'id' | 'reason' | 'now'>;
  private readonly unansweredStatement: PreparedStatement<'id' | 'result' | 'now'>;
  private readonly attaching: PreparedStatement<'id' | 'paymentId' | 'now'>;
  private readonly wanting: PreparedStatement<'id' | 'reason' | 'now'>;
  private readonly canceling: PreparedStatement<'id' | 'result' | 'now'>;
  private readonly takingOver: PreparedStatement<'id' | 'before' | 'now'>;
  private readonly noting: PreparedStatement<'id' | 'result' | 'now'>;
  private readonly open: PreparedStatement<never>;
  private readonly ofOrder: PreparedStatement<'orderId'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('id', 'orderId', 'subscriptionId', 'provider', 'externalId', 'idempotencyKey', 'amountMinor', 'currency', 'paymentMethod', 'customerHandle',
      'due', 'retryDays', 'description', 'requestedBy', 'retryId', 'chargeId', 'paymentId', 'state', 'result', 'reason', 'now', 'before');

    this.slotRow = PreparedStatement.from(query().insert().orIgnore().into(RenewalChargeSlot).values({ orderId: s.orderId, updatedAt: s.now } as object));
    this.insert = PreparedStatement.from(query().insert().into(Charge).values({
      orderId: s.orderId, subscriptionId: s.subscriptionId, provider: s.provider, externalId: s.externalId, idempotencyKey: s.idempotencyKey,
      amountMinor: s.amountMinor, currency: s.currency, paymentMethod: s.paymentMethod, customerHandle: s.customerHandle, due: s.due, retryDays: s.retryDays,
      description: s.description, requestedBy: s.requestedBy, retryId: s.retryId, state: 'OPEN', sends: 0, unanswered: 0, createdAt: s.now, updatedAt: s.now,
    } as object));
    this.claim = PreparedStatement.from(query().update(RenewalChargeSlot).set({ openChargeId: () => ':chargeId', updatedAt: () => ':now' })
      .where('orderId = :orderId AND openChargeId IS NULL AND takenChargeId IS NULL').setParameters(s));
    this.slotOf = PreparedStatement.from(query().select('s.openChargeId', 'openChargeId').addSelect('s.takenChargeId', 'takenChargeId')
      .from(RenewalChargeSlot, 's').where('s.orderId = :orderId').setParameters(s).setLock('pessimistic_write'));
    this.byId = PreparedStatement.from(selectEntity(dataSource, Charge, 'c').where('c.id = :id').setParameters(s));
    this.openByExternal = PreparedStatement.from(selectEntity(dataSource, Charge, 'c')
      .where("c.provider = :provider AND c.externalId = :externalId AND c.state IN ('OPEN', 'CANCELING')").setParameters(s));
    this.closing = PreparedStatement.from(query().update(Charge).set({ state: () => ':state', result: () => ':result', closedAt: () => ':now', updatedAt: () => ':now' })
      .where("id = :id AND state IN ('OPEN', 'CANCELING')").setParameters(s));
    this.freeing = PreparedStatement.from(query().update(RenewalChargeSlot).set({ openChargeId: null, updatedAt: () => ':now' })
      .where('orderId = :orderId AND openChargeId = :chargeId').setParameters(s));
    this.freeingTaken = PreparedStatement.from(query().update(RenewalChargeSlot)
      .set({ openChargeId: () => 'IF(openChargeId = :chargeId, NULL, openChargeId)', takenChargeId: () => 'COALESCE(takenChargeId, :chargeId)', updatedAt: () => ':now' })
      .where('orderId = :orderId').setParameters(s));
    this.sent = PreparedStatement.from(query().update(Charge).set({
      sends: () => 'sends + 1', lastSentAt: () => ':now', updatedAt: () => ':now', inFlightUntil: () => `DATE_ADD(UTC_TIMESTAMP(3), INTERVAL ${IN_FLIGHT_BOUND_SECONDS} SECOND)`,
    }).where("id = :id AND state = 'OPEN' AND cancelWantedAt IS NULL").setParameters(s));
    this.ended = PreparedStatement.from(query().update(Charge).set({ inFlightUntil: null }).where('id = :id').setParameters(s));
    this.closingNeverMade = PreparedStatement.from(query().update(Charge).set({ state: 'CANCELED', result: () => ':result', closedAt: () => ':now', updatedAt: () => ':now' })
      .where(`id = :id AND state IN ('OPEN', 'CANCELING') AND ${LANDED}`).setParameters(s));
    this.takenFor = PreparedStatement.from(query().update(Charge).set({ cancelWantedAt: () => 'COALESCE(cancelWantedAt, :now)', cancelReason: () => ':reason', updatedAt: () => ':now' })
      .where('id = :id').setParameters(s));
    this.byIdLocked = PreparedStatement.from(selectEntity(dataSource, Charge, 'c').where('c.id = :id').setParameters(s).setLock('pessimistic_write'));
    this.unansweredStatement = PreparedStatement.from(query().update(Charge).set({ unanswered: () => 'unanswered + 1', result: () => ':result', updatedAt: () => ':now' })
      .where('id = :id').setParameters(s));
    this.attaching = PreparedStatement.from(query().update(Charge).set({ paymentId: () => ':paymentId', updatedAt: () => ':now' })
      .where('id = :id').setParameters(s));
    // Only the first withdrawal marks it: whoever comes second (the pass, a notice, Stop dunning, a payment) finds it marked.
    this.wanting = PreparedStatement.from(query().update(Charge).set({ cancelWantedAt: () => ':now', cancelReason: () => ':reason', updatedAt: () => ':now' })
      .where("id = :id AND state IN ('OPEN', 'CANCELING') AND cancelWantedAt IS NULL").setParameters(s));
    // A withdrawn charge nobody has touched since `before`: its canceller is taken to have stopped, and one caller,
    // the one whose update matches, takes its cancel over (the touch is the claim; a second finds it touched now).
    this.takingOver = PreparedStatement.from(query().update(Charge).set({ updatedAt: () => ':now' })
      .where("id = :id AND state = 'OPEN' AND cancelWantedAt IS NOT NULL AND updatedAt <= :before").setParameters(s));
    this.canceling = PreparedStatement.from(query().update(Charge).set({ state: 'CANCELING', result: () => ':result', updatedAt: () => ':now' })
      .where("id = :id AND state = 'OPEN'").setParameters(s));
    this.noting = PreparedStatement.from(query().update(Charge).set({ result: () => ':result', updatedAt: () => ':now' }).where('id = :id').setParameters(s));
    this.open = PreparedStatement.from(selectEntity(dataSource, Charge, 'c').where("c.state IN ('OPEN', 'CANCELING')").orderBy('c.id'));
    this.ofOrder = PreparedStatement.from(selectEntity(dataSource, Charge, 'c').where('c.orderId = :orderId').orderBy('c.id').setParameters(s));
  }

  /**
   * Opens `charge` for its renewal when the renewal's slot is free, in `db`'s transaction: the slot's row is made
   * if it is new, the charge written, and the slot claimed by one conditional update. When the slot is held, nothing
   * is written (the caller rolls back) and the holder is told: an open charge, or the charge that took the money.
   */
  async openCharge(db: Executor, charge: NewCharge, now: Date): Promise<OpenOutcome> {
    const at = gmtDateTimeMs(now);
    const row = this.slotRow.with({ orderId: charge.orderId, now: at });
    await db.query(row.sql, row.values);
    const slot = this.slotOf.with({ orderId: charge.orderId });
    // Locks the slot for the rest of the transaction: what it holds now is what the claim below finds.
    const [held] = await db.query<RowDataPacket[]>(slot.sql, slot.values);
    const openId = held[0]?.openChargeId === null || held[0]?.openChargeId === undefined ? null : Number(held[0].openChargeId);
    const takenId = held[0]?.takenChargeId === null || held[0]?.takenChargeId === undefined ? null : Number(held[0].takenChargeId);
    if (takenId !== null) return { kind: 'taken', charge: await this.find(takenId, db) };
    if (openId !== null) {
      const open = await this.find(openId, db);
      if (open) return { kind: 'open', charge: open };
    }
    const insert = this.insert.with({ ...charge, retryDays: charge.retryDays ?? null, now: at });
    const [inserted] = await db.query<ResultSetHeader>(insert.sql, insert.values);
    const claim = this.claim.with({ orderId: charge.orderId, chargeId: inserted.insertId, now: at });
    const [claimed] = await db.query<ResultSetHeader>(claim.sql, claim.values);
    if (!claimed.affectedRows) throw new Error(`renewal ${charge.orderId}: its charge slot changed under its lock`);
    return { kind: 'opened', charge: (await this.find(inserted.insertId, db))! };
  }

  /** Closes an open charge on the provider's word and frees its renewal's slot; false when it was closed already. */
  async close(db: Executor, charge: Pick<ChargeRecord, 'id' | 'orderId'>, state: Exclude<ChargeState, 'OPEN' | 'CANCELING'>, result: string, now: Date): Promise<boolean> {
    const at = gmtDateTimeMs(now);
    const closing = this.closing.with({ id: charge.id, state, result: result.slice(0, 255), now: at });
    const [closed] = await db.query<ResultSetHeader>(closing.sql, closing.values);
    return this.closed(db, charge, state, closed, at);
  }

  /**
   * Closes an open charge the provider does not know, CANCELED as never made, only if its last request can no longer
   * reach the provider (its call ended, or its in-flight bound passed by the database's clock); false otherwise.
   */
  async closeNeverMade(db: Executor, charge: Pick<ChargeRecord, 'id' | 'orderId'>, result: string, now: Date): Promise<boolean> {
    const at = gmtDateTimeMs(now);
    const closing = this.closingNeverMade.with({ id: charge.id, result: result.slice(0, 255), now: at });
    const [closed] = await db.query<ResultSetHeader>(closing.sql, closing.values);
    return this.closed(db, charge, 'CANCELED', closed, at);
  }

  private async closed(db: Executor, charge: Pick<ChargeRecord, 'id' | 'orderId'>, state: ChargeState, closed: ResultSetHeader, at: string): Promise<boolean> {
    if (!closed.affectedRows) return false;
    const free = (state === 'TAKEN' ? this.freeingTaken : this.freeing).with({ orderId: charge.orderId, chargeId: charge.id, now: at });
    await db.query(free.sql, free.values);
    return true;
  }

  /**
   * Counts one more request of the charge, just before it is sent: false (and nothing counted) when the charge is no
   * longer open or no longer wanted, so that a request is never sent after its cancel was asked for. One conditional
   * update: a withdrawal and a send of the same charge are ordered by its row, whoever comes second finds the first.
   */
  async markSent(id: number, now: Date, db: Executor = this.pool): Promise<boolean> {
    const { sql, values } = this.sent.with({ id, now: gmtDateTimeMs(now) });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.affectedRows > 0;
  }

  /** The charge's call ended (answered or not): its request can no longer reach the provider later. */
  async sendEnded(id: number): Promise<void> {
    const { sql, values } = this.ended.with({ id });
    await this.pool.query(sql, values);
  }

  /**
   * The renewal's open charge, read under the lock of its slot and its own row: the latest committed, whatever this
   * transaction read before (a plain read under REPEATABLE READ sees its first snapshot, older than a charge opened since).
   */
  async lockOpenOfOrder(db: Executor, orderId: number): Promise<ChargeRecord | null> {
    const slot = this.slotOf.with({ orderId });
    const [held] = await db.query<RowDataPacket[]>(slot.sql, slot.values);
    const openId = held[0]?.openChargeId;
    if (openId === null || openId === undefined) return null;
    const { sql, values } = this.byIdLocked.with({ id: Number(openId) });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length && OPEN_STATES.includes(rows[0].state) ? toCharge(rows[0]) : null;
  }

  /** The provider did not answer a request of the charge's: it may have acted, so the charge stays open. */
  async markUnanswered(id: number, why: string, now: Date): Promise<void> {
    const { sql, values } = this.unansweredStatement.with({ id, result: why.slice(0, 255), now: gmtDateTimeMs(now) });
    await this.pool.query(sql, values);
  }

  async note(id: number, result: string, now: Date, db: Executor = this.pool): Promise<void> {
    const { sql, values } = this.noting.with({ id, result: result.slice(0, 255), now: gmtDateTimeMs(now) });
    await db.query(sql, values);
  }

  async attachPayment(db: Executor, id: number, paymentId: number, now: Date): Promise<void> {
    const { sql, values } = this.attaching.with({ id, paymentId, now: gmtDateTimeMs(now) });
    await db.query(sql, values);
  }

  /** Marks the open charge no longer wanted, with why; true for the one call that marked it, false when it was already. */
  async wantCancelled(db: Executor, id: number, reason: string, now: Date): Promise<boolean> {
    const { sql, values } = this.wanting.with({ id, reason: reason.slice(0, 64), now: gmtDateTimeMs(now) });
    const [result] = await db.query<ResultSetHeader>(sql, values);
    return result.affectedRows > 0;
  }

  /**
   * Money was taken on the charge while its renewal wanted none (`reason`, renewal-wants-money.ts): said on the charge
   * as the reason it was not wanted, whatever was said before, so that the second-capture sweep flags it for a refund.
   */
  async markTakenFor(db: Executor, id: number, reason: string, now: Date): Promise<void> {
    const { sql, values } = this.takenFor.with({ id, reason: reason.slice(0, 64), now: gmtDateTimeMs(now) });
    await db.query(sql, values);
  }

  /**
   * Takes over the cancel of a withdrawn, still open charge that nobody has touched since `before` (its withdrawer
   * stopped before the provider confirmed): true for the one caller whose claim matched, false for any other.
   */
  async takeOverCancel(id: number, before: Date, now: Date): Promise<boolean> {
    const { sql, values } = this.takingOver.with({ id, before: gmtDateTimeMs(before), now: gmtDateTimeMs(now) });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows > 0;
  }

  /** The provider accepted a cancel it has not enacted yet (the wallet's 202): open until it is read back final. */
  async markCanceling(id: number, result: string, now: Date): Promise<void> {
    const { sql, values } = this.canceling.with({ id, result: result.slice(0, 255), now: gmtDateTimeMs(now) });
    await this.pool.query(sql, values);
  }

  async find(id: number, db: Executor = this.pool): Promise<ChargeRecord | null> {
    const { sql, values } = this.byId.with({ id });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toCharge(rows[0]) : null;
  }

  /** The open charge of the ledger with this provider's ID, if any. */
  async openOf(db: Executor, provider: Provider, externalId: string): Promise<ChargeRecord | null> {
    const { sql, values } = this.openByExternal.with({ provider, externalId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? toCharge(rows[0]) : null;
  }

  /** Every open charge, oldest first, at most `limit`: few at any time, as each renewal has one at most. */
  async openCharges(limit: number): Promise<ChargeRecord[]> {
    const { sql, values } = page(this.open.with({}), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toCharge);
  }

  async chargesOfOrder(orderId: number, db: Executor = this.pool): Promise<ChargeRecord[]> {
    const { sql, values } = this.ofOrder.with({ orderId });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.map(toCharge);
  }

  static isOpen(charge: Pick<ChargeRecord, 'state'>): boolean {
    return OPEN_STATES.includes(charge.state);
  }
}
