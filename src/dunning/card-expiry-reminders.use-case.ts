import crypto from 'node:crypto';
import type { CardExpiryReminderRepository, CurrentCard, SubscriptionFacts } from '../data-access/card-expiry-reminder-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import { CARD_GATEWAY_METHOD_PREFIX } from '../shop/payment-gateways';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { companionRunsDunning, type WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { Logger } from '../logger';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import { Pacer } from '../reconciliation/pacer';

/** Subscriptions looked at per batch (one read of the agreements, one of the subscriptions). */
export const REMINDER_BATCH = 100;
/** How long a worker holds the pass without renewing its hold (it renews it at least every minute while it works). */
const HOLD_MS = 10 * 60_000;
const RENEW_HOLD_AFTER_MS = 60_000;
/**
 * Subscriptions in a row that could not be judged for want of the gateway or the database before the run stops
 * and the pass waits for a later run.
 */
const TROUBLE_IN_A_ROW = 3;
/** The gateway's payment methods that are no card (MobilePay Subscriptions, Vipps MobilePay Recurring, SEPA): no expiry to remind of. */
const NOT_CARD_PREFIXES = ['ms_', 'vr_', 'sr_'];

export interface CardExpiryReminderSettings {
  /** Days before the end of the card's expiry month the reminder goes; 0: no reminders. */
  days: number;
  /** A pass over the subscriptions starts at most this often. */
  intervalSeconds: number;
  /** Payment methods read from the gateway per second at most (this process). */
  maxPerSecond: number;
}

/** Why no reminder went for a subscription this pass (no e-mail, no record). */
export type NotSentReason =
  | 'already_sent' | 'not_active' | 'not_card_gateway' | 'manual_renewal' | 'no_next_payment' | 'ends_first'
  | 'not_a_card' | 'card_not_active' | 'card_outlives_renewal' | 'not_yet' | 'replaced';
/**
 * Why a card could not be judged this pass (no e-mail, no record; the next pass asks again): the gateway could
 * not be asked, did not know the payment method or gave no `MM-YY` expiry, or the database failed on it.
 */
export type NotCheckedReason = 'unreachable' | 'not_found' | 'malformed_expiry' | 'error';

export interface ReminderRunSummary {
  /**
   * `off`: CARD_EXPIRY_REMINDER_DAYS is 0; `not_due`: the last pass started less than the interval ago;
   * `held_elsewhere`: another worker runs the pass; `finished`: the pass ended in this run; `paused`: the
   * run stopped before the pass ended (the gateway unreachable, the worker stopping), a later run goes on.
   */
  pass: 'off' | 'not_due' | 'held_elsewhere' | 'finished' | 'paused';
  /** Subscriptions with an active card looked at. */
  subscriptions: number;
  /** Payment methods read from the gateway. */
  asked: number;
  sent: number;
  notSent: Partial<Record<NotSentReason, number>>;
  notChecked: Partial<Record<NotCheckedReason, number>>;
}

type Outcome = { kind: 'sent' } | { kind: 'not_sent'; reason: NotSentReason } | { kind: 'not_checked'; reason: NotCheckedReason; detail: string };

/**
 * The end of the month a card's `exp_date` (`MM-YY`, as the gateway gives it) names, as the first moment of
 * the next month (UTC): the card is valid through its expiry month. Null for anything else.
 */
export function cardValidUntil(expDate: unknown): Date | null {
  if (typeof expDate !== 'string') return null;
  const match = /^(\d{2})-(\d{2})$/.exec(expDate);
  if (!match) return null;
  const month = Number(match[1]);
  if (month < 1 || month > 12) return null;
  return new Date(Date.UTC(2000 + Number(match[2]), month, 1));
}

/** What the subscription alone says against a reminder (before the gateway is asked), or null. */
function subscriptionBars(facts: SubscriptionFacts): NotSentReason | null {
  if (facts.status !== 'active') return 'not_active';
  if (!facts.paymentMethod.startsWith(CARD_GATEWAY_METHOD_PREFIX)) return 'not_card_gateway';
  if (facts.manualRenewal) return 'manual_renewal';
  if (!facts.nextPayment) return 'no_next_payment';
  // Subscriptions renews only before the end: ending at or before the next payment, the card is never charged after it expires.
  if (facts.end && facts.end.getTime() <= facts.nextPayment.getTime()) return 'ends_first';
  return null;
}

