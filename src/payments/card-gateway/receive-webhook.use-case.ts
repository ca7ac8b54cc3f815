import type { WebhookRepository } from '../../data-access/webhook-repository';
import type { WebhookQueue } from '../../data-access/webhook-queue';
import type { Logger } from '../../logger';
import { verifyCardGatewaySignature } from '../providers/card-gateway/signature';
import type { CardGatewayWebhookSecret } from './webhook-secret';

export type ReceiveOutcome =
  | { kind: 'stored'; id: number; queued: boolean }
  | { kind: 'duplicate' }
  | { kind: 'invalid_signature' }
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

    let stored;
    try {
      stored = await this.webhooks.insertPending('card_gateway', String(payload.event_id), String(payload.event_type), rawBody);
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

function parse(rawBody: Buffer): Record<string, unknown> | null {
  try {
    const value = JSON.parse(rawBody.toString('utf8'));
    const ok = value && typeof value === 'object' && !Array.isArray(value) && typeof value.event_id === 'string' && value.event_id !== '' && typeof value.event_type === 'string';
    return ok ? value : null;
  } catch {
    return null;
  }
}
