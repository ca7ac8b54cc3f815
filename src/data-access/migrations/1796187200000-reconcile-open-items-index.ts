import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasIndex } from './schema-facts';

/**
 * Reconciliation's open items for /metrics (counted by provider and kind, with the oldest opening of each) are
 * read from one index, in its order: (status, provider, kind, opened_at) replaces (status, opened_at), which
 * served only that count and left it to group the OPEN rows in a temporary table and sort them on every scrape.
 */
export class ReconcileOpenItemsIndex1796187200000 implements MigrationInterface {
  name = 'ReconcileOpenItemsIndex1796187200000';

  async up(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_reconcile_items`;
    const changes: string[] = [];
    if (!(await hasIndex(runner, table, 'status_provider_kind_opened'))) changes.push('ADD INDEX status_provider_kind_opened (status, provider, kind, opened_at)');
    if (await hasIndex(runner, table, 'status_opened')) changes.push('DROP INDEX status_opened');
    if (changes.length) await runner.query(`ALTER TABLE \`${table}\` ${changes.join(', ')}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const table = `${runner.connection.options.entityPrefix ?? ''}sidecar_reconcile_items`;
    const changes: string[] = [];
    if (!(await hasIndex(runner, table, 'status_opened'))) changes.push('ADD INDEX status_opened (status, opened_at)');
    if (await hasIndex(runner, table, 'status_provider_kind_opened')) changes.push('DROP INDEX status_provider_kind_opened');
    if (changes.length) await runner.query(`ALTER TABLE \`${table}\` ${changes.join(', ')}`);
  }
}
