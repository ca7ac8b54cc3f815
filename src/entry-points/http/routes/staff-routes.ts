import type restify from 'restify';
import type { DataSource } from 'typeorm';
import type { Config } from '../../../config';
import type { Logger } from '../../../logger';
import { buildStaffServices, type StaffServices } from '../../composition/staff-services';
import type { PaymentHub } from '../../composition/payment-hub';
import type { ShopData } from '../../composition/shop-data';
import { EDIT_SHOP_ORDERS, MANAGE_WOOCOMMERCE } from '../../../staff-auth/staff-identity';
import type { FailedAttemptThrottle } from '../../../security/failed-attempt-throttle';
import type { Transport } from '../transport';
import { staffMethodOverride } from '../method-override';
import { customerLookupRoute } from './customer-lookup.route';
import { orderPaymentHandlers } from './order-payments.route';
import { dunningActionHandlers } from './dunning-actions.route';
import { chargeNowContract, paymentLinkContract, stopDunningContract } from './dunning-actions.contract';
import { renewalDiscountHandlers } from './renewal-discounts.route';
import { register, type RouteContract } from '../contract/route-contract';
import { staffRoute, type StaffHandler, type StaffScheme } from './staff-guard';
import { customerLookupContract } from './helpdesk.contract';
import { orderPaymentsContract, reconcileOrderContract } from './order-payments.contract';
import { cancelDiscountContract, createDiscountContract, discountContract, discountsContract, discountTypesContract } from './renewal-discounts.contract';
import {
  cancellationReasonsContract, forceActivateContract, pauseContract, recordedReasonContract, recordedReasonsContract, recordReasonsContract,
} from './subscription-support.contract';
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
  hub: Pick<PaymentHub, 'showOrderPayments' | 'reconcileNow' | 'staffChargeNow' | 'staffPaymentLink' | 'staffStopDunning'>;
  /** The staff services, when the API shares them with other routes (the helpdesk card's actions). */
  staff?: StaffServices;
}

/**
 * The staff routes (CONTRACT.md): the customer lookup with a WooCommerce REST API key or an application password
 * (`manage_woocommerce`); subscription support with the logged-in cookie and a `wp_rest` nonce
 * (`edit_shop_orders`); renewal discounts (`manage_woocommerce`) and one order's payments (`edit_shop_orders`)
 * with either, as the request offers. A POST to them with `X-HTTP-Method-Override` is taken as that method, as
 * WordPress's `apiFetch` sends DELETE, PUT and PATCH.
 */
export function registerStaffRoutes(server: restify.Server, deps: StaffRouteDeps): void {
  const staff = deps.staff ?? buildStaffServices(deps.config, deps.dataSource, deps.log, deps.clock, deps.shop);
  const guard = { authenticate: staff.authenticate, transport: deps.transport, throttle: deps.throttle, log: deps.log };
  type StaffAccess = { name: string; scheme: StaffScheme; capability: string };
  const basic = (name: string) => ({ name, scheme: 'basic' as const, capability: MANAGE_WOOCOMMERCE });
  const cookie = (name: string) => ({ name, scheme: 'cookie' as const, capability: EDIT_SHOP_ORDERS });
  const discountStaff = (name: string) => ({ name, scheme: 'basic_or_cookie' as const, capability: MANAGE_WOOCOMMERCE });
  const orderStaff = (name: string) => ({ name, scheme: 'basic_or_cookie' as const, capability: EDIT_SHOP_ORDERS });

  // Before routing: restify picks the route by method.
  server.pre(staffMethodOverride);

  const route = <C extends RouteContract<any, any, any>>(contract: C, access: StaffAccess, handler: StaffHandler<C>) =>
    register(server, contract, staffRoute(guard, access, contract, handler));

  route(customerLookupContract, basic('customer-lookup'), customerLookupRoute(staff.lookupCustomer));

  const support = subscriptionSupportHandlers(staff);
  route(cancellationReasonsContract, cookie('cancellation-reasons'), support.reasons);
  route(recordedReasonsContract, cookie('recorded-reasons'), support.recorded);
  route(recordReasonsContract, cookie('record-reasons'), support.record);
  route(recordedReasonContract, cookie('recorded-reason'), support.recordedOne);
  route(pauseContract, cookie('pause'), support.pause);
  route(forceActivateContract, cookie('force-activate'), support.forceActivate);

  const discounts = renewalDiscountHandlers(staff);
  route(discountTypesContract, discountStaff('discount-types'), discounts.types);
  route(discountsContract, discountStaff('discounts'), discounts.list);
  route(createDiscountContract, discountStaff('create-discount'), discounts.create);
  route(discountContract, discountStaff('discount'), discounts.one);
  route(cancelDiscountContract, discountStaff('cancel-discount'), discounts.cancel);

  const orders = orderPaymentHandlers(deps.hub);
  route(orderPaymentsContract, orderStaff('order-payments'), orders.payments);
  route(reconcileOrderContract, orderStaff('reconcile-order'), orders.reconcile);

  const dunning = dunningActionHandlers(deps.hub);
  route(chargeNowContract, orderStaff('charge-now'), dunning.chargeNow);
  route(paymentLinkContract, orderStaff('payment-link'), dunning.paymentLink);
  route(stopDunningContract, orderStaff('stop-dunning'), dunning.stopDunning);
}
