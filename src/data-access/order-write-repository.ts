import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { HposOrder, HposOrderMeta, HposOrderOperationalData, Post, PostMeta, WpComment } from '../../entities';
import { rawPool } from './data-source';
import { holdingConnection } from './connection-pool';
import { PreparedStatement, slots } from './prepared-statement';
import { Transaction, write, type Executor, type Statement } from './transaction';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTime, localDateTime } from '../shop/shop-time';
import { plainStatus, storedStatus } from '../shop/order';

type Store = 'legacy' | 'hpos';

/** One store's statements, written once: they differ between the stores only in tables and columns. */
interface StoreStatements {
  lockStatus: PreparedStatement<'id'>;
  status: PreparedStatement<'id'>;
  setStatus: PreparedStatement<'id' | 'status' | 'local' | 'gmt'>;
  getMeta: PreparedStatement<'id' | 'key'>;
  updateMeta: PreparedStatement<'id' | 'key' | 'value'>;
  insertMeta: PreparedStatement<'id' | 'key' | 'value'>;
  deleteMeta: PreparedStatement<'id' | 'key'>;
  idsByDateMetaUpTo: PreparedStatement<'type' | 'key' | 'upTo'>;
  idsByMeta: PreparedStatement<'type' | 'key' | 'value'>;
}

/**
 * The statements of a store: its orders (`id`, `type`, `status`) with the columns a status change bumps
 * (`modified`, given `:local` and `:gmt`), and its meta (`key`, `value`) with the property naming the order.
 */
function prepareStore(
  dataSource: DataSource,
  orders: typeof Post | typeof HposOrder,
  modified: Record<string, () => string>,
  meta: typeof PostMeta | typeof HposOrderMeta,
  orderOf: 'postId' | 'orderId',
): StoreStatements {
  const query = () => dataSource.createQueryBuilder();
  const s = slots('id', 'type', 'status', 'local', 'gmt', 'key', 'value', 'upTo');
  const search = (condition: string) => query().select(`m.${orderOf}`, 'id').from(meta, 'm')
    .innerJoin(orders, 'o', `o.id = m.${orderOf} AND o.type = :type`).where(condition).setParameters(s);
  return {
    lockStatus: PreparedStatement.from(query().select('o.type', 'type').addSelect('o.status', 'status').from(orders, 'o')
      .where('o.id = :id').setParameters(s).setLock('pessimistic_write')),
    status: PreparedStatement.from(query().select('o.type', 'type').addSelect('o.status', 'status').from(orders, 'o').where('o.id = :id').setParameters(s)),
    setStatus: PreparedStatement.from(query().update(orders).set({ status: () => ':status', ...modified }).where('id = :id').setParameters(s)),
    getMeta: PreparedStatement.from(query().select('m.value', 'value').from(meta, 'm')
      .where(`m.${orderOf} = :id AND m.key = :key`).orderBy('m.id').limit(1).setParameters(s)),
    updateMeta: PreparedStatement.from(query().update(meta).set({ value: () => ':value' }).where(`${orderOf} = :id AND key = :key`).setParameters(s)),
    insertMeta: PreparedStatement.from(query().insert().into(meta).values({ [orderOf]: s.id, key: s.key, value: s.value } as object)),
    deleteMeta: PreparedStatement.from(query().delete().from(meta).where(`${orderOf} = :id AND key = :key`).setParameters(s)),
    idsByDateMetaUpTo: PreparedStatement.from(search("m.key = :key AND m.value <= :upTo AND m.value NOT IN ('', '0')")),
    idsByMeta: PreparedStatement.from(search('m.key = :key AND m.value = :value').orderBy(`m.${orderOf}`)),
  };
}

/**
 * Writes to orders and subscriptions the way WooCommerce does: to the authoritative store, and to
 * the other store too while compatibility sync is on, bumping both modified dates so WooCommerce's
 * sync-on-read sees the change as the newest. Notes are comments in both modes.
 */
