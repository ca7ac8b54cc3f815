import type { DataSource } from 'typeorm';
import { PostMeta } from '../../entities';
import { tableOf } from './data-source';

/**
 * WordPress's postmeta has no index on meta_value, so with a sequential numbering plugin and the
 * legacy order storage, finding an order by its number reads every `_order_number` row. This index
 * (the only change the service ever makes to a WordPress table) is added and removed only on the
 * operator's explicit command. HPOS's `wc_orders_meta` already has such an index.
 */
export const ORDER_NUMBER_INDEX = 'shop_sidecar_order_number';

export async function orderNumberIndexExists(dataSource: DataSource): Promise<boolean> {
  const rows = await dataSource.query(`SHOW INDEX FROM ${tableOf(dataSource, PostMeta)} WHERE Key_name = ?`, [ORDER_NUMBER_INDEX]);
  return rows.length > 0;
}

export async function addOrderNumberIndex(dataSource: DataSource): Promise<'added' | 'present'> {
  if (await orderNumberIndexExists(dataSource)) return 'present';
  await dataSource.query(`ALTER TABLE ${tableOf(dataSource, PostMeta)} ADD INDEX ${ORDER_NUMBER_INDEX} (meta_key(32), meta_value(32)), ALGORITHM=INPLACE, LOCK=NONE`);
  return 'added';
}

export async function removeOrderNumberIndex(dataSource: DataSource): Promise<'removed' | 'absent'> {
  if (!(await orderNumberIndexExists(dataSource))) return 'absent';
  await dataSource.query(`ALTER TABLE ${tableOf(dataSource, PostMeta)} DROP INDEX ${ORDER_NUMBER_INDEX}`);
  return 'removed';
}
