import type restify from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../../config';
import type { Logger } from '../../../logger';
import { buildStaffServices } from '../../composition/staff-services';
import type { PaymentHub } from '../../composition/payment-hub';
import type { ShopData } from '../../composition/shop-data';
import { EDIT_SHOP_ORDERS, MANAGE_WOOCOMMERCE } from '../../../staff-auth/staff-identity';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import type { Transport } from '../transport';
import { staffMethodOverride } from '../method-override';
import { customerLookupRoute } from './customer-lookup.route';
import { orderPaymentHandlers } from './order-payments.route';
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
  /** The payment hub the rest of the API uses: one order's payments, and reconciling it. */
  hub: Pick<PaymentHub, 'showOrderPayments' | 'reconcileNow'>;
}

/**
 * The staff routes (CONTRACT.md): the customer lookup with a WooCommerce REST API key or an application password
 * (`manage_woocommerce`); subscription support with the logged-in cookie and a `wp_rest` nonce
 * (`edit_shop_orders`); renewal discounts (`manage_woocommerce`) and one order's payments (`edit_shop_orders`)
 * with either, as the request offers. A POST to them with `X-HTTP-Method-Override` is taken as that method, as
 * WordPress's `apiFetch` sends DELETE, PUT and PATCH.
 */
export function registerStaffRoutes(server: restify.Server, deps: StaffRouteDeps): void {
  const staff = buildStaffServices(deps.config, deps.dataSource, deps.log, deps.clock, deps.shop);
  const guard = { authenticate: staff.authenticate, transport: deps.transport, throttle: deps.throttle, log: deps.log };
  const basic = (name: string) => ({ name, scheme: 'basic' as const, capability: MANAGE_WOOCOMMERCE });
  const cookie = (name: string) => ({ name, scheme: 'cookie' as const, capability: EDIT_SHOP_ORDERS });
  const discountStaff = (name: string) => ({ name, scheme: 'basic_or_cookie' as const, capability: MANAGE_WOOCOMMERCE });
  const orderStaff = (name: string) => ({ name, scheme: 'basic_or_cookie' as const, capability: EDIT_SHOP_ORDERS });

  // Before routing: restify picks the route by method.
  server.pre(staffMethodOverride);

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
  server.get('/renewal-discounts/v1/renewal-discount-types', staffRoute(guard, discountStaff('discount-types'), discounts.types));
  server.get('/renewal-discounts/v1/discounts', staffRoute(guard, discountStaff('discounts'), discounts.list));
  server.post('/renewal-discounts/v1/discounts', staffRoute(guard, discountStaff('create-discount'), discounts.create));
  server.get('/renewal-discounts/v1/discounts/:id', staffRoute(guard, discountStaff('discount'), discounts.one));
  server.del('/renewal-discounts/v1/discounts/:id', staffRoute(guard, discountStaff('cancel-discount'), discounts.cancel));

  const orders = orderPaymentHandlers(deps.hub);
  server.get('/payment-hub/v1/orders/:orderId/payments', staffRoute(guard, orderStaff('order-payments'), orders.payments));
  server.post('/payment-hub/v1/orders/:orderId/reconcile', staffRoute(guard, orderStaff('reconcile-order'), orders.reconcile));
}
