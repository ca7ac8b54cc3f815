import test from 'ava';
import { loadConfig } from '../../src/config';
import { BASELINE_PLAN_SECONDS, holdoutArm, holdoutPosition } from '../../src/dunning/holdout';
import { armShare, shareDifference, shareText, Z_95 } from '../../src/dunning/recovered-share';
import { reportDocument } from '../../src/dunning/dunning-report.use-case';
import type { ArmShareSums, DunningPeriodFigures } from '../../src/data-access/dunning-case-report-repository';

// The holdout's assignment (DUNNING_HOLDOUT_PERCENT) and the recovered share's difference and 95% interval.

const SITE = 'https://shop.example.dk';

test('Given a renewal, When its arm is decided again and again, Then it is the same each time, and the same whatever the URL\'s trailing slash or case', (t) => {
  for (let order = 1; order <= 500; order += 1) {
    const arm = holdoutArm(SITE, order, 10);
    for (let again = 0; again < 3; again += 1) t.is(holdoutArm(SITE, order, 10), arm);
    t.is(holdoutArm(`${SITE}/`, order, 10), arm);
    t.is(holdoutArm(SITE.toUpperCase(), order, 10), arm);
  }
  const position = holdoutPosition(SITE, 4242);
  t.true(position >= 0 && position < 100);
  t.is(holdoutPosition(SITE, 4242), position);
  t.not(holdoutPosition('https://another.example.dk', 4242), position, 'another shop places the same order id elsewhere');
});

test('Given 10,000 renewals, When the holdout is 10%, 25% and 50%, Then the baseline takes near that share; at 0% none', (t) => {
  for (const percent of [10, 25, 50]) {
    let baseline = 0;
    for (let order = 100_000; order < 110_000; order += 1) if (holdoutArm(SITE, order, percent) === 'baseline') baseline += 1;
    // Binomial: 4 standard deviations of the share over 10,000 draws (1.2 points at 10%, 2 at 50%).
    const tolerance = 4 * Math.sqrt((percent / 100) * (1 - percent / 100) / 10_000) * 10_000;
    t.true(Math.abs(baseline - percent * 100) <= tolerance, `${baseline} of 10,000 at ${percent}%`);
  }
  for (let order = 1; order <= 10_000; order += 1) if (holdoutArm(SITE, order, 0) !== 'service') return t.fail(`order ${order} held out at 0%`);
  t.pass();
});

test('Given a renewal in the baseline at 10%, When the holdout grows to 20%, Then it stays in the baseline (the position does not move)', (t) => {
  for (let order = 1; order <= 2000; order += 1) if (holdoutArm(SITE, order, 10) === 'baseline') t.is(holdoutArm(SITE, order, 20), 'baseline');
});

test('The baseline plan is WooCommerce Subscriptions\' default retry rules: 12 h, 12 h, 1 d, 2 d, 3 d', (t) => {
  t.deepEqual(BASELINE_PLAN_SECONDS, [43_200, 43_200, 86_400, 172_800, 259_200]);
});

test('DUNNING_HOLDOUT_PERCENT is 0 by default, a whole number up to 50, refused above', (t) => {
  const base = { DB_NAME: 'shop' };
  t.is(loadConfig(base).dunning.holdoutPercent, 0);
  t.is(loadConfig({ ...base, DUNNING_HOLDOUT_PERCENT: '10' }).dunning.holdoutPercent, 10);
  t.is(loadConfig({ ...base, DUNNING_HOLDOUT_PERCENT: '50' }).dunning.holdoutPercent, 50);
  for (const bad of ['51', '-1', '7.5', 'ten']) t.throws(() => loadConfig({ ...base, DUNNING_HOLDOUT_PERCENT: bad }), { message: /DUNNING_HOLDOUT_PERCENT/ });
});

/** The sums of an arm of `n` renewals of one amount `w`, `recovered` of them paid in full. */
function binary(arm: string, n: number, recovered: number, w = 10_000): ArmShareSums {
  return { arm, n, w: n * w, r: recovered * w, ww: n * w * w, wr: recovered * w * w, rr: recovered * w * w };
}

