import type { Provider, RecoveryMeans } from '../../entities';
import type { DunningCaseRecord, DunningCaseRepository, StaffActionRecord } from '../data-access/dunning-case-repository';
import type { PaymentRecord, PaymentRepository } from '../data-access/payment-repository';
import type { RetryRecord, RetryRepository } from '../data-access/retry-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Executor } from '../data-access/transaction';
import { companionRunsDunning } from '../data-access/woocommerce-change-repository';
import type { ProviderSetup } from '../payments/providers/configured';
import { isoInZone, type ShopTimeZone } from '../shop/shop-time';
import { earliestWithinCaps, type ChargeCaps } from './decline-policy';
import type { ChargeOutlook, ChargeOutlookOfCase } from './charge-outlook.use-case';
import { staffActions, type ChargeUnderWay, type Permission, type StaffActionFacts, type StaffActionName } from './staff-actions';

const DAY_MS = 86_400_000;
/** How long a view reuses what the providers said of a case's charge (see `viewedOutlooks`). */
const VIEWED_OUTLOOK_MS = 30_000;

export type DunningEvent =
  | 'renewal_failed' | 'attempt_planned' | 'attempt_succeeded' | 'attempt_failed' | 'attempt_held' | 'attempt_cancelled'
  | 'customer_emailed' | 'customer_reminded' | 'recovered' | 'lost'
  | 'staff_charged' | 'staff_sent_payment_link' | 'staff_stopped_dunning';

export interface DunningTimelineEntry {
  at: string;
  event: DunningEvent;
  attempt?: number;
  reason?: string | null;
  state?: string | null;
  means?: RecoveryMeans;
  by?: string;
  /** Why an attempt is planned when it is, besides its plan's wait: `payday`, early on the first bank day from payday after a decline for lack of funds. */
  why?: 'payday';
  /** For `attempt_planned`: the attempt is made (or being made) and its charge awaits the provider's answer (a wallet's, for days). */
  awaiting?: true;
}

export interface ActionView {
  allowed: boolean;
  reason?: string;
  not_before?: string;
}

/** A failed renewal's story for staff: what happened, what happens next, and what they may do now. */
export interface DunningView {
  status: 'open' | 'recovered' | 'lost';
  provider: Provider;
  amount: number;
  currency: string;
  failure: { reason: string; state: string | null; at: string };
  timeline: DunningTimelineEntry[];
  deadline: string | null;
  /**
   * What happens next: the service's planned attempt, the case's deadline, or `wallet_retrying`: the wallet retries
   * the renewal's charge itself (its `retryDays`) and its outcome is final at `until`; nothing is charged on top.
   */
  next: null | { event: 'attempt'; at: string; attempt: number } | { event: 'deadline'; at: string } | { event: 'wallet_retrying'; until: string };
  actions: Record<StaffActionName, ActionView>;
}

type PaymentWithMeta = PaymentRecord & { meta: Record<string, string> };

/** What the story is told from: what is stored of the case, read at one moment. */
export interface StoryRecords {
  found: DunningCaseRecord;
  retries: readonly RetryRecord[];
  payments: readonly PaymentWithMeta[];
  staffActions: readonly StaffActionRecord[];
}

/** A stored UTC time (`Y-m-d H:i:s[.mmm]`) as epoch milliseconds. */
const instant = (text: string): number => Date.parse(`${text.replace(' ', 'T')}Z`);
const orNull = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);
const STATUS = { OPEN: 'open', RECOVERED: 'recovered', LOST: 'lost' } as const;

/** The decline a made attempt met, from its payment, else from what the attempt recorded (`declined: <code> <state>`). */
function declineOf(retry: RetryRecord, payment: PaymentWithMeta | undefined): { reason: string | null; state: string | null } {
  if (payment && (payment.meta.failure_code || payment.meta.failure_state)) {
    return { reason: orNull(payment.meta.failure_code), state: orNull(payment.meta.failure_state) };
  }
  const [code, state] = (retry.result ?? '').replace(/^declined:\s*/, '').split(/\s+/);
  return { reason: orNull(code), state: orNull(state) };
}

