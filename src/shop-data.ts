import type { DataSource } from 'typeorm';
import type { Config } from './config';
import type { Logger } from './logger';
import { OrderRepository } from './data-access/order-repository';
import { OrderWriteRepository } from './data-access/order-write-repository';
import { ScheduledActionRepository } from './data-access/scheduled-action-repository';
import { ShopSettingsRepository } from './data-access/shop-settings-repository';
import { SubscriptionRepository } from './data-access/subscription-repository';
import { WooCommerceChangeRepository } from './data-access/woocommerce-change-repository';
import { SiteExtensions } from './shop/site-extensions';
import { SubscriptionActivation } from './subscriptions/subscription-activation';

/** What every capability reads and writes of the shop itself; built once per process and shared. */
export interface ShopData {
  settings: ShopSettingsRepository;
  orders: OrderRepository;
  orderWrites: OrderWriteRepository;
  subscriptions: SubscriptionRepository;
  actions: ScheduledActionRepository;
  /** Changes handed to WooCommerce when the companion plugin runs there. */
  changes: WooCommerceChangeRepository;
  /** Staff, the end of a pause and a paid renewal all move a subscription back to active through it. */
  activation: SubscriptionActivation;
  extensions: SiteExtensions;
}

export function buildShopData(config: Config, dataSource: DataSource, log: Logger): ShopData {
  const orders = new OrderRepository(dataSource);
  const orderWrites = new OrderWriteRepository(dataSource);
  const actions = new ScheduledActionRepository(dataSource);
  const changes = new WooCommerceChangeRepository(dataSource, actions);
  return {
    settings: new ShopSettingsRepository(dataSource),
    orders,
    orderWrites,
    subscriptions: new SubscriptionRepository(orders, orderWrites),
    actions,
    changes,
    activation: new SubscriptionActivation(orderWrites, actions, changes),
    extensions: config.siteExtensions ? SiteExtensions.load(config.siteExtensions, log) : SiteExtensions.none(log),
  };
}
