import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { CardExpiryReminder, CardExpiryReminderPass, HposOrder, HposOrderMeta, Post, PostMeta } from '../../entities';
import { rawPool } from './data-source';
import { sqlNames } from './prepared-statement';
import { together, type Executor, type Statement } from './transaction';
import type { ShopSettings } from './shop-settings-repository';
import type { OrderWriteRepository } from './order-write-repository';
import { SUBSCRIPTION_CARD_META } from '../dunning/dunning';
import { plainStatus } from '../shop/order';
import { NEXT_PAYMENT_META } from '../shop/subscription';
import { gmtDateTimeMs, parseGmtDateTime } from '../shop/shop-time';

/** A subscription's current card: the card its renewals are charged to (the gateway plugin's `_reepay_token`). */
export interface CurrentCard {
  subscriptionId: number;
  paymentMethod: string;
  /** A reminder was sent for this subscription and this card already. */
  reminded: boolean;
}

/** What the reminder needs of a subscription, and nothing more: its status, how it pays and its schedule. */
export interface SubscriptionFacts {
  id: number;
  /** Without `wc-`. */
  status: string;
  /** The WooCommerce gateway id (`reepay_checkout`, ...); empty when none. */
  paymentMethod: string;
  manualRenewal: boolean;
  nextPayment: Date | null;
  end: Date | null;
}

/** Where the pass stands (the one row of `sidecar_card_expiry_reminder_pass`). */
export interface PassState {
  startedAt: Date | null;
  /** Null while a pass runs (or before the first). */
  finishedAt: Date | null;
  /** The last subscription id the running pass has been through. */
  cursor: number;
  holder: string | null;
  heldUntil: Date | null;
}

/** The subscription meta the reminder reads (and WooCommerce Subscriptions writes). */
const FACT_KEYS = [NEXT_PAYMENT_META, '_schedule_end', '_requires_manual_renewal', '_payment_method'];
const PASS_ROW = 1;

/**
 * The card expiry reminders' reads and writes: the subscriptions that name a card (`_reepay_token`) walked by
 * id, the few facts of those subscriptions, the
 * reminders sent, and where the pass stands.
 */
export class CardExpiryReminderRepository {
  readonly pool: Pool;
  /** The current card of each of the next subscriptions after a subscription id, with whether it was reminded of. */
  private readonly currentCardsSql: Record<'legacy' | 'hpos', string>;
  private readonly recordSql: string;
  private readonly facts: Record<'legacy' | 'hpos', { orders: string; meta: string }>;
  private readonly pass: {
    read: string; ensure: string; claim: string; start: string; advance: string; finish: string; release: string;
  };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const { table: reminders, column: r } = sqlNames(dataSource, CardExpiryReminder);
    const post = sqlNames(dataSource, Post);
    const postMeta = sqlNames(dataSource, PostMeta);
    const order = sqlNames(dataSource, HposOrder);
    const orderMeta = sqlNames(dataSource, HposOrderMeta);
    // A subscription's card is the one its renewals are charged to: the gateway plugin's `_reepay_token` on the
    // subscription (reepay-woocommerce-payment; src/dunning/dunning.ts SUBSCRIPTION_CARD_META), not the service's
    // agreements, which the gateway's webhooks never link to a subscription. Walked by subscription id through the
    // meta table's key index, subscriptions only (the plugin writes it on orders too); each with the reminder of its
    // card joined by the reminders' primary key.
    const cardsOf = (table: string, id: string, key: string, value: string, metaId: string, owners: { table: string; id: string; type: string }) =>
      `SELECT m.${id} AS subscriptionId, TRIM(m.${value}) AS paymentMethod, r.${r.subscriptionId} IS NOT NULL AS reminded
      FROM ${table} m
      JOIN ${owners.table} o ON o.${owners.id} = m.${id} AND o.${owners.type} = 'shop_subscription'
      LEFT JOIN ${reminders} r ON r.${r.subscriptionId} = m.${id} AND r.${r.paymentMethod} = TRIM(m.${value}) COLLATE utf8mb4_bin
      WHERE m.${key} = '${SUBSCRIPTION_CARD_META}' AND m.${id} > ? ORDER BY m.${id}, m.${metaId} LIMIT ?`;
    this.currentCardsSql = {
      legacy: cardsOf(postMeta.table, postMeta.column.postId, postMeta.column.key, postMeta.column.value, postMeta.column.id, { table: post.table, id: post.column.id, type: post.column.type }),
      hpos: cardsOf(orderMeta.table, orderMeta.column.orderId, orderMeta.column.key, orderMeta.column.value, orderMeta.column.id, { table: order.table, id: order.column.id, type: order.column.type }),
    };
    this.recordSql = `INSERT IGNORE INTO ${reminders} (${r.subscriptionId}, ${r.paymentMethod}, ${r.expDate}, ${r.sentAt}) VALUES (?, ?, ?, ?)`;

