import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * The order status route found the payment decisions WooCommerce has not applied yet by a join on the changes'
 * status and op lists, which cost MariaDB a range estimate over two indexes on every order read (issue 52). A
 * virtual column, the order's ID while such a decision is open and NULL otherwise, with an index of its own, lets
 * each read find them by one value. The database keeps it: nothing that writes a change has to.
 */
export class OpenPaymentHandOvers1796795200000 implements MigrationInterface {
  name = 'OpenPaymentHandOvers1796795200000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_woocommerce_changes`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (await hasColumn(runner, table, 'open_payment_of')) return;
    await runner.query(`ALTER TABLE \`${table}\`
      ADD COLUMN open_payment_of bigint unsigned AS (IF(status IN ('pending', 'applying') AND op IN ('order_payment_complete', 'order_payment_authorized', 'order_payment_failed'), object_id, NULL)) VIRTUAL,
      ADD KEY open_payment_of (open_payment_of)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_woocommerce_changes`;
    if (await hasColumn(runner, table, 'open_payment_of')) await runner.query(`ALTER TABLE \`${table}\` DROP KEY open_payment_of, DROP COLUMN open_payment_of`);
  }
}
