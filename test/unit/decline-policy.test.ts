import test from 'ava';
import { decideOnDecline, earliestWithinCaps, isLackOfFunds, waitsForAmountChange, WALLET_CREATION_REFUSED } from '../../src/dunning/decline-policy';
import { walletRetryWindowEnd } from '../../src/dunning/charge-rules/mobile-wallet-charges';

const card = (state: string | null, code: string | null = null) => decideOnDecline('card_gateway', { code, state });
const wallet = (reason: string | null) => decideOnDecline('mobile_wallet', { code: reason, state: null });

test('A soft decline goes on the dunning plan', (t) => {
  t.like(card('soft_declined', 'insufficient_funds'), { policy: 'retry', plan: 'soft', reason: 'soft_declined', customerReason: null });
  t.like(card(null, 'settle_blocked'), { policy: 'retry', plan: 'soft', reason: 'soft_declined' }, 'a code alone names its state');
});

test('A processing error goes on the short processing plan', (t) => {
  for (const code of ['acquirer_communication_error', 'acquirer_error', 'acquirer_integration_error', 'acquirer_authentication_error', 'acquirer_configuration_error', 'acquirer_rejected_error']) {
    t.like(card('processing_error', code), { policy: 'retry_soon', plan: 'processing', reason: 'processing_error' }, code);
    t.like(card(null, code), { policy: 'retry_soon', plan: 'processing' }, `${code} without its state`);
  }
});

test('A hard decline, whatever its error, is never retried on that card: the customer is asked', (t) => {
  for (const code of ['credit_card_expired', 'declined_by_acquirer', 'credit_card_lost_or_stolen', 'credit_card_suspected_fraud', 'authorization_expired',
    'authorization_amount_exceeded', 'authorization_voided', 'sca_required', 'risk_filter_block', 'fraud_block', 'emv_token_deleted', 'emv_token_suspended', 'something_new', null]) {
    t.like(card('hard_declined', code), { policy: 'ask_customer', plan: null, reason: 'hard_declined' }, String(code));
  }
  t.is(card('hard_declined', 'credit_card_expired').customerReason, 'card_expired');
  t.is(card('hard_declined', 'declined_by_acquirer').customerReason, 'card_declined');
  t.like(card(null, 'credit_card_lost_or_stolen'), { policy: 'ask_customer' }, 'a hard code alone is hard');
});

test('Error 147 (the payment method is in failed state) asks the customer', (t) => {
  t.like(card('hard_declined', '147'), { policy: 'ask_customer', plan: null, reason: 'hard_declined', customerReason: 'card_declined' });
  t.like(card(null, '147'), { policy: 'ask_customer', reason: 'payment_method_failed' });
});

test('A decline the policy does not know goes on the dunning plan, bounded by the plan and the caps', (t) => {
  t.like(card(null, null), { policy: 'retry', plan: 'soft', reason: 'unknown' });
  t.like(card('pending', 'whatever'), { policy: 'retry', plan: 'soft', reason: 'pending' });
});

test("The wallet's reasons: what the customer fixes in the app is charged again on the same agreement on the plan; its technical error soon", (t) => {
  t.like(wallet('user_action_required'), { policy: 'retry', plan: 'soft', reason: 'user_action_required', customerReason: null });
  t.like(wallet('charge_amount_too_high'), { policy: 'retry', plan: 'soft', reason: 'charge_amount_too_high', customerReason: null });
  t.like(wallet('non_technical_error'), { policy: 'retry', plan: 'soft', reason: 'non_technical_error', customerReason: null });
  t.like(wallet('no_agreement'), { policy: 'ask_customer', plan: null, customerReason: 'wallet_unavailable' });
  t.like(wallet('technical_error'), { policy: 'retry_soon', plan: 'processing', reason: 'technical_error' });
  t.like(wallet(null), { policy: 'retry', plan: 'soft', reason: 'unknown' });
});

test("The wallet's refusal to create a charge above the agreement's maximum asks the customer at once, and waits for a change", (t) => {
  const refused = { code: 'charge_amount_too_high', state: WALLET_CREATION_REFUSED };
  t.like(decideOnDecline('mobile_wallet', refused), { policy: 'ask_customer', plan: null, reason: 'charge_amount_too_high', customerReason: 'wallet_amount_too_high' });
  t.true(waitsForAmountChange('mobile_wallet', refused));
  t.false(waitsForAmountChange('mobile_wallet', { code: 'charge_amount_too_high', state: null }), 'a FAILED charge the wallet showed in the app');
  t.false(waitsForAmountChange('card_gateway', refused));
});

