import test from 'ava';
import { noteLanguage, orderNoteWords } from '../../src/shop/order-note-words';
import { shopTimeZone } from '../../src/shop/shop-time';

const copenhagen = shopTimeZone('Europe/Copenhagen', '0');
const english = orderNoteWords({ language: 'en_US', timeZone: copenhagen });
const danish = orderNoteWords({ language: 'da_DK', timeZone: copenhagen });
const caps = { perDay: 3, per30Days: 20 };
// 21:51 UTC is 22:51 in Copenhagen in November (UTC+1).
const retryAt = new Date('2026-11-28T21:51:00Z');
const insufficient = { code: 'insufficient_funds', state: 'soft_declined' };

test("WordPress's WPLANG picks the language: Danish for da_DK, English for anything else (empty is en_US)", (t) => {
  t.is(noteLanguage('da_DK'), 'da');
  t.is(noteLanguage('da'), 'da');
  t.is(noteLanguage(''), 'en');
  t.is(noteLanguage('en_GB'), 'en');
  t.is(noteLanguage('de_DE'), 'en', 'a language without words of its own reads English');
  t.is(noteLanguage('dav_KE'), 'en', 'only Danish itself');
});

test('A retry in words, in English and in Danish: the reason, its code only in parentheses, the shop-local time', (t) => {
  const next = { kind: 'retry' as const, attempt: 1, of: 5, at: retryAt, plannedFor: retryAt, caps };
  t.is(english.dunning({ provider: 'card_gateway', decline: insufficient, next }),
    'Payment failed: not enough money on the card (insufficient_funds). We try again on 28 November 2026 at 22:51 (attempt 1 of 5).');
  t.is(danish.dunning({ provider: 'card_gateway', decline: insufficient, next }),
    'Betalingen mislykkedes: ikke penge nok på kortet (insufficient_funds). Vi prøver igen 28. november 2026 kl. 22:51 (forsøg 1 af 5).');
});

test("No UTC, no setting's name, no decline state in the main text", (t) => {
  const planned = new Date('2026-11-28T09:00:00Z');
  for (const words of [english, danish]) {
    const note = words.dunning({ provider: 'card_gateway', decline: insufficient, next: { kind: 'retry', attempt: 2, of: 3, at: retryAt, plannedFor: planned, caps } });
    t.notRegex(note, /UTC|GMT|DUNNING_|soft_declined/, note);
    t.regex(note, /\(insufficient_funds\)/, 'the code stays, as a detail');
    t.true(note.includes(words.time(planned)), 'a move by the caps says when it was planned');
  }
});

test('The time zone is the shop\'s: summer time, a fixed offset, and the day it falls on there', (t) => {
  t.is(english.time(new Date('2026-07-01T10:05:00Z')), '1 July 2026 at 12:05');
  // 23:30 UTC is already the next day in Copenhagen.
  t.is(danish.time(new Date('2026-12-11T23:30:00Z')), '12. december 2026 kl. 00:30');
  const minusThree = orderNoteWords({ language: '', timeZone: shopTimeZone('', '-3') });
  t.is(minusThree.time(new Date('2026-12-12T01:00:00Z')), '11 December 2026 at 22:00');
  t.is(english.day('2026-12-12'), '12 December 2026');
  t.is(danish.day('2026-12-12'), '12. december 2026');
});

test('Card codes, card states and wallet reasons in words, in both languages; a code they do not know keeps the code and the provider\'s sentence', (t) => {
  t.deepEqual(english.decline('card_gateway', { code: 'credit_card_lost_or_stolen', state: 'hard_declined' }),
    { words: 'the card was reported lost or stolen', detail: 'credit_card_lost_or_stolen' });
  t.deepEqual(danish.decline('card_gateway', { code: 'credit_card_lost_or_stolen', state: 'hard_declined' }),
    { words: 'kortet er meldt mistet eller stjålet', detail: 'credit_card_lost_or_stolen' });
  t.deepEqual(english.decline('card_gateway', { code: null, state: 'processing_error' }),
    { words: 'a technical error between Frisbii and the bank', detail: 'processing_error' });
  t.deepEqual(english.decline('card_gateway', { code: 'something_new', state: 'soft_declined', description: 'Something new happened' }),
    { words: 'the card was declined for now', detail: 'something_new: Something new happened' });
  t.deepEqual(english.decline('card_gateway', { code: 'constructor', state: null }), { words: 'the card was declined', detail: 'constructor' });
  t.deepEqual(danish.decline('mobile_wallet', { code: 'user_action_required', state: null }),
    { words: 'kunden skal gøre noget i MobilePay-appen', detail: 'user_action_required' });
  t.deepEqual(english.decline('mobile_wallet', { code: null, state: null }), { words: 'MobilePay declined the payment', detail: null });
  t.is(english.provider('card_gateway'), 'Card (Frisbii)');
  t.is(danish.provider('card_gateway'), 'Kort (Frisbii)');
  t.is(danish.provider('mobile_wallet'), 'MobilePay');
});

