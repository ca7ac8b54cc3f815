import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Webhook, type Provider, type WebhookStatus } from '../../entities';
import { rawPool, tableOf } from './data-source';
import type { Statement } from './transaction';
import { TurnBatch } from './turn-batch';

export interface WebhookRecord {
  id: number;
  provider: Provider;
  externalId: string;
  eventType: string;
  status: WebhookStatus;
  rawBody: Buffer;
  attempts: number;
  lastError: string | null;
  outcome: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  processedAt: string | null;
}

const toWebhook = (row: RowDataPacket): WebhookRecord => ({
  id: Number(row.id),
  provider: row.provider,
  externalId: row.external_id,
  eventType: row.event_type,
  status: row.status,
  rawBody: row.raw_body,
  attempts: Number(row.attempts),
  lastError: row.last_error,
  outcome: row.outcome,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  processedAt: row.processed_at,
});

export type InsertOutcome = { kind: 'stored'; id: number } | { kind: 'duplicate' };

/**
 * How long a claim holds a webhook unless its worker renews it (every few seconds, while the job runs): a
 * worker that dies or hangs lets go of what it held this soon, for another worker to take.
 */
export const CLAIM_LEASE_SECONDS = 30;
/** Webhooks taken in one statement at most. */
const CLAIM_BATCH_LIMIT = 100;

/**
 * Tokens no other claim uses: a random part per process (as random as a UUID's), which also names the
 * process's claims as a whole (see `renewClaimsStatement`), then a count.
 */
const HOLDER_LENGTH = 16;
const claimTokens = {
  holder: crypto.randomBytes(12).toString('base64url'),
  count: 0,
  next(): string {
    // Wrapping after 2 billion claims is safe: a token only needs to be unique among claims alive at once.
    this.count = (this.count + 1) % 36 ** 6;
    return `${this.holder}${this.count.toString(36).padStart(6, '0')}`;
  },
};

