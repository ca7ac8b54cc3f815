import test from 'ava';
import {
  CHARGE_REPEAT_WAIT_MS, LINK_RESEND_WAIT_MS, mayChargeNow, maySendPaymentLink, mayStopDunning, notAllowedMessage, staffActions, type StaffActionFacts,
} from '../../src/dunning/staff-actions';
import { shopTimeZone } from '../../src/shop/shop-time';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = new Date('2026-11-28T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const copenhagen = shopTimeZone('Europe/Copenhagen', undefined);

/** An open case whose renewal may be charged now: on hold, a payment method, nothing under way, no charges counted. */
const facts = (over: Partial<StaffActionFacts> = {}): StaffActionFacts => ({
  now, caseOpen: true, attemptInProgress: false, orderAwaitsPayment: true, subscriptionOnHold: true, providerConfigured: true, hasPaymentMethod: true,
  chargeUnderWay: null, chargesOnMethod: [], caps: { perDay: 3, per30Days: 20 }, companionSendsEmail: true, lastLinkSentAt: null, lastChargeAt: null,
  ...over,
});

test('An open case with nothing in the way allows all three actions', (t) => {
  t.deepEqual(staffActions(facts()), { charge_now: { allowed: true }, payment_link: { allowed: true }, stop_dunning: { allowed: true } });
});

test('A closed case allows nothing, whatever else holds', (t) => {
  const closed = staffActions(facts({ caseOpen: false, attemptInProgress: true, chargesOnMethod: [ago(HOUR), ago(HOUR), ago(HOUR)] }));
  t.deepEqual(closed, {
    charge_now: { allowed: false, reason: 'case_closed' }, payment_link: { allowed: false, reason: 'case_closed' }, stop_dunning: { allowed: false, reason: 'case_closed' },
  });
});

test('The day\'s cap: a fourth charge within 24 h is refused until the oldest of the three is a day old', (t) => {
  const charges = [ago(10 * HOUR), ago(5 * HOUR), ago(HOUR)];
  t.deepEqual(mayChargeNow(facts({ chargesOnMethod: charges })), { allowed: false, reason: 'daily_cap', notBefore: new Date(charges[0].getTime() + DAY) });
  t.deepEqual(mayChargeNow(facts({ chargesOnMethod: [ago(DAY + 1), ago(5 * HOUR), ago(HOUR)] })), { allowed: true }, 'one of them left the day');
  t.deepEqual(mayStopDunning(facts({ chargesOnMethod: charges })), { allowed: true }, 'the caps hold charges only');
});

test('The 30 days\' cap: 20 charges in 30 days refuse the next until the oldest has left the window, and say it is the monthly cap', (t) => {
  const charges = Array.from({ length: 20 }, (_, i) => ago((29 - i) * DAY + 2 * HOUR));
  const permission = mayChargeNow(facts({ chargesOnMethod: charges }));
  t.deepEqual(permission, { allowed: false, reason: 'monthly_cap', notBefore: new Date(charges[0].getTime() + 30 * DAY) });
});

test('Both caps at once: the day\'s is named, and the time is when both allow a charge', (t) => {
  const charges = [...Array.from({ length: 17 }, (_, i) => ago((29 - i) * DAY)), ago(3 * HOUR), ago(2 * HOUR), ago(HOUR)];
  const permission = mayChargeNow(facts({ chargesOnMethod: charges }));
  t.like(permission, { allowed: false, reason: 'daily_cap' });
  t.deepEqual((permission as { notBefore: Date }).notBefore, new Date(charges[0].getTime() + 30 * DAY), 'the 30 days\' window frees a place later than the day\'s');
});

test('The wallet still retrying its own charge: no charge on top until its window ends; a charge pending elsewhere and an unreadable provider refuse too', (t) => {
  const until = new Date('2026-11-30T00:00:00Z');
  t.deepEqual(mayChargeNow(facts({ chargeUnderWay: { kind: 'wallet_retrying', until } })), { allowed: false, reason: 'wallet_charge_under_way', notBefore: until });
  t.deepEqual(mayChargeNow(facts({ chargeUnderWay: { kind: 'pending', until } })), { allowed: false, reason: 'charge_under_way', notBefore: until });
  t.deepEqual(mayChargeNow(facts({ chargeUnderWay: { kind: 'unreadable' } })), { allowed: false, reason: 'provider_unreachable' });
  t.deepEqual(maySendPaymentLink(facts({ chargeUnderWay: { kind: 'wallet_retrying', until } })), { allowed: true }, 'the customer can still be sent the link');
});

test('An attempt being made refuses a charge and a stop (its charge could still be taken); the link can still go', (t) => {
  const busy = staffActions(facts({ attemptInProgress: true }));
  t.deepEqual(busy.charge_now, { allowed: false, reason: 'charge_under_way' });
  t.deepEqual(busy.stop_dunning, { allowed: false, reason: 'charge_under_way' });
  t.deepEqual(busy.payment_link, { allowed: true });
});

test('Charge now wants the renewal awaiting payment, its subscription on hold, the provider set up and a payment method, in that order', (t) => {
  t.like(mayChargeNow(facts({ providerConfigured: false, orderAwaitsPayment: false })), { reason: 'provider_not_configured' });
  t.like(mayChargeNow(facts({ orderAwaitsPayment: false, subscriptionOnHold: false })), { reason: 'order_not_awaiting_payment' });
  t.like(mayChargeNow(facts({ subscriptionOnHold: false, hasPaymentMethod: false })), { reason: 'subscription_not_on_hold' });
  t.like(mayChargeNow(facts({ hasPaymentMethod: false })), { reason: 'no_payment_method' });
});

test('A second click within a minute of a charge, or within five minutes of a link, is the same click: refused, and says when it is possible again', (t) => {
  t.deepEqual(mayChargeNow(facts({ lastChargeAt: ago(10_000) })), { allowed: false, reason: 'charge_just_made', notBefore: new Date(now.getTime() - 10_000 + CHARGE_REPEAT_WAIT_MS) });
  t.deepEqual(mayChargeNow(facts({ lastChargeAt: ago(CHARGE_REPEAT_WAIT_MS) })), { allowed: true });
  t.deepEqual(maySendPaymentLink(facts({ lastLinkSentAt: ago(HOUR / 60) })), { allowed: false, reason: 'link_just_sent', notBefore: new Date(now.getTime() - HOUR / 60 + LINK_RESEND_WAIT_MS) });
  t.deepEqual(maySendPaymentLink(facts({ lastLinkSentAt: ago(LINK_RESEND_WAIT_MS) })), { allowed: true });
});

test('The payment link needs WooCommerce to send it (the companion plugin)', (t) => {
  t.deepEqual(maySendPaymentLink(facts({ companionSendsEmail: false })), { allowed: false, reason: 'companion_required' });
});

test('The refusal in words says why and when, in the shop\'s time with its offset', (t) => {
  const message = notAllowedMessage('charge_now', { allowed: false, reason: 'daily_cap', notBefore: new Date('2026-11-28T21:51:00Z') }, copenhagen);
  t.is(message, 'The renewal cannot be charged now: the payment method has been charged as often today as the card schemes allow. It is possible from 2026-11-28 22:51 (UTC+01:00).');
  t.is(notAllowedMessage('stop_dunning', { allowed: false, reason: 'case_closed' }, copenhagen),
    'Dunning cannot be stopped now: the failed renewal has been dealt with already (paid, or dunning has ended).');
});
