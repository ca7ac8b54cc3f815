import { Post, PostMeta, WpOption, WpUser, WpUserMeta } from './wordpress';
import { HposOrder, HposOrderAddress, HposOrderMeta, HposOrderOperationalData, OrderItem, OrderItemMeta } from './woocommerce';

export * from './wordpress';
export * from './woocommerce';

/** Every entity the data source knows: WordPress's and WooCommerce's tables (read and written, never altered). */
export const shopEntities = [
  Post, PostMeta, WpOption, WpUser, WpUserMeta,
  OrderItem, OrderItemMeta, HposOrder, HposOrderAddress, HposOrderOperationalData, HposOrderMeta,
];
