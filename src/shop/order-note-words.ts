import type { Provider } from '../../entities';
import { minorUnitsToDecimal } from './money';
import { offsetMinutesAt, type ShopTimeZone } from './shop-time';

/**
 * The service's own order and subscription notes, in words for the shop's staff: in the shop's language
 * (WordPress's `WPLANG`, English unless Danish) and its time zone. A provider's code or a setting's name is
 * kept only as a detail in parentheses, for a support case with the provider. The notes that reproduce
 * WooCommerce's own (`statusChangeNote`, Subscriptions' "Payment failed.") are not here: they stay exactly as
 * WooCommerce writes them.
 */

export type NoteLanguage = 'en' | 'da';

/** What the notes are written for: the shop's language (`WPLANG`, e.g. `da_DK`) and its time zone. */
export interface NoteReaders {
  language: string;
  timeZone: ShopTimeZone;
}

/** WordPress's locale as the notes' language: Danish for `da_DK` (or plain `da`), English for anything else. */
export function noteLanguage(locale: string): NoteLanguage {
  return /^da(_|$)/i.test(locale.trim()) ? 'da' : 'en';
}

/** A failed payment as the provider described it: the card gateway's `error` and `error_state`, the wallet's failure reason. */
export interface DeclineFacts {
  code: string | null;
  state: string | null;
  /** The provider's own sentence (in English), shown only when the code is one these words do not know. */
  description?: string | null;
}

/** A payment as a note names it. */
export interface NotedPayment {
  provider: Provider;
  externalId: string;
  amountMinor: number | null;
  currency: string | null;
}

/** How many charges one payment method may take (the card schemes' caps). */
export interface CapsFacts {
  perDay: number;
  per30Days: number;
}

/** What dunning does after a failed renewal payment, as the note tells it. */
export type DunningStep =
  | { kind: 'retry'; attempt: number; of: number; at: Date; plannedFor: Date; caps: CapsFacts }
  /**
   * The attempt early on the first bank day from payday after a decline for lack of funds (DUNNING_PAYDAYS), besides the
   * plan's; `planUsedUp` when the plan has no attempt left, and the customer is asked as well.
   */
  | { kind: 'payday'; at: Date; plannedFor: Date; caps: CapsFacts; planUsedUp: null | { planLength: number; customer: CustomerAsked } }
  | { kind: 'ended'; status: 'RECOVERED' | 'LOST' }
  /**
   * `amount_too_high`: the wallet refused to create the charge as above the agreement's maximum; the agreement is not
   * charged that amount again until something changed (src/dunning/decline-policy.ts, waitsForAmountChange).
   */
  | { kind: 'ask_customer'; because: 'not_charged_again' | 'plan_used_up' | 'amount_too_high'; planLength: number; customer: CustomerAsked };

/** Where the customer stands: e-mailed now, asked before, or not reachable without the companion plugin. */
export type CustomerAsked =
  | { kind: 'emailed'; deadline: Date }
  | { kind: 'asked_before'; askedAt: Date; deadline: Date | null }
  | { kind: 'needs_companion'; deadline: Date };

/** Who stopped a wallet agreement, as the wallet says it (`MERCHANT`, `USER`, `ADMIN`), or null when it did not say. */
export type AgreementStopper = string | null;

/** The notes, each a sentence made of typed values. */
/** Why a charge of the service's was cancelled before it was taken. */
export type ChargeCancelledBecause =
  | { kind: 'payment'; reference: string }
  | { kind: 'shop'; orderStatus: string }
  | { kind: 'dunning_stopped'; by: string }
  /** The subscription moved to the other provider's gateway: the renewal is charged there instead. */
  | { kind: 'method_switched'; to: Provider }
  /** The subscription ended (`cancelled` by the customer or staff, `expired`, `trash`, ...): its renewal wants no money. */
  | { kind: 'subscription_ended'; status: string }
  /** The renewal's dunning ended unpaid (its deadline). */
  | { kind: 'dunning_ended' }
  /** The renewal order was moved to the bin, or deleted. */
  | { kind: 'order_removed'; deleted: boolean };

/** What a staff member's charge came to. */
export type StaffChargeOutcome =
  | { kind: 'paid' }
  | { kind: 'pending' }
  | { kind: 'declined'; decline: DeclineFacts }
  | { kind: 'held' }
  | { kind: 'unanswered' };

export interface OrderNoteWords {
  language: NoteLanguage;
  /** A provider as staff know it: "Card (Frisbii)", "MobilePay". */
  provider(provider: Provider): string;
  /** A decline's reason in words, and its raw code as the detail. */
  decline(provider: Provider, facts: DeclineFacts): { words: string; detail: string | null };
  /** A time in the shop's zone: "28 November 2026 at 22:51". */
  time(at: Date): string;
  /** A calendar date `YYYY-MM-DD`: "12 December 2026". */
  day(date: string): string;

