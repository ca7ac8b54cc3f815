import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasIndex } from './schema-facts';

/**
 * An index for GET /metrics: webhooks counted by status and provider, and the oldest PENDING one, read
 * from the index alone, however many processed webhooks the table holds.
 */
export class WebhookMetricsIndex1795582400000 implements MigrationInterface {
  name = 'WebhookMetricsIndex1795582400000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (!(await hasIndex(runner, table, 'status_provider_created'))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD INDEX status_provider_created (status, provider, created_at)`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (await hasIndex(runner, table, 'status_provider_created')) await runner.query(`ALTER TABLE \`${table}\` DROP INDEX status_provider_created`);
  }
}
