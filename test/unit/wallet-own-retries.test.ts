import test from 'ava';
import { decideOnDecline } from '../../src/dunning/decline-policy';
import { walletRetryDays, walletRetryDaysWanted, walletRetryWindowEnd, WALLET_MAX_RETRY_DAYS } from '../../src/dunning/charge-rules/mobile-wallet-charges';
import { walletChargeBody } from '../../src/payments/charge-ledger';
import { walletFailureState } from '../../src/payments/providers/mobile-wallet/client';

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);

test('retryDays: an attempt of the plan asks for the wallet\'s whole window (14 days), any other attempt for 2', (t) => {
  t.is(walletRetryDaysWanted('soft'), WALLET_MAX_RETRY_DAYS);
  t.is(walletRetryDaysWanted('payday'), WALLET_MAX_RETRY_DAYS);
  for (const plan of ['staff', 'processing', 'new_method'] as const) t.is(walletRetryDaysWanted(plan), 2, plan);
  t.is(walletRetryDays('2026-11-25', 14, null), 14);
  // Due 2026-11-25 with 14 days of retries: the outcome is final after 00:00 UTC on 2026-12-10.
  t.is(walletRetryWindowEnd({ due: '2026-11-25', retryDays: 14 }, at('2026-11-23T20:00:00Z')).toISOString(), '2026-12-10T00:00:00.000Z');
  t.is(walletRetryDays('2026-11-25', 30, null), WALLET_MAX_RETRY_DAYS, 'never above 14 (the wallet refuses more)');
  t.is(walletRetryDays('2026-11-25', 2, null), 2);
});

test('retryDays: never past the case\'s deadline, down to 0', (t) => {
  t.is(walletRetryDays('2026-11-25', 14, at('2026-12-01T09:00:00Z')), 5, 'the window ends by the deadline');
  t.true(walletRetryWindowEnd({ due: '2026-11-25', retryDays: 5 }, at('2026-11-23T00:00:00Z')).getTime() <= Date.parse('2026-12-01T09:00:00Z'));
  t.is(walletRetryDays('2026-11-25', 14, at('2026-11-27T00:00:00Z')), 1, 'the deadline binds');
  t.is(walletRetryDays('2026-11-25', 2, at('2026-11-25T12:00:00Z')), 0, 'a deadline on the due day leaves one day of tries');
  t.is(walletRetryDays('2026-11-25', 2, at('2026-11-20T00:00:00Z')), 0);
  t.is(walletRetryDays('2026-11-25', 14, new Date(Date.parse('2026-11-25T00:00:00Z') + 40 * DAY)), 14);
});

test('The request body: one charge the wallet retries, or, for a charge written before, one attempt as first sent', (t) => {
  const charge = { amountMinor: 9900, description: 'Renewal order 1001', due: '2026-11-25', externalId: 'abcd1234-retry-1-1' };
  t.deepEqual(walletChargeBody({ ...charge, retryDays: 4 }), {
    amount: 9900, description: 'Renewal order 1001', transactionType: 'DIRECT_CAPTURE', due: '2026-11-25', type: 'RECURRING', orderId: 'abcd1234-retry-1-1',
    retryDays: 4, processingMode: 'MULTIPLE_ATTEMPTS',
  });
  t.like(walletChargeBody({ ...charge, retryDays: null }), { retryDays: 0, processingMode: 'SINGLE_ATTEMPT' });
});

test('A wallet charge FAILED after the wallet\'s own retries is final: the customer is asked, the agreement not charged again for the same reason', (t) => {
  t.is(walletFailureState({ retryDays: 4 }), 'wallet_retried');
  t.is(walletFailureState({ retryDays: 0 }), null);
  t.is(walletFailureState({}), null);
  const retried = (code: string | null) => decideOnDecline('mobile_wallet', { code, state: 'wallet_retried' });
  t.like(retried('user_action_required'), { policy: 'ask_customer', plan: null, reason: 'user_action_required', customerReason: 'wallet_action_required' });
  t.like(retried('charge_amount_too_high'), { policy: 'ask_customer', plan: null, customerReason: 'wallet_amount_too_high' });
  t.like(retried('non_technical_error'), { policy: 'ask_customer', plan: null, customerReason: 'wallet_unavailable' });
  t.like(retried(null), { policy: 'ask_customer', plan: null, reason: 'unknown', customerReason: 'wallet_unavailable' });
  t.like(retried('technical_error'), { policy: 'retry_soon', plan: 'processing' }, 'the wallet\'s own fault');
  // Tried once (retryDays 0, e.g. the shop plugin's charge): the agreement is charged again on the plan, as before.
  t.like(decideOnDecline('mobile_wallet', { code: 'user_action_required', state: null }), { policy: 'retry', plan: 'soft' });
});