    this.facts = {
      legacy: {
        orders: `SELECT ${post.column.id} AS id, ${post.column.status} AS status, '' AS paymentMethod FROM ${post.table}
          WHERE ${post.column.id} IN (?) AND ${post.column.type} = 'shop_subscription'`,
        meta: `SELECT ${postMeta.column.postId} AS id, ${postMeta.column.key} AS \`key\`, ${postMeta.column.value} AS value FROM ${postMeta.table}
          WHERE ${postMeta.column.postId} IN (?) AND ${postMeta.column.key} IN (?)`,
      },
      hpos: {
        orders: `SELECT ${order.column.id} AS id, ${order.column.status} AS status, ${order.column.paymentMethod} AS paymentMethod FROM ${order.table}
          WHERE ${order.column.id} IN (?) AND ${order.column.type} = 'shop_subscription'`,
        meta: `SELECT ${orderMeta.column.orderId} AS id, ${orderMeta.column.key} AS \`key\`, ${orderMeta.column.value} AS value FROM ${orderMeta.table}
          WHERE ${orderMeta.column.orderId} IN (?) AND ${orderMeta.column.key} IN (?)`,
      },
    };

    const { table: pass, column: p } = sqlNames(dataSource, CardExpiryReminderPass);
    const mine = `${p.id} = ${PASS_ROW} AND ${p.holder} = ?`;
    this.pass = {
      read: `SELECT ${p.startedAt} AS startedAt, ${p.finishedAt} AS finishedAt, ${p.cursorId} AS cursorId, ${p.holder} AS holder, ${p.heldUntil} AS heldUntil
        FROM ${pass} WHERE ${p.id} = ${PASS_ROW}`,
      ensure: `INSERT IGNORE INTO ${pass} (${p.id}, ${p.cursorId}, ${p.updatedAt}) VALUES (${PASS_ROW}, 0, ?)`,
      claim: `UPDATE ${pass} SET ${p.holder} = ?, ${p.heldUntil} = ?, ${p.updatedAt} = ?
        WHERE ${p.id} = ${PASS_ROW} AND (${p.holder} IS NULL OR ${p.holder} = ? OR ${p.heldUntil} < ?)`,
      start: `UPDATE ${pass} SET ${p.startedAt} = ?, ${p.finishedAt} = NULL, ${p.cursorId} = 0, ${p.updatedAt} = ? WHERE ${mine}`,
      advance: `UPDATE ${pass} SET ${p.cursorId} = GREATEST(${p.cursorId}, ?), ${p.heldUntil} = ?, ${p.updatedAt} = ? WHERE ${mine}`,
      finish: `UPDATE ${pass} SET ${p.finishedAt} = ?, ${p.holder} = NULL, ${p.heldUntil} = NULL, ${p.updatedAt} = ? WHERE ${mine}`,
      release: `UPDATE ${pass} SET ${p.holder} = NULL, ${p.heldUntil} = NULL, ${p.updatedAt} = ? WHERE ${mine}`,
    };
  }

  /**
   * The current card of each of the next `limit` subscriptions (by id, after `afterSubscriptionId`) that name a card
   * (the gateway plugin's `_reepay_token`), and the last subscription id looked at (null when there are no more).
   */
  async currentCards(afterSubscriptionId: number, limit: number, settings: ShopSettings): Promise<{ cards: CurrentCard[]; last: number | null }> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.currentCardsSql[settings.hpos ? 'hpos' : 'legacy'], [afterSubscriptionId, limit]);
    const cards: CurrentCard[] = [];
    let last: number | null = null;
    for (const row of rows) {
      const subscriptionId = Number(row.subscriptionId);
      // One `_reepay_token` per subscription; should there be more, the first written is the one WooCommerce reads.
      if (subscriptionId === last) continue;
      last = subscriptionId;
      if (row.paymentMethod) cards.push({ subscriptionId, paymentMethod: String(row.paymentMethod), reminded: Number(row.reminded) === 1 });
    }
    return { cards, last };
  }

  /**
   * The subscription's current card (its `_reepay_token`, null when it names none), read with the subscription
   * locked (`lockStatus` first): a card the customer changed meanwhile is seen.
   */
  async lockCurrentCard(db: Executor, subscriptionId: number, orders: Pick<OrderWriteRepository, 'getMeta'>, settings: ShopSettings): Promise<string | null> {
    return (await orders.getMeta(db, subscriptionId, SUBSCRIPTION_CARD_META, settings))?.trim() || null;
  }

  /** The facts of those subscriptions, from the authoritative store (two statements, one round trip); absent ones are left out. */
  async subscriptionFacts(ids: number[], settings: ShopSettings, db: Executor = this.pool): Promise<Map<number, SubscriptionFacts>> {
    const found = new Map<number, SubscriptionFacts>();
    if (!ids.length) return found;
    const statements = this.facts[settings.hpos ? 'hpos' : 'legacy'];
    const { sql, values } = together([{ sql: statements.orders, values: [ids] }, { sql: statements.meta, values: [ids, FACT_KEYS] }]);
    const [[orders, meta]] = await db.query<RowDataPacket[][]>(sql, values);
    const metaOf = new Map<number, Record<string, string>>();
    for (const row of meta) {
      const values = metaOf.get(Number(row.id)) ?? {};
      if (!(row.key in values)) values[row.key] = row.value ?? '';
      metaOf.set(Number(row.id), values);
    }
    for (const row of orders) {
      const id = Number(row.id);
      const values = metaOf.get(id) ?? {};
      found.set(id, {
        id,
        status: plainStatus(String(row.status ?? '')),
        paymentMethod: String(row.paymentMethod || values._payment_method || ''),
        manualRenewal: values._requires_manual_renewal === 'true',
        nextPayment: subscriptionDate(values[NEXT_PAYMENT_META]),
        end: subscriptionDate(values._schedule_end),
      });
    }
    return found;
  }

  /** Remembers the reminder of this subscription's card; false when one was stored before (the primary key). */
  async record(db: Executor, reminder: { subscriptionId: number; paymentMethod: string; expDate: string }, now: Date): Promise<boolean> {
    const [result] = await db.query<ResultSetHeader>(this.recordSql, [reminder.subscriptionId, reminder.paymentMethod, reminder.expDate, gmtDateTimeMs(now)]);
    return result.affectedRows > 0;
  }

  /** Where the pass stands; null before the first. */
  async passState(): Promise<PassState | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.pass.read);
    return rows.length ? toPassState(rows[0]) : null;
  }

  /**
   * Takes the pass for `holder` until `until` (or renews its hold), unless another holds it and its hold has
   * not run out. The pass as it stands when taken; null when another holds it.
   */
  async claim(holder: string, now: Date, until: Date): Promise<PassState | null> {
    const at = gmtDateTimeMs(now);
    const statements: Statement[] = [
      { sql: this.pass.ensure, values: [at] },
      { sql: this.pass.claim, values: [holder, gmtDateTimeMs(until), at, holder, at] },
      { sql: this.pass.read, values: [] },
    ];
    const { sql, values } = together(statements);
    const [[, , rows]] = await this.pool.query<RowDataPacket[][]>(sql, values) as unknown as [[unknown, unknown, RowDataPacket[]]];
    const state = rows.length ? toPassState(rows[0]) : null;
    return state?.holder === holder ? state : null;
  }

  /** Starts a new pass from the first subscription; false when `holder` no longer holds the pass. */
  async start(holder: string, now: Date): Promise<boolean> {
    const at = gmtDateTimeMs(now);
    return this.changed(this.pass.start, [at, at, holder]);
  }

  /** Moves the running pass past `cursor` and renews the hold until `until`; false when `holder` no longer holds it. */
  async advance(holder: string, cursor: number, now: Date, until: Date): Promise<boolean> {
    return this.changed(this.pass.advance, [cursor, gmtDateTimeMs(until), gmtDateTimeMs(now), holder]);
  }

  /** Ends the running pass and lets go of it. */
  async finish(holder: string, now: Date): Promise<boolean> {
    const at = gmtDateTimeMs(now);
    return this.changed(this.pass.finish, [at, at, holder]);
  }

  /** Lets go of the pass without ending it: the next holder goes on from where it stands. */
  async release(holder: string, now: Date): Promise<void> {
    await this.pool.query(this.pass.release, [gmtDateTimeMs(now), holder]);
  }

  private async changed(sql: string, values: unknown[]): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows > 0;
  }
}

/** A WCS date meta value: GMT `Y-m-d H:i:s`, or `0` / empty for "no date". */
function subscriptionDate(value: string | undefined): Date | null {
  if (!value || value === '0') return null;
  return parseGmtDateTime(value);
}

function toPassState(row: RowDataPacket): PassState {
  return {
    startedAt: parseStored(row.startedAt),
    finishedAt: parseStored(row.finishedAt),
    cursor: Number(row.cursorId),
    holder: row.holder === null ? null : String(row.holder),
    heldUntil: parseStored(row.heldUntil),
  };
}

/** The service's own `datetime(3)` (UTC, with milliseconds). */
function parseStored(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const time = new Date(`${value.replace(' ', 'T')}Z`);
  return Number.isNaN(time.getTime()) ? null : time;
}
