import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index for GET /metrics: webhooks counted by status and provider, and the oldest PENDING one, read
 * from the index alone, however many processed webhooks the table holds.
 */
export class WebhookMetricsIndex1795582400000 implements MigrationInterface {
  name = 'WebhookMetricsIndex1795582400000';

  private async hasIndex(runner: QueryRunner, table: string): Promise<boolean> {
    const rows = await runner.query(
      `SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'status_provider_created' LIMIT 1`, [table]);
    return rows.length > 0;
  }

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (!(await this.hasIndex(runner, table))) {
      await runner.query(`ALTER TABLE \`${table}\` ADD INDEX status_provider_created (status, provider, created_at)`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_webhooks`;
    if (await this.hasIndex(runner, table)) await runner.query(`ALTER TABLE \`${table}\` DROP INDEX status_provider_created`);
  }
}
