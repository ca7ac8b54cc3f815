import type restify from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../../config';
import type { Logger } from '../../../logger';
import { buildStaffServices } from '../../composition/staff-services';
import type { ShopData } from '../../composition/shop-data';
import { EDIT_SHOP_ORDERS, MANAGE_WOOCOMMERCE } from '../../../staff-auth/staff-identity';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import type { Transport } from '../transport';
import { customerLookupRoute } from './customer-lookup.route';
import { renewalDiscountHandlers } from './renewal-discounts.route';
import { staffRoute } from './staff-guard';
import { subscriptionSupportHandlers } from './subscription-support.route';

export interface StaffRouteDeps {
  config: Config;
  dataSource: DataSource;
  log: Logger;
  transport: Transport;
  /** Failed staff authentications per client address. */
  throttle: FailedAttemptThrottle;
  /** Pinned in tests; the real clock otherwise. */
  clock?: () => Date;
  /** The shop's repositories, shared with the rest of the API. */
  shop?: ShopData;
}

/**
 * The staff routes (CONTRACT.md): the customer lookup and renewal discounts with a WooCommerce REST API key
 * or an application password (`manage_woocommerce`), subscription support with the logged-in cookie and a
 * `wp_rest` nonce (`edit_shop_orders`).
 */
export function registerStaffRoutes(server: restify.Server, deps: StaffRouteDeps): void {
  const staff = buildStaffServices(deps.config, deps.dataSource, deps.log, deps.clock, deps.shop);
  const guard = { authenticate: staff.authenticate, transport: deps.transport, throttle: deps.throttle, log: deps.log };
  const basic = (name: string) => ({ name, scheme: 'basic' as const, capability: MANAGE_WOOCOMMERCE });
  const cookie = (name: string) => ({ name, scheme: 'cookie' as const, capability: EDIT_SHOP_ORDERS });

  server.get('/shop/v3/helpdesk/v1/list', staffRoute(guard, basic('customer-lookup'), customerLookupRoute(staff.lookupCustomer)));

  const support = subscriptionSupportHandlers(staff);
  const base = '/subscription-support/v1';
  server.get(`${base}/cancellation-reasons`, staffRoute(guard, cookie('cancellation-reasons'), support.reasons));
  server.get(`${base}/subscription/:subscriptionId/cancellation-reasons`, staffRoute(guard, cookie('recorded-reasons'), support.recorded));
  server.post(`${base}/subscription/:subscriptionId/cancellation-reasons`, staffRoute(guard, cookie('record-reasons'), support.record));
  server.get(`${base}/subscription/:subscriptionId/cancellation-reasons/:entryId`, staffRoute(guard, cookie('recorded-reason'), support.recordedOne));
  server.post(`${base}/subscription/:subscriptionId/pause`, staffRoute(guard, cookie('pause'), support.pause));
  server.post(`${base}/subscription/:subscriptionId/force-activate`, staffRoute(guard, cookie('force-activate'), support.forceActivate));

  const discounts = renewalDiscountHandlers(staff);
  server.get('/renewal-discounts/v1/renewal-discount-types', staffRoute(guard, basic('discount-types'), discounts.types));
  server.get('/renewal-discounts/v1/discounts', staffRoute(guard, basic('discounts'), discounts.list));
  server.post('/renewal-discounts/v1/discounts', staffRoute(guard, basic('create-discount'), discounts.create));
  server.get('/renewal-discounts/v1/discounts/:id', staffRoute(guard, basic('discount'), discounts.one));
  server.del('/renewal-discounts/v1/discounts/:id', staffRoute(guard, basic('cancel-discount'), discounts.cancel));
}