  /** A payment failed (handed to WooCommerce with the order's move to failed, or written with it). */
  paymentFailed(v: { reference: string; provider: Provider; decline: DeclineFacts }): string;
  /** A failed renewal whose subscription is not on hold (cancelled, gone...): nothing more is charged. */
  noRetry(v: { subscriptionStatus: string | null }): string;
  /** Dunning's decision on a failed renewal payment: the reason, and what happens next. */
  dunning(v: { provider: Provider; decline: DeclineFacts; next: DunningStep }): string;
  /** A new payment method was saved: the failed renewal is charged with it. */
  newMethodCharged(v: { method: string; at: Date }): string;
  /** What the wallet refused as above the agreement's maximum may be charged now: the agreement's terms (`agreement`) or the renewal's amount (`amount`) changed. */
  amountAllowedAgain(v: { changed: 'agreement' | 'amount'; at: Date }): string;
  /** The reminder before the deadline. */
  customerReminded(v: { deadline: Date }): string;
  /** The deadline passed unpaid; with what became of the subscription when it is said. */
  dunningEnded(v: { deadline: Date; renewalOrderId: number; subscription?: 'cancelled' | 'needs_companion' }): string;
  /** Money reserved or taken, with the provider's time when it gave one. */
  paymentReceived(v: { reference: string; captured: boolean; at: Date | null }): string;
  /** A failed renewal paid after all. */
  renewalPaid(v: { reference: string; at: Date | null }): string;
  /** A renewal paid after all whose order had been paid or closed another way. */
  paidOrderLeft(v: { reference: string; orderStatus: string }): string;
  /** A charge the service had asked for, cancelled because the renewal was paid otherwise. */
  chargeCancelled(v: { provider: Provider; reference: string; paidBy: ChargeCancelledBecause }): string;
  /** A staff member charged the renewal now, and what came of it. */
  staffCharged(v: { by: string; attempt: number; provider: Provider; outcome: StaffChargeOutcome }): string;
  /** A staff member had WooCommerce e-mail the customer the link to add a payment method. */
  staffSentPaymentLink(v: { by: string }): string;
  /** A staff member stopped the renewal's dunning. */
  staffStoppedDunning(v: { by: string }): string;
  /** An asynchronous refund failed at the provider. */
  refundFailed(v: { provider: Provider; reference: string; transaction: string | null }): string;
  /** An order captured twice: which one to refund. */
  secondCapture(v: { refund: NotedPayment; kept: NotedPayment }): string;
  /** A charge the service withdrew because the order was paid or closed in the shop, taken all the same. */
  secondCaptureOutside(v: { refund: NotedPayment; withdrawnBecause: string | null }): string;
  /** A wallet agreement was stopped. */
  agreementStopped(v: { agreementId: string; by: AgreementStopper }): string;
  /** A staff member paused a subscription. */
  paused(v: { until: string; by: string; nextPayment: Date }): string;
  /** The pause's end reactivated the subscription. */
  pauseEnded(): string;
  /** The pause's end came after the subscription's own end. */
  pauseEndedPastEnd(): string;
  /** A staff member activated an on-hold subscription. */
  forceActivated(v: { by: string }): string;
}

export function orderNoteWords(readers: NoteReaders): OrderNoteWords {
  const language = noteLanguage(readers.language);
  return (language === 'da' ? danish : english)(clockOf(language, readers.timeZone));
}

interface Clock {
  time(at: Date): string;
  day(date: string): string;
}

const MONTHS: Record<NoteLanguage, string[]> = {
  en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  da: ['januar', 'februar', 'marts', 'april', 'maj', 'juni', 'juli', 'august', 'september', 'oktober', 'november', 'december'],
};

/** Dates as people in the shop write them, in its zone: "28 November 2026 at 22:51", "28. november 2026 kl. 22:51". */
function clockOf(language: NoteLanguage, zone: ShopTimeZone): Clock {
  const dayOf = (year: number, month: number, date: number) => (language === 'da'
    ? `${date}. ${MONTHS.da[month - 1]} ${year}` : `${date} ${MONTHS.en[month - 1]} ${year}`);
  return {
    time(at) {
      const local = new Date(at.getTime() + offsetMinutesAt(at, zone) * 60_000);
      const clock = `${String(local.getUTCHours()).padStart(2, '0')}:${String(local.getUTCMinutes()).padStart(2, '0')}`;
      const day = dayOf(local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate());
      return language === 'da' ? `${day} kl. ${clock}` : `${day} at ${clock}`;
    },
    day(date) {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
      return match ? dayOf(Number(match[1]), Number(match[2]), Number(match[3])) : date;
    },
  };
}

