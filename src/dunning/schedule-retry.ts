import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { Executor } from '../data-access/transaction';
import type { RetryRepository } from '../data-access/retry-repository';
import type { Logger } from '../logger';
import type { ScheduleRetryEvent } from '../payments/payment-events';

/**
 * Listener of `payments-hub/payments/schedule-retry`: plans the next attempt of the dunning plan,
 * unless the card was hard declined (another try on it cannot succeed) or the plan is used up.
 */
export function scheduleRetryListener(deps: { retries: RetryRepository; orders: OrderWriteRepository; planSeconds: number[]; log: Logger }) {
  return async (event: ScheduleRetryEvent, db: Executor): Promise<void> => {
    const { settings } = event;
    if (event.failureState === 'hard_declined') {
      await deps.orders.addNote(db, event.orderId, 'No payment retry scheduled: the payment method was hard declined.', settings, event.now);
      deps.log.info('retry_not_scheduled', { orderId: event.orderId, reason: 'hard_declined' });
      return;
    }
    const outcome = await deps.retries.scheduleNext(db, { ...event, planSeconds: deps.planSeconds });
    if (outcome.kind === 'scheduled') {
      const { attempt, scheduledAt } = outcome.retry;
      await deps.orders.addNote(db, event.orderId, `Payment retry ${attempt} of ${deps.planSeconds.length} scheduled for ${scheduledAt} UTC.`, settings, event.now);
    } else if (outcome.kind === 'plan_used_up') {
      await deps.orders.addNote(db, event.orderId, `No payment retry scheduled: all ${deps.planSeconds.length} retries of the dunning plan were used.`, settings, event.now);
    }
    deps.log.info('retry_scheduling', { orderId: event.orderId, outcome: outcome.kind });
  };
}
