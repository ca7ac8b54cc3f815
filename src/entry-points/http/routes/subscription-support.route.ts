import type { Request, Response } from 'restify';
import type { StaffServices } from '../../composition/staff-services';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import type { StaffActor, SubscriptionRefusal } from '../../../subscriptions/subscription-outcomes';
import { sendError, sendJson } from '../http-io';
import { jsonBody, pathId, sendBodyError } from './staff-guard';

type Refusal = SubscriptionRefusal | { kind: 'cancellation_reason_not_found' };

/** The error body of each expected refusal (CONTRACT.md). */
export function sendSubscriptionRefusal(res: Response, refusal: Refusal): void {
  switch (refusal.kind) {
    case 'subscription_not_found':
      return sendError(res, 404, 'subscription_not_found', 'No subscription with that ID.');
    case 'cancellation_reason_not_found':
      return sendError(res, 404, 'cancellation_reason_not_found', 'This subscription has no recorded cancellation reason with that ID.');
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
  const subscriptionIdOf = (req: Request) => pathId(req.params?.subscriptionId);
  return {
    async reasons(_req: Request, res: Response): Promise<void> {
      sendJson(res, 200, await staff.listCancellationReasons.execute());
    },

    async recorded(req: Request, res: Response): Promise<void> {
      const id = subscriptionIdOf(req);
      if (id === null) return sendSubscriptionRefusal(res, { kind: 'subscription_not_found' });
      const outcome = await staff.listRecordedCancellationReasons.execute(id);
      if (outcome.kind !== 'reasons') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.entries);
    },

    async recordedOne(req: Request, res: Response): Promise<void> {
      const id = subscriptionIdOf(req);
      if (id === null) return sendSubscriptionRefusal(res, { kind: 'subscription_not_found' });
      // An entry ID that is not one (no entry has ID 0) still tells a missing subscription from a missing entry.
      const outcome = await staff.getRecordedCancellationReason.execute(id, pathId(req.params?.entryId) ?? 0);
      if (outcome.kind !== 'reason') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.entry);
    },

    async record(req: Request, res: Response, identity: StaffIdentity): Promise<void> {
      const id = subscriptionIdOf(req);
      if (id === null) return sendSubscriptionRefusal(res, { kind: 'subscription_not_found' });
      const body = await jsonBody(req);
      if (!body.ok) return sendBodyError(res, body);
      const outcome = await staff.recordCancellationReasons.execute({ subscriptionId: id, reasonPostIds: body.body.reason_post_ids, actor: actorOf(identity) });
      if (outcome.kind !== 'reasons') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 201, outcome.entries);
    },

    async pause(req: Request, res: Response, identity: StaffIdentity): Promise<void> {
      const id = subscriptionIdOf(req);
      if (id === null) return sendSubscriptionRefusal(res, { kind: 'subscription_not_found' });
      const body = await jsonBody(req);
      if (!body.ok) return sendBodyError(res, body);
      const outcome = await staff.pauseSubscription.execute({ subscriptionId: id, endDate: body.body.end_date, actor: actorOf(identity) });
      if (outcome.kind !== 'paused') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.subscription);
    },

    async forceActivate(req: Request, res: Response, identity: StaffIdentity): Promise<void> {
      const id = subscriptionIdOf(req);
      if (id === null) return sendSubscriptionRefusal(res, { kind: 'subscription_not_found' });
      const body = await jsonBody(req);
      if (!body.ok) return sendBodyError(res, body);
      const outcome = await staff.forceActivateSubscription.execute({ subscriptionId: id, actor: actorOf(identity) });
      if (outcome.kind !== 'activated') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 200, outcome.subscription);
    },
  };
}
