import type { QueryRunner } from 'typeorm';

/**
 * What the migrations ask the database about its own schema before they change it. MySQL and MariaDB have no
 * ADD COLUMN / ADD KEY IF NOT EXISTS that works on both, so each migration looks first, so that a repeated run
 * changes nothing. Table, column and index names are passed as parameters, never written into the SQL.
 * This file is not a migration: index.ts lists the migrations by name and does not include it.
 */

/** Whether `table` in the current database has a column named `column`. */
export async function hasColumn(runner: QueryRunner, table: string, column: string): Promise<boolean> {
  const rows = await runner.query(
    'SELECT 1 FROM information_schema.COLUMNS WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ? LIMIT 1', [table, column]);
  return rows.length > 0;
}

/** Whether `table` in the current database has an index named `index`. */
export async function hasIndex(runner: QueryRunner, table: string, index: string): Promise<boolean> {
  const rows = await runner.query(
    'SELECT 1 FROM information_schema.STATISTICS WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ? LIMIT 1', [table, index]);
  return rows.length > 0;
}