test('A payment that failed, as handed to WooCommerce with the order\'s move to failed', (t) => {
  t.is(english.paymentFailed({ reference: 'order-12', provider: 'card_gateway', decline: { ...insufficient, description: 'Insufficient funds' } }),
    'Payment order-12 failed: not enough money on the card (insufficient_funds).');
  t.is(danish.paymentFailed({ reference: 'order-12', provider: 'card_gateway', decline: insufficient }),
    'Betalingen order-12 mislykkedes: ikke penge nok på kortet (insufficient_funds).');
});

test('Only the customer can fix it: the customer e-mailed, and the deadline in the shop\'s time', (t) => {
  const deadline = new Date('2026-12-12T21:51:00Z');
  const decline = { code: 'credit_card_expired', state: 'hard_declined' };
  const next = { kind: 'ask_customer' as const, because: 'not_charged_again' as const, planLength: 0, customer: { kind: 'emailed' as const, deadline } };
  t.is(english.dunning({ provider: 'card_gateway', decline, next }),
    'Payment failed: the card has expired (credit_card_expired). This payment method is not charged again. '
    + 'The customer is e-mailed a link to add a new payment method. The subscription is cancelled on 12 December 2026 at 22:51 unless the renewal is paid.');
  t.is(danish.dunning({ provider: 'card_gateway', decline, next }),
    'Betalingen mislykkedes: kortet er udløbet (credit_card_expired). Der trækkes ikke igen på denne betalingsmetode. '
    + 'Kunden får en e-mail med et link til at tilføje en ny betalingsmetode. Abonnementet annulleres 12. december 2026 kl. 22:51, medmindre fornyelsen bliver betalt.');
  const usedUp = english.dunning({ provider: 'mobile_wallet', decline: { code: 'user_action_required', state: null },
    next: { kind: 'ask_customer', because: 'plan_used_up', planLength: 5, customer: { kind: 'asked_before', askedAt: new Date('2026-11-20T08:00:00Z'), deadline } } });
  t.is(usedUp, 'Payment failed: the customer has to act in the MobilePay app (user_action_required). All 5 planned attempts have been made. '
    + 'The customer was asked for a new payment method on 20 November 2026 at 09:00; the subscription is still cancelled on 12 December 2026 at 22:51 unless the renewal is paid.');
});

test("The service's other notes, each in Danish for a Danish shop", (t) => {
  const at = new Date('2026-11-23T08:00:07Z');
  t.is(danish.paymentReceived({ reference: 'order-7', captured: true, at }), 'Betalingen order-7 blev trukket 23. november 2026 kl. 09:00.');
  t.is(english.paymentReceived({ reference: 'order-7', captured: false, at: null }), 'Payment order-7 was reserved.');
  t.is(danish.newMethodCharged({ method: 'ca_1', at }), 'En ny betalingsmetode er gemt (ca_1): fornyelsen trækkes på den nye betalingsmetode 23. november 2026 kl. 09:00, én gang.');
  t.is(danish.noRetry({ subscriptionStatus: 'cancelled' }), 'Der er ikke planlagt et nyt betalingsforsøg: abonnementet er annulleret.');
  t.is(english.noRetry({ subscriptionStatus: null }), 'No new payment attempt is planned: the subscription no longer exists.');
  t.is(danish.dunningEnded({ deadline: at, renewalOrderId: 41, subscription: 'cancelled' }),
    'Rykkerforløbet sluttede ubetalt: ingen ny betalingsmetode senest 23. november 2026 kl. 09:00 for fornyelsesordre #41. Abonnementet annulleres.');
  t.is(danish.paused({ until: '2026-12-12', by: 'Anna Holm (anna)', nextPayment: new Date('2026-12-13T08:30:00Z') }),
    'Sat på pause indtil 12. december 2026 af Anna Holm (anna); næste betaling flyttes til 13. december 2026 kl. 09:30.');
  t.is(danish.chargeCancelled({ provider: 'mobile_wallet', reference: 'chr-1', paidBy: { kind: 'shop', orderStatus: 'processing' } }),
    'Trækket chr-1 (MobilePay) blev annulleret, før det blev gennemført: fornyelsen var allerede betalt i butikken (ordren er under behandling).');
  t.is(danish.secondCapture({
    refund: { provider: 'card_gateway', externalId: 'inv-2', amountMinor: 9900, currency: 'DKK' },
    kept: { provider: 'mobile_wallet', externalId: 'chr-1', amountMinor: 9900, currency: 'DKK' },
  }), 'Betalt to gange: betalingen inv-2 (Kort (Frisbii), 99,00 DKK) blev trukket, efter at betalingen chr-1 (MobilePay, 99,00 DKK) allerede havde betalt ordren. '
    + 'Refundér inv-2, den seneste, hos Frisbii; intet refunderes automatisk.');
  t.is(english.agreementStopped({ agreementId: 'agr-1', by: 'USER' }), 'The MobilePay agreement agr-1 was stopped by the customer (USER).');
  t.is(danish.forceActivated({ by: 'Anna Holm (anna)' }), 'Aktivering gennemtvunget af Anna Holm (anna).');
});