/** Whether the reminder goes now, given the subscription and its card's validity: null when it does. */
export function reminderBars(facts: SubscriptionFacts, validUntil: Date, days: number, now: Date): NotSentReason | null {
  const bar = subscriptionBars(facts);
  if (bar) return bar;
  if (facts.nextPayment!.getTime() < validUntil.getTime()) return 'card_outlives_renewal';
  if (now.getTime() < validUntil.getTime() - days * 86_400_000) return 'not_yet';
  return null;
}

/**
 * Reminders before the card fails: for each active subscription paid by the card gateway whose current card
 * (the card its renewals are charged to: the gateway plugin's `_reepay_token` on the subscription, as for
 * dunning; the service's agreements learnt from webhooks name no subscription) expires before its next renewal, WooCommerce e-mails the customer
 * the link to change the payment method (`customer_payment_method_needed`, kind `card_expiring`, through the
 * companion plugin) once, CARD_EXPIRY_REMINDER_DAYS before the end of the card's expiry month. The expiry is
 * the gateway's `exp_date` of the payment method, read at the time, never guessed.
 *
 * The worker runs it as a loop. A pass walks the subscriptions that name a card by id, a batch at a
 * time, through an index; a subscription already reminded of its current card, or whose own facts rule a
 * reminder out (not active, not the card gateway, manual renewal, no next payment, ending first), or whose
 * payment method is no card, costs no gateway call; the others cost one read, paced
 * (CARD_EXPIRY_REMINDER_MAX_PER_SECOND) and within the gateway's limits (its client). Where the pass stands is
 * stored, so a pass starts at most once per CARD_EXPIRY_REMINDER_INTERVAL_SECONDS and a restarted worker goes on
 * from where the last stopped. A subscription that cannot be judged (the gateway or the database failing on it)
 * is counted and left for the next pass; three in a row pause the pass until a later run.
 *
 * The reminder is stored with the hand-over row in one transaction, with the subscription locked and its card
 * read again: a crash cannot send it twice, the reminders' primary key
 * (subscription, card) makes a second pass a no-op, and a card replaced meanwhile gets none.
 */
export class CardExpiryReminders {
  private readonly pacer: Pacer;
  private readonly holder: string;

  constructor(private readonly deps: {
    reminders: CardExpiryReminderRepository;
    orderWrites: OrderWriteRepository;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    cardGateway: Pick<CardGatewayClient, 'getPaymentMethod'>;
    /** Whether the card gateway's API key is set: without it no card can be asked about. */
    cardGatewayConfigured: boolean;
    config: CardExpiryReminderSettings;
    log: Logger;
    clock: () => Date;
    /** How this process holds the pass (a worker's name); a random one unless given. */
    holder?: string;
  }) {
    this.pacer = new Pacer(deps.config.maxPerSecond);
    this.holder = deps.holder ?? `cer-${crypto.randomBytes(6).toString('hex')}`;
  }

