import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * The wallet retries the service's charges itself (issue 45): a wallet charge of the ledger keeps the `retryDays`
 * its request was written with, so that each repeat of the request sends the same body under the same
 * Idempotency-Key. Charges written before this stay null and are repeated as they were first sent (`retryDays: 0`).
 */
export class WalletRetryDays1796621200000 implements MigrationInterface {
  name = 'WalletRetryDays1796621200000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (!(await hasColumn(runner, table, 'retry_days'))) await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN retry_days tinyint unsigned NULL AFTER due`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    if (await hasColumn(runner, table, 'retry_days')) await runner.query(`ALTER TABLE \`${table}\` DROP COLUMN retry_days`);
  }
}
