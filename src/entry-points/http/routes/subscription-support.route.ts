import type { Response } from 'restify';
import type { StaffServices } from '../../composition/staff-services';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import type { StaffActor, SubscriptionRefusal } from '../../../subscriptions/subscription-outcomes';
import { notFound, type InputOf } from '../contract/route-contract';
import { idValue } from '../contract/operation-docs';
import { sendError, sendJson, sendRefusal } from '../http-io';
import type {
  forceActivateContract, pauseContract, recordedReasonContract, recordedReasonsContract, recordReasonsContract,
} from './subscription-support.contract';

type Refusal = SubscriptionRefusal | { kind: 'cancellation_reason_not_found' };

/** The error body of each expected refusal (CONTRACT.md). */
export function sendSubscriptionRefusal(res: Response, refusal: Refusal): void {
  switch (refusal.kind) {
    case 'subscription_not_found':
    case 'cancellation_reason_not_found':
      return sendRefusal(res, notFound(refusal.kind));
    case 'invalid_params':
      return sendError(res, 400, 'invalid_params', refusal.message, { params: refusal.params, ...refusal.data });
    case 'invalid_state':
      return sendError(res, 409, 'invalid_state', refusal.message, { subscription_status: refusal.status });
  }
}

const actorOf = (identity: StaffIdentity): StaffActor => ({
  userId: identity.userId, login: identity.login, displayName: identity.displayName, email: identity.email,
});

/** Handlers of `/subscription-support/v1/...` (SPEC 4.3); each maps one use case's outcome to HTTP. */
export function subscriptionSupportHandlers(staff: StaffServices) {
  return {
    async reasons(_input: unknown, res: Response): Promise<void> {
      sendJson(res, 200, await staff.listCancellationReasons.execute());
    },

    async recorded({ params }: InputOf<typeof recordedReasonsContract>, res: Response): Promise<void> {
      const outcome = await staff.listRecordedCancellationReasons.execute(params.subscriptionId);
      if (outcome.kind !== 'reasons') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.entries);
    },

    async recordedOne({ params }: InputOf<typeof recordedReasonContract>, res: Response): Promise<void> {
      const outcome = await staff.getRecordedCancellationReason.execute(params.subscriptionId, params.entryId);
      if (outcome.kind !== 'reason') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.entry);
    },

    async record({ params, body }: InputOf<typeof recordReasonsContract>, res: Response, identity: StaffIdentity): Promise<void> {
      const outcome = await staff.recordCancellationReasons.execute({
        subscriptionId: params.subscriptionId, reasonPostIds: body.reason_post_ids.map(idValue), actor: actorOf(identity),
      });
      if (outcome.kind !== 'reasons') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 201, outcome.entries);
    },

    async pause({ params, body }: InputOf<typeof pauseContract>, res: Response, identity: StaffIdentity): Promise<void> {
      const outcome = await staff.pauseSubscription.execute({ subscriptionId: params.subscriptionId, endDate: body.end_date, actor: actorOf(identity) });
      if (outcome.kind !== 'paused') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.subscription);
    },

    async forceActivate({ params }: InputOf<typeof forceActivateContract>, res: Response, identity: StaffIdentity): Promise<void> {
      const outcome = await staff.forceActivateSubscription.execute({ subscriptionId: params.subscriptionId, actor: actorOf(identity) });
      if (outcome.kind !== 'activated') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.subscription);
    },
  };
}