  /**
   * Runs the pass when one is due or under way, until it ends or the run has to stop: `progress` is told after
   * every batch and every gateway answer (the worker's watchdog), `stopRequested` is asked between subscriptions.
   */
  async execute(options: { progress?: () => void; stopRequested?: () => boolean } = {}): Promise<ReminderRunSummary> {
    const { reminders, config, log, clock } = this.deps;
    const progress = options.progress ?? (() => undefined);
    const stopRequested = options.stopRequested ?? (() => false);
    const summary: ReminderRunSummary = { pass: 'off', subscriptions: 0, asked: 0, sent: 0, notSent: {}, notChecked: {} };
    if (config.days === 0) return summary;

    const now = clock();
    // A start in the future (the clock was set back) does not hold the next pass off until it comes.
    const due = (startedAt: Date | null) => !startedAt || startedAt.getTime() > now.getTime() || now.getTime() - startedAt.getTime() >= config.intervalSeconds * 1000;
    const state = await reminders.passState();
    const underWay = Boolean(state?.startedAt && !state.finishedAt);
    if (!underWay && !due(state?.startedAt ?? null)) return { ...summary, pass: 'not_due' };

    const held = await reminders.claim(this.holder, now, new Date(now.getTime() + HOLD_MS));
    if (!held) return { ...summary, pass: 'held_elsewhere' };
    let cursor = held.cursor;
    if (!held.startedAt || held.finishedAt) {
      // Another worker may have finished one between the look and the hold.
      if (!due(held.startedAt)) {
        await reminders.release(this.holder, now);
        return { ...summary, pass: 'not_due' };
      }
      if (!(await reminders.start(this.holder, now))) return { ...summary, pass: 'held_elsewhere' };
      cursor = 0;
    }

    const finish = async () => {
      await reminders.finish(this.holder, clock());
      log.info('card_expiry_reminder_pass', { ...summary, pass: 'finished' });
      return { ...summary, pass: 'finished' as const };
    };
    const pause = async (why: string) => {
      await reminders.release(this.holder, clock());
      const fields = { ...summary, pass: 'paused', why, cursor };
      if (why === 'stopping') log.info('card_expiry_reminder_pass_paused', fields);
      else log.warn('card_expiry_reminder_pass_paused', fields);
      return { ...summary, pass: 'paused' as const };
    };

    let settings = await this.deps.settings.current();
    // Nothing is sent or recorded without a companion that sends the e-mail (protocol 3), or without a gateway to ask: said once a pass.
    if (!companionRunsDunning(settings)) {
      log.warn('card_expiry_reminders_need_companion', {
        companionVersion: settings.companionVersion,
        message: settings.companion
          ? 'the companion plugin in this shop is too old to send the payment method e-mail (version 3 or newer is needed); no card expiry reminders were sent'
          : 'card expiry reminders are e-mailed by WooCommerce through the companion plugin, which this shop does not run; none were sent',
      });
      return finish();
    }
    if (!this.deps.cardGatewayConfigured) {
      log.warn('card_expiry_reminders_need_card_gateway', { message: 'CARD_GATEWAY_API_KEY is not set, so no card expiry can be read; no reminders were sent' });
      return finish();
    }

    let troubleInARow = 0;
    let heldAt = now.getTime();
    for (;;) {
      if (stopRequested()) return pause('stopping');
      const { cards, last } = await reminders.currentCards(cursor, REMINDER_BATCH, settings);
      if (last === null) return finish();
      const facts = await reminders.subscriptionFacts(cards.filter((card) => !card.reminded).map((card) => card.subscriptionId), settings);
      for (const card of cards) {
        if (stopRequested()) return pause('stopping');
        summary.subscriptions += 1;
        const askedBefore = summary.asked;
        // One subscription's failure is counted and left for the next pass; the others go on.
        const outcome = await this.consider(card, facts.get(card.subscriptionId), settings, summary)
          .catch((error: unknown): Outcome => ({ kind: 'not_checked', reason: 'error', detail: error instanceof Error ? error.message : String(error) }));
        if (outcome.kind === 'sent') {
          summary.sent += 1;
        } else if (outcome.kind === 'not_sent') {
          summary.notSent[outcome.reason] = (summary.notSent[outcome.reason] ?? 0) + 1;
        } else {
          summary.notChecked[outcome.reason] = (summary.notChecked[outcome.reason] ?? 0) + 1;
          log.warn('card_expiry_reminder_not_checked', { subscriptionId: card.subscriptionId, paymentMethod: card.paymentMethod, reason: outcome.reason, detail: outcome.detail });
        }
        if (outcome.kind === 'not_checked' && (outcome.reason === 'unreachable' || outcome.reason === 'error')) {
          troubleInARow += 1;
          // The gateway or the database is away: the pass waits for a later run rather than trying every card.
          if (troubleInARow >= TROUBLE_IN_A_ROW) return pause(outcome.reason === 'error' ? 'database errors' : 'card gateway unreachable');
        } else if (summary.asked > askedBefore || outcome.kind === 'sent') {
          troubleInARow = 0;
        }
        progress();
        if (clock().getTime() - heldAt >= RENEW_HOLD_AFTER_MS) {
          heldAt = clock().getTime();
          if (!(await reminders.advance(this.holder, cursor, clock(), new Date(heldAt + HOLD_MS)))) return this.lost(summary);
        }
      }
      cursor = last;
      heldAt = clock().getTime();
      if (!(await reminders.advance(this.holder, cursor, clock(), new Date(heldAt + HOLD_MS)))) return this.lost(summary);
      progress();
      settings = await this.deps.settings.current();
      if (!companionRunsDunning(settings)) {
        log.warn('card_expiry_reminders_need_companion', { message: 'the companion plugin is no longer heard from; the rest of this pass sends no card expiry reminders' });
        return finish();
      }
    }
  }

