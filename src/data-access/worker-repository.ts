import type { DataSource } from 'typeorm';
import type { MysqlDataSourceOptions } from 'typeorm/driver/mysql/MysqlDataSourceOptions';
import mysql, { type Pool, type RowDataPacket } from 'mysql2/promise';
import { WorkerHeartbeat } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement, selectEntity, slots, sqlNames } from './prepared-statement';
import { together, type Statement } from './transaction';

/** What a worker reports of itself. */
export interface WorkerReport {
  name: string;
  host: string;
  pid: number;
  /** Milliseconds since the process started. */
  upMs: number;
  jobsInFlight: number;
  jobsFinished: number;
  /** Milliseconds since a job last finished (or since the start, before the first). */
  sinceProgressMs: number;
}

/** A worker as the database last heard of it; ages by the database's clock. */
export interface WorkerRecord {
  name: string;
  host: string;
  pid: number;
  startedAt: string;
  seenSecondsAgo: number;
  jobsInFlight: number;
  jobsFinished: number;
  secondsSinceProgress: number;
  stalledAt: string | null;
  stallReason: string | null;
}

/** A worker not heard from for this long is taken as gone (it reports every few seconds). */
export const WORKER_GONE_AFTER_SECONDS = 30;

/** The workers' reports: each process's row, written by itself. */
export class WorkerRepository {
  private readonly pool: Pool;
  /** The worker's row, new or with what changes replaced: an upsert the query builder cannot write. */
  private readonly reportSql: string;
  private readonly stalled: PreparedStatement<'name' | 'reason'>;
  private readonly leaving: PreparedStatement<'name'>;
  private readonly recentWorkers: PreparedStatement<never>;
  private readonly pruning: PreparedStatement<never>;

  constructor(private readonly dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    const query = () => dataSource.createQueryBuilder();
    const s = slots('name', 'reason');

    const { table, column: c } = sqlNames(dataSource, WorkerHeartbeat);
    const ago = 'NOW(3) - INTERVAL ? MICROSECOND';
    const replaced = [c.seenAt, c.jobsInFlight, c.jobsFinished, c.progressAt];
    this.reportSql = `INSERT INTO ${table} (${c.name}, ${c.host}, ${c.pid}, ${c.startedAt}, ${c.seenAt}, ${c.jobsInFlight}, ${c.jobsFinished}, ${c.progressAt})
      VALUES (?, ?, ?, ${ago}, NOW(3), ?, ?, ${ago})
      ON DUPLICATE KEY UPDATE ${replaced.map((column) => `${column} = VALUES(${column})`).join(', ')}`;
    this.stalled = PreparedStatement.from(query().update(WorkerHeartbeat).set({ stalledAt: () => 'NOW(3)', stallReason: () => ':reason' })
      .where('name = :name').setParameters(s));
    this.leaving = PreparedStatement.from(query().delete().from(WorkerHeartbeat).where('name = :name AND stalledAt IS NULL').setParameters(s));
    this.recentWorkers = PreparedStatement.from(selectEntity(dataSource, WorkerHeartbeat, 'w')
      .addSelect('TIMESTAMPDIFF(MICROSECOND, w.seenAt, NOW(3)) / 1000000', 'seenAgo')
      .addSelect('TIMESTAMPDIFF(MICROSECOND, w.progressAt, NOW(3)) / 1000000', 'progressAgo')
      .where('w.seenAt > NOW(3) - INTERVAL :gone SECOND OR w.stalledAt > NOW(3) - INTERVAL 1 DAY').orderBy('w.startedAt')
      .setParameters({ gone: WORKER_GONE_AFTER_SECONDS }));
    this.pruning = PreparedStatement.from(query().delete().from(WorkerHeartbeat).where('seenAt < NOW(3) - INTERVAL 1 DAY'));
  }

  /** Writes the report, with `alongside` (such as the renewal of the claims it holds) in the same round trip. */
  async report(report: WorkerReport, alongside?: Statement): Promise<void> {
    const micros = (ms: number) => Math.max(0, Math.round(ms)) * 1000;
    const upsert: Statement = {
      sql: this.reportSql,
      values: [report.name, report.host.slice(0, 191), report.pid, micros(report.upMs), report.jobsInFlight, report.jobsFinished, micros(report.sinceProgressMs)],
    };
    const { sql, values } = together(alongside ? [upsert, alongside] : [upsert]);
    await this.pool.query(sql, values);
  }

  /**
   * Records that worker `name` stalled, and why, with `alongside` (the release of its claims) in the same
   * round trip, on a connection of its own: a stalled worker's pool may be what is stuck.
   */
  async markStalled(name: string, reason: string, alongside: Statement, timeoutMs: number): Promise<void> {
    await this.onOwnConnection([this.stalled.with({ name, reason: reason.slice(0, 10_000) }), alongside], timeoutMs);
  }

  /**
   * Worker `name` stopped: it is no longer listed (unless it stalled: that stays to be seen for a day), and `alongside` (the release of the claims it let go of)
   * runs in the same round trip, on a connection of its own, as the worker's pool has been closed by then.
   */
  async leave(name: string, alongside: Statement | null, timeoutMs: number): Promise<void> {
    await this.onOwnConnection([this.leaving.with({ name }), ...(alongside ? [alongside] : [])], timeoutMs);
  }

  private async onOwnConnection(statements: Statement[], timeoutMs: number): Promise<void> {
    // The data source's own settings (TCP or socket, TLS), under mysql2's names.
    const { host, port, socketPath, ssl, username, password, database, charset } = this.dataSource.options as MysqlDataSourceOptions;
    const connection = await mysql.createConnection({
      host, port, socketPath, ssl: ssl as mysql.SslOptions | undefined, user: username, password, database, charset,
      connectTimeout: timeoutMs, multipleStatements: true,
    });
    try {
      const { sql, values } = together(statements);
      await connection.query({ sql, values, timeout: timeoutMs });
    } finally {
      connection.destroy();
    }
  }

  /** Workers heard from lately, and those that stalled (kept for a day, so the operator sees why a worker was restarted). */
  async recent(): Promise<WorkerRecord[]> {
    const { sql, values } = this.recentWorkers.with({});
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    return rows.map((row) => ({
      name: String(row.name),
      host: String(row.host),
      pid: Number(row.pid),
      startedAt: String(row.startedAt),
      seenSecondsAgo: Math.max(0, Number(row.seenAgo)),
      jobsInFlight: Number(row.jobsInFlight),
      jobsFinished: Number(row.jobsFinished),
      secondsSinceProgress: Math.max(0, Number(row.progressAgo)),
      stalledAt: row.stalledAt ?? null,
      stallReason: row.stallReason ?? null,
    }));
  }

  /** Rows of workers gone for a day, so the table holds only what the operator may still want to see. */
  async prune(): Promise<void> {
    await this.pool.query(this.pruning.sql);
  }
}