/** Received webhooks: unique per (provider, external_id); the row's status is the truth about processing. */
export class WebhookRepository {
  readonly pool: Pool;
  private readonly table: string;
  private readonly claims = new TurnBatch<number, WebhookRecord | null>(CLAIM_BATCH_LIMIT, (ids) => this.claimTogether(ids));

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.table = tableOf(dataSource, Webhook);
  }

  /**
   * Stores a new event PENDING; a duplicate is an event id already stored, byte for byte (the column's
   * collation is binary). No INSERT IGNORE: it would also turn an id too long for the column into a
   * warning and store it cut.
   */
  async insertPending(provider: Provider, externalId: string, eventType: string, rawBody: Buffer): Promise<InsertOutcome> {
    try {
      const [result] = await this.pool.query<ResultSetHeader>(
        `INSERT INTO ${this.table} (provider, external_id, event_type, status, raw_body, attempts, created_at, updated_at)
         VALUES (?, ?, ?, 'PENDING', ?, 0, NOW(3), NOW(3))`,
        [provider, externalId, eventType.slice(0, 100), rawBody],
      );
      return { kind: 'stored', id: result.insertId };
    } catch (error) {
      if ((error as { code?: string }).code === 'ER_DUP_ENTRY') return { kind: 'duplicate' };
      throw error;
    }
  }

  /**
   * Takes a webhook for one processing attempt: a PENDING one, or a FAILED one whose automatic retry
   * is due (a FAILED one left for the operator goes back to PENDING through `requeue` first), and only
   * when no other attempt holds it. Returns null when there is nothing to do.
   *
   * Claims made in the same turn are taken together (`TurnBatch`), in one round trip; a webhook asked
   * for twice in one batch goes to the first asker only.
   */
  claim(id: number): Promise<WebhookRecord | null> {
    return this.claims.add(id);
  }

  private async claimTogether(ids: number[]): Promise<(WebhookRecord | null)[]> {
    // The token marks the rows this very UPDATE took, so the SELECT returns those and no others.
    const token = claimTokens.next();
    const unique = [...new Set(ids)];
    const [[, rows]] = await this.pool.query<RowDataPacket[][]>(
      `UPDATE ${this.table} SET claim_token = ?, locked_until = NOW(3) + INTERVAL ${CLAIM_LEASE_SECONDS} SECOND, attempts = attempts + 1, updated_at = NOW(3)
       WHERE id IN (?) AND (status = 'PENDING' OR (status = 'FAILED' AND next_attempt_at IS NOT NULL AND next_attempt_at <= NOW(3)))
         AND (locked_until IS NULL OR locked_until < NOW(3));
       SELECT * FROM ${this.table} WHERE id IN (?) AND claim_token = ?`,
      [token, unique, unique, token],
    );
    const taken = new Map(rows.map((row) => [Number(row.id), toWebhook(row)]));
    return ids.map((id) => {
      const webhook = taken.get(id) ?? null;
      taken.delete(id);
      return webhook;
    });
  }

  /** What names this process's claims: the first characters of every claim token it makes. */
  get holder(): string {
    return claimTokens.holder;
  }

  /** Extends this process's claims on `ids` (the jobs it is still working on) by a lease. */
  renewClaimsStatement(ids: number[]): Statement {
    return {
      sql: `UPDATE ${this.table} SET locked_until = NOW(3) + INTERVAL ${CLAIM_LEASE_SECONDS} SECOND
            WHERE id IN (?) AND LEFT(claim_token, ${HOLDER_LENGTH}) = ? AND locked_until IS NOT NULL`,
      values: [ids.length ? ids : [0], claimTokens.holder],
    };
  }

  /** Lets go at once of this process's claims on `ids` that are not final, for any worker to take now. */
  async releaseClaims(ids: number[]): Promise<void> {
    if (!ids.length) return;
    const { sql, values } = this.releaseClaimsStatement(ids);
    await this.pool.query(sql, values);
  }

  releaseClaimsStatement(ids: number[]): Statement {
    return {
      sql: `UPDATE ${this.table} SET locked_until = NULL WHERE id IN (?) AND LEFT(claim_token, ${HOLDER_LENGTH}) = ? AND status IN ('PENDING', 'FAILED')`,
      values: [ids, claimTokens.holder],
    };
  }

  /** The final status, as a statement to commit together with what the handler wrote. */
  finishStatement(id: number, status: 'PROCESSED' | 'SKIPPED', outcome: string): Statement {
    return {
      sql: `UPDATE ${this.table} SET status = ?, outcome = ?, last_error = NULL, next_attempt_at = NULL, locked_until = NULL, processed_at = NOW(3), updated_at = NOW(3) WHERE id = ?`,
      values: [status, outcome.slice(0, 255), id],
    };
  }

  /** The final status of a webhook whose handling wrote nothing else. */
  async finish(id: number, status: 'PROCESSED' | 'SKIPPED', outcome: string): Promise<void> {
    const { sql, values } = this.finishStatement(id, status, outcome);
    await this.pool.query(sql, values);
  }

  /** FAILED; `retryInSeconds` null leaves it for the operator. */
  async fail(id: number, error: string, retryInSeconds: number | null): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.table} SET status = 'FAILED', last_error = ?, locked_until = NULL, updated_at = NOW(3),
         next_attempt_at = IF(? IS NULL, NULL, NOW(3) + INTERVAL ? SECOND) WHERE id = ?`,
      [error.slice(0, 10_000), retryInSeconds, retryInSeconds ?? 0, id],
    );
  }

  /** Puts a FAILED webhook back to PENDING for the operator's retry. */
  async requeue(id: number): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE ${this.table} SET status = 'PENDING', next_attempt_at = NULL, updated_at = NOW(3) WHERE id = ? AND status = 'FAILED'`, [id]);
    return result.affectedRows === 1;
  }

  /** PENDING webhooks older than `graceSeconds` and due FAILED ones, not held by an attempt: the sweeper's work. */
  async dueIds(graceSeconds: number, limit: number): Promise<number[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `(SELECT id FROM ${this.table} WHERE status = 'PENDING' AND created_at < NOW(3) - INTERVAL ? SECOND AND (locked_until IS NULL OR locked_until < NOW(3)) LIMIT ?)
       UNION ALL
       (SELECT id FROM ${this.table} WHERE status = 'FAILED' AND next_attempt_at IS NOT NULL AND next_attempt_at <= NOW(3) AND (locked_until IS NULL OR locked_until < NOW(3)) LIMIT ?)`,
      [graceSeconds, limit, limit],
    );
    return rows.map((row) => Number(row.id));
  }

  async find(id: number): Promise<WebhookRecord | null> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT * FROM ${this.table} WHERE id = ?`, [id]);
    return rows.length ? toWebhook(rows[0]) : null;
  }

  async list(filter: { status?: WebhookStatus; provider?: Provider; limit: number }): Promise<WebhookRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.status) { where.push('status = ?'); values.push(filter.status); }
    if (filter.provider) { where.push('provider = ?'); values.push(filter.provider); }
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM ${this.table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`, [...values, filter.limit]);
    return rows.map(toWebhook);
  }

  /** How many webhooks each provider has in each status, for the metrics; covered by the status_provider_created index (no row is read). */
  async countsByProviderAndStatus(): Promise<{ provider: string; status: string; count: number }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT provider, status, COUNT(*) AS n FROM ${this.table} GROUP BY status, provider`);
    return rows.map((row) => ({ provider: String(row.provider), status: String(row.status), count: Number(row.n) }));
  }

  /** Seconds since the oldest PENDING webhook arrived, by the database's clock; 0 when none waits. */
  async oldestPendingAgeSeconds(): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT TIMESTAMPDIFF(MICROSECOND, MIN(created_at), NOW(3)) / 1000000 AS age FROM ${this.table} WHERE status = 'PENDING'`);
    return rows[0]?.age === null || rows[0]?.age === undefined ? 0 : Math.max(0, Number(rows[0].age));
  }

  async failedIds(): Promise<number[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT id FROM ${this.table} WHERE status = 'FAILED' ORDER BY id`);
    return rows.map((row) => Number(row.id));
  }
}
