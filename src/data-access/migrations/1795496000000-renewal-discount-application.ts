import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a renewal discount lowered its renewal by, and when; and the index the companion plugin reads a
 * subscription's pending discounts by when Subscriptions creates the renewal order.
 */
export class RenewalDiscountApplication1795496000000 implements MigrationInterface {
  name = 'RenewalDiscountApplication1795496000000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_renewal_discounts`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    const has = async (kind: 'COLUMNS' | 'STATISTICS', column: string, name: string) => {
      const rows = await runner.query(
        `SELECT 1 FROM information_schema.${kind} WHERE table_schema = DATABASE() AND table_name = ? AND ${column} = ? LIMIT 1`, [table, name]);
      return rows.length > 0;
    };
    if (!(await has('COLUMNS', 'column_name', 'applied_amount'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN applied_amount decimal(26,8) NULL AFTER status, ADD COLUMN applied_at datetime(3) NULL AFTER applied_amount`);
    }
    if (!(await has('STATISTICS', 'index_name', 'subscription_status'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD KEY subscription_status (subscription_id, status)`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_renewal_discounts`;
    await runner.query(`ALTER TABLE \`${table}\` DROP KEY subscription_status, DROP COLUMN applied_at, DROP COLUMN applied_amount`);
  }
}