/** The first decline: the order's oldest payment with a failure that no attempt made (the renewal's own charge). */
function firstFailure(records: StoryRecords): { reason: string; state: string | null } {
  const failed = [...records.payments].sort((a, b) => a.id - b.id)
    .find((payment) => !payment.meta.retry_of && (payment.meta.failure_code || payment.meta.failure_state || payment.status === 'FAILED'));
  return { reason: orNull(failed?.meta.failure_code) ?? records.found.firstReason, state: orNull(failed?.meta.failure_state) };
}

/**
 * Everything that happened to the case and what is planned, oldest first, each with its time as epoch ms; a planned
 * attempt at when it can really be made (`chargeableFrom`, see dunningView).
 */
export function timelineOf(records: StoryRecords, chargeableFrom: (at: Date) => Date = (at) => at): { at: number; entry: Omit<DunningTimelineEntry, 'at'> }[] {
  const { found } = records;
  const events: { at: number; entry: Omit<DunningTimelineEntry, 'at'> }[] = [];
  const add = (at: string | null, entry: Omit<DunningTimelineEntry, 'at'>) => {
    if (at !== null && Number.isFinite(instant(at))) events.push({ at: instant(at), entry });
  };
  const addPlanned = (at: string, entry: Omit<DunningTimelineEntry, 'at'>) => {
    if (Number.isFinite(instant(at))) events.push({ at: chargeableFrom(new Date(instant(at))).getTime(), entry });
  };
  const failure = firstFailure(records);
  add(found.openedAt, { event: 'renewal_failed', reason: failure.reason, state: failure.state });

  /** Who stopped dunning: the case was then lost by them. */
  let stoppedBy: string | null = null;
  for (const action of records.staffActions) {
    if (action.action === 'charge_now') add(action.createdAt, { event: 'staff_charged', attempt: action.attempt ?? undefined, by: action.userName });
    else if (action.action === 'payment_link') add(action.createdAt, { event: 'staff_sent_payment_link', by: action.userName });
    else {
      add(action.createdAt, { event: 'staff_stopped_dunning', by: action.userName });
      stoppedBy = action.userName;
    }
  }

  for (const retry of records.retries) {
    const payment = records.payments.find((p) => p.meta.retry_of && Number(p.meta.retry_attempt) === retry.attempt);
    const attempt = retry.attempt;
    const why = retry.plan === 'payday' ? { why: 'payday' as const } : {};
    switch (retry.status) {
      case 'PENDING':
        if (retry.result?.startsWith('held:')) add(retry.updatedAt, { event: 'attempt_held', attempt });
        addPlanned(retry.scheduledAt, { event: 'attempt_planned', attempt, ...why });
        break;
      case 'PROCESSING':
        add(retry.scheduledAt, { event: 'attempt_planned', attempt, ...why, awaiting: true });
        break;
      case 'FAILED':
        add(payment?.updatedAt ?? retry.updatedAt, { event: 'attempt_failed', attempt, ...declineOf(retry, payment) });
        break;
      case 'CANCELED':
        add(retry.updatedAt, { event: 'attempt_cancelled', attempt });
        break;
      case 'SUCCEEDED':
        // The charge was made; what became of it is its payment's: taken, declined later (the wallet), cancelled, or still open.
        if (payment?.status === 'CAPTURED' || payment?.status === 'AUTHORIZED' || payment?.status === 'REFUNDED') {
          add(payment.updatedAt, { event: 'attempt_succeeded', attempt });
        } else if (payment?.status === 'FAILED') {
          add(payment.updatedAt, { event: 'attempt_failed', attempt, ...declineOf(retry, payment) });
        } else if (payment?.status === 'CANCELED') {
          add(payment.updatedAt, { event: 'attempt_cancelled', attempt });
        } else {
          add(retry.updatedAt, { event: 'attempt_planned', attempt, ...why, awaiting: true });
        }
        break;
    }
  }

  add(found.customerAskedAt, { event: 'customer_emailed' });
  add(found.customerRemindedAt, { event: 'customer_reminded' });
  if (found.status === 'RECOVERED') add(found.closedAt, { event: 'recovered', ...(found.recoveredBy ? { means: found.recoveredBy } : {}) });
  if (found.status === 'LOST') add(found.closedAt, { event: 'lost', ...(stoppedBy !== null ? { by: stoppedBy } : {}) });
  // Stable: events at the same moment keep the order they were added in (the failure first, staff before what followed).
  return events.map((event, index) => ({ event, index })).sort((a, b) => a.event.at - b.event.at || a.index - b.index).map(({ event }) => event);
}

