import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { ProviderRefusalRepository } from '../data-access/provider-refusal-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { Transaction, type Executor } from '../data-access/transaction';
import type { Logger } from '../logger';
import { gmtDateTimeMs } from '../shop/shop-time';
import type { ChargeLedger } from './charge-ledger';
import type { PaymentRecorder } from './payment-recorder';
import type { CardGatewayCharge, CardGatewayClient, CardGatewayResult } from './providers/card-gateway/client';
import { unanswered } from './providers/http-request';

/**
 * Payment meta of a card payment of the service's own that the gateway only authorised: when the service next asks
 * the gateway to settle it (a shop time, GMT). Removed once the payment is settled or the authorisation is gone.
 */
export const SETTLE_WANTED_META = 'settle_wanted';

/** Payments looked at per pass: an authorisation-only answer to a charge asked to settle is rare. */
const PER_PASS = 50;
/** The worker's dunning loop runs every few seconds; the settle is asked right after the commit, this is the backstop. */
const PASS_SPACING_MS = 15_000;
/** After a refusal the gateway is asked again this much later, not every pass (its writes are limited, 10 a second). */
const AFTER_REFUSAL_MS = 60 * 60_000;
/**
 * Orders the shop has closed: their authorisation is released rather than settled. The card plugin cancels it itself
 * when staff cancel such an order (its status hook finds the service's invoice by `_reepay_order`); without the
 * plugin nobody would, and the customer's money would stay held until the authorisation expires.
 */
const CLOSED_ORDER_STATUSES = ['cancelled', 'refunded', 'trash'];

export type SettleOneOutcome = 'settled' | 'released' | 'gone' | 'refused' | 'unreachable' | 'not_due';

export interface SettleAuthorisationsSummary {
  looked: number;
  settled: number;
  released: number;
  refused: number;
  unreachable: number;
}

/**
 * A card charge of the service's asks the gateway to settle at once (`settle: true`), as the gateway plugin's renewal
 * charges do. Should the gateway answer (or its webhook, or reconciliation, report) the charge only authorised, the
 * money is not taken: the authorisation lapses after about 7 days, and the plugin's Capture paths on the order screen
 * (a full capture, status Completed) read the invoice `order-<id>`, not the service's `order-<id>-retry<n>`, so staff
 * could not take it from WP admin either. The service finishes what it asked: it settles its own authorisation while
 * the shop still holds the order (on hold, or paid), and releases it when the shop closed the order. The settle carries
 * its own key, so one whose answer was lost is asked again with it, and a second settle is refused by the gateway.
 */
export class SettleOwnAuthorisations {
  constructor(private readonly deps: {
    payments: PaymentRepository;
    ledger: Pick<ChargeLedger, 'chargeOfPayment'>;
    cardGateway: Pick<CardGatewayClient, 'settleCharge' | 'cancelCharge' | 'getCharge'>;
    orders: Pick<OrderRepository, 'findById'>;
    orderWrites: Pick<OrderWriteRepository, 'transaction'>;
    recorder: Pick<PaymentRecorder, 'move'>;
    refusals: Pick<ProviderRefusalRepository, 'record' | 'resolve'>;
    settings: ShopSettingsRepository;
    log: Logger;
    clock: () => Date;
  }) {}

  private lastPassAt = -Infinity;

  /**
   * Inside the transaction that records a payment as paid (RENEWAL_PAID): a card payment of the service's own charge
   * now only authorised is marked to be settled, and settled right after the commit.
   */
  async onPaid(db: Executor, payment: PaymentRecord, now: Date): Promise<void> {
    if (payment.provider !== 'card_gateway' || payment.status !== 'AUTHORIZED') return;
    // The plugin's own authorisation (its invoice `order-<id>`) is the plugin's to capture, as it always was.
    if (!(await this.deps.ledger.chargeOfPayment(db, payment))) return;
    await this.deps.payments.setMeta(db, payment.id, { [SETTLE_WANTED_META]: gmtDateTimeMs(now) });
    if (db instanceof Transaction) {
      db.afterCommit(() => {
        void this.settleOne(payment.id).catch((error: unknown) => this.deps.log.error('authorisation_settle_failed', { paymentId: payment.id, error }));
      });
    }
  }

  /** The worker's backstop: every marked payment whose time has come (a settle not made after the commit, or refused before). */
  async pass(): Promise<SettleAuthorisationsSummary> {
    const summary: SettleAuthorisationsSummary = { looked: 0, settled: 0, released: 0, refused: 0, unreachable: 0 };
    const now = this.deps.clock();
    if (now.getTime() - this.lastPassAt < PASS_SPACING_MS) return summary;
    this.lastPassAt = now.getTime();
    for (const id of await this.deps.payments.dueByMetaTime(SETTLE_WANTED_META, gmtDateTimeMs(now), PER_PASS)) {
      summary.looked += 1;
      const outcome = await this.settleOne(id);
      if (outcome === 'settled') summary.settled += 1;
      else if (outcome === 'released') summary.released += 1;
      else if (outcome === 'refused') summary.refused += 1;
      else if (outcome === 'unreachable') summary.unreachable += 1;
    }
    return summary;
  }

