import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What staff did on a failed renewal from the order screen (charge now, send the payment link, stop dunning),
 * and who: the failed renewal's story shows it, and nothing else records it.
 */
export class DunningStaffActions1796448000000 implements MigrationInterface {
  name = 'DunningStaffActions1796448000000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_dunning_staff_actions\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      case_id bigint unsigned NOT NULL,
      order_id bigint unsigned NOT NULL,
      action varchar(32) NOT NULL,
      attempt int unsigned NULL,
      user_id bigint unsigned NOT NULL,
      user_name varchar(250) NOT NULL,
      created_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      KEY order_created (order_id, created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_dunning_staff_actions\``);
  }
}