function actionView(permission: Permission, zone: ShopTimeZone): ActionView {
  if (permission.allowed) return { allowed: true };
  return { allowed: false, reason: permission.reason, ...(permission.notBefore ? { not_before: isoInZone(permission.notBefore, zone) } : {}) };
}

/** The view of the case from its records and what staff may do now; every time in the shop's zone with its offset. */
/**
 * `chargeableFrom`: when the schemes' caps let a charge of the case's payment method happen at the earliest, from a
 * given time (the engine postpones a due attempt until then), so that "next" is when the attempt can really happen.
 */
export function dunningView(
  records: StoryRecords, permissions: Record<StaffActionName, Permission>, zone: ShopTimeZone, chargeableFrom: (at: Date) => Date = (at) => at,
  underWay: ChargeUnderWay | null = null,
): DunningView {
  const { found } = records;
  const iso = (ms: number) => isoInZone(new Date(ms), zone);
  const failure = firstFailure(records);
  const open = found.status === 'OPEN';
  const planned = records.retries.filter((retry) => retry.status === 'PENDING').sort((a, b) => instant(a.scheduledAt) - instant(b.scheduledAt))[0];
  const deadline = open && found.deadlineAt ? instant(found.deadlineAt) : null;
  let next: DunningView['next'] = null;
  // The wallet retrying its charge comes first: a planned attempt waits for its window to end (the underWay rule).
  if (open && underWay?.kind === 'wallet_retrying') next = { event: 'wallet_retrying', until: iso(underWay.until.getTime()) };
  else if (open && planned) next = { event: 'attempt', at: iso(chargeableFrom(new Date(instant(planned.scheduledAt))).getTime()), attempt: planned.attempt };
  else if (deadline !== null) next = { event: 'deadline', at: iso(deadline) };
  return {
    status: STATUS[found.status],
    provider: found.provider,
    amount: found.amountMinor,
    currency: found.currency,
    failure: { reason: failure.reason, state: failure.state, at: iso(instant(found.openedAt)) },
    timeline: timelineOf(records, chargeableFrom).map(({ at, entry }) => ({ at: iso(at), ...entry })),
    deadline: deadline === null ? null : iso(deadline),
    next,
    actions: {
      charge_now: actionView(permissions.charge_now, zone),
      payment_link: actionView(permissions.payment_link, zone),
      stop_dunning: actionView(permissions.stop_dunning, zone),
    },
  };
}

/**
 * The facts that only what is stored decides, read again under the case's lock by an action, after the
 * providers were asked outside it: two clicks at once are decided one after the other.
 */
export function recordedFacts(records: StoryRecords): Pick<StaffActionFacts, 'caseOpen' | 'attemptInProgress' | 'lastLinkSentAt' | 'lastChargeAt'> {
  const last = (action: StaffActionRecord['action']) => {
    const found = [...records.staffActions].reverse().find((entry) => entry.action === action);
    return found ? new Date(instant(found.createdAt)) : null;
  };
  return {
    caseOpen: records.found.status === 'OPEN',
    attemptInProgress: records.retries.some((retry) => retry.status === 'PROCESSING'),
    lastLinkSentAt: last('payment_link'),
    lastChargeAt: last('charge_now'),
  };
}

/**
 * Reads a failed renewal's case as staff see it, and the facts the rule of what staff may do is decided on (the
 * routes that act use the same facts): the attempts, the payments, staff's earlier actions, and what a charge
 * now would meet, read as the dunning engine reads it.
 */
export class DunningStory {
  constructor(private readonly deps: {
    cases: DunningCaseRepository;
    retries: RetryRepository;
    payments: PaymentRepository;
    settings: ShopSettingsRepository;
    outlooks: Pick<ChargeOutlookOfCase, 'outlook'>;
    providers: ProviderSetup;
    caps: ChargeCaps;
    clock: () => Date;
  }) {}