/** The card gateway's answer to a charge on a stored payment method in state failed. */
const FAILED_METHOD_CODE = '147';

type Reasons = Record<string, string>;

/** A table's own entry: a provider's code such as `constructor` is no key of ours. */
const own = (table: Record<string, string>, key: string): string | undefined => (Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined);

interface DeclineWords {
  card: Reasons;
  cardStates: Reasons;
  cardUnknown: string;
  wallet: Reasons;
  walletUnknown: string;
}

/** A decline in words: the code's own words, else its state's, else the provider's generic ones; the code as the detail. */
function declineIn(words: DeclineWords, provider: Provider, facts: DeclineFacts): { words: string; detail: string | null } {
  const code = facts.code?.trim() || null;
  const state = facts.state?.trim() || null;
  const ofCode = code ? own(provider === 'mobile_wallet' ? words.wallet : words.card, code) : undefined;
  const ofState = provider === 'card_gateway' && state ? own(words.cardStates, state) : undefined;
  // The provider's own sentence helps only where these words had to guess.
  const description = !ofCode ? facts.description?.trim() || null : null;
  return {
    words: ofCode ?? ofState ?? (provider === 'mobile_wallet' ? words.walletUnknown : words.cardUnknown),
    detail: [code ?? state, description].filter(Boolean).join(': ') || null,
  };
}

const withDetail = (decline: { words: string; detail: string | null }) => `${decline.words}${decline.detail ? ` (${decline.detail})` : ''}`;

const amountOf = (payment: NotedPayment, decimalComma: boolean, unknown: string) => {
  if (payment.amountMinor === null) return unknown;
  const amount = minorUnitsToDecimal(payment.amountMinor, payment.currency);
  return `${decimalComma ? amount.replace('.', ',') : amount} ${payment.currency ?? ''}`.trim();
};

const ENGLISH_DECLINES: DeclineWords = {
  card: {
    insufficient_funds: 'not enough money on the card',
    settle_blocked: 'the bank is holding back the payment for now',
    credit_card_expired: 'the card has expired',
    declined_by_acquirer: 'the bank declined the card',
    credit_card_lost_or_stolen: 'the card was reported lost or stolen',
    credit_card_suspected_fraud: 'the bank suspects fraud on the card',
    authorization_expired: 'the reservation on the card expired',
    authorization_amount_exceeded: 'the amount is more than was reserved on the card',
    authorization_voided: 'the reservation on the card was cancelled',
    sca_required: 'the bank wants the customer to approve the payment themselves',
    risk_filter_block: "Frisbii's risk filter blocked the payment",
    fraud_block: 'the payment was blocked as suspected fraud',
    emv_token_deleted: 'the stored card was deleted by the card scheme',
    emv_token_suspended: 'the stored card was suspended by the card scheme',
    acquirer_communication_error: 'the connection between Frisbii and the bank failed',
    acquirer_error: 'the bank reported a technical error',
    acquirer_integration_error: 'a technical error between Frisbii and the bank',
    acquirer_authentication_error: 'a technical error between Frisbii and the bank',
    acquirer_configuration_error: 'a technical error between Frisbii and the bank',
    acquirer_rejected_error: 'a technical error between Frisbii and the bank',
    [FAILED_METHOD_CODE]: 'the stored card can no longer be used',
  },
  cardStates: {
    soft_declined: 'the card was declined for now',
    hard_declined: 'the card was declined for good',
    processing_error: 'a technical error between Frisbii and the bank',
  },
  cardUnknown: 'the card was declined',
  wallet: {
    user_action_required: 'the customer has to act in the MobilePay app',
    charge_amount_too_high: 'the amount is above the maximum the customer set for the agreement in MobilePay',
    non_technical_error: 'MobilePay refused the payment for a reason the customer can fix in the app',
    no_agreement: 'there is no MobilePay agreement to charge',
    technical_error: 'a technical error at MobilePay',
  },
  walletUnknown: 'MobilePay declined the payment',
};

