import type { NoteLanguage } from '../shop/order-note-words';
import { statusLabel } from '../shop/status-labels';
import type { CardActionName } from './card-action-links';

/**
 * The card's own words, in the language the shop's staff see (WPLANG: Danish for `da_DK`, else English). The
 * statuses are WooCommerce's and Subscriptions' own names (their `wc_get_order_statuses()` and
 * `wcs_get_subscription_statuses()`, and those of their Danish translations).
 */
export interface CardWords {
  status(status: string): string;
  action(action: CardActionName): string;
  /** A saved card: `Visa •••• 4242, expires 10/27`. */
  card(card: { brand: string; last4: string; expires: string | null }): string;
  /** A card of the gateway's that WooCommerce holds no details of. */
  cardUnknown: string;
  /** A MobilePay agreement and its state at the wallet as the service last heard it. */
  wallet(state: 'active' | 'pending' | 'stopped' | 'unknown'): string;
  /** The failed renewal: which order, when, and why. */
  renewalFailed(v: { number: string; at: string; why: string }): string;
  nextAttempt(at: string): string;
  walletRetrying(until: string): string;
  deadline(at: string): string;
  nothingPlanned: string;
  /** The confirmation page's and its outcome page's words. */
  page: {
    confirmTitle(action: string, subscriptionId: number): string;
    confirm: string;
    pauseUntil: string;
    reasons: string;
    done(action: string, subscriptionId: number): string;
    refused: string;
    used: string;
    expired: string;
    altered: string;
    notStaff: string;
    unavailable: string;
  };
}

const STATUS_DA: Record<string, string> = {
  pending: 'Afventer betaling', processing: 'Behandles', 'on-hold': 'I bero', completed: 'Gennemført', cancelled: 'Annulleret',
  refunded: 'Refunderet', failed: 'Mislykket', active: 'Aktiv', expired: 'Udløbet', 'pending-cancel': 'Afventer annullering', switched: 'Skiftet',
};

const ENGLISH: CardWords = {
  status: statusLabel,
  action: (action) => ({ payment_link: 'Send payment link', pause: 'Pause', force_activate: 'Activate', cancellation_reason: 'Record cancellation reason' })[action],
  card: ({ brand, last4, expires }) => `${brand} •••• ${last4}${expires ? `, expires ${expires}` : ''}`,
  cardUnknown: 'Card (Frisbii)',
  wallet: (state) => ({ active: 'MobilePay, agreement active', pending: 'MobilePay, agreement awaiting approval', stopped: 'MobilePay, agreement stopped', unknown: 'MobilePay' })[state],
  renewalFailed: ({ number, at, why }) => `Renewal #${number} failed ${at}: ${why}`,
  nextAttempt: (at) => `Next attempt ${at}`,
  walletRetrying: (until) => `MobilePay tries again itself until ${until}`,
  deadline: (at) => `No more attempts; the customer can pay until ${at}`,
  nothingPlanned: 'Nothing more is planned',
  page: {
    confirmTitle: (action, id) => `${action}: subscription #${id}`,
    confirm: 'Confirm',
    pauseUntil: 'Paused until',
    reasons: 'Reasons',
    done: (action, id) => `Done: ${action}, subscription #${id}.`,
    refused: 'Not done',
    used: 'This link has been used. Open the card again for a new one.',
    expired: 'This link has expired. Open the card again for a new one.',
    altered: 'This link is not valid.',
    notStaff: 'You may not do this: your WordPress user lacks the shop staff capability.',
    unavailable: 'This cannot be done right now. Try again in a moment.',
  },
};

const DANISH: CardWords = {
  status: (status) => STATUS_DA[status] ?? status,
  action: (action) => ({ payment_link: 'Send betalingslink', pause: 'Sæt på pause', force_activate: 'Aktivér', cancellation_reason: 'Registrér opsigelsesårsag' })[action],
  card: ({ brand, last4, expires }) => `${brand} •••• ${last4}${expires ? `, udløber ${expires}` : ''}`,
  cardUnknown: 'Kort (Frisbii)',
  wallet: (state) => ({ active: 'MobilePay, aftalen er aktiv', pending: 'MobilePay, aftalen afventer godkendelse', stopped: 'MobilePay, aftalen er stoppet', unknown: 'MobilePay' })[state],
  renewalFailed: ({ number, at, why }) => `Fornyelse #${number} mislykkedes ${at}: ${why}`,
  nextAttempt: (at) => `Næste forsøg ${at}`,
  walletRetrying: (until) => `MobilePay prøver selv igen indtil ${until}`,
  deadline: (at) => `Ikke flere forsøg; kunden kan betale indtil ${at}`,
  nothingPlanned: 'Intet mere er planlagt',
  page: {
    confirmTitle: (action, id) => `${action}: abonnement #${id}`,
    confirm: 'Bekræft',
    pauseUntil: 'På pause indtil',
    reasons: 'Årsager',
    done: (action, id) => `Udført: ${action}, abonnement #${id}.`,
    refused: 'Ikke udført',
    used: 'Linket er brugt. Åbn kortet igen for et nyt.',
    expired: 'Linket er udløbet. Åbn kortet igen for et nyt.',
    altered: 'Linket er ikke gyldigt.',
    notStaff: 'Du må ikke gøre dette: din WordPress-bruger har ikke butikspersonalets rettighed.',
    unavailable: 'Det kan ikke gøres lige nu. Prøv igen om lidt.',
  },
};

export function cardWords(language: NoteLanguage): CardWords {
  return language === 'da' ? DANISH : ENGLISH;
}