test("Staff's actions on a failed renewal in words, naming the staff member, in English and in Danish", (t) => {
  const declined = { kind: 'declined' as const, decline: insufficient };
  t.is(english.staffCharged({ by: 'Petra Panel', attempt: 2, provider: 'card_gateway', outcome: declined }),
    'Petra Panel charged the renewal now (attempt 2): declined, not enough money on the card (insufficient_funds). The planned attempts stay as they were.');
  t.is(danish.staffCharged({ by: 'Petra Panel', attempt: 2, provider: 'card_gateway', outcome: declined }),
    'Petra Panel trak betalingen for fornyelsen nu (forsøg 2): afvist, ikke penge nok på kortet (insufficient_funds). De planlagte forsøg står ved magt.');
  t.is(english.staffCharged({ by: 'Petra Panel', attempt: 3, provider: 'mobile_wallet', outcome: { kind: 'pending' } }),
    'Petra Panel charged the renewal now (attempt 3): MobilePay has the charge and confirms it later.');
  t.is(english.chargeCancelled({ provider: 'mobile_wallet', reference: 'chr-1', paidBy: { kind: 'dunning_stopped', by: 'Petra Panel' } }),
    'Charge chr-1 (MobilePay) was cancelled before it was taken: Petra Panel stopped dunning of this renewal.');
  for (const words of [english, danish]) {
    for (const note of [words.staffSentPaymentLink({ by: 'Petra Panel' }), words.staffStoppedDunning({ by: 'Petra Panel' })]) t.true(note.startsWith('Petra Panel '), note);
  }
});

test('A payday attempt in words: why it is planned when it is, before the plan\'s next or besides the used-up plan', (t) => {
  const payday = new Date('2026-11-29T23:15:00Z');
  const next = { kind: 'payday' as const, at: payday, plannedFor: payday, caps, planUsedUp: null };
  t.is(english.dunning({ provider: 'card_gateway', decline: insufficient, next }),
    'Payment failed: not enough money on the card (insufficient_funds). We try again on 30 November 2026 at 00:15, early on the first bank day from payday, '
    + 'as the decline was for lack of funds. The plan\'s next attempt follows if it fails.');
  t.is(danish.dunning({ provider: 'card_gateway', decline: insufficient, next }),
    'Betalingen mislykkedes: ikke penge nok på kortet (insufficient_funds). Vi prøver igen 30. november 2026 kl. 00:15, tidligt på den første bankdag fra lønningsdagen, '
    + 'fordi afvisningen skyldtes manglende dækning. Planens næste forsøg følger, hvis det mislykkes.');
  const deadline = new Date('2026-12-11T07:00:00Z');
  const usedUp = { ...next, planUsedUp: { planLength: 5, customer: { kind: 'emailed' as const, deadline } } };
  t.regex(english.dunning({ provider: 'card_gateway', decline: insufficient, next: usedUp }),
    /for lack of funds\. All 5 planned attempts have been made; this one is besides them\. The customer is e-mailed a link/);
  const moved = danish.dunning({ provider: 'card_gateway', decline: insufficient, next: { ...next, at: new Date('2026-11-30T09:00:00Z') } });
  t.true(moved.includes(`Det er senere end lønningsdagens morgen (${danish.time(payday)})`), moved);
});