  private lost(summary: ReminderRunSummary): ReminderRunSummary {
    this.deps.log.warn('card_expiry_reminder_pass_lost', { ...summary, why: 'another worker took the pass over' });
    return { ...summary, pass: 'paused' };
  }

  private async consider(card: CurrentCard, facts: SubscriptionFacts | undefined, settings: ShopSettings, summary: ReminderRunSummary): Promise<Outcome> {
    if (card.reminded) return { kind: 'not_sent', reason: 'already_sent' };
    if (!facts) return { kind: 'not_sent', reason: 'not_active' };
    const bar = subscriptionBars(facts);
    if (bar) return { kind: 'not_sent', reason: bar };
    if (NOT_CARD_PREFIXES.some((prefix) => card.paymentMethod.startsWith(prefix))) return { kind: 'not_sent', reason: 'not_a_card' };

    await this.pacer.take();
    summary.asked += 1;
    const read = await this.deps.cardGateway.getPaymentMethod(card.paymentMethod);
    if (!read.ok) {
      const detail = `${read.kind} ${read.status ?? ''} ${read.message}`.replace(/\s+/g, ' ').trim();
      return { kind: 'not_checked', reason: read.kind === 'not_found' ? 'not_found' : 'unreachable', detail };
    }
    const method = read.value;
    if (!method.card) return { kind: 'not_sent', reason: 'not_a_card' };
    // A deleted, failed or inactivated card is replaced or gone: no reminder for it.
    if (method.state !== 'active') return { kind: 'not_sent', reason: 'card_not_active' };
    const expDate = method.card?.exp_date;
    const validUntil = cardValidUntil(expDate);
    if (!validUntil) return { kind: 'not_checked', reason: 'malformed_expiry', detail: `exp_date ${JSON.stringify(expDate ?? null)}` };
    const now = this.deps.clock();
    const notNow = reminderBars(facts, validUntil, this.deps.config.days, now);
    if (notNow) return { kind: 'not_sent', reason: notNow };

    const maskedCard = typeof method.card?.masked_card === 'string' ? method.card.masked_card : null;
    const outcome = await this.deps.orderWrites.transaction(async (db): Promise<Outcome> => {
      const at = this.deps.clock();
      // The subscription locked, then its card read again: one the customer changed meanwhile gets no reminder.
      const locked = await this.deps.orderWrites.lockStatus(db, card.subscriptionId, settings);
      if (!locked || locked.type !== 'shop_subscription') return { kind: 'not_sent', reason: 'not_active' };
      if (await this.deps.reminders.lockCurrentCard(db, card.subscriptionId, this.deps.orderWrites, settings) !== card.paymentMethod) return { kind: 'not_sent', reason: 'replaced' };
      const current = (await this.deps.reminders.subscriptionFacts([card.subscriptionId], settings, db)).get(card.subscriptionId);
      const bar = current ? reminderBars(current, validUntil, this.deps.config.days, at) : 'not_active';
      if (bar) return { kind: 'not_sent', reason: bar };
      if (!(await this.deps.reminders.record(db, { subscriptionId: card.subscriptionId, paymentMethod: card.paymentMethod, expDate: expDate! }, at))) {
        return { kind: 'not_sent', reason: 'already_sent' };
      }
      await this.deps.changes.enqueue(db, {
        op: 'customer_payment_method_needed',
        objectId: card.subscriptionId,
        payload: { kind: 'card_expiring', order_id: null, reason: 'card_expired', deadline: null, card_expires: expDate!, masked_card: maskedCard },
      }, settings, at);
      return { kind: 'sent' };
    });
    if (outcome.kind === 'sent') {
      this.deps.log.info('card_expiry_reminder_sent', { subscriptionId: card.subscriptionId, paymentMethod: card.paymentMethod, cardExpires: expDate });
    }
    return outcome;
  }
}
