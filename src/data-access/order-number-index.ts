import type { DataSource } from 'typeorm';
import { PostMeta } from '../../entities';
import { sqlNames } from './prepared-statement';

/**
 * WordPress indexes no post meta by its value, so with a sequential numbering plugin and the legacy
 * order storage, finding an order by its number reads every `_order_number` row. This index (the only
 * change the service ever makes to a WordPress table) is added and removed only on the operator's
 * explicit command. HPOS's order meta already has such an index.
 */
export const ORDER_NUMBER_INDEX = 'shop_sidecar_order_number';

export async function orderNumberIndexExists(dataSource: DataSource): Promise<boolean> {
  const rows = await dataSource.query(`SHOW INDEX FROM ${sqlNames(dataSource, PostMeta).table} WHERE Key_name = ?`, [ORDER_NUMBER_INDEX]);
  return rows.length > 0;
}

export async function addOrderNumberIndex(dataSource: DataSource): Promise<'added' | 'present'> {
  if (await orderNumberIndexExists(dataSource)) return 'present';
  const { table, column } = sqlNames(dataSource, PostMeta);
  await dataSource.query(`ALTER TABLE ${table} ADD INDEX ${ORDER_NUMBER_INDEX} (${column.key}(32), ${column.value}(32)), ALGORITHM=INPLACE, LOCK=NONE`);
  return 'added';
}

export async function removeOrderNumberIndex(dataSource: DataSource): Promise<'removed' | 'absent'> {
  if (!(await orderNumberIndexExists(dataSource))) return 'absent';
  await dataSource.query(`ALTER TABLE ${sqlNames(dataSource, PostMeta).table} DROP INDEX ${ORDER_NUMBER_INDEX}`);
  return 'removed';
}
