import type { RetryRepository } from '../data-access/retry-repository';
import type { AttemptOutcome, RenewalAttempt } from './renewal-attempt';

export interface RetryRunSummary {
  attempted: number;
  succeeded: number;
  failed: number;
  postponed: number;
  canceled: number;
}

const SUMMARY_KEY: Record<AttemptOutcome['kind'], keyof RetryRunSummary> = {
  paid: 'succeeded', pending: 'succeeded', declined: 'failed', held: 'postponed', postponed: 'postponed', canceled: 'canceled',
};

/** An attempt PROCESSING this long was taken by a worker that died: it is due again, with its key. */
const STALE_AFTER_SECONDS = 600;

/**
 * The worker's dunning step: the attempts that are due, claimed by this worker alone (any number of workers may
 * run it), each made by RenewalAttempt; something unexpected puts an attempt back on the plan rather than losing it.
 */
export class RunDueRetries {
  constructor(private readonly deps: {
    retries: Pick<RetryRepository, 'releaseStale' | 'claimDue'>;
    attempts: Pick<RenewalAttempt, 'attempt' | 'postponeOnError'>;
    clock: () => Date;
  }) {}

  async execute(limit = 20): Promise<RetryRunSummary> {
    const summary: RetryRunSummary = { attempted: 0, succeeded: 0, failed: 0, postponed: 0, canceled: 0 };
    const now = this.deps.clock();
    await this.deps.retries.releaseStale(STALE_AFTER_SECONDS, now);
    for (const retry of await this.deps.retries.claimDue(now, limit)) {
      summary.attempted += 1;
      const outcome = await this.deps.attempts.attempt(retry, 'planned').catch(async (error: unknown) => {
        await this.deps.attempts.postponeOnError(retry, error);
        return { kind: 'postponed' as const };
      });
      summary[SUMMARY_KEY[outcome.kind]] += 1;
    }
    return summary;
  }
}
