import type { ProviderFailure } from './providers/http-request';

/** What handling an event came to: it acted (PROCESSED), or there was nothing to do (SKIPPED). */
export interface EventOutcome {
  status: 'PROCESSED' | 'SKIPPED';
  note: string;
}

export const processed = (note: string): EventOutcome => ({ status: 'PROCESSED', note });
export const skipped = (note: string): EventOutcome => ({ status: 'SKIPPED', note });

/** The provider could not be asked; the event is retried later rather than acted on blind. */
export class ProviderUnavailableError extends Error {
  constructor(what: string, failure: ProviderFailure) {
    super(`${what}: ${failure.kind}${failure.status ? ` ${failure.status}` : ''} ${failure.message}`.trim());
  }
}
