import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config';

// The dunning caps as read from the environment: within the card schemes' ceilings, or refused with the rule.

const caps = (env: Record<string, string>) => loadConfig({ DB_NAME: 'x', ...env }).dunning.caps;

test('Unset, the caps are 3 a day and 20 in 30 days', (t) => {
  t.deepEqual(caps({}), { perDay: 3, per30Days: 20 });
});

test('The schemes\' ceilings themselves are accepted: 10 a day (Mastercard), 20 in 30 days (Visa)', (t) => {
  t.deepEqual(caps({ DUNNING_MAX_CHARGES_PER_DAY: '10', DUNNING_MAX_CHARGES_PER_30_DAYS: '20' }), { perDay: 10, per30Days: 20 });
  t.deepEqual(caps({ DUNNING_MAX_CHARGES_PER_DAY: '1', DUNNING_MAX_CHARGES_PER_30_DAYS: '1' }), { perDay: 1, per30Days: 1 });
});

test('A cap above its scheme\'s ceiling is refused with the rule it breaks', (t) => {
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_DAY: '11' }), {
    instanceOf: ConfigError,
    message: 'DUNNING_MAX_CHARGES_PER_DAY must be at most 10: Mastercard allows 10 attempts per card in 24 hours',
  });
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_30_DAYS: '21' }), {
    instanceOf: ConfigError,
    message: 'DUNNING_MAX_CHARGES_PER_30_DAYS must be at most 20: Visa allows 20 reattempts per card in 30 days (since 19 May 2025)',
  });
  // What the old ranges let through (up to 100 and 1000) is refused the same way.
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_DAY: '100' }), { message: /^DUNNING_MAX_CHARGES_PER_DAY must be at most 10: Mastercard/ });
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_30_DAYS: '1000' }), { message: /^DUNNING_MAX_CHARGES_PER_30_DAYS must be at most 20: Visa/ });
});

test('A cap that is not a whole number from 1 is refused with the range, and the 30 days may not be fewer than a day', (t) => {
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_DAY: '0' }), { message: 'DUNNING_MAX_CHARGES_PER_DAY must be a whole number from 1 to 10' });
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_DAY: 'three' }), { message: 'DUNNING_MAX_CHARGES_PER_DAY must be a whole number from 1 to 10' });
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_30_DAYS: '-5' }), { message: 'DUNNING_MAX_CHARGES_PER_30_DAYS must be a whole number from 1 to 20' });
  t.throws(() => caps({ DUNNING_MAX_CHARGES_PER_DAY: '10', DUNNING_MAX_CHARGES_PER_30_DAYS: '9' }), {
    message: 'DUNNING_MAX_CHARGES_PER_30_DAYS must be at least DUNNING_MAX_CHARGES_PER_DAY',
  });
});
