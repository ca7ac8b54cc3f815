/**
 * At most `perSecond` calls a second to one provider, spaced evenly, whoever makes them (the reads that
 * decide and the event handlers' own reads back). Real time, whatever clock the service is given.
 */
export class Pacer {
  private nextAt = 0;
  private readonly gapMs: number;

  constructor(perSecond: number, private readonly now: () => number = Date.now) {
    this.gapMs = 1000 / Math.max(1, perSecond);
  }

  async take(): Promise<void> {
    const now = this.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + this.gapMs;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}

/**
 * The client with its reads (`reads`) paced, and every other call refused: reconciliation only ever asks, so a
 * charge, a capture or a registration cannot come from it whatever the code paths it reaches.
 */
export function readOnlyPaced<T extends object>(client: T, pacer: Pacer, reads: readonly string[]): T {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (reads.includes(property)) {
        return async (...args: unknown[]) => {
          await pacer.take();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return () => {
        throw new Error(`reconciliation does not call ${property}: it only reads from the provider`);
      };
    },
  });
}
