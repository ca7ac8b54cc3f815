/** One order's payments for staff: what the service knows of them, and asking the providers now. */
import { ref } from '../contract/answers';
import { json, notFound, pathId, staff } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

const params = { orderId: pathId('The order\'s ID (in whichever storage WooCommerce uses).', 'order_not_found') };
const orderNotFound = notFound('order_not_found');

export const orderPaymentsContract = defineRoute({
  method: 'get',
  path: '/payment-hub/v1/orders/{orderId}/payments',
  params,
  operation: staff('order_payments', {
    operationId: 'orderPayments',
    summary: 'One order\'s payments, dunning attempts and webhooks',
    description: 'What `payment-hub payments list --order` and `retries list --order` show, with the webhooks stored about the order\'s payments; '
      + 'each newest first. `warnings` names what staff must act on: a second capture of the order, and the payment to refund. Capability `edit_shop_orders`.',
    responses: {
      200: { description: 'The order\'s payments (empty lists when it has none).', content: json(ref('OrderPayments')) },
      404: orderNotFound,
    },
  }),
});

export const reconcileOrderContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/orders/{orderId}/reconcile',
  params,
  operation: staff('order_payments', {
    operationId: 'reconcileOrder',
    summary: 'Asks the providers about one order now and makes the shop agree with them',
    description: 'As `payment-hub reconcile --order=N --yes --json`: everything open about the order (its payments, agreements, an invoice awaiting the gateway) is asked '
      + 'about, and what the provider says is handed to the same handlers as its webhooks. Only reads from the providers. A provider that cannot be asked '
      + 'is reported in the answer (`summary.unreachable`, the item\'s `outcome` and `error`), the item left as it was; a provider that is not configured is not asked '
      + '(`skipped`, with what is unset). No body is read. Capability `edit_shop_orders`.',
    responses: {
      200: { description: 'What asking came to.', content: json(ref('ReconcileResult')) },
      404: orderNotFound,
    },
  }),
});
