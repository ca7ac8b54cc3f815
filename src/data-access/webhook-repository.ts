import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { Webhook, type Provider, type WebhookStatus } from '../../entities';
import { rawPool } from './data-source';
import { byFilters, inOneRoundTrip, page, PreparedStatement, selectEntity, slots, sqlNames, type Bindable } from './prepared-statement';
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
  externalId: row.externalId,
  eventType: row.eventType,
  status: row.status,
  rawBody: row.rawBody,
  attempts: Number(row.attempts),
  lastError: row.lastError,
  outcome: row.outcome,
  nextAttemptAt: row.nextAttemptAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  processedAt: row.processedAt,
});

/** A stored webhook as staff see it next to a payment: what arrived, when, and what became of it. */
export interface WebhookSummary {
  id: number;
  provider: Provider;
  externalId: string;
  eventType: string;
  status: WebhookStatus;
  createdAt: string;
}

/** The payment a webhook is about: the card gateway's invoice (or charge) handle, the wallet's charge id. */
export interface PaymentKey {
  provider: Provider;
  externalId: string;
}

const WEBHOOK_STATUSES: WebhookStatus[] = ['PENDING', 'PROCESSED', 'SKIPPED', 'FAILED'];
const PROVIDERS: Provider[] = ['card_gateway', 'mobile_wallet'];
/** Stands for "no payment of this provider" in an `IN` list: no stored event names an empty id (they are refused). */
const NO_ID = '';

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

/** Received webhooks: unique per (provider, external id); the row's status is the truth about processing. */
export class WebhookRepository {
  readonly pool: Pool;
  private readonly insert: PreparedStatement<'provider' | 'externalId' | 'eventType' | 'rawBody'>;
  /** Takes the given webhooks that are free to take, marking them with the claim's token, and reads the rows it took. */
  private readonly takeAndRead: Bindable<'ids' | 'token'>;
  private readonly renewClaims: PreparedStatement<'ids'>;
  private readonly releaseClaimsOf: PreparedStatement<'ids'>;
  private readonly finishing: PreparedStatement<'id' | 'status' | 'outcome'>;
  private readonly failing: PreparedStatement<'id' | 'error' | 'retryInSeconds' | 'uncounted'>;
  private readonly requeueing: PreparedStatement<'id'>;
  /** PENDING ones past their grace, then due FAILED ones, each with its own limit: a UNION ALL the query builder cannot write. */
  private readonly dueSql: string;
  private readonly byId: PreparedStatement<'id'>;
  /** Newest first, filtered by status, provider, both or neither. */
  private readonly listing: (filter: { status?: WebhookStatus; provider?: Provider }) => PreparedStatement<'status' | 'provider'>;
  private readonly countsByStatus: PreparedStatement<never>;
  private readonly oldestPending: PreparedStatement<never>;
  private readonly failed: PreparedStatement<never>;
  private readonly aboutPayments: PreparedStatement<'since' | 'cardIds' | 'walletIds'>;
  private readonly claims = new TurnBatch<number, WebhookRecord | null>(CLAIM_BATCH_LIMIT, (ids) => this.claimTogether(ids));

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('ids', 'token', 'id', 'status', 'outcome', 'error', 'retryInSeconds', 'uncounted', 'provider', 'externalId', 'eventType', 'rawBody');
    const lease = `NOW(3) + INTERVAL ${CLAIM_LEASE_SECONDS} SECOND`;
    const free = '(lockedUntil IS NULL OR lockedUntil < NOW(3))';
    const retryDue = "status = 'FAILED' AND nextAttemptAt IS NOT NULL AND nextAttemptAt <= NOW(3)";
    const ofThisProcess = { holder: claimTokens.holder };

