import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * A late request can never become a second charge (issue 49): a charge of the ledger keeps, by the database's clock,
 * until when its last request may still reach the provider, so that no caller on any host closes it as "never made"
 * while that request can still arrive.
 */
export class ChargeInFlight1796708800000 implements MigrationInterface {
  name = 'ChargeInFlight1796708800000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    // MySQL has no ADD COLUMN IF NOT EXISTS: look first, so a repeated run changes nothing.
    if (!(await hasColumn(runner, table, 'in_flight_until'))) await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN in_flight_until datetime(3) NULL AFTER last_sent_at`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_charges`;
    if (await hasColumn(runner, table, 'in_flight_until')) await runner.query(`ALTER TABLE \`${table}\` DROP COLUMN in_flight_until`);
  }
}
