import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn, hasIndex } from './schema-facts';

/**
 * What a renewal discount lowered its renewal by, and when; and the index the companion plugin reads a
 * subscription's pending discounts by when Subscriptions creates the renewal order.
 */
export class RenewalDiscountApplication1795496000000 implements MigrationInterface {
  name = 'RenewalDiscountApplication1795496000000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_renewal_discounts`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (!(await hasColumn(runner, table, 'applied_amount'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN applied_amount decimal(26,8) NULL AFTER status, ADD COLUMN applied_at datetime(3) NULL AFTER applied_amount`);
    }
    if (!(await hasIndex(runner, table, 'subscription_status'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD KEY subscription_status (subscription_id, status)`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_renewal_discounts`;
    await runner.query(`ALTER TABLE \`${table}\` DROP KEY subscription_status, DROP COLUMN applied_at, DROP COLUMN applied_amount`);
  }
}