    this.insert = PreparedStatement.from(query().insert().into(Webhook).values({
      provider: s.provider, externalId: s.externalId, eventType: s.eventType, status: 'PENDING', rawBody: s.rawBody, attempts: 0,
      createdAt: () => 'NOW(3)', updatedAt: () => 'NOW(3)',
    } as object));
    const take = PreparedStatement.from<'ids' | 'token'>(query().update(Webhook)
      .set({ claimToken: () => ':token', lockedUntil: () => lease, attempts: () => 'attempts + 1', updatedAt: () => 'NOW(3)' })
      .where(`id IN (:ids) AND (status = 'PENDING' OR (${retryDue})) AND ${free}`).setParameters(s));
    const taken = PreparedStatement.from<'ids' | 'token'>(selectEntity(dataSource, Webhook, 'w').where('w.id IN (:ids) AND w.claimToken = :token').setParameters(s));
    this.takeAndRead = inOneRoundTrip(take, taken);
    this.renewClaims = PreparedStatement.from(query().update(Webhook).set({ lockedUntil: () => lease })
      .where(`id IN (:ids) AND LEFT(claimToken, ${HOLDER_LENGTH}) = :holder AND lockedUntil IS NOT NULL`).setParameters({ ...s, ...ofThisProcess }));
    this.releaseClaimsOf = PreparedStatement.from(query().update(Webhook).set({ lockedUntil: () => 'NULL' })
      .where(`id IN (:ids) AND LEFT(claimToken, ${HOLDER_LENGTH}) = :holder AND status IN ('PENDING', 'FAILED')`).setParameters({ ...s, ...ofThisProcess }));
    this.finishing = PreparedStatement.from(query().update(Webhook).set({
      status: () => ':status', outcome: () => ':outcome', lastError: () => 'NULL', nextAttemptAt: () => 'NULL', lockedUntil: () => 'NULL',
      processedAt: () => 'NOW(3)', updatedAt: () => 'NOW(3)',
    }).where('id = :id').setParameters(s));
    this.failing = PreparedStatement.from(query().update(Webhook).set({
      status: 'FAILED', lastError: () => ':error', lockedUntil: () => 'NULL', updatedAt: () => 'NOW(3)', attempts: () => 'attempts - :uncounted',
      nextAttemptAt: () => 'IF(:retryInSeconds IS NULL, NULL, NOW(3) + INTERVAL :retryInSeconds SECOND)',
    }).where('id = :id').setParameters(s));
    this.requeueing = PreparedStatement.from(query().update(Webhook).set({ status: 'PENDING', nextAttemptAt: () => 'NULL', updatedAt: () => 'NOW(3)' })
      .where("id = :id AND status = 'FAILED'").setParameters(s));

    const { table, column: c } = sqlNames(dataSource, Webhook);
    const freeNow = `(${c.lockedUntil} IS NULL OR ${c.lockedUntil} < NOW(3))`;
    this.dueSql = `(SELECT ${c.id} AS id FROM ${table} WHERE ${c.status} = 'PENDING' AND ${c.createdAt} < NOW(3) - INTERVAL ? SECOND AND ${freeNow} LIMIT ?)
      UNION ALL
      (SELECT ${c.id} AS id FROM ${table} WHERE ${c.status} = 'FAILED' AND ${c.nextAttemptAt} IS NOT NULL AND ${c.nextAttemptAt} <= NOW(3) AND ${freeNow} LIMIT ?)`;

