import type { Logger } from '../../logger';
import type { CardGatewayClient } from '../providers/card-gateway/client';

/**
 * The card gateway's webhook signing secret: CARD_GATEWAY_WEBHOOK_SECRET when configured, else the
 * `secret` of the provider's webhook settings, cached for ten minutes and read again (at most every
 * ten seconds, so bad signatures cannot hammer the provider) when a signature fails, in case the
 * secret was rotated.
 */
export class CardGatewayWebhookSecret {
  private cached?: { secret: string | null; readAt: number };
  private lastForcedRead = 0;

  constructor(
    private readonly configured: string | undefined,
    private readonly client: CardGatewayClient | null,
    private readonly log: Logger,
    private readonly ttlMs = 600_000,
  ) {}

  get refreshable(): boolean {
    return !this.configured && this.client !== null;
  }

  async current(): Promise<string | null> {
    if (this.configured) return this.configured;
    if (this.cached && Date.now() - this.cached.readAt < this.ttlMs) return this.cached.secret;
    return this.read();
  }

  /** A fresh read after a failed signature; null when one was made too recently or none is possible. */
  async refreshed(): Promise<string | null> {
    if (!this.refreshable || Date.now() - this.lastForcedRead < 10_000) return null;
    this.lastForcedRead = Date.now();
    return this.read();
  }

  private async read(): Promise<string | null> {
    if (!this.client) return null;
    const result = await this.client.getWebhookSettings();
    if (!result.ok) {
      this.log.warn('card_gateway_secret_unavailable', { kind: result.kind, status: result.status });
      return this.cached?.secret ?? null;
    }
    this.cached = { secret: result.value.secret || null, readAt: Date.now() };
    return this.cached.secret;
  }
}
