import type { DunningConfig } from '../config';
import type { DunningCaseRecord, DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { companionRunsDunning, type WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { Logger } from '../logger';
import type { SwitchedPaymentMethods } from './switched-payment-methods.use-case';
import type { ChargeLedger } from '../payments/charge-ledger';
import type { SettleOpenCharges } from '../payments/settle-open-charges.use-case';
import type { ChargeRecord } from '../data-access/charge-ledger-repository';
import { orderNoteWords } from '../shop/order-note-words';
import { parseGmtDateTime } from '../shop/shop-time';

const DAY_MS = 86_400_000;
/** Cases handled per pass, each in its own short transaction; a backlog drains over the next passes. */
const BATCH = 50;
const PASS_SPACING_MS = 60_000;
/**
 * How long the deadline waits for the outcome of a charge the customer's new method or staff's Charge now made: a
 * wallet charge falls due two days after it is made and the wallet retries it for two more, a card's is answered at once.
 */
const NEW_CHARGE_WAIT_MS = 5 * DAY_MS;
/**
 * How long after the deadline it waits for the provider to confirm the cancel of the renewal's last charge: then the
 * case ends all the same, and money the provider takes after that is flagged for a refund (second-captures.ts).
 */
const CANCEL_CONFIRM_WAIT_MS = DAY_MS;

export interface DeadlineSummary {
  reminded: number;
  lost: number;
}

/**
 * The end of dunning for renewals only the customer can fix: a reminder `DUNNING_REMINDER_DAYS` before the
 * deadline (once), and at the deadline the subscription cancelled through WooCommerce and the case LOST.
 * Each case is decided in its own transaction, under its row lock, so a payment arriving at the same moment
 * either recovers the case first or finds it lost.
 */
export class DunningDeadlines {
  constructor(private readonly deps: {
    cases: DunningCaseRepository;
    retries: RetryRepository;
    orders: OrderWriteRepository;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    config: DunningConfig;
    log: Logger;
    clock: () => Date;
    /** Before a deadline cancels a subscription, the method its customer may have switched to meanwhile. */
    switched?: Pick<SwitchedPaymentMethods, 'check'>;
    /** The renewal's open charge, withdrawn and cancelled at its provider before the case ends. */
    ledger: Pick<ChargeLedger, 'withdraw' | 'repository'>;
    openCharges: Pick<SettleOpenCharges, 'cancel'>;
  }) {}

  /** When the last pass ran: deadlines are days apart, so a pass a minute is prompt enough and costs the shop nothing. */
  private lastPassAt = -Infinity;

  async execute(): Promise<DeadlineSummary> {
    const summary: DeadlineSummary = { reminded: 0, lost: 0 };
    const now = this.deps.clock();
    if (now.getTime() - this.lastPassAt < PASS_SPACING_MS) return summary;
    this.lastPassAt = now.getTime();
    for (const due of await this.deps.cases.deadlineWithin(now, BATCH)) {
      // The customer who acted is not lost: a method switched to since is charged first, and the deadline waits for it.
      if (this.deps.switched && await this.deps.switched.check(due, await this.deps.settings.current())) continue;
      if (await this.end(due, now)) summary.lost += 1;
    }
    const reminderMs = this.deps.config.reminderDays * DAY_MS;
    if (reminderMs <= 0) return summary;
    for (const due of await this.deps.cases.reminderWithin(new Date(now.getTime() + reminderMs), BATCH)) {
      const deadline = parseGmtDateTime(due.deadlineAt);
      if (deadline && deadline.getTime() > now.getTime() && await this.remind(due, deadline, now)) summary.reminded += 1;
    }
    return summary;
  }

  private async remind(due: DunningCaseRecord, deadline: Date, now: Date): Promise<boolean> {
    const settings = await this.deps.settings.current();
    return this.deps.orders.transaction(async (db) => {
      const found = await this.deps.cases.lockCaseOfOrder(db, due.orderId);
      if (found?.status !== 'OPEN' || found.customerRemindedAt) return false;
      await this.deps.cases.markReminded(db, found.id, now);
      if (!companionRunsDunning(settings)) return false;
      await this.deps.changes.enqueue(db, {
        op: 'customer_payment_method_needed', objectId: found.subscriptionId,
        payload: { kind: 'final_reminder', order_id: found.orderId, reason: 'retries_exhausted', deadline: deadline.toISOString(), card_expires: null, masked_card: null },
      }, settings, now);
      await this.deps.orders.addNote(db, found.orderId, orderNoteWords(settings).customerReminded({ deadline }), settings, now);
      return true;
    });
  }

  private async end(due: DunningCaseRecord, now: Date): Promise<boolean> {
    const settings = await this.deps.settings.current();
    // The charge this pass withdrew, to cancel once the transaction is committed.
    const withdrawn: { charge: ChargeRecord | null } = { charge: null };
    const ended = await this.deps.orders.transaction(async (db) => {
      withdrawn.charge = null;
      const found = await this.deps.cases.lockCaseOfOrder(db, due.orderId);
      if (found?.status !== 'OPEN') return false;
      // The charge with the customer's new method, planned or under way, is waited for: its answer decides. Whatever
      // else is planned ends here with the case.
      const waiting = (retry: { status: string; plan: string }) => retry.status === 'PROCESSING' || (retry.status === 'PENDING' && retry.plan === 'new_method');
      if ((await this.deps.retries.list({ orderId: found.orderId }, db)).some(waiting)) return false;
      // The deadline never leaves a charge behind: the renewal's open charge is waited for (one the customer's new
      // method or staff made, for its outcome, within NEW_CHARGE_WAIT_MS), or withdrawn and cancelled at its
      // provider, and the case ends once the provider has confirmed (within CANCEL_CONFIRM_WAIT_MS of the deadline).
      const open = await this.deps.ledger.repository.lockOpenOfOrder(db, found.orderId);
      if (open) {
        const createdAt = parseGmtDateTime(open.createdAt)?.getTime() ?? 0;
        const outcomeAwaited = !open.cancelWantedAt && (open.requestedBy === 'new_method' || open.requestedBy === 'staff') && now.getTime() - createdAt < NEW_CHARGE_WAIT_MS;
        if (outcomeAwaited) return false;
        const deadline = parseGmtDateTime(found.deadlineAt)?.getTime() ?? now.getTime();
        if (now.getTime() - deadline < CANCEL_CONFIRM_WAIT_MS) {
          const marked = await this.deps.ledger.withdraw(db, found.orderId, 'deadline', now);
          withdrawn.charge = marked?.charge ?? null;
          return false;
        }
        this.deps.log.error('dunning_deadline_charge_unconfirmed', { orderId: found.orderId, provider: open.provider, externalId: open.externalId, state: open.state });
      }
      await this.deps.cases.lose(db, found.id, now);
      await this.deps.retries.cancelPendingOfOrder(db, found.orderId, 'dunning ended unpaid at its deadline', now);
      const words = orderNoteWords(settings);
      const ended = { deadline: parseGmtDateTime(found.deadlineAt) ?? now, renewalOrderId: found.orderId };
      if (companionRunsDunning(settings)) {
        const note = words.dunningEnded(ended);
        await this.deps.changes.enqueue(db, { op: 'subscription_cancel_after_dunning', objectId: found.subscriptionId, payload: { note, order_id: found.orderId } }, settings, now);
        await this.deps.orders.addNote(db, found.orderId, words.dunningEnded({ ...ended, subscription: 'cancelled' }), settings, now);
      } else {
        await this.deps.orders.addNote(db, found.orderId, words.dunningEnded({ ...ended, subscription: 'needs_companion' }), settings, now);
      }
      return true;
    });
    const toCancel = withdrawn.charge;
    if (toCancel) {
      const outcome = await this.deps.openCharges.cancel(toCancel, settings, { kind: 'dunning_ended' });
      this.deps.log.info('dunning_deadline_charge_withdrawn', { orderId: due.orderId, externalId: toCancel.externalId, outcome: outcome.kind });
    }
    if (ended) this.deps.log.info('dunning_lost', { orderId: due.orderId, subscriptionId: due.subscriptionId });
    return ended;
  }
}
