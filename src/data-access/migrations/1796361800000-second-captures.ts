import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Second captures (src/payments/second-captures.ts): each flagged payment carries the meta `second_capture_of`,
 * and /metrics counts them on every scrape. The meta table's only index starts with the payment, so that count
 * would read every meta row of every payment; (meta_key, payment_id) reads the flagged ones alone.
 */
export class SecondCaptures1796361800000 implements MigrationInterface {
  name = 'SecondCaptures1796361800000';

  private async hasIndex(runner: QueryRunner, table: string): Promise<boolean> {
    const rows = await runner.query(
      'SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ? LIMIT 1', [table, 'key_payment']);
    return rows.length > 0;
  }

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_payment_meta`;
    if (!(await this.hasIndex(runner, table))) await runner.query(`ALTER TABLE \`${table}\` ADD INDEX key_payment (meta_key, payment_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_payment_meta`;
    if (await this.hasIndex(runner, table)) await runner.query(`ALTER TABLE \`${table}\` DROP INDEX key_payment`);
  }
}
