import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasIndex } from './schema-facts';

/**
 * Reconciliation: what is still open at a provider and when to ask about it next (a range scan on
 * `next_at` finds what is due; `status, opened_at` the oldest open item), running totals for /metrics,
 * and how far the payments and agreements tables have been looked through, by their `updated_at`.
 */
export class Reconciliation1795928000000 implements MigrationInterface {
  name = 'Reconciliation1795928000000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_reconcile_items\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      kind varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      ref_id bigint unsigned NOT NULL,
      provider varchar(32) NOT NULL,
      status varchar(16) NOT NULL,
      opened_at datetime(3) NOT NULL,
      next_at datetime(3) NULL,
      checks int unsigned NOT NULL DEFAULT 0,
      failures int unsigned NOT NULL DEFAULT 0,
      last_checked_at datetime(3) NULL,
      last_state varchar(64) NULL,
      last_error varchar(255) NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY kind_ref (kind, ref_id),
      KEY next_at (next_at),
      KEY status_opened (status, opened_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_reconcile_counts\` (
      provider varchar(32) NOT NULL,
      kind varchar(16) NOT NULL,
      outcome varchar(16) NOT NULL,
      count bigint unsigned NOT NULL DEFAULT 0,
      PRIMARY KEY (provider, kind, outcome)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_reconcile_state\` (
      name varchar(32) NOT NULL,
      value varchar(64) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (name)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    // What changed since the last look, read through an index however many payments the table holds.
    for (const table of [`${p}sidecar_payments`, `${p}sidecar_agreements`]) {
      if (!(await hasIndex(runner, table, 'reconcile_updated_at'))) {
        await runner.query(`ALTER TABLE \`${table}\` ADD INDEX reconcile_updated_at (updated_at)`);
      }
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    for (const table of [`${p}sidecar_payments`, `${p}sidecar_agreements`]) {
      if (await hasIndex(runner, table, 'reconcile_updated_at')) await runner.query(`ALTER TABLE \`${table}\` DROP INDEX reconcile_updated_at`);
    }
    for (const name of ['sidecar_reconcile_state', 'sidecar_reconcile_counts', 'sidecar_reconcile_items']) {
      await runner.query(`DROP TABLE IF EXISTS \`${p}${name}\``);
    }
  }
}
