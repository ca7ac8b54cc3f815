import test from 'ava';
import type { DataSource, EntityMetadata } from 'typeorm';
import { loadConfig } from '../../src/config';
import { createShopDataSource } from '../../src/data-access/data-source';
import { createWooCommerceShop, type WooCommerceShop, type WooCommerceStack } from './support/woocommerce-shop';

/**
 * The entities are the service's only description of WordPress's and WooCommerce's tables: every statement
 * is built from them. Here they are held against the tables a real WordPress, WooCommerce and Subscriptions
 * install creates: the same columns, the same types, and every index an entity names, with its columns.
 */

const shops: WooCommerceShop[] = [];
test.after.always(async () => {
  if (process.env.SIDECAR_WC_KEEP === '1') return;
  await Promise.all(shops.map((shop) => shop.drop()));
});

/** WooCommerce's and WordPress's tables: those the service never creates (its own have migrations). */
const shopTables = (dataSource: DataSource) => dataSource.entityMetadatas.filter((metadata) => metadata.synchronize === false);

/** The MariaDB type family of an entity column, as information_schema names it. */
function columnType(type: unknown): string {
  return String(type).toLowerCase();
}

async function realColumns(shop: WooCommerceShop, table: string): Promise<Map<string, string>> {
  const rows = await shop.sql<{ name: string; type: string }>(
    'SELECT COLUMN_NAME AS name, DATA_TYPE AS type FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [shop.dbName, table]);
  return new Map(rows.map((row) => [row.name, row.type.toLowerCase()]));
}

async function realIndexes(shop: WooCommerceShop, table: string): Promise<Map<string, string[]>> {
  const rows = await shop.sql<{ name: string; column: string }>(
    'SELECT INDEX_NAME AS name, COLUMN_NAME AS `column` FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX',
    [shop.dbName, table]);
  const indexes = new Map<string, string[]>();
  for (const row of rows) indexes.set(row.name, [...(indexes.get(row.name) ?? []), row.column]);
  return indexes;
}

function describe(metadata: EntityMetadata) {
  return {
    columns: new Map(metadata.columns.map((column) => [column.databaseName, columnType(column.type)])),
    indexes: new Map(metadata.indices.map((index) => [index.givenName ?? index.name, index.columns.map((column) => column.databaseName)])),
  };
}

for (const stack of ['current', 'older'] as WooCommerceStack[]) {
  test(`${stack} WordPress + WooCommerce + Subscriptions: each entity of their tables has the real table's columns, types and named indexes`, async (t) => {
    const shop = await createWooCommerceShop(`entities_${stack}`, stack, stack === 'current' ? 'hpos' : 'posts');
    shops.push(shop);
    // Subscriptions creates its retry table when a retry is first stored; an older WooCommerce creates no HPOS tables.
    const dataSource = createShopDataSource(loadConfig({ DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix }).db, 1);
    await dataSource.initialize();
    try {
      const absent: string[] = [];
      for (const metadata of shopTables(dataSource)) {
        const columns = await realColumns(shop, metadata.tableName);
        if (!columns.size) {
          absent.push(metadata.tableName);
          continue;
        }
        const entity = describe(metadata);
        t.deepEqual(Object.fromEntries(entity.columns), Object.fromEntries(columns), `${metadata.tableName}: columns and types`);
        const indexes = await realIndexes(shop, metadata.tableName);
        for (const [name, indexColumns] of entity.indexes) t.deepEqual(indexes.get(name), indexColumns, `${metadata.tableName}: index ${name}`);
      }
      t.log(`tables this install has not created (yet): ${absent.join(', ') || 'none'}`);
      const expectedAbsent = (name: string) => name.endsWith('wcs_payment_retries') || (stack === 'older' && /wc_order|wc_orders/.test(name));
      t.deepEqual(absent.filter((name) => !expectedAbsent(name)), [], 'every other table exists');
    } finally {
      await dataSource.destroy();
    }
  });
}
