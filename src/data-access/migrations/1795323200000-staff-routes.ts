import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The discount types a shop starts with; staff may add more rows. Schemes are defined in code (renewal-discounts/discount-schemes.ts). */
const DEFAULT_DISCOUNT_TYPES = [
  { slug: 'retention-percentage', name: 'Fastholdelsesrabat (procent)', scheme: 'percentage', description: 'Procent af næste fornyelse, for at beholde kunden.' },
  { slug: 'retention-amount', name: 'Fastholdelsesrabat (beløb)', scheme: 'fixed_amount', description: 'Fast beløb af næste fornyelse, for at beholde kunden.' },
  { slug: 'compensation', name: 'Kompensation', scheme: 'fixed_amount', description: 'Beløb trukket fra næste fornyelse som kompensation, fx for en forsinket levering.' },
];

/**
 * The staff routes' tables: the customer contact index (and how far it has read each store), recorded
 * cancellation reasons, renewal discount types (with the default types) and renewal discounts.
 * The contact index is filled afterwards by `npm run migrate` (and kept current by the worker).
 */
export class StaffRoutes1795323200000 implements MigrationInterface {
  name = 'StaffRoutes1795323200000';

  async up(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    const table = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
    // Binary collation on the lookup keys: "søren@" and "soren@" are different addresses.
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_customer_contacts\` (
      order_id bigint unsigned NOT NULL,
      order_type varchar(20) NOT NULL,
      customer_id bigint unsigned NOT NULL DEFAULT 0,
      email varchar(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      phone varchar(20) CHARACTER SET ascii COLLATE ascii_bin NULL,
      date_created_gmt datetime NULL,
      PRIMARY KEY (order_id),
      KEY email_type_date (email, order_type, date_created_gmt),
      KEY phone_type_date (phone, order_type, date_created_gmt),
      KEY customer_type_date (customer_id, order_type, date_created_gmt)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_customer_contact_index\` (
      store varchar(10) NOT NULL,
      built tinyint(1) NOT NULL DEFAULT 0,
      build_cursor bigint unsigned NOT NULL DEFAULT 0,
      max_id bigint unsigned NOT NULL DEFAULT 0,
      changed_since datetime NULL,
      changed_after_id bigint unsigned NOT NULL DEFAULT 0,
      sweep_cursor bigint unsigned NOT NULL DEFAULT 0,
      refreshed_at datetime(3) NULL,
      PRIMARY KEY (store)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_subscription_cancellation_reasons\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      subscription_id bigint unsigned NOT NULL,
      reason_id bigint unsigned NOT NULL,
      title text NOT NULL,
      slug varchar(200) NOT NULL,
      recorded_by bigint unsigned NOT NULL DEFAULT 0,
      date_gmt datetime NOT NULL,
      PRIMARY KEY (id),
      KEY subscription_id (subscription_id)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_renewal_discount_types\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      slug varchar(100) NOT NULL,
      name varchar(200) NOT NULL,
      scheme varchar(32) NOT NULL,
      description text NULL,
      created_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY slug (slug)
    ) ${table}`);
    await runner.query(`CREATE TABLE IF NOT EXISTS \`${p}sidecar_renewal_discounts\` (
      id bigint unsigned NOT NULL AUTO_INCREMENT,
      subscription_id bigint unsigned NOT NULL,
      order_id bigint unsigned NULL,
      type_id bigint unsigned NOT NULL,
      amount decimal(26,8) NOT NULL,
      currency varchar(10) NOT NULL,
      status varchar(20) NOT NULL,
      created_via varchar(100) NOT NULL,
      created_by bigint unsigned NOT NULL DEFAULT 0,
      created_at datetime(3) NOT NULL,
      updated_at datetime(3) NOT NULL,
      PRIMARY KEY (id),
      KEY subscription_id (subscription_id),
      KEY order_id (order_id)
    ) ${table}`);
    for (const type of DEFAULT_DISCOUNT_TYPES) {
      await runner.query(
        `INSERT IGNORE INTO \`${p}sidecar_renewal_discount_types\` (slug, name, scheme, description, created_at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3))`,
        [type.slug, type.name, type.scheme, type.description],
      );
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const p = runner.connection.options.entityPrefix ?? '';
    for (const name of ['sidecar_renewal_discounts', 'sidecar_renewal_discount_types', 'sidecar_subscription_cancellation_reasons', 'sidecar_customer_contact_index', 'sidecar_customer_contacts']) {
      await runner.query(`DROP TABLE IF EXISTS \`${p}${name}\``);
    }
  }
}
