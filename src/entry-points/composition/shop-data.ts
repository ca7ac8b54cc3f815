import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { OrderRepository } from '../../data-access/order-repository';
import { OrderWriteRepository } from '../../data-access/order-write-repository';
import { ScheduledActionRepository } from '../../data-access/scheduled-action-repository';
import { ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import { SubscriptionRepository } from '../../data-access/subscription-repository';
import { WooCommerceChangeRepository } from '../../data-access/woocommerce-change-repository';
import { WordPressSiteRepository } from '../../data-access/wordpress-user-repository';
import { resolveLoggedInSecret } from '../../staff-auth/wordpress-secrets';
import { handOverKey } from '../../woocommerce-handover/handover-signature';
import { handOverUrl, WooCommerceHandOver } from '../../woocommerce-handover/woocommerce-handover';
import { SiteExtensions } from '../../shop/site-extensions';
import { SubscriptionActivation } from '../../subscriptions/subscription-activation';

/** What every capability reads and writes of the shop itself; built once per process and shared. */
export interface ShopData {
  settings: ShopSettingsRepository;
  orders: OrderRepository;
  orderWrites: OrderWriteRepository;
  subscriptions: SubscriptionRepository;
  actions: ScheduledActionRepository;
  /** Changes handed to WooCommerce when the companion plugin runs there. */
  changes: WooCommerceChangeRepository;
  /** Asks WordPress to apply each change as soon as it is stored. */
  handOver: WooCommerceHandOver;
  /** The options staff authentication and the hand-over read: roles and the secrets WordPress generated. */
  site: WordPressSiteRepository;
  /**
   * `wp_salt('logged_in')`, which the hand-over's and the companion's notices' keys derive from: from the
   * configuration when it has both halves, without reading the database; else with the site's options.
   */
  loggedInSecret: () => Promise<{ secret: string } | { missing: ('LOGGED_IN_KEY' | 'LOGGED_IN_SALT')[] }>;
  /** The WordPress site URL: SHOP_URL plays WP_SITEURL's part and wins over the option. */
  siteUrl: () => Promise<string>;
  /** Staff, the end of a pause and a paid renewal all move a subscription back to active through it. */
  activation: SubscriptionActivation;
  extensions: SiteExtensions;
}

export function buildShopData(config: Config, dataSource: DataSource, log: Logger): ShopData {
  const settings = new ShopSettingsRepository(dataSource);
  const orders = new OrderRepository(dataSource);
  const orderWrites = new OrderWriteRepository(dataSource);
  const actions = new ScheduledActionRepository(dataSource);
  const changes = new WooCommerceChangeRepository(dataSource, actions);
  const site = new WordPressSiteRepository(dataSource);
  const siteUrl = async () => config.shopUrl ?? (await settings.current()).siteUrl;
  const configuredSecret = resolveLoggedInSecret(config.wordpressSecrets, {});
  const loggedInSecret = async () => ('secret' in configuredSecret ? configuredSecret : resolveLoggedInSecret(config.wordpressSecrets, await site.current()));
  const handOver = new WooCommerceHandOver({
    log,
    target: async () => {
      const [url, secret] = await Promise.all([siteUrl(), loggedInSecret()]);
      if (url && 'secret' in secret) return { url: handOverUrl(url), key: handOverKey(secret.secret) };
      return { unknown: [...(url ? [] : ['url' as const]), ...('missing' in secret ? secret.missing : [])] };
    },
  });
  changes.onStored((changeId) => handOver.notify(changeId));
  return {
    settings,
    orders,
    orderWrites,
    subscriptions: new SubscriptionRepository(orders, orderWrites),
    actions,
    changes,
    handOver,
    site,
    loggedInSecret,
    siteUrl,
    activation: new SubscriptionActivation(orderWrites, actions, changes),
    extensions: config.siteExtensions ? SiteExtensions.load(config.siteExtensions, log) : SiteExtensions.none(log),
  };
}