const DANISH_DECLINES: DeclineWords = {
  card: {
    insufficient_funds: 'ikke penge nok på kortet',
    settle_blocked: 'banken holder betalingen tilbage indtil videre',
    credit_card_expired: 'kortet er udløbet',
    declined_by_acquirer: 'banken afviste kortet',
    credit_card_lost_or_stolen: 'kortet er meldt mistet eller stjålet',
    credit_card_suspected_fraud: 'banken mistænker svindel med kortet',
    authorization_expired: 'reservationen på kortet er udløbet',
    authorization_amount_exceeded: 'beløbet er højere end det, der er reserveret på kortet',
    authorization_voided: 'reservationen på kortet er annulleret',
    sca_required: 'banken vil have kunden til selv at godkende betalingen',
    risk_filter_block: 'Frisbiis risikofilter blokerede betalingen',
    fraud_block: 'betalingen blev blokeret på mistanke om svindel',
    emv_token_deleted: 'det gemte kort er slettet af kortselskabet',
    emv_token_suspended: 'det gemte kort er spærret af kortselskabet',
    acquirer_communication_error: 'forbindelsen mellem Frisbii og banken svigtede',
    acquirer_error: 'banken meldte en teknisk fejl',
    acquirer_integration_error: 'en teknisk fejl mellem Frisbii og banken',
    acquirer_authentication_error: 'en teknisk fejl mellem Frisbii og banken',
    acquirer_configuration_error: 'en teknisk fejl mellem Frisbii og banken',
    acquirer_rejected_error: 'en teknisk fejl mellem Frisbii og banken',
    [FAILED_METHOD_CODE]: 'det gemte kort kan ikke længere bruges',
  },
  cardStates: {
    soft_declined: 'kortet blev afvist indtil videre',
    hard_declined: 'kortet blev afvist endeligt',
    processing_error: 'en teknisk fejl mellem Frisbii og banken',
  },
  cardUnknown: 'kortet blev afvist',
  wallet: {
    user_action_required: 'kunden skal gøre noget i MobilePay-appen',
    charge_amount_too_high: 'beløbet er højere end det maksimum, kunden har sat for aftalen i MobilePay',
    non_technical_error: 'MobilePay afviste betalingen af en grund, som kunden kan løse i appen',
    no_agreement: 'der er ingen MobilePay-aftale at trække på',
    technical_error: 'en teknisk fejl hos MobilePay',
  },
  walletUnknown: 'MobilePay afviste betalingen',
};

const ENGLISH_STATUSES: Record<string, string> = {
  pending: 'pending payment', processing: 'processing', 'on-hold': 'on hold', completed: 'completed', cancelled: 'cancelled',
  refunded: 'refunded', failed: 'failed', active: 'active', expired: 'expired', 'pending-cancel': 'pending cancellation', switched: 'switched',
  trash: 'in the trash', gone: 'deleted',
};

const DANISH_STATUSES: Record<string, string> = {
  pending: 'afventer betaling', processing: 'under behandling', 'on-hold': 'i bero', completed: 'gennemført', cancelled: 'annulleret',
  refunded: 'refunderet', failed: 'mislykket', active: 'aktivt', expired: 'udløbet', 'pending-cancel': 'afventer annullering', switched: 'skiftet',
  trash: 'i papirkurven', gone: 'slettet',
};

