/**
 * The webhook jobs this worker is working on, whichever way they came (the queue or the sweep), and when
 * one last finished: what the watchdog judges progress by, and the claims the heartbeat keeps alive.
 */
export class JobsInHand {
  /** One entry per job: the same webhook may be in hand twice for a moment (its queued job and the sweep). */
  private readonly started = new Set<{ id: number; since: number }>();
  private finishedCount = 0;
  private progressAt: number;
  private emptied: (() => void)[] = [];

  constructor(private readonly now: () => number = Date.now) {
    this.progressAt = now();
  }

  /** Runs `work` for webhook `id`, counted as in hand until it settles. */
  async run<T>(id: number, work: () => Promise<T>): Promise<T> {
    if (!this.started.size) this.progressAt = this.now();
    const job = { id, since: this.now() };
    this.started.add(job);
    try {
      return await work();
    } finally {
      this.started.delete(job);
      this.finishedCount += 1;
      this.progressAt = this.now();
      if (!this.started.size) for (const resolve of this.emptied.splice(0)) resolve();
    }
  }

  /** Resolves once no job is in hand. */
  idle(): Promise<void> {
    return this.started.size ? new Promise((resolve) => this.emptied.push(resolve)) : Promise.resolve();
  }

  get size(): number {
    return this.started.size;
  }

  get finished(): number {
    return this.finishedCount;
  }

  ids(): number[] {
    return [...new Set([...this.started].map((job) => job.id))];
  }

  /** Milliseconds since a job last finished, or since jobs were taken up after a quiet spell. */
  sinceProgressMs(): number {
    return this.now() - this.progressAt;
  }

  /** Milliseconds the job in hand longest has taken so far; 0 with none. */
  oldestMs(): number {
    let oldest = 0;
    for (const job of this.started) oldest = Math.max(oldest, this.now() - job.since);
    return oldest;
  }

  /** Jobs in hand while none has finished for `ms`: the worker is stuck. */
  stalled(ms: number): boolean {
    return this.started.size > 0 && this.sinceProgressMs() >= ms;
  }
}
