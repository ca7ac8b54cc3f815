import type { Response } from 'restify';
import type { PaymentHub } from '../../composition/payment-hub';
import type { StaffActionOutcome } from '../../../dunning/staff-action-outcome';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import type { StaffActor } from '../../../subscriptions/subscription-outcomes';
import { notFound, type InputOf } from '../contract/route-contract';
import { sendError, sendJson, sendRefusal } from '../http-io';
import type { chargeNowContract, paymentLinkContract, stopDunningContract } from './dunning-actions.contract';

const actorOf = (identity: StaffIdentity): StaffActor => ({ userId: identity.userId, login: identity.login, displayName: identity.displayName, email: identity.email });

/** 200 `{result, dunning}`, 404 `order_not_found`, or 409 `action_not_allowed` with `data.reason` and `data.not_before`. */
function answer<R>(res: Response, outcome: StaffActionOutcome<R>): void {
  if (outcome.kind === 'order_not_found') return sendRefusal(res, notFound('order_not_found'));
  if (outcome.kind === 'not_allowed') {
    return sendError(res, 409, 'action_not_allowed', outcome.message, {
      reason: outcome.reason, ...(outcome.notBefore ? { not_before: outcome.notBefore } : {}),
    });
  }
  sendJson(res, 200, { result: outcome.result, dunning: outcome.dunning });
}

/** Handlers of `/payment-hub/v1/orders/{id}/charge-now`, `/payment-link` and `/stop-dunning`: staff's actions on a failed renewal. */
export function dunningActionHandlers(hub: Pick<PaymentHub, 'staffChargeNow' | 'staffPaymentLink' | 'staffStopDunning'>) {
  return {
    async chargeNow({ params }: InputOf<typeof chargeNowContract>, res: Response, identity: StaffIdentity): Promise<void> {
      answer(res, await hub.staffChargeNow.execute({ orderId: params.orderId, actor: actorOf(identity) }));
    },
    async paymentLink({ params }: InputOf<typeof paymentLinkContract>, res: Response, identity: StaffIdentity): Promise<void> {
      answer(res, await hub.staffPaymentLink.execute({ orderId: params.orderId, actor: actorOf(identity) }));
    },
    async stopDunning({ params }: InputOf<typeof stopDunningContract>, res: Response, identity: StaffIdentity): Promise<void> {
      answer(res, await hub.staffStopDunning.execute({ orderId: params.orderId, actor: actorOf(identity) }));
    },
  };
}
