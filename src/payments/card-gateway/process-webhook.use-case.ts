import type { WebhookRepository } from '../../data-access/webhook-repository';
import type { Logger } from '../../logger';
import { parseCardGatewayEvent } from '../providers/events';
import type { CardGatewayEventHandler, Finish } from './card-gateway-event-handler';
import { skipped } from '../processing-outcome';
import { DeadlinePassedError, within } from '../../shared/within';
import { databaseUnreachable } from '../../data-access/connection-pool';

/**
 * Automatic attempts before a FAILED webhook is left for the operator (`payment-hub webhooks retry`). The operator's
 * retry is one of them: when it fails too, the next is planned as after any other (none after the last).
 */
export const MAX_AUTOMATIC_ATTEMPTS = 5;
/** Wait before automatic attempt n+1: 30 s, 1 min, 2 min, 4 min. */
export const retryDelaySeconds = (attempts: number) => 30 * 2 ** (attempts - 1);
/**
 * The longest one attempt may take. Each wait inside it has a shorter bound of its own (a provider call
 * 8 s, a database connection 5 s, a row lock 10 s per try); this one ends an attempt that is stuck
 * anyway, as FAILED with its retry planned, instead of holding the webhook and a worker's place.
 */
export const ATTEMPT_DEADLINE_MS = 60_000;
/**
 * An attempt the database failed (it could not be reached, or stopped answering) says nothing of the event:
 * it is tried again this soon and is not one of the automatic attempts, so an outage of any length leaves
 * nothing for the operator, and nothing waits long once the database is back.
 */
export const DATABASE_RETRY_SECONDS = 5;

export type ProcessOutcome =
  | { kind: 'done'; status: 'PROCESSED' | 'SKIPPED'; note: string }
  | { kind: 'failed'; error: string; willRetry: boolean }
  | { kind: 'not_claimed' };

/**
 * Processes one stored card-gateway webhook exactly once: it is claimed first (so a second worker,
 * a redelivered job or the sweeper cannot run it at the same time), and a final status is written
 * once. A handler's SKIPPED stays SKIPPED.
 */
export class ProcessCardGatewayWebhook {
  constructor(private readonly webhooks: WebhookRepository, private readonly handler: CardGatewayEventHandler, private readonly log: Logger) {}

  async execute(webhookId: number): Promise<ProcessOutcome> {
    const webhook = await this.webhooks.claim(webhookId);
    if (!webhook) return { kind: 'not_claimed' };
    const event = parseCardGatewayEvent(webhook.rawBody);
    try {
      // A handler that writes commits the final status with its writes; one that wrote nothing leaves it to us.
      let finished = false;
      const finish: Finish = (outcome) => {
        finished = true;
        return this.webhooks.finishStatement(webhook.id, outcome.status, outcome.note);
      };
      const outcome = event
        ? await within(this.handler.handle(event, finish), ATTEMPT_DEADLINE_MS).catch((error: unknown) => {
          throw error instanceof DeadlinePassedError ? new Error(`processing did not finish within ${ATTEMPT_DEADLINE_MS / 1000} s`) : error;
        })
        : skipped('not a well-formed card-gateway event');
      if (!finished) await this.webhooks.finish(webhook.id, outcome.status, outcome.note);
      return { kind: 'done', ...outcome };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const unreachable = databaseUnreachable(error);
      const willRetry = unreachable || webhook.attempts < MAX_AUTOMATIC_ATTEMPTS;
      await this.webhooks.fail(webhook.id, message, willRetry ? (unreachable ? DATABASE_RETRY_SECONDS : retryDelaySeconds(webhook.attempts)) : null, !unreachable);
      this.log.warn('webhook_failed', { id: webhook.id, eventType: webhook.eventType, attempts: webhook.attempts, willRetry, error: message });
      return { kind: 'failed', error: message, willRetry };
    }
  }
}
