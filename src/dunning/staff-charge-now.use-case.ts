import type { Provider } from '../../entities';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { RetryRecord, RetryRepository } from '../data-access/retry-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import { staffName, type StaffActor } from '../subscriptions/subscription-outcomes';
import { recordedFacts, type DunningStory } from './dunning-story';
import type { AttemptOutcome, RenewalAttempt } from './renewal-attempt';
import { mayChargeNow, type Permission } from './staff-actions';
import { caseToActOn, NO_DUNNING_CASE, notAllowed, type StaffActionOutcome } from './staff-action-outcome';
import { orderNoteWords, type StaffChargeOutcome } from '../shop/order-note-words';
import type { StaffOrderNotes } from './staff-order-notes';

/**
 * What Charge now came to. `paid`: taken (or found taken meanwhile); `declined`: the provider's decline code;
 * `pending`: the charge is made and the provider confirms it later (the wallet's), or the provider did not
 * answer and the same attempt is asked again shortly; `held`: the provider refused the service's own request.
 */
export interface ChargeNowResult {
  outcome: 'paid' | 'declined' | 'pending' | 'held';
  reason?: string;
}

/**
 * Charge now (staff, order screen): one attempt at once for a failed renewal, with the subscription's own payment
 * method, made by the dunning engine's own attempt (its checks, caps, idempotency key, the wallet's rules). The
 * rule of staff actions decides first; under the case's lock the attempt is taken, so a second click waits and
 * finds it made. It counts toward the caps; a decline is a failed attempt like any other, the plan left as it was.
 */
export class StaffChargeNow {
  constructor(private readonly deps: {
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    cases: DunningCaseRepository;
    retries: RetryRepository;
    settings: ShopSettingsRepository;
    story: DunningStory;
    attempts: Pick<RenewalAttempt, 'attemptNow'>;
    notes: StaffOrderNotes;
    log: Logger;
    clock: () => Date;
  }) {}

  async execute(input: { orderId: number; actor: StaffActor }): Promise<StaffActionOutcome<ChargeNowResult>> {
    const target = await caseToActOn(this.deps, 'charge_now', input.orderId);
    if (target.kind !== 'case') return target;
    const { settings } = target;
    const now = this.deps.clock();
    // The providers are asked outside the lock; what the stored rows decide is read again under it.
    const facts = await this.deps.story.facts(await this.deps.story.records(target.found), now);
    const by = staffName(input.actor);
    const taken = await this.deps.orderWrites.transaction(async (db) => {
      const found = await this.deps.cases.lockCaseOfOrder(db, input.orderId);
      if (!found) return { kind: 'refused' as const, permission: NO_DUNNING_CASE };
      const permission = mayChargeNow({ ...facts, ...recordedFacts(await this.deps.story.records(found, db)) });
      if (!permission.allowed) return { kind: 'refused' as const, permission };
      const retry = await this.deps.retries.takeStaffAttempt(db, { orderId: found.orderId, subscriptionId: found.subscriptionId, paymentId: found.paymentId, now });
      if (!retry) return { kind: 'refused' as const, permission: { allowed: false as const, reason: 'charge_under_way' as const } };
      await this.deps.cases.recordStaffAction(db, { caseId: found.id, orderId: found.orderId, action: 'charge_now', attempt: retry.attempt, userId: input.actor.userId, userName: by, at: now });
      return { kind: 'taken' as const, retry };
    });
    if (taken.kind === 'refused') return notAllowed('charge_now', taken.permission, settings);

    const outcome = await this.deps.attempts.attemptNow(taken.retry);
    this.deps.log.info('staff_charge_now', { orderId: input.orderId, userId: input.actor.userId, attempt: taken.retry.attempt, outcome: outcome.kind });
    const result = await this.answer(outcome, taken.retry, target.found.provider, by, input);
    const found = (await this.deps.cases.ofOrderUnlocked(input.orderId))!;
    if (result.kind === 'refused') {
      // Something changed between the rule and the attempt (a cap used up, a charge begun meanwhile): the rule,
      // asked again, says why; else what the attempt met.
      const facts = await this.deps.story.facts(await this.deps.story.records(found), this.deps.clock());
      // This very click is not what stands in the way.
      const now = mayChargeNow({ ...facts, lastChargeAt: null });
      return notAllowed('charge_now', now.allowed ? result.permission : now, settings);
    }
    return { kind: 'done', result: result.result, dunning: await this.deps.story.viewOf(found) };
  }

  /** The attempt's outcome as staff are told it, and its order note in the staff member's name. */
  private async answer(outcome: AttemptOutcome, retry: RetryRecord, provider: Provider, by: string, input: { orderId: number; actor: StaffActor }): Promise<
    { kind: 'result'; result: ChargeNowResult } | { kind: 'refused'; permission: Extract<Permission, { allowed: false }> }> {
    // After the attempt, so that WooCommerce notes it after what the attempt handed over (a payment's completion).
    const note = async (charged: StaffChargeOutcome) => {
      const settings = await this.deps.settings.current();
      const text = orderNoteWords(settings).staffCharged({ by, attempt: retry.attempt, provider, outcome: charged });
      await this.deps.orderWrites.transaction((db) => this.deps.notes.add(db, { orderId: input.orderId, text, actor: input.actor }, settings, this.deps.clock()));
    };
    switch (outcome.kind) {
      case 'paid':
        await note({ kind: 'paid' });
        return { kind: 'result', result: { outcome: 'paid' } };
      case 'pending':
        await note({ kind: 'pending' });
        return { kind: 'result', result: { outcome: 'pending' } };
      case 'declined': {
        const reason = outcome.failure.code ?? outcome.failure.state ?? null;
        await note({ kind: 'declined', decline: outcome.failure });
        return { kind: 'result', result: reason ? { outcome: 'declined', reason } : { outcome: 'declined' } };
      }
      case 'held':
        await note({ kind: 'held' });
        return { kind: 'result', result: { outcome: 'held', reason: 'provider_refused_request' } };
      case 'canceled':
        if (outcome.cause === 'paid_meanwhile') return { kind: 'result', result: { outcome: 'paid', reason: 'paid_meanwhile' } };
        return { kind: 'refused', permission: { allowed: false, reason: outcome.cause === 'order_moved_on' ? 'order_not_awaiting_payment' : 'subscription_not_on_hold' } };
      case 'postponed':
        if (outcome.cause === 'unreachable' || outcome.cause === 'error') {
          await note({ kind: 'unanswered' });
          return { kind: 'result', result: { outcome: 'pending', reason: 'provider_unreachable' } };
        }
        return { kind: 'refused', permission: { allowed: false, reason: outcome.cause === 'caps' ? 'daily_cap' : 'charge_under_way', notBefore: outcome.until } };
    }
  }
}
