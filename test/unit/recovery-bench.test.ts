import test from 'ava';
import { capBreaches, MODEL_NOTICE, runRecoveryModel } from '../../bench/recovery-model';

// The recovery benchmark's model (bench/recovery-model.ts, `npm run bench:recovery`), on a small year.

test('Given a small synthetic year, When the model runs, Then it reports the three plans, none breaches the caps, and it says it is a model', (t) => {
  const result = runRecoveryModel({ count: 400, seed: 7 });
  t.deepEqual(result.plans.map((plan) => plan.plan.name), ['baseline', 'stripe-like', 'service']);
  for (const plan of result.plans) {
    t.is(plan.capBreaches, 0, plan.plan.name);
    t.true(plan.recoveredShare > 0 && plan.recoveredShare <= 1, plan.plan.name);
    t.true(plan.attemptsPerRecovery > 0, plan.plan.name);
  }
  t.true(result.text.startsWith(MODEL_NOTICE));
  for (const name of ['| baseline |', '| stripe-like |', '| service |', '| Assumption | Value | Source |']) t.true(result.text.includes(name), name);
  t.true(result.assumptions.every((row) => row.source.length > 0));
});

test('Given the same seed, When the model runs twice, Then it prints the same tables (a pinned clock, a seeded generator)', (t) => {
  t.is(runRecoveryModel({ count: 200, seed: 3 }).text, runRecoveryModel({ count: 200, seed: 3 }).text);
});

test('The breach count is independent of earliestWithinCaps: a fourth charge within a day is counted', (t) => {
  const hour = 3_600_000;
  t.is(capBreaches([0, hour, 2 * hour], { perDay: 3, per30Days: 20 }), 0);
  t.is(capBreaches([0, hour, 2 * hour, 3 * hour], { perDay: 3, per30Days: 20 }), 1);
  t.is(capBreaches([0, hour, 2 * hour, 24 * hour + 1], { perDay: 3, per30Days: 20 }), 0);
});
