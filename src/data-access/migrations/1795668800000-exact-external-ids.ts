import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Binary collations that also count trailing spaces (NO PAD): MariaDB 10.2+, then MySQL 8.0.17+. */
const EXACT_COLLATIONS = ['utf8mb4_nopad_bin', 'utf8mb4_0900_bin'];

/**
 * Provider ids compare exactly. The first tables compared them under utf8mb4_unicode_ci, so `evt-A`,
 * `evt-a`, `evt-a ` and `evt-á` were one event (a later one answered as a duplicate and never
 * stored), and held 191 characters. Event, payment and agreement ids, and the agreements' customer
 * handle and payment method, now take 255 characters under a binary NO PAD collation: equal only when
 * every byte is. Only the service's own tables change.
 */
export class ExactExternalIds1795668800000 implements MigrationInterface {
  name = 'ExactExternalIds1795668800000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    const rows: { name: string }[] = await runner.query(
      `SELECT COLLATION_NAME AS name FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (${EXACT_COLLATIONS.map(() => '?').join(', ')})`, EXACT_COLLATIONS);
    const collation = EXACT_COLLATIONS.find((name) => rows.some((row) => row.name === name));
    if (!collation) throw new Error(`the database has none of the collations ${EXACT_COLLATIONS.join(', ')}: MariaDB 10.2 or MySQL 8.0.17 (or newer) is needed`);
    const exact = (column: string, nullable: boolean) =>
      `MODIFY ${column} varchar(255) CHARACTER SET utf8mb4 COLLATE ${collation} ${nullable ? 'NULL' : 'NOT NULL'}`;
    await runner.query(`ALTER TABLE \`${p}sidecar_webhooks\` ${exact('external_id', false)}`);
    await runner.query(`ALTER TABLE \`${p}sidecar_payments\` ${exact('external_id', false)}`);
    await runner.query(`ALTER TABLE \`${p}sidecar_agreements\` ${exact('external_id', false)}, ${exact('customer_handle', true)}, ${exact('payment_method', true)}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    const loose = (column: string, nullable: boolean) => `MODIFY ${column} varchar(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci ${nullable ? 'NULL' : 'NOT NULL'}`;
    await runner.query(`ALTER TABLE \`${p}sidecar_webhooks\` ${loose('external_id', false)}`);
    await runner.query(`ALTER TABLE \`${p}sidecar_payments\` ${loose('external_id', false)}`);
    await runner.query(`ALTER TABLE \`${p}sidecar_agreements\` ${loose('external_id', false)}, ${loose('customer_handle', true)}, ${loose('payment_method', true)}`);
  }
}
