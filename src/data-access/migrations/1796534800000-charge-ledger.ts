import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * The charge ledger (src/payments/charge-ledger.ts): each charge the service asks a provider for, written before it
 * asks, and each renewal's one slot for an open charge. Charges made before this migration are left to the paths
 * that knew them (their payments rows); the ledger holds every charge asked for from now on. A case also keeps the
 * payment method it last saw, so that a method the customer switches to is found whichever comes first.
 */
export class ChargeLedger1796534800000 implements MigrationInterface {
  name = 'ChargeLedger1796534800000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_charges\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      order_id bigint unsigned NOT NULL,
      subscription_id bigint unsigned NOT NULL,
      provider varchar(32) NOT NULL,
      external_id varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      idempotency_key varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      amount_minor bigint NOT NULL,
      currency varchar(10) NOT NULL,
      payment_method varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      customer_handle varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      due char(10) CHARACTER SET ascii COLLATE ascii_bin NULL,
      description varchar(255) NOT NULL,
      requested_by varchar(16) NOT NULL,
      retry_id bigint unsigned NULL,
      state varchar(16) NOT NULL,
      payment_id bigint unsigned NULL,
      sends int unsigned NOT NULL DEFAULT 0,
      unanswered int unsigned NOT NULL DEFAULT 0,
      last_sent_at datetime(3) NULL,
      cancel_wanted_at datetime(3) NULL,
      cancel_reason varchar(64) NULL,
      result varchar(255) NULL,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      closed_at datetime(3) NULL,
      PRIMARY KEY (id),
      KEY order_id (order_id),
      KEY state (state),
      KEY provider_external_id (provider, external_id),
      KEY retry_id (retry_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_renewal_charge_slots\` (
      order_id bigint unsigned NOT NULL,
      open_charge_id bigint unsigned NULL,
      taken_charge_id bigint unsigned NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (order_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    // The payment method a failed renewal's case saw last: the subscription naming another is the customer's switch.
    // (MySQL has no ADD COLUMN IF NOT EXISTS: the column is looked for first.)
    if (!(await hasColumn(runner, `${p}sidecar_dunning_cases`, 'payment_method_seen'))) {
      await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` ADD COLUMN payment_method_seen varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL AFTER deadline_at`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_renewal_charge_slots\``);
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_charges\``);
    if (await hasColumn(runner, `${p}sidecar_dunning_cases`, 'payment_method_seen')) await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` DROP COLUMN payment_method_seen`);
  }
}
