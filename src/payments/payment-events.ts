import type { Provider } from '../../entities';
import type { Executor } from '../data-access/transaction';
import type { ShopSettings } from '../data-access/shop-settings-repository';

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

interface EventMap {
  [SCHEDULE_RETRY]: ScheduleRetryEvent;
}

type Listener<K extends keyof EventMap> = (event: EventMap[K], db: Executor) => Promise<void>;

/**
 * The service's internal events. Listeners run inside the emitter's transaction, so an event and
 * its consequences are stored together or not at all.
 */
export class PaymentEvents {
  private readonly listeners = new Map<keyof EventMap, Listener<keyof EventMap>[]>();

  on<K extends keyof EventMap>(name: K, listener: Listener<K>): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener as Listener<keyof EventMap>]);
  }

  async emit<K extends keyof EventMap>(name: K, event: EventMap[K], db: Executor): Promise<void> {
    for (const listener of this.listeners.get(name) ?? []) await listener(event, db);
  }
}
