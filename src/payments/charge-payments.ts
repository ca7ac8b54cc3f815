import type { ChargeLedger } from './charge-ledger';
import type { ChargeRecord, ChargeLedgerRepository } from '../data-access/charge-ledger-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { Executor } from '../data-access/transaction';
import type { Provider } from '../../entities';
import { gmtDateTimeMs } from '../shop/shop-time';

/** What the provider answered a charge of the service's, for its payment row. */
export interface ChargeAnswerPayment {
  provider: Provider;
  externalId: string;
  orderId: number;
  agreementId: number | null;
  amountMinor: number;
  currency: string;
  /** The payment's meta: which failed payment the charge retried, the customer or agreement charged. */
  meta: Record<string, string | undefined>;
  /** The ledger's charge the answer is to (null: nothing was asked, such as no card to charge). */
  charge: ChargeRecord | null;
  /** How the provider's word closes the ledger's charge: taken, declined, or still to be confirmed (pending). */
  closes: { state: 'TAKEN' | 'DECLINED'; result: string } | null;
}

/**
 * Payments owns the payment rows: a dunning attempt (or staff's Charge now, or a new payment method) asks for a
 * charge, and the answer's payment row is written here, with the ledger's charge attached to it and closed on the
 * provider's word, in the caller's transaction. The payment's status is then moved by the PaymentRecorder.
 */
export class ChargePayments {
  constructor(private readonly deps: {
    payments: PaymentRepository;
    orderWrites: OrderWriteRepository;
    charges: ChargeLedgerRepository;
    /** Money taken is asked of the rule whether the renewal still wanted it (flagged when it wanted none). */
    ledger: Pick<ChargeLedger, 'takenForNobody'>;
  }) {}

  async paymentOfAnswer(db: Executor, answer: ChargeAnswerPayment, settings: ShopSettings, at: Date): Promise<PaymentRecord> {
    const { payments, orderWrites, charges } = this.deps;
    const { payment } = await payments.lockOrCreate(db, {
      provider: answer.provider, externalId: answer.externalId, orderId: answer.orderId, agreementId: answer.agreementId,
      amountMinor: answer.amountMinor, currency: answer.currency,
    }, gmtDateTimeMs(at));
    // The order before the attempt's row, the order webhooks take them in (payment, order, retries), so a webhook
    // for another payment of this order cannot deadlock with this transaction.
    await orderWrites.lockStatus(db, answer.orderId, settings);
    await payments.setMeta(db, payment.id, answer.meta);
    if (answer.charge) {
      await charges.attachPayment(db, answer.charge.id, payment.id, at);
      if (answer.closes?.state === 'TAKEN') await this.deps.ledger.takenForNobody(db, answer.charge, at, settings);
      if (answer.closes) await charges.close(db, answer.charge, answer.closes.state, answer.closes.result, at);
    }
    return payment;
  }
}
