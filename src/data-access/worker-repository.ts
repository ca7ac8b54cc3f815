import type { DataSource } from 'typeorm';
import type { MysqlDataSourceOptions } from 'typeorm/driver/mysql/MysqlDataSourceOptions';
import mysql, { type Pool, type RowDataPacket } from 'mysql2/promise';
import { WorkerHeartbeat } from '../../entities';
import { rawPool, tableOf } from './data-source';
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

/** The workers' reports (`sidecar_workers`): each process's row, written by itself. */
export class WorkerRepository {
  private readonly pool: Pool;
  private readonly table: string;

  constructor(private readonly dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.table = tableOf(dataSource, WorkerHeartbeat);
  }

  /** Writes the report, with `alongside` (such as the renewal of the claims it holds) in the same round trip. */
  async report(report: WorkerReport, alongside?: Statement): Promise<void> {
    const ago = (ms: number) => `NOW(3) - INTERVAL ${Math.max(0, Math.round(ms)) * 1000} MICROSECOND`;
    const upsert: Statement = {
      sql: `INSERT INTO ${this.table} (name, host, pid, started_at, seen_at, jobs_in_flight, jobs_finished, progress_at)
            VALUES (?, ?, ?, ${ago(report.upMs)}, NOW(3), ?, ?, ${ago(report.sinceProgressMs)})
            ON DUPLICATE KEY UPDATE seen_at = VALUES(seen_at), jobs_in_flight = VALUES(jobs_in_flight),
              jobs_finished = VALUES(jobs_finished), progress_at = VALUES(progress_at)`,
      values: [report.name, report.host.slice(0, 191), report.pid, report.jobsInFlight, report.jobsFinished],
    };
    const { sql, values } = together(alongside ? [upsert, alongside] : [upsert]);
    await this.pool.query(sql, values);
  }

  /**
   * Records that worker `name` stalled, and why, with `alongside` (the release of its claims) in the same
   * round trip, on a connection of its own: a stalled worker's pool may be what is stuck.
   */
  async markStalled(name: string, reason: string, alongside: Statement, timeoutMs: number): Promise<void> {
    await this.onOwnConnection([
      { sql: `UPDATE ${this.table} SET stalled_at = NOW(3), stall_reason = ? WHERE name = ?`, values: [reason.slice(0, 10_000), name] },
      alongside,
    ], timeoutMs);
  }

  /**
   * Worker `name` stopped: it is no longer listed (unless it stalled: that stays to be seen for a day), and `alongside` (the release of the claims it let go of)
   * runs in the same round trip, on a connection of its own, as the worker's pool has been closed by then.
   */
  async leave(name: string, alongside: Statement | null, timeoutMs: number): Promise<void> {
    await this.onOwnConnection([{ sql: `DELETE FROM ${this.table} WHERE name = ? AND stalled_at IS NULL`, values: [name] }, ...(alongside ? [alongside] : [])], timeoutMs);
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
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT *, TIMESTAMPDIFF(MICROSECOND, seen_at, NOW(3)) / 1000000 AS seen_ago, TIMESTAMPDIFF(MICROSECOND, progress_at, NOW(3)) / 1000000 AS progress_ago
       FROM ${this.table} WHERE seen_at > NOW(3) - INTERVAL ? SECOND OR stalled_at > NOW(3) - INTERVAL 1 DAY ORDER BY started_at`,
      [WORKER_GONE_AFTER_SECONDS]);
    return rows.map((row) => ({
      name: String(row.name),
      host: String(row.host),
      pid: Number(row.pid),
      startedAt: String(row.started_at),
      seenSecondsAgo: Math.max(0, Number(row.seen_ago)),
      jobsInFlight: Number(row.jobs_in_flight),
      jobsFinished: Number(row.jobs_finished),
      secondsSinceProgress: Math.max(0, Number(row.progress_ago)),
      stalledAt: row.stalled_at ?? null,
      stallReason: row.stall_reason ?? null,
    }));
  }

  /** Rows of workers gone for a day, so the table holds only what the operator may still want to see. */
  async prune(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE seen_at < NOW(3) - INTERVAL 1 DAY`);
  }
}
