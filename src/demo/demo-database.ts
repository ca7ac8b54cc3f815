import type mysql from 'mysql2/promise';
import { createDatabase, dropDatabase } from './woocommerce-schema';

/**
 * The table that marks a database as one `npm run demo` created. The demo starts afresh on every run, so it
 * drops its database first: only one with this table, whatever the database's name, so that a DEMO_DB_NAME
 * pointing at a shop's (or anyone's) database never drops it. Outside any table prefix, so no WordPress or
 * service table is taken for it.
 */
export const DEMO_MARKER_TABLE = 'shop_sidecar_demo_database';

export type DemoDatabaseOutcome =
  | { kind: 'created' }
  | { kind: 'recreated' }
  /** The database exists and the demo did not create it: it is left as it is. */
  | { kind: 'not_the_demos' };

/** An empty database `name` marked as the demo's: made anew when it is the demo's own, refused when it is another's. */
export async function freshDemoDatabase(admin: mysql.Connection, name: string): Promise<DemoDatabaseOutcome> {
  const [schemas] = await admin.query<mysql.RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
  let outcome: DemoDatabaseOutcome = { kind: 'created' };
  if (schemas.length > 0) {
    const [markers] = await admin.query<mysql.RowDataPacket[]>(
      'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [name, DEMO_MARKER_TABLE]);
    if (markers.length === 0) return { kind: 'not_the_demos' };
    await dropDatabase(admin, name);
    outcome = { kind: 'recreated' };
  }
  await createDatabase(admin, name);
  await admin.query(
    `CREATE TABLE \`${name}\`.\`${DEMO_MARKER_TABLE}\` (created_at DATETIME NOT NULL, note VARCHAR(255) NOT NULL)`);
  await admin.query(`INSERT INTO \`${name}\`.\`${DEMO_MARKER_TABLE}\` VALUES (UTC_TIMESTAMP(), ?)`,
    ['Created by npm run demo (shop-sidecar), which drops and recreates this database on each run.']);
  return outcome;
}
