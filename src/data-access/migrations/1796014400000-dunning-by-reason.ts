import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dunning by decline reason: each retry belongs to a plan, each failed renewal is a case from its first
 * decline to its end (what the dunning report counts), every charge on a payment method is logged for the
 * card schemes' caps, and each card expiry reminder is remembered so it goes once.
 */
export class DunningByReason1796014400000 implements MigrationInterface {
  name = 'DunningByReason1796014400000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    const columns = await runner.query(`SHOW COLUMNS FROM \`${p}sidecar_payment_retries\` LIKE 'plan'`);
    if (!columns.length) {
      await runner.query(`ALTER TABLE \`${p}sidecar_payment_retries\` ADD COLUMN plan varchar(16) NOT NULL DEFAULT 'soft' AFTER idempotency_key`);
    }
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_dunning_cases\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      order_id bigint unsigned NOT NULL,
      subscription_id bigint unsigned NOT NULL,
      payment_id bigint unsigned NOT NULL,
      provider varchar(32) NOT NULL,
      method_key varchar(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      currency varchar(10) NOT NULL,
      amount_minor bigint NOT NULL,
      first_reason varchar(64) NOT NULL,
      policy varchar(16) NOT NULL,
      status varchar(16) NOT NULL,
      attempts int unsigned NOT NULL DEFAULT 1,
      opened_at datetime(3) NOT NULL,
      customer_asked_at datetime(3) NULL,
      customer_reminded_at datetime(3) NULL,
      deadline_at datetime(3) NULL,
      closed_at datetime(3) NULL,
      recovered_by varchar(32) NULL,
      recovered_amount_minor bigint NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY order_id (order_id),
      KEY status_deadline (status, deadline_at),
      KEY opened_at (opened_at),
      KEY subscription_status (subscription_id, status),
      KEY method_status (method_key, status)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_charge_attempts\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      method_key varchar(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      order_id bigint unsigned NULL,
      payment_id bigint unsigned NULL,
      attempted_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      KEY method_attempted (method_key, attempted_at),
      UNIQUE KEY payment_id (payment_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_card_expiry_reminders\` (
      subscription_id bigint unsigned NOT NULL,
      payment_method varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      exp_date varchar(8) NOT NULL,
      sent_at datetime(3) NOT NULL,
      PRIMARY KEY (subscription_id, payment_method)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_card_expiry_reminders\``);
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_charge_attempts\``);
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_dunning_cases\``);
    await runner.query(`ALTER TABLE \`${p}sidecar_payment_retries\` DROP COLUMN plan`);
  }
}
