import type { ArmShareSums } from '../data-access/dunning-case-report-repository';

/** The normal distribution's 97.5th percentile: a two-sided 95% interval. */
export const Z_95 = 1.959963984540054;

/** One arm's recovered share, with the variance of that share as an estimate. */
export interface ArmShare {
  /** Failed renewals counted in the share. */
  n: number;
  /** Recovered amount within the window ÷ failed amount; null when no renewal is counted. */
  share: number | null;
  /** The share's estimated variance (see armShare); null when no renewal is counted. */
  variance: number | null;
}

/**
 * An arm's recovered share R / W (each renewal i failed for w_i and brought back r_i ≤ w_i within the window) and its
 * variance as a ratio estimate, by the delta method: Σ (r_i − S·w_i)² / W². With every renewal of the same amount and
 * r_i either 0 or w_i this is p(1 − p) / n, the binomial proportion's own, so the interval below is then the textbook
 * (Wald) interval of a difference of two proportions. The sums come from the database (ArmShareSums):
 * Σ (r − S·w)² = Σr² − 2S·Σwr + S²·Σw².
 */
export function armShare(sums: Pick<ArmShareSums, 'n' | 'w' | 'r' | 'ww' | 'wr' | 'rr'> | undefined): ArmShare {
  if (!sums || sums.n === 0 || sums.w <= 0) return { n: sums?.n ?? 0, share: null, variance: null };
  const share = sums.r / sums.w;
  const squares = Math.max(0, sums.rr - 2 * share * sums.wr + share * share * sums.ww);
  return { n: sums.n, share, variance: squares / (sums.w * sums.w) };
}

/** The sums of several groups as one (the arms together: the period's recovered share). */
export function addSums(groups: ArmShareSums[], arm = 'all'): ArmShareSums {
  const total: ArmShareSums = { arm, n: 0, w: 0, r: 0, ww: 0, wr: 0, rr: 0 };
  for (const g of groups) {
    total.n += g.n; total.w += g.w; total.r += g.r; total.ww += g.ww; total.wr += g.wr; total.rr += g.rr;
  }
  return total;
}

/**
 * The service's share minus the baseline's, and its 95% interval by the normal approximation: difference ± 1.96 ×
 * √(variance of one + variance of the other), the two arms being independent samples. Null when an arm has no renewal
 * counted; the interval null when an arm has fewer than 2 (a single renewal has no spread to estimate).
 */
export function shareDifference(service: ArmShare, baseline: ArmShare): { difference: number | null; interval: [number, number] | null } {
  if (service.share === null || baseline.share === null) return { difference: null, interval: null };
  const difference = service.share - baseline.share;
  if (service.n < 2 || baseline.n < 2) return { difference, interval: null };
  const half = Z_95 * Math.sqrt(service.variance! + baseline.variance!);
  return { difference, interval: [Math.max(-1, difference - half), Math.min(1, difference + half)] };
}

/** A share, difference or bound as the report writes it: a decimal string with 4 decimals (`0.7312`, `-0.0450`). */
export function shareText(value: number): string {
  const text = (Math.round(value * 10_000) / 10_000).toFixed(4);
  return text === '-0.0000' ? '0.0000' : text;
}