test('Given known counts of equal amounts, When the difference is computed, Then it is the textbook two-proportion (Wald) interval', (t) => {
  // Service 800 of 1000 recovered, baseline 140 of 200: 0.80 - 0.70 = 0.10, SE = sqrt(0.8*0.2/1000 + 0.7*0.3/200) = sqrt(0.00016 + 0.00105).
  const service = armShare(binary('service', 1000, 800));
  const baseline = armShare(binary('baseline', 200, 140));
  t.is(service.share, 0.8);
  t.is(baseline.share, 0.7);
  t.true(Math.abs(service.variance! - 0.00016) < 1e-12);
  t.true(Math.abs(baseline.variance! - 0.00105) < 1e-12);
  const { difference, interval } = shareDifference(service, baseline);
  const half = Z_95 * Math.sqrt(0.00121);
  t.true(Math.abs(difference! - 0.1) < 1e-12);
  t.true(Math.abs(interval![0] - (0.1 - half)) < 1e-12);
  t.true(Math.abs(interval![1] - (0.1 + half)) < 1e-12);
  // 0.1 ± 1.96 × 0.034785: 0.0318 to 0.1682.
  t.deepEqual(interval!.map(shareText), ['0.0318', '0.1682']);
});

test('Given amounts that differ and renewals partly recovered, When the share is computed, Then it is by amount and its variance the ratio estimate\'s', (t) => {
  // Renewals (w, r): (100, 100), (300, 0), (200, 100), (400, 400).
  const cases = [[100, 100], [300, 0], [200, 100], [400, 400]];
  const sums: ArmShareSums = { arm: 'service', n: 4, w: 0, r: 0, ww: 0, wr: 0, rr: 0 };
  for (const [w, r] of cases) { sums.w += w; sums.r += r; sums.ww += w * w; sums.wr += w * r; sums.rr += r * r; }
  const share = armShare(sums);
  t.is(share.share, 0.6);
  // Σ (r − 0.6 w)² / W² = (40² + 180² + 20² + 160²) / 1000² = 0.06.
  t.true(Math.abs(share.variance! - 0.06) < 1e-12);
});

test('Given an arm with no renewal counted, or one only, Then the difference or the interval is null', (t) => {
  t.deepEqual(shareDifference(armShare(binary('service', 10, 5)), armShare(undefined)), { difference: null, interval: null });
  const one = shareDifference(armShare(binary('service', 10, 5)), armShare(binary('baseline', 1, 1)));
  t.is(one.difference, -0.5);
  t.is(one.interval, null);
});

test('Given the figures of a period with both arms, When the report is made, Then it carries the arms, the difference and the interval as decimal strings', (t) => {
  const figures: DunningPeriodFigures = {
    totals: { failed: 1300, recovered: 940, lost: 300, open: 60, recoveredCharges: 1880, lostSubscriptions: 290, baseline: 220 },
    byReason: [{ reason: 'soft_declined', failed: 1300, recovered: 940 }],
    byProvider: [{ provider: 'card_gateway', failed: 1300, recovered: 940 }],
    recoveries: [{ means: 'service_retry', currency: 'DKK', count: 940, amountMinor: 940 * 10_000 }],
    recoveryDurationsMs: [86_400_000, 2 * 86_400_000],
    recoveredCases: [
      { provider: 'card_gateway', reason: 'soft_declined', means: 'service_retry', attempts: 2, ms: 86_400_000 },
      { provider: 'card_gateway', reason: 'soft_declined', means: 'service_retry', attempts: 3, ms: 2 * 86_400_000 },
    ],
    armShares: [binary('baseline', 200, 140), binary('service', 1000, 800)],
  };
  const doc = reportDocument(new Date('2026-10-01T00:00:00Z'), new Date('2026-11-01T00:00:00Z'), figures);
  t.is(doc.window_days, 28);
  t.is(doc.recovered_share, '0.7833', '940 of 1200 counted');
  t.is(doc.saved_before_failure, 0);
  t.deepEqual(doc.arms, { service: { failed_renewals: 1000, recovered_share: '0.8000' }, baseline: { failed_renewals: 200, recovered_share: '0.7000' } });
  t.is(doc.difference, '0.1000');
  t.deepEqual(doc.interval, ['0.0318', '0.1682']);
  t.deepEqual(doc.by_reason.soft_declined, { failed: 1300, recovered: 940, attempts_per_recovery: 2.5, median_days_to_recover: 1.5 });
  t.deepEqual(doc.by_provider.card_gateway, { failed: 1300, recovered: 940, attempts_per_recovery: 2.5, median_days_to_recover: 1.5 });

  const withoutHoldout = reportDocument(new Date(0), new Date(1), { ...figures, totals: { ...figures.totals, baseline: 0 }, armShares: [binary('service', 1000, 800)] });
  t.false('arms' in withoutHoldout);
  t.false('difference' in withoutHoldout);
  t.false('interval' in withoutHoldout);
});