    this.byId = PreparedStatement.from(selectEntity(dataSource, Webhook, 'w').where('w.id = :id').setParameters(s));
    this.listing = byFilters({ status: 'w.status = :status', provider: 'w.provider = :provider' }, (where) => {
      const webhooks = selectEntity(dataSource, Webhook, 'w');
      for (const condition of where) webhooks.andWhere(condition);
      return PreparedStatement.from<'status' | 'provider'>(webhooks.orderBy('w.id', 'DESC').setParameters(s));
    });
    this.countsByStatus = PreparedStatement.from(query().select('w.provider', 'provider').addSelect('w.status', 'status').addSelect('COUNT(*)', 'n')
      .from(Webhook, 'w').groupBy('w.status').addGroupBy('w.provider'));
    this.oldestPending = PreparedStatement.from(query().select('TIMESTAMPDIFF(MICROSECOND, MIN(w.createdAt), NOW(3)) / 1000000', 'age')
      .from(Webhook, 'w').where("w.status = 'PENDING'"));
    this.failed = PreparedStatement.from(query().select('w.id', 'id').from(Webhook, 'w').where("w.status = 'FAILED'").orderBy('w.id'));
    // Every status and provider named, so the index on (status, provider, arrival) serves the arrival bound; only
    // the rows since then have their body looked into. The body names the payment as the handlers read it.
    this.aboutPayments = PreparedStatement.from(query()
      .select('w.id', 'id').addSelect('w.provider', 'provider').addSelect('w.externalId', 'externalId').addSelect('w.eventType', 'eventType')
      .addSelect('w.status', 'status').addSelect('w.createdAt', 'createdAt')
      .from(Webhook, 'w')
      .where('w.status IN (:statuses) AND w.provider IN (:providers) AND w.createdAt >= :since')
      .andWhere(`((w.provider = 'card_gateway' AND JSON_VALUE(w.rawBody, '$.invoice') IN (:cardIds))
        OR (w.provider = 'mobile_wallet' AND JSON_VALUE(w.rawBody, '$.chargeId') IN (:walletIds)))`)
      .orderBy('w.createdAt', 'DESC').addOrderBy('w.id', 'DESC')
      .setParameters({ ...slots('since', 'cardIds', 'walletIds'), statuses: WEBHOOK_STATUSES, providers: PROVIDERS }));
  }

  /**
   * The webhooks stored about these payments (a card-gateway event's `invoice`, a wallet event's `chargeId`) that
   * arrived at `since` or later, newest first, at most `limit`.
   */
  async aboutPaymentsSince(payments: PaymentKey[], since: string, limit: number): Promise<WebhookSummary[]> {
    const ids = (provider: Provider) => {
      const list = payments.filter((payment) => payment.provider === provider).map((payment) => payment.externalId);
      return list.length ? list : [NO_ID];
    };
    if (!payments.length) return [];
    const { sql, values } = page(this.aboutPayments.with({ since, cardIds: ids('card_gateway'), walletIds: ids('mobile_wallet') }), limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({
      id: Number(row.id), provider: row.provider, externalId: row.externalId, eventType: row.eventType, status: row.status, createdAt: row.createdAt,
    }));
  }

  /**
   * Stores a new event PENDING; a duplicate is an event id already stored, byte for byte (the column's
   * collation is binary). No INSERT IGNORE: it would also turn an id too long for the column into a
   * warning and store it cut.
   */
  async insertPending(provider: Provider, externalId: string, eventType: string, rawBody: Buffer): Promise<InsertOutcome> {
    try {
      const { sql, values } = this.insert.with({ provider, externalId, eventType: eventType.slice(0, 100), rawBody });
      const [result] = await this.pool.query<ResultSetHeader>(sql, values);
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
    const claim = { ids: [...new Set(ids)], token: claimTokens.next() };
    const { sql, values } = this.takeAndRead.with(claim);
    const [[, rows]] = await this.pool.query<RowDataPacket[][]>(sql, values);
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
    return this.renewClaims.with({ ids: ids.length ? ids : [0] });
  }

  /** Lets go at once of this process's claims on `ids` that are not final, for any worker to take now. */
  async releaseClaims(ids: number[]): Promise<void> {
    if (!ids.length) return;
    const { sql, values } = this.releaseClaimsStatement(ids);
    await this.pool.query(sql, values);
  }

  releaseClaimsStatement(ids: number[]): Statement {
    return this.releaseClaimsOf.with({ ids });
  }

  /** The final status, as a statement to commit together with what the handler wrote. */
  finishStatement(id: number, status: 'PROCESSED' | 'SKIPPED', outcome: string): Statement {
    return this.finishing.with({ id, status, outcome: outcome.slice(0, 255) });
  }

  /** The final status of a webhook whose handling wrote nothing else. */
  async finish(id: number, status: 'PROCESSED' | 'SKIPPED', outcome: string): Promise<void> {
    const { sql, values } = this.finishStatement(id, status, outcome);
    await this.pool.query(sql, values);
  }

  /** FAILED, to be tried again in `retryInSeconds` (null: left for the operator); an attempt not `counted` is not one of its automatic attempts. */
  async fail(id: number, error: string, retryInSeconds: number | null, counted = true): Promise<void> {
    const { sql, values } = this.failing.with({ id, error: error.slice(0, 10_000), retryInSeconds, uncounted: counted ? 0 : 1 });
    await this.pool.query(sql, values);
  }

  /** Puts a FAILED webhook back to PENDING for the operator's retry. */
  async requeue(id: number): Promise<boolean> {
    const { sql, values } = this.requeueing.with({ id });
    const [result] = await this.pool.query<ResultSetHeader>(sql, values);
    return result.affectedRows === 1;
  }

  /** PENDING webhooks older than `graceSeconds` and due FAILED ones, not held by an attempt: the sweeper's work. */
  async dueIds(graceSeconds: number, limit: number): Promise<number[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.dueSql, [graceSeconds, limit, limit]);
    return rows.map((row) => Number(row.id));
  }

  async find(id: number): Promise<WebhookRecord | null> {
    const { sql, values } = this.byId.with({ id });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? toWebhook(rows[0]) : null;
  }

  async list(filter: { status?: WebhookStatus; provider?: Provider; limit: number }): Promise<WebhookRecord[]> {
    const { sql, values } = page(this.listing(filter).with({ status: filter.status, provider: filter.provider }), filter.limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map(toWebhook);
  }

  /** How many webhooks each provider has in each status, for the metrics; covered by the index on status, provider and arrival (no row is read). */
  async countsByProviderAndStatus(): Promise<{ provider: string; status: string; count: number }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.countsByStatus.sql);
    return rows.map((row) => ({ provider: String(row.provider), status: String(row.status), count: Number(row.n) }));
  }

  /** Seconds since the oldest PENDING webhook arrived, by the database's clock; 0 when none waits. */
  async oldestPendingAgeSeconds(): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.oldestPending.sql);
    return rows[0]?.age === null || rows[0]?.age === undefined ? 0 : Math.max(0, Number(rows[0].age));
  }

  async failedIds(): Promise<number[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(this.failed.sql);
    return rows.map((row) => Number(row.id));
  }
}
