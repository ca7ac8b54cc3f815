/**
 * When an open item is asked about, read from RECONCILE_SCHEDULE (`1m,5m,15m,60m,1d,1d,1d,1d,1d,1d,1d`):
 * an entry longer than the one before it is a time counted from when the item opened (or last changed); an
 * entry no longer than the one before it is a further wait after the previous check. So the default asks
 * 1, 5, 15 and 60 minutes after the item opened, then 1, 2, ... 7 days after, and then stops asking.
 */
export class ReconcileSchedule {
  /** Seconds from the opening of each check. */
  readonly offsets: number[];

  constructor(steps: number[]) {
    const offsets: number[] = [];
    steps.forEach((step, index) => {
      offsets.push(index === 0 ? step : step > steps[index - 1] ? Math.max(step, offsets[index - 1]) : offsets[index - 1] + step);
    });
    this.offsets = offsets;
  }

  /** The first check of an item opened at `opened`. */
  first(opened: Date): Date | null {
    return this.offsets.length ? new Date(opened.getTime() + this.offsets[0] * 1000) : null;
  }

  /**
   * After `done` checks, the time of the next one that is still ahead of `now` (checks missed while the worker
   * was away are not made up one by one), with its index; null when the schedule has ended.
   */
  next(opened: Date, done: number, now: Date): { at: Date; index: number } | null {
    for (let index = done; index < this.offsets.length; index += 1) {
      const at = new Date(opened.getTime() + this.offsets[index] * 1000);
      if (at.getTime() > now.getTime()) return { at, index };
    }
    return null;
  }

  /** When the last check of an item opened at `opened` is due: after that it is no longer asked about. */
  end(opened: Date): Date {
    return new Date(opened.getTime() + (this.offsets.at(-1) ?? 0) * 1000);
  }

  /** How far back an item can have opened and still be asked about. */
  get spanSeconds(): number {
    return this.offsets.at(-1) ?? 0;
  }
}

/** Waits after a provider could not be asked: 1 min, doubling, at most an hour. */
export function backoffSeconds(failures: number): number {
  return Math.min(3600, 60 * 2 ** Math.max(0, Math.min(failures - 1, 12)));
}
