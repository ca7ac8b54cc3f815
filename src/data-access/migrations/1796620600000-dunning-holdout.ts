import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * The holdout (DUNNING_HOLDOUT_PERCENT, src/dunning/holdout.ts): each failed renewal's case keeps the arm it was
 * given when it opened, `service` (the service's own plan) or `baseline` (WooCommerce Subscriptions' default retry
 * timing), for `payment-hub dunning report` and the metrics to compare. Cases opened before it followed the service's plan.
 */
export class DunningHoldout1796620600000 implements MigrationInterface {
  name = 'DunningHoldout1796620600000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    // (MySQL has no ADD COLUMN IF NOT EXISTS: the column is looked for first.)
    if (!(await hasColumn(runner, `${p}sidecar_dunning_cases`, 'arm'))) {
      await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` ADD COLUMN arm varchar(16) NOT NULL DEFAULT 'service' AFTER policy`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    if (await hasColumn(runner, `${p}sidecar_dunning_cases`, 'arm')) await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` DROP COLUMN arm`);
  }
}
