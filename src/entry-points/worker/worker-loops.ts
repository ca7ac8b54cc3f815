/** A pass of a loop, as the watchdog sees it. */
export interface StalledLoop {
  loop: string;
  /** How long the pass has run without completing or making progress. */
  stuckSeconds: number;
}

/**
 * The worker's periodic loops (the sweep, dunning, the customer index, pause ends, the hand-over,
 * reconciliation, pruning): one pass of each at a time, and when each pass started and last made progress.
 * Every wait inside a pass has a bound of its own; a pass that still neither completes nor makes progress
 * within the watchdog's bound waits on something nothing bounded, and is reported as jobs that stop
 * finishing are (worker.ts).
 */
export class WorkerLoops {
  private readonly passes = new Map<string, { since: number; progressAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs one pass of `loop`, unless one is still running (false then). `progress` tells the watchdog the pass moves on. */
  run(loop: string, pass: (progress: () => void) => Promise<void>): Promise<void> | false {
    if (this.passes.has(loop)) return false;
    const running = { since: this.now(), progressAt: this.now() };
    this.passes.set(loop, running);
    const progress = () => { running.progressAt = this.now(); };
    return pass(progress).finally(() => this.passes.delete(loop));
  }

  /** Passes that have made no progress for `boundMs`. */
  stalled(boundMs: number): StalledLoop[] {
    const now = this.now();
    return [...this.passes].filter(([, pass]) => now - pass.progressAt >= boundMs)
      .map(([loop, pass]) => ({ loop, stuckSeconds: Math.round((now - pass.progressAt) / 1000) }));
  }

  /** The loops with a pass running now. */
  running(): string[] {
    return [...this.passes.keys()];
  }
}
