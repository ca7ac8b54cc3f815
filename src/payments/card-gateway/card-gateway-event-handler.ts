import type { AgreementDisableReason, PaymentStatus } from '../../../entities';
import type { OrderWriteRepository } from '../../data-access/order-write-repository';
import type { Executor, Statement } from '../../data-access/transaction';
import type { PaymentRepository } from '../../data-access/payment-repository';
import type { ShopSettings, ShopSettingsRepository } from '../../data-access/shop-settings-repository';
import type { OrderLinks } from '../order-links';
import type { PaymentRecorder } from '../payment-recorder';
import { PAYMENT_METHOD_SAVED, type PaymentEvents } from '../payment-events';
import { newMethodKey } from '../method-keys';
import { processed, ProviderUnavailableError, skipped, type EventOutcome } from '../processing-outcome';
import type { CardGatewayClient, CardGatewayInvoice, CardGatewayInvoiceState } from '../providers/card-gateway/client';
import type { CardGatewayEvent, CardGatewayInvoiceEvent, CardGatewayPaymentMethodEvent } from '../providers/events';
import { orderNoteWords } from '../../shop/order-note-words';
import { gmtDateTimeMs, parseIsoTime } from '../../shop/shop-time';


/**
 * When the gateway authorized or settled the invoice: its own timestamp of that step when it gives one
 * (`settled`/`authorized`), else the newest successful transaction of that kind.
 */
function invoiceTime(invoice: CardGatewayInvoice, to: PaymentStatus): Date | null {
  const field = to === 'CAPTURED' ? invoice.settled : invoice.authorized;
  if (typeof field === 'string') return parseIsoTime(field);
  const type = to === 'CAPTURED' ? 'settle' : 'authorization';
  const done = (invoice.transactions ?? []).filter((transaction) => transaction.type === type && (transaction.state === 'settled' || transaction.state === 'authorized'));
  return parseIsoTime(done.map((transaction) => transaction.created).pop());
}

/** The invoice's settle transaction that took the money (its newest settled one), which the card plugin keeps on the order. */
function settleTransaction(invoice: CardGatewayInvoice): string | undefined {
  return (invoice.transactions ?? []).filter((transaction) => transaction.type === 'settle' && transaction.state === 'settled').map((transaction) => transaction.id).pop();
}

/** The statement that records the webhook's final status, sent with the handler's COMMIT so both land together. */
export type Finish = (outcome: EventOutcome) => Statement;


/** One transaction for the handler's writes and the webhook's final status. */
type Unit = (work: (db: Executor) => Promise<EventOutcome>) => Promise<EventOutcome>;

/** Invoice states that confirm each event's payment status (the event itself may be late or repeated). */
const CONFIRMING_STATES: Partial<Record<CardGatewayInvoiceEvent['eventType'], { to: PaymentStatus; states: CardGatewayInvoiceState[] }>> = {
  invoice_authorized: { to: 'AUTHORIZED', states: ['authorized', 'settled'] },
  invoice_settled: { to: 'CAPTURED', states: ['settled'] },
  // The charge cancelled at the gateway: never taken. Its payment (and the ledger's charge) closes as CANCELED.
  invoice_cancelled: { to: 'CANCELED', states: ['cancelled'] },
};

/**
 * SPEC 6.1: acts on one card-gateway event after reading the current invoice, charge or payment
 * method back from the provider. Returns PROCESSED when it acted and SKIPPED when there was nothing
 * to do; throws when the provider or the database could not be reached, so the event is retried.
 */