  /**
   * What the providers said of a case's charge, for views only: the order screen asks on each load and after each
   * action, and the wallet answers a charge's reads 10 times a minute (its "Rate limiting" guide), which the
   * worker's own attempts need. An action asks afresh under the case's lock and drops what was kept.
   */
  private readonly viewedOutlooks = new Map<number, { at: number; outlook: ChargeOutlook }>();

  /** `db`: the transaction holding the case's lock, when an action reads them again under it. */
  async records(found: DunningCaseRecord, db?: Executor): Promise<StoryRecords> {
    const [retries, payments, staffActions] = db
      ? [await this.deps.retries.list({ orderId: found.orderId }, db), await this.deps.payments.listByOrder(found.orderId, db), await this.deps.cases.staffActionsOfOrder(found.orderId, db)]
      : await Promise.all([this.deps.retries.list({ orderId: found.orderId }), this.deps.payments.listByOrder(found.orderId), this.deps.cases.staffActionsOfOrder(found.orderId)]);
    return { found, retries, payments, staffActions };
  }

  /** The facts of the case now; the providers are asked only about an open case whose renewal could be charged. */
  async facts(records: StoryRecords, now: Date, withCharge = true, forView = false): Promise<StaffActionFacts> {
    const { found } = records;
    const settings = await this.deps.settings.current();
    const facts: StaffActionFacts = {
      ...recordedFacts(records),
      now,
      orderAwaitsPayment: false,
      subscriptionOnHold: false,
      providerConfigured: this.deps.providers[found.provider].configured,
      hasPaymentMethod: false,
      chargeUnderWay: null,
      chargesOnMethod: [],
      caps: this.deps.caps,
      companionSendsEmail: companionRunsDunning(settings),
    };
    if (!withCharge || !facts.caseOpen || facts.attemptInProgress || !facts.providerConfigured) return facts;
    const outlook = forView ? await this.outlookForView(found, now) : await this.freshOutlook(found, now);
    facts.orderAwaitsPayment = outlook.orderAwaitsPayment;
    facts.subscriptionOnHold = outlook.subscriptionOnHold;
    facts.hasPaymentMethod = outlook.hasPaymentMethod;
    facts.chargeUnderWay = outlook.underWay;
    if (outlook.chargeKey) facts.chargesOnMethod = await this.deps.cases.chargesOfMethodSince(this.deps.cases.pool, outlook.chargeKey, new Date(now.getTime() - 30 * DAY_MS));
    return facts;
  }

  private async freshOutlook(found: DunningCaseRecord, now: Date): Promise<ChargeOutlook> {
    this.viewedOutlooks.delete(found.id);
    return this.deps.outlooks.outlook(found, now);
  }

  private async outlookForView(found: DunningCaseRecord, now: Date): Promise<ChargeOutlook> {
    const kept = this.viewedOutlooks.get(found.id);
    if (kept && Math.abs(now.getTime() - kept.at) < VIEWED_OUTLOOK_MS) return kept.outlook;
    const outlook = await this.deps.outlooks.outlook(found, now);
    for (const [id, entry] of this.viewedOutlooks) if (Math.abs(now.getTime() - entry.at) >= VIEWED_OUTLOOK_MS) this.viewedOutlooks.delete(id);
    this.viewedOutlooks.set(found.id, { at: now.getTime(), outlook });
    return outlook;
  }

  /** The order's case as staff see it; null when the order has none. */
  async view(orderId: number): Promise<DunningView | null> {
    const found = await this.deps.cases.ofOrderUnlocked(orderId);
    return found ? this.viewOf(found) : null;
  }

  async viewOf(found: DunningCaseRecord): Promise<DunningView> {
    const records = await this.records(found);
    const settings = await this.deps.settings.current();
    const facts = await this.facts(records, this.deps.clock(), true, true);
    return dunningView(records, staffActions(facts), settings.timeZone, (at) => earliestWithinCaps(at, facts.chargesOnMethod, facts.caps), facts.chargeUnderWay);
  }
}