const at = (text: string) => new Date(`${text}Z`);
const caps = { perDay: 3, per30Days: 20 };

test('Caps: under the limits an attempt keeps its time', (t) => {
  t.deepEqual(earliestWithinCaps(at('2026-11-20T12:00:00'), [], caps), at('2026-11-20T12:00:00'));
  t.deepEqual(earliestWithinCaps(at('2026-11-20T12:00:00'), [at('2026-11-20T08:00:00'), at('2026-11-20T10:00:00')], caps), at('2026-11-20T12:00:00'));
});

test('Caps: a fourth charge in a day waits until the oldest of the three is a day old', (t) => {
  const charges = [at('2026-11-20T08:00:00'), at('2026-11-20T09:00:00'), at('2026-11-20T10:00:00')];
  t.deepEqual(earliestWithinCaps(at('2026-11-20T12:00:00'), charges, caps), at('2026-11-21T08:00:00'));
  t.deepEqual(earliestWithinCaps(at('2026-11-21T08:00:00.001'), charges, caps), at('2026-11-21T08:00:00.001'), 'already past it');
});

test('Caps: the 30-day cap holds across plans and sources, and both caps hold together', (t) => {
  // 20 charges, one a day over the last 20 days, whoever made them.
  const charges = Array.from({ length: 20 }, (_, i) => new Date(at('2026-11-01T06:00:00').getTime() + i * 86_400_000));
  const next = earliestWithinCaps(at('2026-11-21T06:00:00'), charges, caps);
  t.deepEqual(next, at('2026-12-01T06:00:00'), 'when the first of the 20 is 30 days old');
  t.deepEqual(earliestWithinCaps(at('2026-11-21T06:00:00'), charges, { perDay: 3, per30Days: 21 }), at('2026-11-21T06:00:00'));
  // Three the same day as the 30-day cap frees: the day's cap moves it on again.
  const crowded = [...charges.slice(1), at('2026-12-01T05:00:00'), at('2026-12-01T05:30:00')];
  t.deepEqual(earliestWithinCaps(at('2026-12-01T06:00:00'), crowded, { perDay: 2, per30Days: 22 }), at('2026-12-02T05:00:00'), 'the day binds');
  t.deepEqual(earliestWithinCaps(at('2026-12-01T06:00:00'), crowded, { perDay: 2, per30Days: 21 }), at('2026-12-02T06:00:00'), 'then the 30 days bind');
});

test("The wallet's own retry window ends the day after its last retry day", (t) => {
  const now = at('2026-11-20T12:00:00');
  t.deepEqual(walletRetryWindowEnd({ due: '2026-11-22', retryDays: 4 }, now), at('2026-11-27T00:00:00'));
  t.deepEqual(walletRetryWindowEnd({ due: '2026-11-22', retryDays: 0 }, now), at('2026-11-23T00:00:00'));
  t.deepEqual(walletRetryWindowEnd({ due: undefined, retryDays: 4 }, now), at('2026-11-21T12:00:00'), 'unknown: looked at again in a day');
  t.deepEqual(walletRetryWindowEnd({ due: '2026-11-01', retryDays: 2 }, now), at('2026-11-21T12:00:00'), 'a window already over: in a day');
});

test('Lack of funds, which payday may cure: the card\'s insufficient_funds or a bare soft decline, the wallet\'s user_action_required; never a hard decline', (t) => {
  t.true(isLackOfFunds('card_gateway', { code: 'insufficient_funds', state: 'soft_declined' }));
  t.true(isLackOfFunds('card_gateway', { code: 'insufficient_funds', state: null }));
  t.true(isLackOfFunds('card_gateway', { code: null, state: 'soft_declined' }));
  t.false(isLackOfFunds('card_gateway', { code: 'settle_blocked', state: 'soft_declined' }));
  t.false(isLackOfFunds('card_gateway', { code: 'insufficient_funds', state: 'hard_declined' }));
  t.false(isLackOfFunds('card_gateway', { code: 'credit_card_expired', state: 'hard_declined' }));
  t.false(isLackOfFunds('card_gateway', { code: 'acquirer_error', state: 'processing_error' }));
  t.true(isLackOfFunds('mobile_wallet', { code: 'user_action_required', state: null }));
  t.true(isLackOfFunds('mobile_wallet', { code: 'insufficient_funds', state: null }));
  t.false(isLackOfFunds('mobile_wallet', { code: 'technical_error', state: null }));
  t.false(isLackOfFunds('mobile_wallet', { code: 'no_agreement', state: null }));
});
