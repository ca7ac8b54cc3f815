import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * The customer index's rolling sweep at the operator's pace (CUSTOMER_INDEX_SWEEP_SECONDS): where each store's
 * pass stands (when it started and ended, when its next batch may be read, the highest ID it covers, the orders
 * counted in it and read so far, the rows read) and the running totals /metrics shows, in the index's state row,
 * so a restarted worker goes on at the same pace instead of starting over.
 */
export class CustomerIndexSweepPace1796273600000 implements MigrationInterface {
  name = 'CustomerIndexSweepPace1796273600000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_customer_contact_index`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (await hasColumn(runner, table, 'sweep_started_at')) return;
    await runner.query(`ALTER TABLE \`${table}\`
      ADD COLUMN sweep_started_at datetime(3) NULL,
      ADD COLUMN sweep_finished_at datetime(3) NULL,
      ADD COLUMN sweep_due_at datetime(3) NULL,
      ADD COLUMN sweep_end_id bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_orders bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_orders_read bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_pass_rows bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_passes bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_rows_read bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_last_pass_ms bigint unsigned NOT NULL DEFAULT 0,
      ADD COLUMN sweep_last_pass_rows bigint unsigned NOT NULL DEFAULT 0`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_customer_contact_index`;
    await runner.query(`ALTER TABLE \`${table}\` DROP COLUMN sweep_started_at, DROP COLUMN sweep_finished_at, DROP COLUMN sweep_due_at,
      DROP COLUMN sweep_end_id, DROP COLUMN sweep_orders, DROP COLUMN sweep_orders_read, DROP COLUMN sweep_pass_rows, DROP COLUMN sweep_passes,
      DROP COLUMN sweep_rows_read, DROP COLUMN sweep_last_pass_ms, DROP COLUMN sweep_last_pass_rows`);
  }
}
