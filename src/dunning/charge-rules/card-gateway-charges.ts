import type { DunningCaseRepository } from '../../data-access/dunning-case-repository';
import type { OrderWriteRepository } from '../../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../../data-access/payment-repository';
import type { RetryRecord } from '../../data-access/retry-repository';
import type { ShopSettings } from '../../data-access/shop-settings-repository';
import type { CardGatewayClient } from '../../payments/providers/card-gateway/client';
import type { ShopOrder } from '../../shop/order';
import { SUBSCRIPTION_CARD_META } from '../dunning';
import { cannotRead, DAY_MS, readProblem, type ChargeRequest, type ChargeResult, type ChargeTarget, type ProviderChargeRules, type ProviderState, type Refusal, type UnderWay } from './charge-rules';
import type { NewCharge } from '../../data-access/charge-ledger-repository';

/** Characters the card gateway allows in a handle (the create-charge reference: `[a-zA-Z0-9_.-@]`, at most 255). */
const CARD_HANDLE = /^[a-zA-Z0-9_.@-]{1,255}$/;

/**
 * The handle of a card attempt: `order-<number>-retry<n>` as the gateway plugin names its invoices, when the
 * shop's order number is one the gateway accepts; otherwise the order's ID stands in for it, so whatever the
 * shop's numbers look like (`#`, `/`, spaces), the gateway never refuses the handle.
 */
export function cardGatewayRetryHandle(number: string, orderId: number, attempt: number): string {
  const byNumber = `order-${number}-retry${attempt}`;
  return CARD_HANDLE.test(byNumber) && !number.includes('-') ? byNumber : `order-${orderId}-retry${attempt}`;
}

/** The card gateway's rules for a dunning charge (Frisbii/Reepay: invoices, charges by handle, saved cards). */
export class CardGatewayCharges implements ProviderChargeRules {
  constructor(private readonly deps: {
    cardGateway: CardGatewayClient;
    payments: PaymentRepository;
    orderWrites: OrderWriteRepository;
    cases: DunningCaseRepository;
  }) {}

  async stateAtProvider(original: PaymentRecord): Promise<ProviderState> {
    const result = await this.deps.cardGateway.getInvoice(original.externalId);
    if (!result.ok) return result.kind === 'not_found' ? { kind: 'unpaid' } : readProblem(`reading invoice ${original.externalId}`, result);
    if (result.value.state === 'settled') return { kind: 'paid', status: 'CAPTURED' };
    if (result.value.state === 'authorized') return { kind: 'paid', status: 'AUTHORIZED' };
    return { kind: 'unpaid' };
  }

  /** The failed payment's customer, and the card the subscription is set to (the gateway plugin's `_reepay_token`), not the customer's newest. */
  async target(retry: Pick<RetryRecord, 'subscriptionId'>, _original: PaymentRecord, meta: Record<string, string>, settings: ShopSettings): Promise<ChargeTarget> {
    const token = (await this.deps.orderWrites.getMeta(this.deps.cases.pool, retry.subscriptionId, SUBSCRIPTION_CARD_META, settings))?.trim();
    return { customer_handle: meta.customer_handle || undefined, card: token || undefined };
  }

  hasPaymentMethod(target: ChargeTarget): boolean {
    return Boolean(target.customer_handle || target.card);
  }

  /** A card charge of ours still pending (an asynchronous method) may yet be taken: nothing is charged on top. */
  async underWay(order: ShopOrder, original: PaymentRecord, _meta: Record<string, string>, _settings: ShopSettings, now: Date): Promise<UnderWay | Refusal | null> {
    for (const payment of await this.deps.payments.listByOrder(order.id)) {
      if (payment.provider !== 'card_gateway' || payment.status !== null || payment.id === original.id) continue;
      const read = await this.deps.cardGateway.getCharge(payment.externalId);
      if (!read.ok) {
        if (read.kind === 'not_found') continue;
        return cannotRead(`reading charge ${payment.externalId}`, read, now);
      }
      if (['pending', 'created', 'authorized', 'settled'].includes(read.value.state)) {
        return { kind: 'wait', cause: 'pending', until: new Date(now.getTime() + DAY_MS / 24), why: `charge ${payment.externalId} is ${read.value.state} at the card gateway; nothing charged on top` };
      }
    }
    return null;
  }

  /** The handle `order-<number>-retry<n>` and the attempt's key, on the card `cardSource` picks. */
  async newCharge(request: ChargeRequest): Promise<{ kind: 'charge'; charge: NewCharge } | { kind: 'no_charge'; result: ChargeResult }> {
    const { retry, target, order, number, base, key } = request;
    const handle = cardGatewayRetryHandle(number, order.id, retry.attempt);
    const source = await this.cardSource(target, retry);
    if (!source) {
      return { kind: 'no_charge', result: { kind: 'declined', externalId: handle, failure: { code: 'no_card', description: 'the subscription has no card at the gateway that can be charged', state: 'hard_declined' } } };
    }
    return { kind: 'charge', charge: {
      ...base, externalId: handle, idempotencyKey: key, paymentMethod: source, customerHandle: target.customer_handle ?? null, due: null, description: `Renewal order ${number}`,
    } };
  }

  /**
   * What a card attempt charges: the subscription's own card when the gateway still holds it active (one the
   * gateway failed or that was deleted is not charged), else the customer's newest active card at the
   * gateway; `auto` only with a customer, as the gateway requires one.
   */
  private async cardSource(target: ChargeTarget, retry: Pick<RetryRecord, 'plan'>): Promise<string | null> {
    if (target.card) {
      const read = await this.deps.cardGateway.getPaymentMethod(target.card);
      if (read.ok && read.value.state === 'active') return target.card;
      if (!read.ok && read.kind !== 'not_found') return target.card;
      if (retry.plan !== 'new_method') return null;
    }
    const customer = target.customer_handle;
    const agreement = customer ? await this.deps.payments.activeAgreementOfCustomer('card_gateway', customer) : null;
    if (agreement?.paymentMethod) return agreement.paymentMethod;
    return customer ? 'auto' : null;
  }
}
