/** Every route of the API, in the order the document lists them; a test holds the list to the routes the server registers. */
import type { RouteContract } from '../contract/route-contract';
import { customerLookupContract, orderStatusContract } from './helpdesk.contract';
import { cancelDiscountContract, createDiscountContract, discountContract, discountsContract, discountTypesContract } from './renewal-discounts.contract';
import { healthContract, metricsContract, openApiContract } from './operations.contract';
import { orderPaymentsContract, reconcileOrderContract } from './order-payments.contract';
import { chargeNowContract, paymentLinkContract, stopDunningContract } from './dunning-actions.contract';
import {
  cancellationReasonsContract, forceActivateContract, pauseContract, recordedReasonContract, recordedReasonsContract, recordReasonsContract,
} from './subscription-support.contract';
import { webhookContract } from './webhook.contract';
import { shopOrderNoticeContract } from './shop-notice.contract';
import { helpdeskCardActionContract, helpdeskCardActionPageContract, helpdeskCardContract } from './helpdesk-card.contract';

export const ROUTES: readonly RouteContract<any, any, any>[] = [
  orderStatusContract, helpdeskCardContract, helpdeskCardActionPageContract, helpdeskCardActionContract, webhookContract, shopOrderNoticeContract, customerLookupContract,
  cancellationReasonsContract, recordedReasonsContract, recordReasonsContract, recordedReasonContract, pauseContract, forceActivateContract,
  discountTypesContract, discountsContract, createDiscountContract, discountContract, cancelDiscountContract,
  orderPaymentsContract, reconcileOrderContract, chargeNowContract, paymentLinkContract, stopDunningContract,
  healthContract, metricsContract, openApiContract,
];
