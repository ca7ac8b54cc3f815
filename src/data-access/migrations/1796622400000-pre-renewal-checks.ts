import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Before the renewal (src/dunning/pre-renewal-check.use-case.ts): one row per subscription and renewal whose
 * payment method was found not to work a few days before it and whose customer was asked for another, once; when
 * the subscription names one that works before the renewal, `fixed_at` says so (a renewal saved before it failed).
 */
export class PreRenewalChecks1796622400000 implements MigrationInterface {
  name = 'PreRenewalChecks1796622400000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_pre_renewal_checks\` (
      subscription_id bigint unsigned NOT NULL,
      next_payment datetime NOT NULL,
      provider varchar(32) NOT NULL,
      payment_method varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      finding varchar(64) NOT NULL,
      asked_at datetime(3) NOT NULL,
      fixed_at datetime(3) NULL,
      fixed_method varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      PRIMARY KEY (subscription_id, next_payment),
      KEY open_checks (fixed_at, next_payment)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_pre_renewal_checks\``);
  }
}