function english(clock: Clock): OrderNoteWords {
  const provider = (of: Provider) => (of === 'card_gateway' ? 'Card (Frisbii)' : 'MobilePay');
  const providerName = (of: Provider) => (of === 'card_gateway' ? 'Frisbii' : 'MobilePay');
  const status = (of: string) => own(ENGLISH_STATUSES, of) ?? of;
  const decline = (of: Provider, facts: DeclineFacts) => declineIn(ENGLISH_DECLINES, of, facts);
  const { time, day } = clock;
  const unlessPaid = (deadline: Date) => `The subscription is cancelled on ${time(deadline)} unless the renewal is paid.`;
  const customer = (asked: CustomerAsked) => {
    switch (asked.kind) {
      case 'emailed':
        return `The customer is e-mailed a link to add a new payment method. ${unlessPaid(asked.deadline)}`;
      case 'asked_before':
        return `The customer was asked for a new payment method on ${time(asked.askedAt)}; `
          + (asked.deadline ? `the subscription is still cancelled on ${time(asked.deadline)} unless the renewal is paid.` : 'no deadline is set.');
      case 'needs_companion':
        return 'The customer could not be e-mailed for a new payment method: that takes the shop-sidecar companion plugin, version 3 or newer. '
          + `Dunning ends on ${time(asked.deadline)} unless the renewal is paid.`;
    }
  };
  const next = (step: DunningStep) => {
    switch (step.kind) {
      case 'retry': {
        const moved = step.at.getTime() > step.plannedFor.getTime()
          ? ` That is later than planned (${time(step.plannedFor)}): no more than ${step.caps.perDay} charges a day and ${step.caps.per30Days} in 30 days are made on one payment method.`
          : '';
        return `We try again on ${time(step.at)} (attempt ${step.attempt} of ${step.of}).${moved}`;
      }
      case 'payday': {
        const moved = step.at.getTime() > step.plannedFor.getTime()
          ? ` That is later than the payday morning (${time(step.plannedFor)}): no more than ${step.caps.perDay} charges a day and ${step.caps.per30Days} in 30 days are made on one payment method.`
          : '';
        const besides = step.planUsedUp
          ? ` All ${step.planUsedUp.planLength} planned attempts have been made; this one is besides them. ${customer(step.planUsedUp.customer)}`
          : ' The plan\'s next attempt follows if it fails.';
        return `We try again on ${time(step.at)}, early on the first bank day from payday, as the decline was for lack of funds.${moved}${besides}`;
      }
      case 'ended':
        return `No new attempt: the dunning of this renewal has already ended (${step.status === 'RECOVERED' ? 'it was paid' : 'it ended unpaid'}).`;
      case 'ask_customer':
        return `${step.because === 'plan_used_up' ? `All ${step.planLength} planned attempts have been made.`
          : step.because === 'amount_too_high' ? 'MobilePay refused to create the charge, so the customer has not been told in the app. The same agreement is not charged this amount again until its maximum (the customer raises it in the MobilePay app), its price (the shop updates it) or the renewal\'s amount has changed, or the customer chooses another payment method.'
            : 'This payment method is not charged again.'} ${customer(step.customer)}`;
    }
  };
  return {
    language: 'en',
    provider,
    decline,
    time,
    day,
    paymentFailed: (v) => `Payment ${v.reference} failed: ${withDetail(decline(v.provider, v.decline))}.`,
    noRetry: (v) => (v.subscriptionStatus === null
      ? 'No new payment attempt is planned: the subscription no longer exists.'
      : `No new payment attempt is planned: the subscription is ${status(v.subscriptionStatus)}.`),
    dunning: (v) => `Payment failed: ${withDetail(decline(v.provider, v.decline))}. ${next(v.next)}`,
    newMethodCharged: (v) => `A new payment method was saved (${v.method}): the renewal is charged with it on ${time(v.at)}, once.`,
    amountAllowedAgain: (v) => (v.changed === 'agreement'
      ? `The MobilePay agreement's maximum or price has changed since MobilePay refused the amount: the renewal is charged on it again on ${time(v.at)}, once.`
      : `The renewal's amount has changed since MobilePay refused it: the renewal is charged on the same agreement again on ${time(v.at)}, once.`),
    customerReminded: (v) => `The customer is reminded by e-mail to add a new payment method. ${unlessPaid(v.deadline)}`,
    dunningEnded: (v) => `Dunning ended unpaid: no new payment method by ${time(v.deadline)} for renewal order #${v.renewalOrderId}.`
      + (v.subscription === 'cancelled' ? ' The subscription is cancelled.'
        : v.subscription === 'needs_companion' ? ' The subscription is left as it is: cancelling it through WooCommerce takes the shop-sidecar companion plugin, version 3 or newer.' : ''),
    paymentReceived: (v) => `Payment ${v.reference} was ${v.captured ? 'taken' : 'reserved'}${v.at ? ` on ${time(v.at)}` : ''}.`,
    renewalPaid: (v) => `Payment ${v.reference} went through${v.at ? ` on ${time(v.at)}` : ''}.`,
    paidOrderLeft: (v) => `Payment ${v.reference} went through; the order was already ${status(v.orderStatus)} and was left as it is.`,
    chargeCancelled: (v) => (v.paidBy.kind === 'dunning_stopped'
      ? `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: ${v.paidBy.by} stopped dunning of this renewal.`
      : v.paidBy.kind === 'method_switched'
        ? `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: the subscription now pays with ${provider(v.paidBy.to)}, and the renewal is charged there instead.`
      : v.paidBy.kind === 'subscription_ended'
        ? `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: the subscription is ${status(v.paidBy.status)}, so this renewal is no longer charged.`
      : v.paidBy.kind === 'dunning_ended'
        ? `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: dunning of this renewal ended unpaid at its deadline.`
      : v.paidBy.kind === 'order_removed'
        ? `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: the renewal order was ${v.paidBy.deleted ? 'deleted' : 'moved to the bin'}, so it is no longer charged.`
      : `Charge ${v.reference} (${provider(v.provider)}) was cancelled before it was taken: the renewal was already paid `
        + (v.paidBy.kind === 'payment' ? `by payment ${v.paidBy.reference}.` : `in the shop (the order is ${status(v.paidBy.orderStatus)}).`)),
    staffCharged: (v) => {
      const lead = `${v.by} charged the renewal now (attempt ${v.attempt})`;
      switch (v.outcome.kind) {
        case 'paid': return `${lead}: the payment went through.`;
        case 'pending': return `${lead}: ${providerName(v.provider)} has the charge and confirms it later.`;
        case 'declined': return `${lead}: declined, ${withDetail(decline(v.provider, v.outcome.decline))}. The planned attempts stay as they were.`;
        case 'held': return `${lead}, but ${providerName(v.provider)} refused the service's request: nothing was charged. The service asks again once the problem is fixed.`;
        case 'unanswered': return `${lead}, but ${providerName(v.provider)} did not answer. The service asks again shortly, without charging twice.`;
      }
    },
    staffSentPaymentLink: (v) => `${v.by} had the customer e-mailed the link to add a new payment method.`,
    staffStoppedDunning: (v) => `${v.by} stopped dunning of this renewal: no more payment attempts are made, and the subscription is not cancelled for it. The subscription is left as it is.`,
    refundFailed: (v) => `The refund${v.transaction ? ` ${v.transaction}` : ''} of payment ${v.reference} failed at ${providerName(v.provider)}: the money was not returned.`,
    secondCapture: ({ refund, kept }) => {
      const of = (payment: NotedPayment) => `${provider(payment.provider)}, ${amountOf(payment, false, 'amount unknown')}`;
      return `Paid twice: payment ${refund.externalId} (${of(refund)}) was taken after payment ${kept.externalId} (${of(kept)}) had already paid this order. `
        + `Refund ${refund.externalId}, the later one, at ${providerName(refund.provider)}; nothing is refunded automatically.`;
    },
    secondCaptureOutside: ({ refund, withdrawnBecause }) => (withdrawnBecause?.startsWith('subscription_')
      ? `Taken for a subscription that had ended: payment ${refund.externalId} (${provider(refund.provider)}, ${amountOf(refund, false, 'amount unknown')}) `
        + `was taken after the subscription was ${status(withdrawnBecause.slice('subscription_'.length))}, when this renewal no longer wanted money. `
        + `Refund ${refund.externalId} from the order screen or at ${providerName(refund.provider)}, unless the customer should keep the renewal; nothing is refunded automatically.`
      : `Paid twice: payment ${refund.externalId} (${provider(refund.provider)}, ${amountOf(refund, false, 'amount unknown')}) `
        + `was taken after the order had been paid or closed in the shop, although the service had asked ${providerName(refund.provider)} to cancel it. `
        + `Refund ${refund.externalId} at ${providerName(refund.provider)}, unless the order should keep it instead; nothing is refunded automatically.`),
    agreementStopped: (v) => {
      const by = v.by === 'MERCHANT' ? 'the shop' : v.by === 'USER' ? 'the customer' : v.by === 'ADMIN' ? "MobilePay, as the customer's profile was deleted"
        : 'MobilePay (who stopped it was not said)';
      return `The MobilePay agreement ${v.agreementId} was stopped by ${by}${v.by ? ` (${v.by})` : ''}.`;
    },
    paused: (v) => `Paused until ${day(v.until)} by ${v.by}; the next payment moves to ${time(v.nextPayment)}.`,
    pauseEnded: () => 'The pause has ended.',
    pauseEndedPastEnd: () => "The pause has ended, but the subscription's end date has passed, so it stays on hold.",
    forceActivated: (v) => `Force-activated by ${v.by}.`,
  };
}

