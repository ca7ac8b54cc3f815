import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasColumn } from './schema-facts';

/**
 * Each processing attempt marks the webhooks it takes with a token of its own, so that one statement can
 * take several webhooks and then read back exactly those it took (and none another worker took meanwhile).
 */
export class WebhookClaimToken1795755200000 implements MigrationInterface {
  name = 'WebhookClaimToken1795755200000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (!(await hasColumn(runner, table, 'claim_token'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD COLUMN claim_token char(22) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER locked_until`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (await hasColumn(runner, table, 'claim_token')) await runner.query(`ALTER TABLE \`${table}\` DROP COLUMN claim_token`);
  }
}
