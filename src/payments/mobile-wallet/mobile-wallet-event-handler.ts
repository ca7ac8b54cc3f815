import type { AgreementDisableReason, PaymentStatus } from '../../../entities';
import type { OrderWriteRepository } from '../../data-access/order-write-repository';
import type { PaymentRepository } from '../../data-access/payment-repository';
import type { ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import type { OrderLinks } from '../order-links';
import type { PaymentFailure } from '../failed-payment-handling';
import { PAYMENT_METHOD_SAVED, type PaymentEvents } from '../payment-events';
import { newMethodKey } from '../method-keys';
import type { PaymentRecorder } from '../payment-recorder';
import { processed, ProviderUnavailableError, skipped, type EventOutcome } from '../processing-outcome';
import { walletFailureState, type MobileWalletAgreementStatus, type MobileWalletCharge, type MobileWalletChargeStatus, type MobileWalletClient } from '../providers/mobile-wallet/client';
import type { MobileWalletAgreementEvent, MobileWalletChargeEvent, MobileWalletEvent } from '../providers/events';
import { orderNoteWords } from '../../shop/order-note-words';
import { gmtDateTimeMs, parseIsoTime } from '../../shop/shop-time';


/** For each charge event: the payment status it means, and the charge statuses that confirm it. */
const CHARGE_EVENTS: Record<MobileWalletChargeEvent['eventType'], { to: PaymentStatus; confirmedBy: MobileWalletChargeStatus[] }> = {
  'recurring.charge-reserved.v1': { to: 'AUTHORIZED', confirmedBy: ['RESERVED', 'PARTIALLY_CAPTURED', 'CHARGED', 'PARTIALLY_REFUNDED', 'REFUNDED'] },
  'recurring.charge-captured.v1': { to: 'CAPTURED', confirmedBy: ['CHARGED', 'PARTIALLY_CAPTURED', 'PARTIALLY_REFUNDED', 'REFUNDED'] },
  'recurring.charge-canceled.v1': { to: 'CANCELED', confirmedBy: ['CANCELLED'] },
  'recurring.charge-failed.v1': { to: 'FAILED', confirmedBy: ['FAILED'] },
  'recurring.charge-creation-failed.v1': { to: 'FAILED', confirmedBy: ['FAILED'] },
  'recurring.charge-refunded.v1': { to: 'REFUNDED', confirmedBy: ['REFUNDED', 'PARTIALLY_REFUNDED'] },
};

/** For each agreement event: what happens to the agreement, and the agreement statuses that confirm it. */
const AGREEMENT_EVENTS: Record<MobileWalletAgreementEvent['eventType'], { disable: AgreementDisableReason | null; confirmedBy: MobileWalletAgreementStatus[] }> = {
  'recurring.agreement-activated.v1': { disable: null, confirmedBy: ['ACTIVE'] },
  'recurring.agreement-expired.v1': { disable: 'EXPIRED', confirmedBy: ['EXPIRED', 'STOPPED'] },
  'recurring.agreement-rejected.v1': { disable: 'REJECTED', confirmedBy: ['STOPPED', 'EXPIRED'] },
  'recurring.agreement-stopped.v1': { disable: 'CANCELED', confirmedBy: ['STOPPED'] },
};

/** When the wallet reserved or captured the charge, from the charge's history (the last successful such step). */
function walletEventTime(charge: Pick<MobileWalletCharge, 'history'>, to: PaymentStatus): Date | null {
  const step = to === 'CAPTURED' ? 'CAPTURE' : to === 'AUTHORIZED' ? 'RESERVE' : null;
  const occurred = (charge.history ?? []).filter((entry) => entry.event === step && entry.success !== false).map((entry) => entry.occurred).pop();
  return parseIsoTime(occurred);
}

/**
 * SPEC 6.2, inside the request: reads the agreement or charge back from the wallet, then moves the
 * agreement or payment forward only (a late or repeated event is harmless).
 */

export class MobileWalletEventHandler {
  constructor(
    private readonly client: MobileWalletClient,
    private readonly payments: PaymentRepository,
    private readonly orders: OrderWriteRepository,
    private readonly links: OrderLinks,
    private readonly recorder: PaymentRecorder,
    private readonly settings: ShopSettingsRepository,
    private readonly events: Pick<PaymentEvents, 'emit'>,
    private readonly clock: () => Date = () => new Date(),
    /** Set on reconciliation's handler: what it finds was found by asking the provider. */
    private readonly via?: 'reconciliation',
  ) {}

  async handle(event: MobileWalletEvent): Promise<EventOutcome> {
    if (!event.supported) return skipped(`unsupported event ${event.eventType}`);
    return 'chargeId' in event ? this.chargeEvent(event as MobileWalletChargeEvent) : this.agreementEvent(event as MobileWalletAgreementEvent);
  }

  private async agreementEvent(event: MobileWalletAgreementEvent): Promise<EventOutcome> {
    const result = await this.client.getAgreement(event.agreementId);
    if (!result.ok && result.kind === 'not_found') return skipped(`agreement ${event.agreementId} is unknown to the wallet`);
    if (!result.ok) throw new ProviderUnavailableError(`reading agreement ${event.agreementId}`, result);
    const rule = AGREEMENT_EVENTS[event.eventType];
    if (!rule.confirmedBy.includes(result.value.status)) return skipped(`agreement is ${result.value.status}, which does not confirm ${event.eventType}`);
    const settings = await this.settings.current();
    const subscriptionId = await this.links.subscriptionForAgreement(event.agreementId, settings);
    const now = this.clock();
    return this.orders.transaction(async (db) => {
      const agreement = await this.payments.lockOrCreateAgreement(db, { provider: 'mobile_wallet', externalId: event.agreementId, subscriptionId }, gmtDateTimeMs(now));
      if (agreement.status === 'DISABLED') return skipped(`agreement already disabled (${agreement.disableReason})`);
      const status = rule.disable ? 'DISABLED' : 'ACTIVE';
      if (agreement.status === status) return skipped(`agreement already ${status}`);
      await this.payments.updateAgreement(db, agreement.id, { status, disableReason: rule.disable, paymentMethod: event.agreementId }, gmtDateTimeMs(now));
      const ofSubscription = subscriptionId ?? agreement.subscriptionId;
      if (event.eventType === 'recurring.agreement-stopped.v1' && ofSubscription !== null) {
        // Who stopped it (the Recurring changelog: MERCHANT, USER, or ADMIN when the profile was deleted), so
        // a stop by the shop itself is never read as the customer leaving.
        await this.orders.addNote(db, ofSubscription, orderNoteWords(settings).agreementStopped({ agreementId: event.agreementId, by: event.actor ?? null }), settings, now);
      }
      if (rule.disable || ofSubscription === null) return processed(rule.disable ? `agreement disabled (${rule.disable})${event.actor ? ` by ${event.actor}` : ''}` : 'agreement activated');
      // A new agreement for a subscription whose renewal failed: the renewal is charged on it at once.
      const renewals = await this.events.emit(PAYMENT_METHOD_SAVED, { methodKey: newMethodKey('mobile_wallet', {}, ofSubscription)!, method: event.agreementId, settings, now }, db);
      return processed(renewals ? `agreement activated; ${renewals} failed renewal(s) charged again with it` : 'agreement activated');
    });
  }

  private async chargeEvent(event: MobileWalletChargeEvent): Promise<EventOutcome> {
    const result = await this.client.getCharge(event.agreementId, event.chargeId);
    if (!result.ok && result.kind !== 'not_found') throw new ProviderUnavailableError(`reading charge ${event.chargeId}`, result);
    // A charge whose creation failed may never have become readable; then the event is all there is.
    const charge: Pick<MobileWalletCharge, 'status' | 'amount' | 'currency' | 'failureReason' | 'failureDescription' | 'history' | 'retryDays' | 'summary'> | null = result.ok
      ? result.value
      : event.eventType === 'recurring.charge-creation-failed.v1'
        ? { status: 'FAILED', amount: event.amount ?? 0, currency: event.currency, failureReason: event.failureReason, failureDescription: null }
        : null;
    if (!charge) return skipped(`charge ${event.chargeId} is unknown to the wallet`);
    const rule = CHARGE_EVENTS[event.eventType];
    if (!rule.confirmedBy.includes(charge.status)) return skipped(`charge is ${charge.status}, which does not confirm ${event.eventType}`);

    const settings = await this.settings.current();
    const known = await this.payments.find('mobile_wallet', event.chargeId);
    const orderId = known?.orderId ?? (await this.links.orderForWalletCharge(event.chargeId, settings));
    const now = this.clock();
    return this.orders.transaction(async (db) => {
      const agreement = await this.payments.lockOrCreateAgreement(db, { provider: 'mobile_wallet', externalId: event.agreementId }, gmtDateTimeMs(now));
      const { payment, created } = await this.payments.lockOrCreate(db, {
        provider: 'mobile_wallet', externalId: event.chargeId, orderId, agreementId: agreement.id, amountMinor: charge.amount ?? null, currency: charge.currency ?? null,
      }, gmtDateTimeMs(now));
      await this.payments.setMeta(db, payment.id, { agreement_id: event.agreementId });
      const reason = charge.failureReason ?? event.failureReason ?? null;
      // The wallet's own reason, as it gave it: dunning decides what it means (decline-policy.ts), once.
      // Its state says whether the wallet had retried it itself (walletFailureState): then the FAILED is final.
      const failure: PaymentFailure = { code: reason, description: charge.failureDescription ?? reason, state: walletFailureState(charge) };
      const moved = await this.recorder.move(db, payment, rule.to, settings, now,
        rule.to === 'FAILED' ? { failure, via: this.via } : { providerTime: walletEventTime(charge, rule.to) ?? parseIsoTime(event.occurred), via: this.via });
      const handed = rule.to === 'REFUNDED' && await this.recorder.handOverRefund(db, payment, {
        refundedMinor: Number(charge.summary?.refunded ?? 0), currency: charge.currency ?? event.currency ?? '', reason: `Refunded at the mobile wallet (charge ${event.chargeId}).`,
      }, settings, now);
      if (handed) return processed(moved.moved ? `${moved.note}; refund handed to WooCommerce` : 'refund handed to WooCommerce');
      return moved.moved || created ? processed(moved.note) : skipped(moved.note);
    });
  }
}
