import { MODEL_NOTICE, runRecoveryModel } from './recovery-model';

/**
 * `npm run bench:recovery` (issue 45): a year of synthetic failed renewals through the service's own decision code, on
 * the baseline, a Stripe-like plan and the service's; see bench/recovery-model.ts. RECOVERY_COUNT (default 10000)
 * and RECOVERY_SEED (default 45) change the year; nothing else is read, so the same run prints the same tables. It
 * exits non-zero when any plan breaches the caps.
 */
function main(): void {
  const count = Number(process.env.RECOVERY_COUNT ?? 10_000);
  const seed = Number(process.env.RECOVERY_SEED ?? 45);
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
    process.stderr.write('bench:recovery: RECOVERY_COUNT must be a whole number from 1, RECOVERY_SEED a whole number\n');
    process.exit(2);
  }
  const result = runRecoveryModel({ count, seed });
  process.stdout.write(result.text);
  const breached = result.plans.filter((plan) => plan.capBreaches !== 0);
  if (breached.length) {
    process.stderr.write(`bench:recovery: cap breaches in ${breached.map((plan) => `${plan.plan.name} (${plan.capBreaches})`).join(', ')}: must be 0\n`);
    process.exit(1);
  }
  if (!result.text.startsWith(MODEL_NOTICE)) process.exit(1);
}

main();