export class OrderWriteRepository {
  readonly pool: Pool;
  private readonly statements: Record<Store, StoreStatements>;
  private readonly setDatePaidStatement: PreparedStatement<'paid' | 'id'>;
  private readonly addNoteStatement: PreparedStatement<'id' | 'author' | 'email' | 'local' | 'gmt' | 'text'>;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.statements = {
      legacy: prepareStore(dataSource, Post, { modifiedLocal: () => ':local', modifiedGmt: () => ':gmt' }, PostMeta, 'postId'),
      hpos: prepareStore(dataSource, HposOrder, { dateUpdatedGmt: () => ':gmt' }, HposOrderMeta, 'orderId'),
    };
    this.setDatePaidStatement = PreparedStatement.from(dataSource.createQueryBuilder().update(HposOrderOperationalData)
      .set({ datePaidGmt: () => ':paid' }).where('orderId = :id').setParameters(slots('paid', 'id')));
    const note = slots('id', 'author', 'email', 'local', 'gmt', 'text');
    this.addNoteStatement = PreparedStatement.from(dataSource.createQueryBuilder().insert().into(WpComment).values({
      postId: note.id, author: note.author, authorEmail: note.email, authorUrl: '', authorIp: '', dateLocal: note.local, dateGmt: note.gmt,
      content: note.text, karma: 0, approved: '1', agent: 'WooCommerce', type: 'order_note', parentId: 0, userId: 0,
    } as object));
  }

  /**
   * Runs `work` in one transaction on one connection (READ COMMITTED, its statements sent together
   * where the work allows: see `Transaction`), retried from the start, after a random pause, if InnoDB
   * still picks it as a deadlock victim. `work` must do nothing but database work on `db`, so running
   * it again is safe.
   * `last`, given what `work` returned, is a statement sent together with the COMMIT (one round trip
   * for both), such as the row that records the outcome.
   */
  async transaction<T>(work: (db: Transaction) => Promise<T>, last?: (result: T) => Statement, attempts = 3): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const connection = await this.pool.getConnection();
      const transaction = new Transaction(connection);
      try {
        // Everything `work` reads goes through `transaction`: it may not wait for a second connection.
        const result = await holdingConnection(() => work(transaction));
        await transaction.commit(last?.(result));
        return result;
      } catch (error) {
        await transaction.rollback().catch(() => undefined);
        const code = (error as { code?: string }).code;
        if (attempt >= attempts || (code !== 'ER_LOCK_DEADLOCK' && code !== 'ER_LOCK_WAIT_TIMEOUT')) throw error;
      } finally {
        connection.release();
      }
      // A random pause, so transactions that collided once do not start again in step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
    }
  }

  private stores(settings: ShopSettings): Store[] {
    const authoritative: Store = settings.hpos ? 'hpos' : 'legacy';
    return settings.sync ? [authoritative, authoritative === 'hpos' ? 'legacy' : 'hpos'] : [authoritative];
  }

  /** Type and status (without `wc-`) from the authoritative store, locking the row; null when absent. */
  async lockStatus(db: Executor, id: number, settings: ShopSettings): Promise<{ type: string; status: string } | null> {
    const { sql, values } = this.authoritative(settings).lockStatus.with({ id });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    if (!rows.length) return null;
    return { type: String(rows[0].type), status: plainStatus(String(rows[0].status ?? '')) };
  }

  /** Type and status (without `wc-`; `trash` in the bin) from the authoritative store, as read now; null when absent. */
  async status(db: Executor, id: number, settings: ShopSettings): Promise<{ type: string; status: string } | null> {
    const { sql, values } = this.authoritative(settings).status.with({ id });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    if (!rows.length) return null;
    return { type: String(rows[0].type), status: plainStatus(String(rows[0].status ?? '')) };
  }

  async setStatus(db: Executor, id: number, status: string, settings: ShopSettings, now: Date): Promise<void> {
    const change = { id, status: storedStatus(status), local: localDateTime(now, settings.timeZone), gmt: gmtDateTime(now) };
    for (const store of this.stores(settings)) await writeStatement(db, this.statements[store].setStatus.with(change));
  }

  async getMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<string | null> {
    const { sql, values } = this.authoritative(settings).getMeta.with({ id, key });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? String(rows[0].value ?? '') : null;
  }

  /** Adds one to a counting meta key (missing or not a number counts as 0), in every store in use. */
  async incrementMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<void> {
    const count = Number(await this.getMeta(db, id, key, settings)) || 0;
    await this.setMeta(db, id, key, String(count + 1), settings);
  }

  /** Sets a single-valued meta key (update in place, insert when missing) in every store in use. */
  async setMeta(db: Executor, id: number, key: string, value: string, settings: ShopSettings): Promise<void> {
    for (const store of this.stores(settings)) {
      const { sql, values } = this.statements[store].updateMeta.with({ id, key, value });
      const [result] = await db.query<ResultSetHeader>(sql, values);
      if (result.affectedRows === 0) await writeStatement(db, this.statements[store].insertMeta.with({ id, key, value }));
    }
  }

  async deleteMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<void> {
    for (const store of this.stores(settings)) await writeStatement(db, this.statements[store].deleteMeta.with({ id, key }));
  }

  /** The paid date as each store keeps it: HPOS's column, or the legacy timestamp and its local-time copy. */
  async setDatePaid(db: Executor, id: number, paid: Date, settings: ShopSettings): Promise<void> {
    const stores = this.stores(settings);
    if (stores.includes('hpos')) await writeStatement(db, this.setDatePaidStatement.with({ id, paid: gmtDateTime(paid) }));
    if (stores.includes('legacy')) {
      await this.setMeta(db, id, '_date_paid', String(Math.floor(paid.getTime() / 1000)), { ...settings, hpos: false, sync: false });
      await this.setMeta(db, id, '_paid_date', localDateTime(paid, settings.timeZone), { ...settings, hpos: false, sync: false });
    }
  }

  /**
   * A private order (or subscription) note, written as WooCommerce's `add_order_note()` writes it: by
   * "WooCommerce", or, for a change a staff member made (`$added_by_user`), in that user's name.
   */
  async addNote(db: Executor, id: number, text: string, settings: ShopSettings, now: Date, author?: { name: string; email: string }): Promise<void> {
    const host = (() => {
      try { return new URL(settings.siteUrl).hostname.replace(/^www\./, ''); } catch { return 'localhost'; }
    })();
    await writeStatement(db, this.addNoteStatement.with({
      id, text, author: author?.name ?? 'WooCommerce', email: author?.email ?? `woocommerce@${host}`,
      local: localDateTime(now, settings.timeZone), gmt: gmtDateTime(now),
    }));
  }

  /**
   * IDs of rows of `type` whose date meta `key` (GMT `Y-m-d H:i:s`, `0` meaning none) is set and not after
   * `upTo`, in the authoritative store, oldest first. Reads only that key's rows.
   */
  async findIdsByDateMetaUpTo(key: string, upTo: Date, type: 'shop_order' | 'shop_subscription', settings: ShopSettings): Promise<number[]> {
    const { sql, values } = this.authoritative(settings).idsByDateMetaUpTo.with({ type, key, upTo: gmtDateTime(upTo) });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return [...new Set(rows.map((row) => Number(row.id)))].sort((a, b) => a - b);
  }

  /** IDs of rows of `type` carrying `key = value` in the authoritative store, oldest first. */
  async findIdsByMeta(key: string, value: string, type: 'shop_order' | 'shop_subscription', settings: ShopSettings): Promise<number[]> {
    const { sql, values } = this.findIdsByMetaStatement(key, value, type, settings);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => Number(row.id));
  }

  /** The search of `findIdsByMeta` as a statement (rows with an `id`, oldest first), to send with others. */
  findIdsByMetaStatement(key: string, value: string, type: 'shop_order' | 'shop_subscription', settings: ShopSettings): Statement {
    return this.authoritative(settings).idsByMeta.with({ type, key, value });
  }

  private authoritative(settings: ShopSettings): StoreStatements {
    return this.statements[settings.hpos ? 'hpos' : 'legacy'];
  }
}

/** `write()` of a prepared statement. */
function writeStatement(db: Executor, { sql, values }: Statement): Promise<void> {
  return write(db, sql, values);
}
