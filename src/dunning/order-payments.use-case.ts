import type { OrderRepository } from '../data-access/order-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import { PAID_OUTSIDE, SECOND_CAPTURE_META } from '../data-access/second-capture-repository';
import { secondCaptureMessage, secondCaptureOutsideMessage, secondCaptureUnresolved } from '../payments/second-captures';
import type { RetryRepository } from '../data-access/retry-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { WebhookRepository } from '../data-access/webhook-repository';
import { gmtDateTimeMs, isoFromGmt } from '../shop/shop-time';
import type { DunningStory, DunningView } from './dunning-story';

/** How long before an order's first payment a webhook about it may have arrived (a payment is recorded when one is handled, or later by reconciliation). */
const WEBHOOKS_BEFORE_FIRST_PAYMENT_MS = 30 * 86_400_000;
/** Webhooks shown at most (newest first); an order has a handful. */
const WEBHOOK_LIMIT = 200;

/** What the service knows of one order's payments, for staff (CONTRACT: `GET /payment-hub/v1/orders/{id}/payments`). */
export interface OrderPaymentsView {
  order_id: number;
  payments: {
    id: number;
    provider: string;
    external_id: string;
    status: string | null;
    /** In the currency's minor units, as the provider gave it and the payments table holds it. */
    amount: number | null;
    currency: string | null;
    failure_code: string | null;
    failure_description: string | null;
    failure_state: string | null;
    created_at: string;
    updated_at: string;
  }[];
  retries: { attempt: number; status: string; scheduled_at: string; result: string | null }[];
  webhooks: { id: number; provider: string; external_id: string; event_type: string; status: string; created_at: string }[];
  /**
   * What staff must act on (CONTRACT): `captured_twice`, the order paid twice, `payment_ids` the later payment first,
   * waiting for its refund (see second-captures.ts).
   */
  warnings: { code: 'captured_twice'; message: string; payment_ids: number[]; refund: PaymentReference; kept: PaymentReference | null }[];
  /** The failed renewal's story (what happened, what happens next, what staff may do now); null when the order has no dunning case. */
  dunning: DunningView | null;
}

/** A payment as a warning names it. */
export interface PaymentReference {
  id: number;
  provider: string;
  external_id: string;
  amount: number | null;
  currency: string | null;
}

export type OrderPaymentsOutcome = { kind: 'found'; view: OrderPaymentsView } | { kind: 'order_not_found' };

const orNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

const reference = (payment: PaymentRecord): PaymentReference => ({
  id: payment.id, provider: payment.provider, external_id: payment.externalId, amount: payment.amountMinor, currency: payment.currency,
});

/** The order's flagged second captures that still wait for a refund, newest first. */
function secondCaptureWarnings(payments: (PaymentRecord & { meta: Record<string, string> })[]): OrderPaymentsView['warnings'] {
  const warnings: OrderPaymentsView['warnings'] = [];
  for (const refund of [...payments].sort((a, b) => b.id - a.id)) {
    if (refund.meta[SECOND_CAPTURE_META] === PAID_OUTSIDE) {
      // What had paid the order is the shop's own (another gateway, a transfer, staff): no payment of ours to name.
      if (!secondCaptureUnresolved(refund.status, null, true)) continue;
      warnings.push({
        code: 'captured_twice', message: secondCaptureOutsideMessage(refund, refund.meta.cancel_because ?? null), payment_ids: [refund.id], refund: reference(refund), kept: null,
      });
      continue;
    }
    const keptId = Number(refund.meta[SECOND_CAPTURE_META]);
    const kept = keptId ? payments.find((payment) => payment.id === keptId) : undefined;
    if (!kept || !secondCaptureUnresolved(refund.status, kept.status)) continue;
    warnings.push({
      code: 'captured_twice', message: secondCaptureMessage(refund, kept), payment_ids: [refund.id, kept.id], refund: reference(refund), kept: reference(kept),
    });
  }
  return warnings;
}
const newestFirst = <T extends { id: number }>(key: (item: T) => string) => (a: T, b: T) => key(b).localeCompare(key(a)) || b.id - a.id;

/**
 * One order's payments with their failure, its dunning attempts planned or made, and the webhooks stored about
 * its payments, each newest first: what `payment-hub payments list --order` and `retries list --order` show,
 * plus the webhooks, and a warning for each second capture still to refund. The order must exist in the storage
 * WooCommerce uses.
 */
export class ShowOrderPayments {
  constructor(private readonly deps: {
    orders: OrderRepository;
    settings: ShopSettingsRepository;
    payments: PaymentRepository;
    retries: RetryRepository;
    webhooks: WebhookRepository;
    dunning: Pick<DunningStory, 'view'>;
  }) {}

  /** The order's payments with all their meta, oldest first (`payment-hub payments list --order`); the order must exist as `execute` needs it to. */
  async payments(orderId: number): Promise<{ kind: 'found'; payments: (PaymentRecord & { meta: Record<string, string> })[] } | { kind: 'order_not_found' }> {
    const settings = await this.deps.settings.current();
    if (!(await this.deps.orders.exists(orderId, settings))) return { kind: 'order_not_found' };
    return { kind: 'found', payments: await this.deps.payments.listByOrder(orderId) };
  }

  async execute(orderId: number): Promise<OrderPaymentsOutcome> {
    const settings = await this.deps.settings.current();
    if (!(await this.deps.orders.exists(orderId, settings))) return { kind: 'order_not_found' };
    const [payments, retries, dunning] = await Promise.all([this.deps.payments.listByOrder(orderId), this.deps.retries.list({ orderId }), this.deps.dunning.view(orderId)]);
    const firstPayment = payments.reduce<string | null>((first, payment) => (first === null || payment.createdAt < first ? payment.createdAt : first), null);
    const webhooks = firstPayment === null ? [] : await this.deps.webhooks.aboutPaymentsSince(
      payments.map((payment) => ({ provider: payment.provider, externalId: payment.externalId })),
      gmtDateTimeMs(new Date(Date.parse(isoFromGmt(firstPayment)) - WEBHOOKS_BEFORE_FIRST_PAYMENT_MS)),
      WEBHOOK_LIMIT,
    );
    return {
      kind: 'found',
      view: {
        order_id: orderId,
        payments: [...payments].sort(newestFirst((payment) => payment.createdAt)).map((payment) => ({
          id: payment.id,
          provider: payment.provider,
          external_id: payment.externalId,
          status: payment.status,
          amount: payment.amountMinor,
          currency: payment.currency,
          failure_code: orNull(payment.meta.failure_code),
          failure_description: orNull(payment.meta.failure_description),
          failure_state: orNull(payment.meta.failure_state),
          created_at: isoFromGmt(payment.createdAt),
          updated_at: isoFromGmt(payment.updatedAt),
        })),
        retries: [...retries].sort(newestFirst((retry) => retry.scheduledAt)).map((retry) => ({
          attempt: retry.attempt, status: retry.status, scheduled_at: isoFromGmt(retry.scheduledAt), result: retry.result,
        })),
        webhooks: webhooks.map((webhook) => ({
          id: webhook.id, provider: webhook.provider, external_id: webhook.externalId, event_type: webhook.eventType, status: webhook.status,
          created_at: isoFromGmt(webhook.createdAt),
        })),
        warnings: secondCaptureWarnings(payments),
        dunning,
      },
    };
  }
}