export class CardGatewayEventHandler {
  constructor(
    private readonly client: CardGatewayClient,
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

  async handle(event: CardGatewayEvent, finish?: Finish): Promise<EventOutcome> {
    if (!event.supported) {
      if (event.eventType === 'customer_payment_method_reactivated' && event.paymentMethod) return this.reactivated(event.paymentMethod, event.customer ?? null);
      return skipped(`unsupported event ${event.eventType}`);
    }
    const settings = await this.settings.current();
    const unit: Unit = (work) => this.orders.transaction(work, finish);
    if ('invoice' in event && event.eventType.startsWith('invoice_')) return this.invoiceEvent(event as CardGatewayInvoiceEvent, settings, unit);
    return this.paymentMethodEvent(event as CardGatewayPaymentMethodEvent, unit);
  }

  private async readInvoice(handle: string): Promise<CardGatewayInvoice | null> {
    const result = await this.client.getInvoice(handle);
    if (result.ok) return result.value;
    if (result.kind === 'not_found') return null;
    throw new ProviderUnavailableError(`reading invoice ${handle}`, result);
  }

  private async invoiceEvent(event: CardGatewayInvoiceEvent, settings: ShopSettings, unit: Unit): Promise<EventOutcome> {
    const handle = event.invoice;
    if (event.eventType === 'invoice_failed') return this.invoiceFailed(handle, settings, unit);
    if (event.eventType === 'invoice_refund_failed') return this.refundFailed(handle, event.transaction ?? event.creditNote ?? null, settings, unit);

    const invoice = await this.readInvoice(handle);
    if (!invoice) return skipped(`invoice ${handle} is unknown to the provider`);
    const now = this.clock();

    return unit(async (db) => {
      const { payment, created } = await this.recordPayment(db, handle, invoice, settings, now);
      if (event.eventType === 'invoice_created') {
        return created ? processed('payment recorded') : skipped('payment already known');
      }
      if (event.eventType === 'invoice_refund') {
        const refunded = (invoice.refunded_amount ?? 0) > 0 || (invoice.credit_notes ?? []).length > 0;
        if (!refunded) return skipped(`invoice ${handle} shows no refund`);
        const moved = await this.recorder.move(db, payment, 'REFUNDED', settings, now);
        const handed = await this.recorder.handOverRefund(db, payment, {
          refundedMinor: invoice.refunded_amount ?? 0,
          currency: invoice.currency,
          reason: `Refunded at the card gateway (invoice ${handle}).`,
          // During the move the card plugin hears the same event and refunds in WooCommerce each credit note it has
          // not registered: those this total stands for are registered with the refund (issue 51).
          creditNoteIds: (invoice.credit_notes ?? []).map((note) => String(note.id)),
        }, settings, now);
        if (handed) return processed(moved.moved ? `${moved.note}; refund handed to WooCommerce` : 'refund handed to WooCommerce');
        return moved.moved ? processed(moved.note) : skipped(moved.note);
      }
      const rule = CONFIRMING_STATES[event.eventType];
      if (!rule) return skipped(`no action for ${event.eventType}`);
      if (!rule.states.includes(invoice.state)) return skipped(`invoice ${handle} is ${invoice.state}, which does not confirm ${event.eventType}`);
      const moved = await this.recorder.move(db, payment, rule.to, settings, now, {
        providerTime: invoiceTime(invoice, rule.to) ?? parseIsoTime(event.timestamp), via: this.via, providerTransaction: rule.to === 'CAPTURED' ? settleTransaction(invoice) : undefined,
      });
      return moved.moved || created ? processed(moved.note) : skipped(moved.note);
    });
  }

  /**
   * The payment of an invoice, locked, and linked to its order if it was not yet; a new one also keeps the
   * provider's customer handle. The search for the order travels with the payment's own statements.
   */
  private async recordPayment(db: Executor, handle: string, read: { amount: number; currency: string; customer?: string | null }, settings: ShopSettings, now: Date) {
    const recorded = await this.payments.lockOrCreate(db, { provider: 'card_gateway', externalId: handle, amountMinor: read.amount, currency: read.currency },
      gmtDateTimeMs(now), (withoutOrder) => this.links.cardGatewayHandleSearch(handle, settings, withoutOrder));
    const { payment } = recorded;
    if (payment.orderId === null) {
      const orderId = await this.links.orderForCardGatewayHandle(handle, settings, recorded.foundOrders);
      if (orderId !== null) {
        await this.payments.setOrder(db, payment.id, orderId);
        payment.orderId = orderId;
      }
    }
    if (recorded.created) await this.payments.setMeta(db, payment.id, { customer_handle: read.customer || undefined });
    return recorded;
  }

  /** Only the charge carries the error and error state, so it is read instead of the invoice. */
  private async invoiceFailed(handle: string, settings: ShopSettings, unit: Unit): Promise<EventOutcome> {
    const result = await this.client.getCharge(handle);
    if (!result.ok && result.kind === 'not_found') return skipped(`charge ${handle} is unknown to the provider`);
    if (!result.ok) throw new ProviderUnavailableError(`reading charge ${handle}`, result);
    const charge = result.value;
    if (charge.state !== 'failed') return skipped(`charge ${handle} is ${charge.state}, not failed`);
    const now = this.clock();
    return unit(async (db) => {
      const { payment } = await this.recordPayment(db, handle, charge, settings, now);
      const moved = await this.recorder.move(db, payment, 'FAILED', settings, now, {
        failure: {
          code: charge.error ?? null,
          description: charge.source?.acquirer_message ?? charge.error ?? null,
          state: charge.error_state ?? null,
        },
      });
      return moved.moved ? processed(moved.note) : skipped(moved.note);
    });
  }

  /** An asynchronous refund failed: the money did not go back. Recorded on the payment and told to staff on the order. */
  private async refundFailed(handle: string, transaction: string | null, settings: ShopSettings, unit: Unit): Promise<EventOutcome> {
    const payment = await this.payments.find('card_gateway', handle);
    const orderId = payment?.orderId ?? (await this.links.orderForCardGatewayHandle(handle, settings));
    if (!payment && !orderId) return skipped(`no payment or order for invoice ${handle}`);
    const now = this.clock();
    return unit(async (db) => {
      if (payment) await this.payments.setMeta(db, payment.id, { refund_failed_at: gmtDateTimeMs(now), refund_failed_transaction: transaction ?? '' });
      if (orderId) {
        await this.orders.addNote(db, orderId, orderNoteWords(settings).refundFailed({ provider: 'card_gateway', reference: handle, transaction }), settings, now);
      }
      return processed('refund failure recorded');
    });
  }

  /**
   * `customer_payment_method_reactivated` is outside SPEC 6.1's list, so the event stays SKIPPED; but the card
   * it names is read back, and a card the gateway holds active again after it had failed is used again: its
   * agreement is active, and the renewals waiting on it are charged again at once, within the caps.
   */
  private async reactivated(paymentMethod: string, customerOfEvent: string | null): Promise<EventOutcome> {
    const result = await this.client.getPaymentMethod(paymentMethod);
    if (!result.ok && result.kind !== 'not_found') throw new ProviderUnavailableError(`reading payment method ${paymentMethod}`, result);
    if (!result.ok || result.value.state !== 'active') return skipped(`unsupported event customer_payment_method_reactivated; payment method ${paymentMethod} is ${result.ok ? result.value.state : 'unknown'}`);
    const customer = result.value.customer ?? customerOfEvent;
    const settings = await this.settings.current();
    const now = this.clock();
    return this.orders.transaction(async (db) => {
      const agreement = await this.payments.lockOrCreateAgreement(db, { provider: 'card_gateway', externalId: paymentMethod, customerHandle: customer }, gmtDateTimeMs(now));
      if (agreement.status === 'ACTIVE') return skipped('unsupported event customer_payment_method_reactivated; the card is already active');
      if (agreement.status === 'DISABLED' && agreement.disableReason === 'CANCELED') return skipped('unsupported event customer_payment_method_reactivated; a deleted card is not used again');
      await this.payments.updateAgreement(db, agreement.id, { status: 'ACTIVE', disableReason: null, paymentMethod }, gmtDateTimeMs(now));
      const methodKey = newMethodKey('card_gateway', { customer_handle: customer ?? undefined }, 0);
      const renewals = methodKey ? await this.events.emit(PAYMENT_METHOD_SAVED, { methodKey, method: paymentMethod, settings, now }, db) : 0;
      return skipped(`unsupported event customer_payment_method_reactivated; card ${paymentMethod} read back active and used again${renewals ? `: ${renewals} failed renewal(s) charged again with it` : ''}`);
    });
  }

  private async paymentMethodEvent(event: CardGatewayPaymentMethodEvent, unit: Unit): Promise<EventOutcome> {
    const result = await this.client.getPaymentMethod(event.paymentMethod);
    if (!result.ok && result.kind !== 'not_found') throw new ProviderUnavailableError(`reading payment method ${event.paymentMethod}`, result);
    const state = result.ok ? result.value.state : 'deleted';
    const customer = result.ok ? result.value.customer : event.customer ?? null;
    const wanted: Record<CardGatewayPaymentMethodEvent['eventType'], { states: string[]; disable: AgreementDisableReason | null }> = {
      customer_payment_method_added: { states: ['active'], disable: null },
      customer_payment_method_failed: { states: ['failed'], disable: 'FAILED' },
      customer_payment_method_deleted: { states: ['deleted', 'inactivated'], disable: 'CANCELED' },
    };
    const rule = wanted[event.eventType];
    if (!rule.states.includes(state)) return skipped(`payment method ${event.paymentMethod} is ${state}, which does not confirm ${event.eventType}`);
    const settings = await this.settings.current();
    const now = this.clock();
    return unit(async (db) => {
      const agreement = await this.payments.lockOrCreateAgreement(db, { provider: 'card_gateway', externalId: event.paymentMethod, customerHandle: customer }, gmtDateTimeMs(now));
      const status = rule.disable ? 'DISABLED' : 'ACTIVE';
      if (agreement.status === status && agreement.disableReason === rule.disable) return skipped(`agreement already ${status}`);
      if (agreement.status === 'DISABLED' && !rule.disable && agreement.disableReason === 'CANCELED') {
        return skipped('agreement was deleted; a deleted payment method is not activated again');
      }
      await this.payments.updateAgreement(db, agreement.id, { status, disableReason: rule.disable, paymentMethod: event.paymentMethod }, gmtDateTimeMs(now));
      if (rule.disable) return processed(`agreement disabled (${rule.disable})`);
      // A new card where failed renewals wait for one: each is charged with it at once.
      const methodKey = newMethodKey('card_gateway', { customer_handle: customer ?? undefined }, 0);
      const renewals = methodKey ? await this.events.emit(PAYMENT_METHOD_SAVED, { methodKey, method: event.paymentMethod, settings, now }, db) : 0;
      return processed(renewals ? `agreement activated; ${renewals} failed renewal(s) charged again with it` : 'agreement activated');
    });
  }
}
