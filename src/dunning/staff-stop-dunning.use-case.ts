import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PaymentRepository } from '../data-access/payment-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import { DUNNING_STOPPED_META, type UnwantedCharges } from '../payments/unwanted-charges';
import { staffName, type StaffActor } from '../subscriptions/subscription-outcomes';
import { recordedFacts, type DunningStory } from './dunning-story';
import { mayStopDunning } from './staff-actions';
import { caseToActOn, NO_DUNNING_CASE, notAllowed, type StaffActionOutcome } from './staff-action-outcome';
import { orderNoteWords } from '../shop/order-note-words';
import type { StaffOrderNotes } from './staff-order-notes';
import type { ChargeLedger } from '../payments/charge-ledger';
import type { SettleOpenCharges } from '../payments/settle-open-charges.use-case';

/** What stopping dunning came to. */
export interface StopDunningResult {
  outcome: 'stopped';
  /** Planned attempts cancelled. */
  attempts_cancelled: number;
  /** Charges of the service's still open at the provider (the wallet's PENDING or DUE), cancelled there. */
  charges_cancelled: number;
  /** Such charges the provider could not be asked to cancel now; reconciliation cancels them later. */
  charges_not_cancelled_yet: number;
}

/**
 * Stop dunning (staff, order screen), for a customer who is leaving: the planned attempts are cancelled, a charge
 * the service made that the provider still holds is cancelled there (as an unwanted charge), and the case is
 * closed as lost by staff, so its deadline no longer cancels the subscription. The subscription is left as it is.
 */
export class StaffStopDunning {
  constructor(private readonly deps: {
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    cases: DunningCaseRepository;
    retries: RetryRepository;
    payments: PaymentRepository;
    settings: ShopSettingsRepository;
    unwantedCharges: Pick<UnwantedCharges, 'cancelStoppedOfOrder'>;
    ledger: Pick<ChargeLedger, 'withdraw'>;
    openCharges: Pick<SettleOpenCharges, 'cancel'>;
    story: DunningStory;
    notes: StaffOrderNotes;
    log: Logger;
    clock: () => Date;
  }) {}

  async execute(input: { orderId: number; actor: StaffActor }): Promise<StaffActionOutcome<StopDunningResult>> {
    const target = await caseToActOn(this.deps, 'stop_dunning', input.orderId);
    if (target.kind !== 'case') return target;
    const { settings } = target;
    const now = this.deps.clock();
    const by = staffName(input.actor);
    const done = await this.deps.orderWrites.transaction(async (db) => {
      const found = await this.deps.cases.lockCaseOfOrder(db, input.orderId);
      if (!found) return { kind: 'refused' as const, permission: NO_DUNNING_CASE };
      const records = await this.deps.story.records(found, db);
      const permission = mayStopDunning(recordedFacts(records));
      if (!permission.allowed) return { kind: 'refused' as const, permission };
      const planned = records.retries.filter((retry) => retry.status === 'PENDING').length;
      await this.deps.retries.cancelPendingOfOrder(db, found.orderId, `dunning stopped by ${by}`, now);
      await this.deps.cases.lose(db, found.id, now);
      await this.deps.cases.recordStaffAction(db, { caseId: found.id, orderId: found.orderId, action: 'stop_dunning', attempt: null, userId: input.actor.userId, userName: by, at: now });
      // The service's own charges still open for the renewal are marked, so that reconciliation cancels them should the call below not be made.
      // The renewal's open charge in the ledger, answered or not, is no longer wanted.
      // Staff are told what became of it, so it is cancelled here even when another caller withdrew it first.
      const charge = (await this.deps.ledger.withdraw(db, found.orderId, 'dunning_stopped', now))?.charge ?? null;
      const open = records.payments.filter((payment) => payment.status === null && payment.meta.retry_of && payment.externalId !== charge?.externalId);
      for (const payment of open) await this.deps.payments.setMeta(db, payment.id, { [DUNNING_STOPPED_META]: by });
      await this.deps.notes.add(db, { orderId: found.orderId, text: orderNoteWords(settings).staffStoppedDunning({ by }), actor: input.actor }, settings, now);
      return { kind: 'stopped' as const, planned, open: open.length, charge };
    });
    if (done.kind === 'refused') return notAllowed('stop_dunning', done.permission, settings);
    const cancels: { kind: string }[] = done.open ? await this.deps.unwantedCharges.cancelStoppedOfOrder(input.orderId) : [];
    // Cancelled at the provider and confirmed; one the provider has not confirmed yet, the worker's pass follows up.
    if (done.charge) cancels.push(await this.deps.openCharges.cancel(done.charge, settings, { kind: 'dunning_stopped', by }));
    const cancelled = cancels.filter((outcome) => outcome.kind === 'cancelled').length;
    this.deps.log.info('staff_stop_dunning', { orderId: input.orderId, userId: input.actor.userId, attemptsCancelled: done.planned, chargesCancelled: cancelled });
    const found = (await this.deps.cases.ofOrderUnlocked(input.orderId))!;
    return {
      kind: 'done',
      result: { outcome: 'stopped', attempts_cancelled: done.planned, charges_cancelled: cancelled, charges_not_cancelled_yet: cancels.length - cancelled },
      dunning: await this.deps.story.viewOf(found),
    };
  }
}