function danish(clock: Clock): OrderNoteWords {
  const provider = (of: Provider) => (of === 'card_gateway' ? 'Kort (Frisbii)' : 'MobilePay');
  const providerName = (of: Provider) => (of === 'card_gateway' ? 'Frisbii' : 'MobilePay');
  const status = (of: string) => own(DANISH_STATUSES, of) ?? of;
  const decline = (of: Provider, facts: DeclineFacts) => declineIn(DANISH_DECLINES, of, facts);
  const { time, day } = clock;
  const unlessPaid = (deadline: Date) => `Abonnementet annulleres ${time(deadline)}, medmindre fornyelsen bliver betalt.`;
  const customer = (asked: CustomerAsked) => {
    switch (asked.kind) {
      case 'emailed':
        return `Kunden får en e-mail med et link til at tilføje en ny betalingsmetode. ${unlessPaid(asked.deadline)}`;
      case 'asked_before':
        return `Kunden blev bedt om en ny betalingsmetode ${time(asked.askedAt)}; `
          + (asked.deadline ? `abonnementet annulleres stadig ${time(asked.deadline)}, medmindre fornyelsen bliver betalt.` : 'der er ingen frist.');
      case 'needs_companion':
        return 'Kunden kunne ikke få en e-mail om en ny betalingsmetode: det kræver shop-sidecar companion-pluginet, version 3 eller nyere. '
          + `Rykkerforløbet slutter ${time(asked.deadline)}, medmindre fornyelsen bliver betalt.`;
    }
  };
  const next = (step: DunningStep) => {
    switch (step.kind) {
      case 'retry': {
        const moved = step.at.getTime() > step.plannedFor.getTime()
          ? ` Det er senere end planlagt (${time(step.plannedFor)}): der trækkes højst ${step.caps.perDay} gange om dagen og ${step.caps.per30Days} gange på 30 dage på én betalingsmetode.`
          : '';
        return `Vi prøver igen ${time(step.at)} (forsøg ${step.attempt} af ${step.of}).${moved}`;
      }
      case 'payday': {
        const moved = step.at.getTime() > step.plannedFor.getTime()
          ? ` Det er senere end lønningsdagens morgen (${time(step.plannedFor)}): der trækkes højst ${step.caps.perDay} gange om dagen og ${step.caps.per30Days} gange på 30 dage på én betalingsmetode.`
          : '';
        const besides = step.planUsedUp
          ? ` Alle ${step.planUsedUp.planLength} planlagte forsøg er brugt; dette kommer ud over dem. ${customer(step.planUsedUp.customer)}`
          : ' Planens næste forsøg følger, hvis det mislykkes.';
        return `Vi prøver igen ${time(step.at)}, tidligt på den første bankdag fra lønningsdagen, fordi afvisningen skyldtes manglende dækning.${moved}${besides}`;
      }
      case 'ended':
        return `Intet nyt forsøg: rykkerforløbet for denne fornyelse er allerede slut (${step.status === 'RECOVERED' ? 'den er betalt' : 'den endte ubetalt'}).`;
      case 'ask_customer':
        return `${step.because === 'plan_used_up' ? `Alle ${step.planLength} planlagte forsøg er brugt.`
          : step.because === 'amount_too_high' ? 'MobilePay afviste at oprette trækket, så kunden har ikke fået besked i appen. Der trækkes ikke dette beløb igen på samme aftale, før dens maksimum (kunden hæver det i MobilePay-appen), dens pris (butikken ændrer den) eller fornyelsens beløb er ændret, eller kunden vælger en anden betalingsmetode.'
            : 'Der trækkes ikke igen på denne betalingsmetode.'} ${customer(step.customer)}`;
    }
  };
  return {
    language: 'da',
    provider,
    decline,
    time,
    day,
    paymentFailed: (v) => `Betalingen ${v.reference} mislykkedes: ${withDetail(decline(v.provider, v.decline))}.`,
    noRetry: (v) => (v.subscriptionStatus === null
      ? 'Der er ikke planlagt et nyt betalingsforsøg: abonnementet findes ikke længere.'
      : `Der er ikke planlagt et nyt betalingsforsøg: abonnementet er ${status(v.subscriptionStatus)}.`),
    dunning: (v) => `Betalingen mislykkedes: ${withDetail(decline(v.provider, v.decline))}. ${next(v.next)}`,
    newMethodCharged: (v) => `En ny betalingsmetode er gemt (${v.method}): fornyelsen trækkes på den nye betalingsmetode ${time(v.at)}, én gang.`,
    amountAllowedAgain: (v) => (v.changed === 'agreement'
      ? `MobilePay-aftalens maksimum eller pris er ændret, siden MobilePay afviste beløbet: fornyelsen trækkes igen på aftalen ${time(v.at)}, én gang.`
      : `Fornyelsens beløb er ændret, siden MobilePay afviste det: fornyelsen trækkes igen på samme aftale ${time(v.at)}, én gang.`),
    customerReminded: (v) => `Kunden får en påmindelse på e-mail om at tilføje en ny betalingsmetode. ${unlessPaid(v.deadline)}`,
    dunningEnded: (v) => `Rykkerforløbet sluttede ubetalt: ingen ny betalingsmetode senest ${time(v.deadline)} for fornyelsesordre #${v.renewalOrderId}.`
      + (v.subscription === 'cancelled' ? ' Abonnementet annulleres.'
        : v.subscription === 'needs_companion' ? ' Abonnementet forbliver, som det er: det kræver shop-sidecar companion-pluginet, version 3 eller nyere, at annullere det gennem WooCommerce.' : ''),
    paymentReceived: (v) => `Betalingen ${v.reference} blev ${v.captured ? 'trukket' : 'reserveret'}${v.at ? ` ${time(v.at)}` : ''}.`,
    renewalPaid: (v) => `Betalingen ${v.reference} gik igennem${v.at ? ` ${time(v.at)}` : ''}.`,
    paidOrderLeft: (v) => `Betalingen ${v.reference} gik igennem; ordren var allerede ${status(v.orderStatus)} og blev ikke ændret.`,
    chargeCancelled: (v) => (v.paidBy.kind === 'dunning_stopped'
      ? `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: ${v.paidBy.by} stoppede rykkerforløbet for denne fornyelse.`
      : v.paidBy.kind === 'method_switched'
        ? `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: abonnementet betales nu med ${provider(v.paidBy.to)}, og fornyelsen trækkes dér i stedet.`
      : v.paidBy.kind === 'subscription_ended'
        ? `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: abonnementet er ${status(v.paidBy.status)}, så denne fornyelse trækkes ikke længere.`
      : v.paidBy.kind === 'dunning_ended'
        ? `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: rykkerforløbet for denne fornyelse sluttede ubetalt ved fristen.`
      : v.paidBy.kind === 'order_removed'
        ? `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: fornyelsesordren blev ${v.paidBy.deleted ? 'slettet' : 'lagt i papirkurven'}, så den trækkes ikke længere.`
      : `Trækket ${v.reference} (${provider(v.provider)}) blev annulleret, før det blev gennemført: fornyelsen var allerede betalt `
        + (v.paidBy.kind === 'payment' ? `med betalingen ${v.paidBy.reference}.` : `i butikken (ordren er ${status(v.paidBy.orderStatus)}).`)),
    staffCharged: (v) => {
      const lead = `${v.by} trak betalingen for fornyelsen nu (forsøg ${v.attempt})`;
      switch (v.outcome.kind) {
        case 'paid': return `${lead}: betalingen gik igennem.`;
        case 'pending': return `${lead}: ${providerName(v.provider)} har trækket og bekræfter det senere.`;
        case 'declined': return `${lead}: afvist, ${withDetail(decline(v.provider, v.outcome.decline))}. De planlagte forsøg står ved magt.`;
        case 'held': return `${lead}, men ${providerName(v.provider)} afviste tjenestens forespørgsel: intet blev trukket. Tjenesten spørger igen, når fejlen er rettet.`;
        case 'unanswered': return `${lead}, men ${providerName(v.provider)} svarede ikke. Tjenesten spørger igen om lidt uden at trække to gange.`;
      }
    },
    staffSentPaymentLink: (v) => `${v.by} fik sendt kunden en e-mail med linket til at tilføje en ny betalingsmetode.`,
    staffStoppedDunning: (v) => `${v.by} stoppede rykkerforløbet for denne fornyelse: der gøres ikke flere betalingsforsøg, og abonnementet annulleres ikke på grund af den. Abonnementet forbliver, som det er.`,
    refundFailed: (v) => `Refunderingen${v.transaction ? ` ${v.transaction}` : ''} af betalingen ${v.reference} mislykkedes hos ${providerName(v.provider)}: pengene blev ikke betalt tilbage.`,
    secondCapture: ({ refund, kept }) => {
      const of = (payment: NotedPayment) => `${provider(payment.provider)}, ${amountOf(payment, true, 'ukendt beløb')}`;
      return `Betalt to gange: betalingen ${refund.externalId} (${of(refund)}) blev trukket, efter at betalingen ${kept.externalId} (${of(kept)}) allerede havde betalt ordren. `
        + `Refundér ${refund.externalId}, den seneste, hos ${providerName(refund.provider)}; intet refunderes automatisk.`;
    },
    secondCaptureOutside: ({ refund, withdrawnBecause }) => (withdrawnBecause?.startsWith('subscription_')
      ? `Trukket for et abonnement, der var afsluttet: betalingen ${refund.externalId} (${provider(refund.provider)}, ${amountOf(refund, true, 'ukendt beløb')}) `
        + `blev trukket, efter at abonnementet var ${status(withdrawnBecause.slice('subscription_'.length))}, da denne fornyelse ikke længere skulle betales. `
        + `Refundér ${refund.externalId} fra ordreskærmen eller hos ${providerName(refund.provider)}, medmindre kunden skal beholde fornyelsen; intet refunderes automatisk.`
      : `Betalt to gange: betalingen ${refund.externalId} (${provider(refund.provider)}, ${amountOf(refund, true, 'ukendt beløb')}) `
        + `blev trukket, efter at ordren var betalt eller lukket i butikken, selv om tjenesten havde bedt ${providerName(refund.provider)} om at annullere den. `
        + `Refundér ${refund.externalId} hos ${providerName(refund.provider)}, medmindre ordren skal beholde den i stedet; intet refunderes automatisk.`),
    agreementStopped: (v) => {
      const by = v.by === 'MERCHANT' ? 'butikken' : v.by === 'USER' ? 'kunden' : v.by === 'ADMIN' ? 'MobilePay, fordi kundens profil blev slettet'
        : 'MobilePay (det blev ikke oplyst hvem)';
      return `MobilePay-aftalen ${v.agreementId} blev stoppet af ${by}${v.by ? ` (${v.by})` : ''}.`;
    },
    paused: (v) => `Sat på pause indtil ${day(v.until)} af ${v.by}; næste betaling flyttes til ${time(v.nextPayment)}.`,
    pauseEnded: () => 'Pausen er slut.',
    pauseEndedPastEnd: () => 'Pausen er slut, men abonnementets slutdato er passeret, så det forbliver i bero.',
    forceActivated: (v) => `Aktivering gennemtvunget af ${v.by}.`,
  };
}
