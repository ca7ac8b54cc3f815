import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The payment hub's tables: received webhooks, payments and their meta, agreements, dunning retries, wallet registrations. */
export class PaymentHub1795236800000 implements MigrationInterface {
  name = 'PaymentHub1795236800000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    const table = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_webhooks\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      provider varchar(32) NOT NULL,
      external_id varchar(191) NOT NULL,
      event_type varchar(100) NOT NULL,
      status varchar(16) NOT NULL,
      raw_body mediumblob NOT NULL,
      attempts int unsigned NOT NULL DEFAULT 0,
      last_error text NULL,
      outcome varchar(255) NULL,
      next_attempt_at datetime(3) NULL,
      locked_until datetime(3) NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      processed_at datetime(3) NULL,
      PRIMARY KEY (id),
      UNIQUE KEY provider_external_id (provider, external_id),
      KEY status_next_attempt (status, next_attempt_at)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_payments\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      provider varchar(32) NOT NULL,
      external_id varchar(191) NOT NULL,
      status varchar(16) NULL,
      order_id bigint unsigned NULL,
      agreement_id bigint unsigned NULL,
      amount_minor bigint NULL,
      currency varchar(10) NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY provider_external_id (provider, external_id),
      KEY order_id (order_id)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_payment_meta\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      payment_id bigint unsigned NOT NULL,
      meta_key varchar(64) NOT NULL,
      meta_value text NULL,
      PRIMARY KEY (id),
      UNIQUE KEY payment_key (payment_id, meta_key)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_agreements\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      provider varchar(32) NOT NULL,
      external_id varchar(191) NOT NULL,
      status varchar(16) NOT NULL,
      disable_reason varchar(16) NULL,
      customer_handle varchar(191) NULL,
      payment_method varchar(191) NULL,
      subscription_id bigint unsigned NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY provider_external_id (provider, external_id),
      KEY subscription_id (subscription_id)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_payment_retries\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      order_id bigint unsigned NOT NULL,
      subscription_id bigint unsigned NOT NULL,
      payment_id bigint unsigned NOT NULL,
      attempt int unsigned NOT NULL,
      status varchar(16) NOT NULL,
      scheduled_at datetime(3) NOT NULL,
      idempotency_key varchar(64) NOT NULL,
      result varchar(255) NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY order_attempt (order_id, attempt),
      KEY status_scheduled (status, scheduled_at)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_mobile_wallet_webhooks\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      registration_id varchar(64) NOT NULL,
      url varchar(2048) NOT NULL,
      events text NOT NULL,
      secret varchar(255) NOT NULL,
      created_at datetime(3) NOT NULL,
      PRIMARY KEY (id)
    ) ${table}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    for (const name of ['sidecar_mobile_wallet_webhooks', 'sidecar_payment_retries', 'sidecar_agreements', 'sidecar_payment_meta', 'sidecar_payments', 'sidecar_webhooks']) {
      await runner.query(`DROP TABLE IF EXISTS \`${p}${name}\``);
    }
  }
}
