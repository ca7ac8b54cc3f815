import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { HposOrder, HposOrderMeta, HposOrderOperationalData, Post, PostMeta, WpComment } from '../../entities';
import { rawPool, tableOf } from './data-source';
import { holdingConnection } from './connection-pool';
import { Transaction, write, type Executor, type Statement } from './transaction';
import type { ShopSettings } from './shop-settings-repository';
import { gmtDateTime, localDateTime } from '../shop/shop-time';
import { plainStatus, storedStatus } from '../shop/order';

type Store = 'legacy' | 'hpos';

/**
 * Writes to orders and subscriptions the way WooCommerce does: to the authoritative store, and to
 * the other store too while compatibility sync is on, bumping both modified dates so WooCommerce's
 * sync-on-read sees the change as the newest. Notes are comments in both modes.
 */
export class OrderWriteRepository {
  readonly pool: Pool;
  private readonly t: { posts: string; postmeta: string; orders: string; ordersMeta: string; operational: string; comments: string };

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.t = {
      posts: tableOf(dataSource, Post),
      postmeta: tableOf(dataSource, PostMeta),
      orders: tableOf(dataSource, HposOrder),
      ordersMeta: tableOf(dataSource, HposOrderMeta),
      operational: tableOf(dataSource, HposOrderOperationalData),
      comments: tableOf(dataSource, WpComment),
    };
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
    const sql = settings.hpos
      ? `SELECT type, status FROM ${this.t.orders} WHERE id = ? FOR UPDATE`
      : `SELECT post_type AS type, post_status AS status FROM ${this.t.posts} WHERE ID = ? FOR UPDATE`;
    const [rows] = await db.query<RowDataPacket[]>(sql, [id]);
    if (!rows.length) return null;
    return { type: String(rows[0].type), status: plainStatus(String(rows[0].status ?? '')) };
  }

  async setStatus(db: Executor, id: number, status: string, settings: ShopSettings, now: Date): Promise<void> {
    const stored = storedStatus(status);
    for (const store of this.stores(settings)) {
      if (store === 'hpos') {
        await write(db, `UPDATE ${this.t.orders} SET status = ?, date_updated_gmt = ? WHERE id = ?`, [stored, gmtDateTime(now), id]);
      } else {
        await write(db, `UPDATE ${this.t.posts} SET post_status = ?, post_modified = ?, post_modified_gmt = ? WHERE ID = ?`,
          [stored, localDateTime(now, settings.timeZone), gmtDateTime(now), id]);
      }
    }
  }

  async getMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<string | null> {
    const sql = settings.hpos
      ? `SELECT meta_value FROM ${this.t.ordersMeta} WHERE order_id = ? AND meta_key = ? ORDER BY id LIMIT 1`
      : `SELECT meta_value FROM ${this.t.postmeta} WHERE post_id = ? AND meta_key = ? ORDER BY meta_id LIMIT 1`;
    const [rows] = await db.query<RowDataPacket[]>(sql, [id, key]);
    return rows.length ? String(rows[0].meta_value ?? '') : null;
  }

  /** Adds one to a counting meta key (missing or not a number counts as 0), in every store in use. */
  async incrementMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<void> {
    const count = Number(await this.getMeta(db, id, key, settings)) || 0;
    await this.setMeta(db, id, key, String(count + 1), settings);
  }

  /** Sets a single-valued meta key (update in place, insert when missing) in every store in use. */
  async setMeta(db: Executor, id: number, key: string, value: string, settings: ShopSettings): Promise<void> {
    for (const store of this.stores(settings)) {
      const [table, idColumn] = store === 'hpos' ? [this.t.ordersMeta, 'order_id'] : [this.t.postmeta, 'post_id'];
      const [result] = await db.query<ResultSetHeader>(`UPDATE ${table} SET meta_value = ? WHERE ${idColumn} = ? AND meta_key = ?`, [value, id, key]);
      if (result.affectedRows === 0) {
        await write(db, `INSERT INTO ${table} (${idColumn}, meta_key, meta_value) VALUES (?, ?, ?)`, [id, key, value]);
      }
    }
  }

  async deleteMeta(db: Executor, id: number, key: string, settings: ShopSettings): Promise<void> {
    for (const store of this.stores(settings)) {
      const [table, idColumn] = store === 'hpos' ? [this.t.ordersMeta, 'order_id'] : [this.t.postmeta, 'post_id'];
      await write(db, `DELETE FROM ${table} WHERE ${idColumn} = ? AND meta_key = ?`, [id, key]);
    }
  }

  /** The paid date as each store keeps it: HPOS's column, or the legacy timestamp and its local-time copy. */
  async setDatePaid(db: Executor, id: number, paid: Date, settings: ShopSettings): Promise<void> {
    const stores = this.stores(settings);
    if (stores.includes('hpos')) {
      await write(db, `UPDATE ${this.t.operational} SET date_paid_gmt = ? WHERE order_id = ?`, [gmtDateTime(paid), id]);
    }
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
    await write(
      db,
      `INSERT INTO ${this.t.comments} (comment_post_ID, comment_author, comment_author_email, comment_author_url, comment_author_IP,
        comment_date, comment_date_gmt, comment_content, comment_karma, comment_approved, comment_agent, comment_type, comment_parent, user_id)
       VALUES (?, ?, ?, '', '', ?, ?, ?, 0, '1', 'WooCommerce', 'order_note', 0, 0)`,
      [id, author?.name ?? 'WooCommerce', author?.email ?? `woocommerce@${host}`, localDateTime(now, settings.timeZone), gmtDateTime(now), text],
    );
  }

  /**
   * IDs of rows of `type` whose date meta `key` (GMT `Y-m-d H:i:s`, `0` meaning none) is set and not after
   * `upTo`, in the authoritative store, oldest first. Reads only that key's rows.
   */
  async findIdsByDateMetaUpTo(key: string, upTo: Date, type: 'shop_order' | 'shop_subscription', settings: ShopSettings): Promise<number[]> {
    const sql = settings.hpos
      ? `SELECT m.order_id AS id FROM ${this.t.ordersMeta} m JOIN ${this.t.orders} o ON o.id = m.order_id AND o.type = ?
         WHERE m.meta_key = ? AND m.meta_value <= ? AND m.meta_value NOT IN ('', '0')`
      : `SELECT m.post_id AS id FROM ${this.t.postmeta} m JOIN ${this.t.posts} p ON p.ID = m.post_id AND p.post_type = ?
         WHERE m.meta_key = ? AND m.meta_value <= ? AND m.meta_value NOT IN ('', '0')`;
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, [type, key, gmtDateTime(upTo)]);
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
    const [meta, rows, idColumn, rowId, typeColumn] = settings.hpos
      ? [this.t.ordersMeta, this.t.orders, 'order_id', 'id', 'type']
      : [this.t.postmeta, this.t.posts, 'post_id', 'ID', 'post_type'];
    return {
      sql: `SELECT m.${idColumn} AS id FROM ${meta} m JOIN ${rows} o ON o.${rowId} = m.${idColumn} AND o.${typeColumn} = ?
            WHERE m.meta_key = ? AND m.meta_value = ? ORDER BY m.${idColumn}`,
      values: [type, key, value],
    };
  }
}
