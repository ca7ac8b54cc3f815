import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A provider's refusal of a charge request that is the service's own fault (a 4xx that is not a decline):
 * recorded so the attempt is held rather than failed, and so `doctor`, /metrics and the alert see it.
 */
export class ProviderRefusals1796360000000 implements MigrationInterface {
  name = 'ProviderRefusals1796360000000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_provider_refusals\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      provider varchar(32) NOT NULL,
      retry_id bigint unsigned NOT NULL,
      order_id bigint unsigned NOT NULL,
      http_status int unsigned NULL,
      code varchar(128) NULL,
      message varchar(255) NOT NULL,
      created_at datetime(3) NOT NULL,
      resolved_at datetime(3) NULL,
      PRIMARY KEY (id),
      KEY resolved_at (resolved_at),
      KEY retry_id (retry_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_provider_refusals\``);
  }
}
