import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasIndex } from './schema-facts';

/**
 * Card expiry reminders: an index through which the worker's pass walks the active card-gateway agreements
 * by subscription id, a batch at a time (provider, status, subscription_id; the rows of other providers and of
 * disabled agreements are never read), and the one-row table that says where the pass stands, so a restarted
 * worker resumes it and a pass starts at most once per CARD_EXPIRY_REMINDER_INTERVAL_SECONDS.
 */
export class CardExpiryReminderPass1796100800000 implements MigrationInterface {
  name = 'CardExpiryReminderPass1796100800000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    if (!(await hasIndex(runner, `${p}sidecar_agreements`, 'provider_status_subscription'))) {
      await runner.query(`ALTER TABLE \`${p}sidecar_agreements\` ADD INDEX provider_status_subscription (provider, status, subscription_id)`);
    }
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_card_expiry_reminder_pass\` (
      id tinyint unsigned NOT NULL,
      started_at datetime(3) NULL,
      finished_at datetime(3) NULL,
      cursor_id bigint unsigned NOT NULL DEFAULT 0,
      holder varchar(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
      held_until datetime(3) NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    await runner.query(`DROP TABLE IF EXISTS \`${p}sidecar_card_expiry_reminder_pass\``);
    if (await hasIndex(runner, `${p}sidecar_agreements`, 'provider_status_subscription')) await runner.query(`ALTER TABLE \`${p}sidecar_agreements\` DROP INDEX provider_status_subscription`);
  }
}
