import type { WalletRegistrationRepository } from '../../data-access/wallet-registration-repository';
import type { Logger } from '../../logger';
import type { EventOutcome } from '../processing-outcome';
import { parseMobileWalletEvent } from '../providers/events';
import { verifyMobileWalletWebhook } from '../providers/mobile-wallet/signature';
import type { MobileWalletEventHandler } from './mobile-wallet-event-handler';

export type WalletReceiveOutcome =
  | { kind: 'handled'; outcome: EventOutcome }
  | { kind: 'invalid_signature' }
  | { kind: 'malformed' }
  | { kind: 'unavailable'; error: string };

export interface WalletDelivery {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * A mobile-wallet delivery, handled inside the request: verified against every stored registration
 * (and MOBILE_WALLET_WEBHOOK_SECRET for the configured URL), then acted on. Unknown or stale events
 * are answered as handled so the wallet does not hold back later events for the same payment.
 */
export class ReceiveMobileWalletWebhook {
  constructor(
    private readonly registrations: WalletRegistrationRepository,
    private readonly configured: { url?: string; secret?: string },
    private readonly handler: MobileWalletEventHandler,
    private readonly log: Logger,
  ) {}

  async execute(delivery: WalletDelivery): Promise<WalletReceiveOutcome> {
    const signature = await this.verify(delivery);
    if (signature !== 'verified') return signature === 'invalid' ? { kind: 'invalid_signature' } : { kind: 'unavailable', error: signature.error };
    const event = parseMobileWalletEvent(delivery.body);
    if (!event) return { kind: 'malformed' };
    try {
      const outcome = await this.handler.handle(event);
      this.log.info('wallet_webhook_handled', { eventType: event.eventType, status: outcome.status, note: outcome.note });
      return { kind: 'handled', outcome };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error('wallet_webhook_failed', { eventType: event.eventType, error: message });
      return { kind: 'unavailable', error: message };
    }
  }

  /**
   * Each registration signs with its own secret over the URL it was registered with (or the configured
   * public URL). The configured secret is tried first, needing no database; when the registrations cannot
   * be read the delivery can be neither accepted nor refused, and the wallet is asked to send it again.
   */
  private async verify(delivery: WalletDelivery): Promise<'verified' | 'invalid' | { error: string }> {
    // The secrets that may sign for each URL, so the body is hashed and the headers read once per URL.
    const secretsByUrl = new Map<string, string[]>();
    const add = (url: string, secret: string) => secretsByUrl.set(url, [...(secretsByUrl.get(url) ?? []), secret]);
    const verifies = () => [...secretsByUrl].some(([url, secrets]) =>
      verifyMobileWalletWebhook({ method: delivery.method, registeredUrl: url, headers: delivery.headers, body: delivery.body }, { secrets }).ok);
    if (this.configured.url && this.configured.secret) {
      add(this.configured.url, this.configured.secret);
      if (verifies()) return 'verified';
    }
    let registrations: Awaited<ReturnType<WalletRegistrationRepository['all']>>;
    try {
      registrations = await this.registrations.all();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error('wallet_webhook_unverifiable', { error: message });
      return { error: message };
    }
    secretsByUrl.clear();
    for (const registration of registrations) {
      for (const url of new Set([registration.url, this.configured.url ?? registration.url])) add(url, registration.secret);
    }
    return verifies() ? 'verified' : 'invalid';
  }
}
