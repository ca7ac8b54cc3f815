/** Staff's actions on a failed renewal, from the order screen: charge now, send the payment link, stop dunning. */
import { Type } from '@sinclair/typebox';
import { ref } from '../contract/answers';
import { error, invalidBody, json, notFound, pathId, staff, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

const params = { orderId: pathId('The renewal order\'s ID (in whichever storage WooCommerce uses).', 'order_not_found') };
const body = { required: false, schema: Type.Object({}, { description: 'Nothing is read; an empty JSON object or no body.' }) };
const notAllowed = error(409, ['action_not_allowed'], 'Not possible now: `data.reason` says why (a stable code, as `dunning.actions.*.reason` in the order\'s payments), '
  + '`data.not_before` from when, when that is known; the message says both in plain English. `no_dunning_case`: the order has no failed renewal followed up.');
/** What each action answers: 200 with its answer, or why not. */
const responses = (answered: string, answer: string) => ({
  200: { description: answered, content: json(ref(answer)) },
  400: invalidBody('The body is not a JSON object'),
  404: notFound('order_not_found'),
  409: notAllowed,
  413: tooLarge,
});
const common = 'Capability `edit_shop_orders`, the logged-in cookie and nonce or an API key. The case is locked while the action is decided and taken, so a double click '
  + 'does it once. An order note in the staff member\'s name records it. The answer has what happened and the case after it (as `dunning` in the order\'s payments).';

export const chargeNowContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/orders/{orderId}/charge-now',
  params,
  body,
  operation: staff('order_payments', {
    operationId: 'chargeNow',
    summary: 'One dunning attempt now, with the subscription\'s own payment method',
    description: 'The dunning engine\'s own attempt, made at once: within the card schemes\' caps (it counts toward them), never on top of a charge already under way '
      + '(the wallet retries its own charge for its `retryDays`), with the attempt\'s idempotency key. A decline is a failed attempt like any other; the planned attempts stay. '
      + common,
    responses: responses('What the attempt came to, and the case after it.', 'ChargeNowAnswer'),
  }),
});

export const paymentLinkContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/orders/{orderId}/payment-link',
  params,
  body,
  operation: staff('order_payments', {
    operationId: 'sendPaymentLink',
    summary: 'The "payment method needed" e-mail to the customer now, through WooCommerce',
    description: 'Handed to WooCommerce as the dunning engine hands it over (the companion plugin\'s e-mail, with the link to the subscription\'s change-payment-method page '
      + 'and the case\'s deadline when it has one); possible while the case is open, and again five minutes after. The planned attempts and the deadline stay. ' + common,
    responses: responses('Handed to WooCommerce, and the case after it.', 'PaymentLinkAnswer'),
  }),
});

export const stopDunningContract = defineRoute({
  method: 'post',
  path: '/payment-hub/v1/orders/{orderId}/stop-dunning',
  params,
  body,
  operation: staff('order_payments', {
    operationId: 'stopDunning',
    summary: 'No more attempts: the case closed as lost by staff; the subscription left as it is',
    description: 'The planned attempts are cancelled, a charge of the service\'s the provider still holds (the wallet\'s PENDING or DUE) is cancelled there, and the '
      + 'case is closed as lost, so its deadline no longer cancels the subscription. Not while an attempt is being made. ' + common,
    responses: responses('What was stopped, and the case after it.', 'StopDunningAnswer'),
  }),
});
