import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The holdout (DUNNING_HOLDOUT_PERCENT, src/dunning/holdout.ts): each failed renewal's case keeps the arm it was
 * given when it opened, `service` (the service's own plan) or `baseline` (WooCommerce Subscriptions' default retry
 * timing), for `payment-hub dunning report` and the metrics to compare. Cases opened before it followed the service's plan.
 */
export class DunningHoldout1796620600000 implements MigrationInterface {
  name = 'DunningHoldout1796620600000';

  private async hasArmColumn(runner: QueryRunner, table: string): Promise<boolean> {
    const rows = await runner.query(
      'SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ? LIMIT 1', [table, 'arm']);
    return rows.length > 0;
  }

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    // (MySQL has no ADD COLUMN IF NOT EXISTS: the column is looked for first.)
    if (!(await this.hasArmColumn(runner, `${p}sidecar_dunning_cases`))) {
      await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` ADD COLUMN arm varchar(16) NOT NULL DEFAULT 'service' AFTER policy`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    if (await this.hasArmColumn(runner, `${p}sidecar_dunning_cases`)) await runner.query(`ALTER TABLE \`${p}sidecar_dunning_cases\` DROP COLUMN arm`);
  }
}
