import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasIndex } from './schema-facts';

/**
 * Second captures (src/payments/second-captures.ts): each flagged payment carries the meta `second_capture_of`,
 * and /metrics counts them on every scrape. The meta table's only index starts with the payment, so that count
 * would read every meta row of every payment; (meta_key, payment_id) reads the flagged ones alone.
 */
export class SecondCaptures1796361800000 implements MigrationInterface {
  name = 'SecondCaptures1796361800000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_payment_meta`;
    if (!(await hasIndex(runner, table, 'key_payment'))) await runner.query(`ALTER TABLE \`${table}\` ADD INDEX key_payment (meta_key, payment_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_payment_meta`;
    if (await hasIndex(runner, table, 'key_payment')) await runner.query(`ALTER TABLE \`${table}\` DROP INDEX key_payment`);
  }
}
