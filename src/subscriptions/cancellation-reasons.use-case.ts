import type { CancellationReason, CancellationReasonRepository } from '../data-access/cancellation-reason-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { SubscriptionRepository } from '../data-access/subscription-repository';
import { cancellationReasonEntry, type CancellationReasonEntry } from './cancellation-reason-view';
import type { StaffActor, SubscriptionRefusal } from './subscription-outcomes';

/** The most reasons one request may record. */
export const MAX_REASONS_PER_REQUEST = 50;

export type RecordedReasonsOutcome = { kind: 'reasons'; entries: CancellationReasonEntry[] } | SubscriptionRefusal;
export type RecordedReasonOutcome = { kind: 'reason'; entry: CancellationReasonEntry } | { kind: 'cancellation_reason_not_found' } | SubscriptionRefusal;

interface Deps {
  reasons: CancellationReasonRepository;
  subscriptions: SubscriptionRepository;
  orderWrites: OrderWriteRepository;
  settings: ShopSettingsRepository;
  clock: () => Date;
}

/** The selectable reasons: every published `cancellation_reason` post. */
export class ListCancellationReasons {
  constructor(private readonly deps: Pick<Deps, 'reasons'>) {}

  async execute(): Promise<CancellationReason[]> {
    return this.deps.reasons.published();
  }
}

/** A subscription's recorded reasons, oldest first. */
export class ListRecordedCancellationReasons {
  constructor(private readonly deps: Pick<Deps, 'reasons' | 'subscriptions' | 'settings'>) {}

  async execute(subscriptionId: number): Promise<RecordedReasonsOutcome> {
    const settings = await this.deps.settings.current();
    if (!(await this.deps.subscriptions.find(subscriptionId, settings))) return { kind: 'subscription_not_found' };
    const recorded = await this.deps.reasons.recorded(subscriptionId);
    return { kind: 'reasons', entries: recorded.map((entry) => cancellationReasonEntry(entry, settings)) };
  }
}

/** One recorded reason by its row ID, only as part of the subscription it was recorded on. */
export class GetRecordedCancellationReason {
  constructor(private readonly deps: Pick<Deps, 'reasons' | 'subscriptions' | 'settings'>) {}

  async execute(subscriptionId: number, entryId: number): Promise<RecordedReasonOutcome> {
    const settings = await this.deps.settings.current();
    if (!(await this.deps.subscriptions.find(subscriptionId, settings))) return { kind: 'subscription_not_found' };
    const [entry] = await this.deps.reasons.recorded(subscriptionId, entryId);
    return entry ? { kind: 'reason', entry: cancellationReasonEntry(entry, settings) } : { kind: 'cancellation_reason_not_found' };
  }
}

/**
 * Records one or more reasons on a subscription, all or nothing: every ID must be a published
 * cancellation reason, or nothing is stored. The same reason given twice is recorded once.
 */
export class RecordCancellationReasons {
  constructor(private readonly deps: Deps) {}

  /** `reasonPostIds`: one to MAX_REASONS_PER_REQUEST positive IDs (the route's contract checks they are). */
  async execute(input: { subscriptionId: number; reasonPostIds: number[]; actor: StaffActor }): Promise<RecordedReasonsOutcome> {
    const settings = await this.deps.settings.current();
    if (!(await this.deps.subscriptions.find(input.subscriptionId, settings))) return { kind: 'subscription_not_found' };
    const distinct = [...new Set(input.reasonPostIds)];
    const reasons = new Map((await this.deps.reasons.publishedByIds(distinct)).map((reason) => [reason.id, reason]));
    const unknown = distinct.filter((id) => !reasons.has(id));
    if (unknown.length) {
      return { kind: 'invalid_params', params: ['reason_post_ids'], message: `Not published cancellation reasons: ${unknown.join(', ')}.`, data: { invalid_ids: unknown } };
    }
    const now = this.deps.clock();
    const entries = await this.deps.orderWrites.transaction(async (db) => {
      const subscription = await this.deps.subscriptions.lockForChange(db, input.subscriptionId, settings);
      if (!subscription) return null;
      const newIds = new Set(await this.deps.reasons.record(db, input.subscriptionId, distinct.map((id) => reasons.get(id)!), input.actor.userId, now));
      const recorded = await this.deps.reasons.recorded(input.subscriptionId, undefined, db);
      return recorded.filter((entry) => newIds.has(entry.id));
    });
    if (!entries) return { kind: 'subscription_not_found' };
    return { kind: 'reasons', entries: entries.map((entry) => cancellationReasonEntry(entry, settings)) };
  }
}
