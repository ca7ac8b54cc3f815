import type { DataSource } from 'typeorm';
import type { Config } from './config';
import type { Logger } from './logger';
import { OrderRepository } from './data-access/order-repository';
import { OrderWriteRepository } from './data-access/order-write-repository';
import { ShopSettingsRepository } from './data-access/shop-settings-repository';
import { SiteExtensions } from './shop/site-extensions';

/** What every capability reads and writes of the shop itself; built once per process and shared. */
export interface ShopData {
  settings: ShopSettingsRepository;
  orders: OrderRepository;
  orderWrites: OrderWriteRepository;
  extensions: SiteExtensions;
}

export function buildShopData(config: Config, dataSource: DataSource, log: Logger): ShopData {
  return {
    settings: new ShopSettingsRepository(dataSource),
    orders: new OrderRepository(dataSource),
    orderWrites: new OrderWriteRepository(dataSource),
    extensions: config.siteExtensions ? SiteExtensions.load(config.siteExtensions, log) : SiteExtensions.none(log),
  };
}
