import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The wallet retries the service's charges itself (issue 45): a wallet charge of the ledger keeps the `retryDays`
 * its request was written with, so that each repeat of the request sends the same body under the same
 * Idempotency-Key. Charges written before this stay null and are repeated as they were first sent (`retryDays: 0`).
 */
export class WalletRetryDays1796621200000 implements MigrationInterface {
  name = 'WalletRetryDays1796621200000';

  private async hasColumn(runner: QueryRunner, table: string): Promise<boolean> {
    const rows = await runner.query(
      'SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ? LIMIT 1', [table, 'retry_days']);
    return rows.length > 0;
  }

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (!(await this.hasColumn(runner, table))) await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN retry_days tinyint unsigned NULL AFTER due`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    if (await this.hasColumn(runner, table)) await runner.query(`ALTER TABLE \`${table}\` DROP COLUMN retry_days`);
  }
}
