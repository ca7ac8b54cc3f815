/** Subscription support's routes, for staff in WP admin (SPEC 4.3): cancellation reasons, pause, force-activate. */
import { Type } from '@sinclair/typebox';
import { MAX_REASONS_PER_REQUEST } from '../../../subscriptions/cancellation-reasons.use-case';
import { ref } from '../contract/answers';
import { bodyId, error, invalidBody, json, notFound, pathId, staff, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

const base = '/subscription-support/v1';
const one = `${base}/subscription/{subscriptionId}`;
const params = { subscriptionId: pathId('The subscription\'s ID.', 'subscription_not_found') };
const subscriptionNotFound = notFound('subscription_not_found');

export const cancellationReasonsContract = defineRoute({
  method: 'get',
  path: `${base}/cancellation-reasons`,
  operation: staff('cookie', {
    operationId: 'listCancellationReasons',
    summary: 'The selectable cancellation reasons (published `cancellation_reason` posts)',
    responses: { 200: { description: 'The reasons.', content: json({ type: 'array', items: ref('CancellationReason') }) } },
  }),
});

export const recordedReasonsContract = defineRoute({
  method: 'get',
  path: `${one}/cancellation-reasons`,
  params,
  operation: staff('cookie', {
    operationId: 'listRecordedCancellationReasons',
    summary: 'The reasons recorded on a subscription, oldest first',
    responses: {
      200: { description: 'The recorded reasons.', content: json({ type: 'array', items: ref('RecordedCancellationReason') }) },
      404: subscriptionNotFound,
    },
  }),
});

export const recordReasonsContract = defineRoute({
  method: 'post',
  path: `${one}/cancellation-reasons`,
  params,
  body: {
    required: true,
    schema: Type.Object({
      reason_post_ids: Type.Array(bodyId('A published `cancellation_reason` post\'s ID.'), {
        minItems: 1, maxItems: MAX_REASONS_PER_REQUEST, description: 'Published `cancellation_reason` post IDs; all are recorded or none.',
      }),
    }),
  },
  operation: staff('cookie', {
    operationId: 'recordCancellationReasons',
    summary: 'Records reasons on a subscription, all or none',
    responses: {
      201: { description: 'The reasons recorded by this request.', content: json({ type: 'array', items: ref('RecordedCancellationReason') }) },
      400: invalidBody('Not a list of published reason IDs (`data.invalid_ids` names those that are not)'),
      404: subscriptionNotFound,
      413: tooLarge,
    },
  }),
});

export const recordedReasonContract = defineRoute({
  method: 'get',
  path: `${one}/cancellation-reasons/{entryId}`,
  params: { ...params, entryId: pathId('The recorded reason\'s ID.', 'cancellation_reason_not_found') },
  operation: staff('cookie', {
    operationId: 'getRecordedCancellationReason',
    summary: 'One reason recorded on the subscription',
    responses: {
      200: { description: 'The recorded reason.', content: json(ref('RecordedCancellationReason')) },
      404: error(404, ['subscription_not_found', 'cancellation_reason_not_found'], 'No such subscription, or no such reason recorded on it.'),
    },
  }),
});

export const pauseContract = defineRoute({
  method: 'post',
  path: `${one}/pause`,
  params,
  body: {
    required: true,
    schema: Type.Object({
      end_date: Type.String({ format: 'date', description: 'A future date (`YYYY-MM-DD`), in the shop\'s calendar; the subscription is active again then.' }),
    }),
  },
  operation: staff('cookie', {
    operationId: 'pauseSubscription',
    summary: 'On hold until a date; the next payment moves to the day after',
    responses: {
      200: { description: 'The subscription after the change.', content: json(ref('SubscriptionState')) },
      400: invalidBody('`end_date` is not a future `YYYY-MM-DD`, or falls after the subscription ends'),
      404: subscriptionNotFound,
      409: error(409, ['invalid_state'], 'The subscription\'s status does not allow a pause, e.g. it has ended (`data.subscription_status`).'),
      413: tooLarge,
    },
  }),
});

export const forceActivateContract = defineRoute({
  method: 'post',
  path: `${one}/force-activate`,
  params,
  body: { required: false, schema: Type.Object({}, { description: 'Ignored.' }) },
  operation: staff('cookie', {
    operationId: 'forceActivateSubscription',
    summary: 'An on-hold subscription active again',
    responses: {
      200: { description: 'The subscription after the change.', content: json(ref('SubscriptionState')) },
      400: invalidBody('The body is not a JSON object'),
      404: subscriptionNotFound,
      409: error(409, ['invalid_state'], 'The subscription is not on hold, or its end has passed (`data.subscription_status`).'),
      413: tooLarge,
    },
  }),
});
