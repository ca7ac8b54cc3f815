import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each worker process reports here every few seconds, so a stalled one is seen from outside it. */
export class WorkerHeartbeats1795841600000 implements MigrationInterface {
  name = 'WorkerHeartbeats1795841600000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_workers\` (
      name char(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      host varchar(191) NOT NULL,
      pid int unsigned NOT NULL,
      started_at datetime(3) NOT NULL,
      seen_at datetime(3) NOT NULL,
      jobs_in_flight int unsigned NOT NULL,
      jobs_finished bigint unsigned NOT NULL,
      progress_at datetime(3) NOT NULL,
      stalled_at datetime(3) NULL,
      stall_reason text NULL,
      PRIMARY KEY (name)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_workers\``);
  }
}
