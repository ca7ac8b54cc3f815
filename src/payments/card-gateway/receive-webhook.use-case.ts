import type { WebhookRepository } from '../../data-access/webhook-repository';
import type { WebhookQueue } from '../../data-access/webhook-queue';
import type { Logger } from '../../logger';
import { malformedFields } from '../../shared/unicode-text';
import { cardGatewayEventShape } from '../providers/events';
import { verifyCardGatewaySignature } from '../providers/card-gateway/signature';
import type { CardGatewayWebhookSecret } from './webhook-secret';

export type ReceiveOutcome =
  | { kind: 'stored'; id: number; queued: boolean }
  | { kind: 'duplicate' }
  | { kind: 'invalid_signature' }
  | { kind: 'malformed'; params: string[] }
  | { kind: 'database_unavailable' };

/**
 * A card-gateway delivery: verified, then stored PENDING (the row is the inbox and, while Redis is
 * away, the outbox the worker sweeps) and queued. A repeat of a stored event changes nothing.
 */
export class ReceiveCardGatewayWebhook {
  constructor(
    private readonly secret: CardGatewayWebhookSecret,
    private readonly webhooks: WebhookRepository,
    private readonly queue: WebhookQueue,
    private readonly log: Logger,
  ) {}

  async execute(rawBody: Buffer): Promise<ReceiveOutcome> {
    const payload = parse(rawBody);
    if (!payload || !(await this.verified(payload))) return { kind: 'invalid_signature' };
    // Signed, but not an event that can be stored as sent: refused (400), so the gateway stops sending it.
    const malformed = malformedEvent(payload);
    if (malformed.length) return { kind: 'malformed', params: malformed };
    const { event_id: eventId, event_type: eventType } = payload as { event_id: string; event_type: string };

    let stored;
    try {
      stored = await this.webhooks.insertPending('card_gateway', eventId, eventType, rawBody);
    } catch (error) {
      this.log.error('webhook_store_failed', { provider: 'card_gateway', error });
      return { kind: 'database_unavailable' };
    }
    if (stored.kind === 'duplicate') return stored;
    const queued = await this.queue.enqueue(stored.id);
    return { kind: 'stored', id: stored.id, queued };
  }

  private async verified(payload: Record<string, unknown>): Promise<boolean> {
    const secret = await this.secret.current();
    if (secret && verifyCardGatewaySignature(payload, secret)) return true;
    const fresh = await this.secret.refreshed();
    return fresh !== null && fresh !== secret && verifyCardGatewaySignature(payload, fresh);
  }
}

/** The JSON object of a delivery, or null (which cannot carry a signature). */
function parse(rawBody: Buffer): Record<string, unknown> | null {
  try {
    const value = JSON.parse(rawBody.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The fields that keep a verified delivery from being stored as the event it names: text that is not
 * well-formed Unicode, and whatever the event's schema refuses (the one the OpenAPI document shows).
 */
function malformedEvent(payload: Record<string, unknown>): string[] {
  const bad = new Set(malformedFields(payload));
  const checked = cardGatewayEventShape.check(payload);
  if (!checked.ok) for (const fault of checked.faults) bad.add(fault.field === 'whole' ? 'body' : fault.field);
  return [...bad];
}
