import type { Provider } from '../../entities';
import type { Executor } from '../data-access/transaction';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { PaymentRecord } from '../data-access/payment-repository';

/** Fired when a renewal payment ends FAILED (SPEC 6.3); schedules the next dunning attempt. */
export const SCHEDULE_RETRY = 'payments-hub/payments/schedule-retry';

export interface ScheduleRetryEvent {
  orderId: number;
  subscriptionId: number;
  paymentId: number;
  provider: Provider;
  /** The provider's decline: its code (`error`, `failureReason`, 147) and state (`error_state`). */
  failure: { code: string | null; state: string | null };
  /** The renewal's amount, as the payment holds it. */
  amountMinor: number;
  currency: string;
  /** What the payment was charged on (the caps' key), and where a new payment method would be saved; null when unknown. */
  chargeKey: string | null;
  newMethodKey: string | null;
  /** The shop's settings the failure was handled under, so listeners write to the same stores. */
  settings: ShopSettings;
  now: Date;
}

/** Fired when a payment method is saved where failed renewals may wait for one; listeners answer how many they charge again with it. */
export const PAYMENT_METHOD_SAVED = 'payments-hub/payments/payment-method-saved';

export interface PaymentMethodSavedEvent {
  /** Where it was saved (see method-keys.ts). */
  methodKey: string;
  /** The card or the agreement. */
  method: string;
  settings: ShopSettings;
  now: Date;
}

/** Fired when a renewal's payment is reserved or taken. */
export const RENEWAL_PAID = 'payments-hub/payments/renewal-paid';

export interface RenewalPaidEvent {
  payment: PaymentRecord;
  /** The payment's meta (what says who made it), read when a listener needs it. */
  meta: () => Promise<Record<string, string>>;
  /** Set when reconciliation found the payment by asking the provider. */
  via: 'reconciliation' | undefined;
  now: Date;
}

/** Fired when a renewal stopped wanting money because its subscription ended (the customer cancelled it, it expired, was trashed). */
export const RENEWAL_ENDED = 'payments-hub/payments/renewal-ended';

export interface RenewalEndedEvent {
  orderId: number;
  /** renewal-wants-money.ts's reason: `subscription_cancelled`, `subscription_expired`, ... */
  reason: string;
  now: Date;
}

interface EventMap {
  [SCHEDULE_RETRY]: ScheduleRetryEvent;
  [RENEWAL_ENDED]: RenewalEndedEvent;
  [PAYMENT_METHOD_SAVED]: PaymentMethodSavedEvent;
  [RENEWAL_PAID]: RenewalPaidEvent;
}

/** A listener; a number it answers is added up for the emitter (how many renewals it acted on). */
type Listener<K extends keyof EventMap> = (event: EventMap[K], db: Executor) => Promise<number | void>;

/**
 * The service's internal events. Listeners run inside the emitter's transaction, so an event and
 * its consequences are stored together or not at all.
 */
export class PaymentEvents {
  private readonly listeners = new Map<keyof EventMap, Listener<keyof EventMap>[]>();

  on<K extends keyof EventMap>(name: K, listener: Listener<K>): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener as Listener<keyof EventMap>]);
  }

  /** Runs every listener in `db`'s transaction, in order; the sum of what they answered. */
  async emit<K extends keyof EventMap>(name: K, event: EventMap[K], db: Executor): Promise<number> {
    let total = 0;
    for (const listener of this.listeners.get(name) ?? []) {
      const answered = await listener(event, db);
      if (typeof answered === 'number') total += answered;
    }
    return total;
  }
}
