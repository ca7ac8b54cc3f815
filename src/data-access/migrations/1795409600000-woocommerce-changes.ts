import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The changes the service hands to WooCommerce: one row per order or subscription change it decided,
 * applied in PHP by the companion plugin with WooCommerce's own calls (see woocommerce-companion/).
 */
export class WooCommerceChanges1795409600000 implements MigrationInterface {
  name = 'WooCommerceChanges1795409600000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_woocommerce_changes\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      op varchar(40) NOT NULL,
      object_id bigint unsigned NOT NULL,
      payload text NOT NULL,
      status varchar(16) NOT NULL,
      action_id bigint unsigned NULL,
      attempts int unsigned NOT NULL DEFAULT 0,
      result text NULL,
      created_at datetime(3) NOT NULL,
      applied_at datetime(3) NULL,
      PRIMARY KEY (id),
      KEY object_status (object_id, status),
      KEY status_created (status, created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_woocommerce_changes\``);
  }
}