  async settleOne(paymentId: number): Promise<SettleOneOutcome> {
    const { payments, cardGateway, log } = this.deps;
    const payment = await payments.findById(paymentId);
    if (!payment || payment.status !== 'AUTHORIZED' || payment.provider !== 'card_gateway') {
      // Settled or cancelled meanwhile (its webhook, the gateway's administration, reconciliation): nothing left to do.
      if (payment) await this.deps.orderWrites.transaction((db) => payments.deleteMeta(db, paymentId, SETTLE_WANTED_META));
      return 'gone';
    }
    const due = (await payments.meta(paymentId))[SETTLE_WANTED_META];
    if (!due || due > gmtDateTimeMs(this.deps.clock())) return 'not_due';
    const charge = await this.deps.ledger.chargeOfPayment(payments.pool, payment);
    if (!charge) {
      // Not a charge of the service's (the mark is only made for one): nothing to settle, and no pass asks again.
      await this.deps.orderWrites.transaction((db) => payments.deleteMeta(db, paymentId, SETTLE_WANTED_META));
      return 'gone';
    }
    const settings = await this.deps.settings.current();
    const order = payment.orderId === null ? null : await this.deps.orders.findById(payment.orderId, settings);
    const release = !order || CLOSED_ORDER_STATUSES.includes(order.status);
    const answer = release
      ? await cardGateway.cancelCharge(charge.externalId)
      : await cardGateway.settleCharge(charge.externalId, { key: `${charge.idempotencyKey}-settle`, amount: charge.amountMinor });
    if (!answer.ok && unanswered(answer)) {
      log.warn('authorisation_not_settled_yet', { paymentId, orderId: payment.orderId, externalId: charge.externalId, reason: answer.message });
      return 'unreachable';
    }
    // Refused (already settled or cancelled elsewhere, or a rule of the gateway's): what the charge is now decides.
    const read: CardGatewayResult<CardGatewayCharge> = answer.ok ? answer : await cardGateway.getCharge(charge.externalId);
    if (!read.ok) {
      log.warn('authorisation_not_settled_yet', { paymentId, orderId: payment.orderId, externalId: charge.externalId, reason: read.message });
      return 'unreachable';
    }
    const state = read.value.state;
    if (state === 'settled') {
      await this.record(payment, 'CAPTURED', read.value, charge.retryId);
      log.info('authorisation_settled', { paymentId, orderId: payment.orderId, externalId: charge.externalId });
      return 'settled';
    }
    if (state === 'cancelled' || state === 'failed') {
      await this.record(payment, 'CANCELED', read.value, charge.retryId);
      log.warn('authorisation_released', { paymentId, orderId: payment.orderId, externalId: charge.externalId, state, orderStatus: order?.status ?? null });
      return 'released';
    }
    // Still authorised and the gateway refused: a request of the service's own it did not accept. The operator's
    // alarm (the provider refusals the metrics count), never the customer's; asked again in an hour.
    const message = answer.ok ? `charge ${charge.externalId} is ${state} after the settle` : answer.message;
    log.error('authorisation_settle_refused', { paymentId, orderId: payment.orderId, externalId: charge.externalId, status: answer.ok ? null : answer.status ?? null, code: answer.ok ? null : answer.code ?? null, message });
    if (charge.retryId !== null && payment.orderId !== null) {
      await this.deps.refusals.record({
        provider: 'card_gateway', retryId: charge.retryId, orderId: payment.orderId, httpStatus: answer.ok ? null : answer.status ?? null,
        code: answer.ok ? null : answer.code === undefined ? null : String(answer.code), message,
      }, this.deps.clock());
    }
    const later = gmtDateTimeMs(new Date(this.deps.clock().getTime() + AFTER_REFUSAL_MS));
    await this.deps.orderWrites.transaction((db) => payments.setMeta(db, paymentId, { [SETTLE_WANTED_META]: later }));
    return 'refused';
  }

  /** The gateway's word recorded on the payment (WooCommerce told through the recorder), and the mark removed, at once. */
  private async record(payment: PaymentRecord, to: 'CAPTURED' | 'CANCELED', charge: CardGatewayCharge, retryId: number | null): Promise<void> {
    const now = this.deps.clock();
    const settings = await this.deps.settings.current();
    await this.deps.orderWrites.transaction(async (db) => {
      const locked = await this.deps.payments.lock(db, payment.provider, payment.externalId);
      if (locked?.status === 'AUTHORIZED') {
        const settled = to === 'CAPTURED' && charge.settled ? new Date(charge.settled) : null;
        await this.deps.recorder.move(db, locked, to, settings, now, {
          providerTransaction: to === 'CAPTURED' ? charge.transaction : undefined,
          providerTime: settled && !Number.isNaN(settled.getTime()) ? settled : null,
        });
      }
      await this.deps.payments.deleteMeta(db, payment.id, SETTLE_WANTED_META);
    });
    if (retryId !== null) await this.deps.refusals.resolve(retryId, now);
  }
}
