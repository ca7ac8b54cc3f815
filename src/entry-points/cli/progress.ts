import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * Progress of a CLI command that walks the whole store (or a whole list): the share done, from where the walk
 * is in a known range (IDs, or items of a list), and the time left, from the pace of this run so far. On a
 * terminal one line on stderr is redrawn as the work goes; otherwise (a log file, a pipe, cron) a plain line is
 * written every PROGRESS_INTERVAL_SECONDS (5), by the clock, however long one step of the walk takes, and a last
 * one at the end. Nothing goes to stdout, so a `--json` document stays the only thing there.
 */

/** Where a walk stands, and what is left of it at the pace so far. */
export interface ProgressEstimate {
  /** 0 to 1. */
  share: number;
  elapsedMs: number;
  /** Null until this run has moved: a pace needs some work done and some time gone. */
  remainingMs: number | null;
}

/**
 * `from`..`to`: the whole range (a walk at `from` has done nothing, at `to` everything); `startPosition`: where
 * this run began (a build resumed halfway starts at its cursor), so the pace counts only this run's work.
 */
export function estimateProgress(p: { from: number; to: number; startPosition: number; startedAt: number; position: number; now: number }): ProgressEstimate {
  const span = p.to - p.from;
  const share = span > 0 ? Math.min(1, Math.max(0, (p.position - p.from) / span)) : 1;
  const elapsedMs = Math.max(0, p.now - p.startedAt);
  const moved = p.position - p.startPosition;
  if (share >= 1) return { share, elapsedMs, remainingMs: 0 };
  if (moved <= 0 || elapsedMs <= 0) return { share, elapsedMs, remainingMs: null };
  return { share, elapsedMs, remainingMs: Math.max(0, p.to - p.position) * (elapsedMs / moved) };
}

/** `850 ms`, `42 s`, `3 min 5 s`, `2 h 10 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** `37.2%`: one decimal, and 100% only when the walk is done (99.96% of the way is not yet all of it). */
export function formatShare(share: number): string {
  if (share >= 1) return '100%';
  return `${Math.min(99.9, Math.floor(share * 1000) / 10).toFixed(1)}%`;
}

/** A line redrawn in place on a terminal (log lines written meanwhile clear it first). */
export interface LiveLine {
  readonly enabled: boolean;
  draw(text: string): void;
  finish(): void;
}

/**
 * The default live line: stderr, drawn only when it is a terminal (a log file or a pipe would fill with
 * carriage returns); payment-hub's status line is one.
 */
export class StderrLine implements LiveLine {
  private current = '';
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr, readonly enabled = Boolean(stream.isTTY)) {}
  draw(text: string): void {
    if (!this.enabled) return;
    this.current = text;
    this.stream.write(`\r\x1b[K${text}`);
  }
  finish(): void {
    if (this.enabled && this.current) this.stream.write('\n');
    this.current = '';
  }
  /** Writes something else (a log line) above the line, which is drawn again below it. */
  around(write: () => void): void {
    if (!this.enabled || !this.current) return write();
    this.stream.write('\r\x1b[K');
    write();
    this.stream.write(`\r\x1b[K${this.current}`);
  }
}

/** Seconds between plain progress lines off a terminal: PROGRESS_INTERVAL_SECONDS, default 5 (0: a line at every step). */
export function progressIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.PROGRESS_INTERVAL_SECONDS);
  return env.PROGRESS_INTERVAL_SECONDS !== undefined && env.PROGRESS_INTERVAL_SECONDS !== '' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 5000;
}

export interface ProgressOptions {
  /** What is being walked: `customer contact index`. */
  label: string;
  /** The range (see estimateProgress); `to` may move later (new orders arriving meanwhile). */
  from: number;
  to: number;
  /** Where this run starts; `from` unless the walk resumes. */
  position?: number;
  /**
   * The position in words, after the share and the time: `at ID 372,001 of 1,000,000` (default `372 of 1,000`);
   * `terminal`: for the line redrawn on a terminal (where a bar may be drawn), not a plain line.
   */
  describe?: (position: number, to: number, terminal: boolean) => string;
  /** The terminal's line (default: stderr's, when a terminal). */
  live?: LiveLine;
  /** Where plain lines go off a terminal (default stderr). */
  write?: (line: string) => void;
  /** Default PROGRESS_INTERVAL_SECONDS. */
  intervalMs?: number;
  /** The clock, in milliseconds (tests pass a fake one). */
  now?: () => number;
  /**
   * Off a terminal, a line is also written when the interval has passed with no step told (a slow step): by this
   * timer (default `setTimeout`, unref'd so it never holds the process; tests pass their own).
   */
  timer?: { set(run: () => void, ms: number): unknown; clear(handle: unknown): void };
  /** Write the last line off a terminal even when no line came before it (a run shorter than the interval). */
  alwaysFinal?: boolean;
  /** When the work began, if before this reporter (for the last line's "done in"; the pace counts from the reporter's start). */
  began?: number;
}

export class ProgressReporter {
  private readonly now: () => number;
  private readonly live: LiveLine;
  private readonly write: (line: string) => void;
  private readonly intervalMs: number;
  private readonly startedAt: number;
  private readonly startPosition: number;
  private position: number;
  private to: number;
  private lastLineAt: number;
  private lines = 0;
  private finished = false;
  private readonly timer: NonNullable<ProgressOptions['timer']>;
  private pending: unknown;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.live = options.live ?? new StderrLine();
    this.write = options.write ?? ((line) => process.stderr.write(`${line}\n`));
    this.intervalMs = options.intervalMs ?? progressIntervalMs();
    this.startedAt = this.now();
    this.lastLineAt = this.startedAt;
    this.startPosition = options.position ?? options.from;
    this.position = this.startPosition;
    this.to = options.to;
    this.timer = options.timer ?? { set: (run, ms) => setTimeout(run, ms).unref(), clear: (handle) => clearTimeout(handle as NodeJS.Timeout) };
    if (this.live.enabled) this.live.draw(this.text(true));
    else this.plan();
  }

  estimate(): ProgressEstimate {
    return estimateProgress({ from: this.options.from, to: this.to, startPosition: this.startPosition, startedAt: this.startedAt, position: this.position, now: this.now() });
  }

  /** The walk is at `position` (of `to`, when the end has moved). */
  update(position: number, to = this.to): void {
    if (this.finished) return;
    this.position = position;
    this.to = Math.max(to, this.options.from);
    if (this.live.enabled) {
      this.live.draw(this.text(true));
    } else if (this.now() - this.lastLineAt >= this.intervalMs) {
      this.writeLine();
    }
  }

  /** A plain line now, and the next one planned an interval after it. */
  private writeLine(): void {
    this.lastLineAt = this.now();
    this.lines += 1;
    this.write(this.text());
    this.plan();
  }

  /** Off a terminal: the next plain line an interval after the last one, unless a step writes it first. */
  private plan(): void {
    if (this.pending !== undefined) this.timer.clear(this.pending);
    this.pending = undefined;
    if (this.finished || this.intervalMs <= 0) return;
    this.pending = this.timer.set(() => {
      this.pending = undefined;
      if (this.finished) return;
      if (this.now() - this.lastLineAt >= this.intervalMs) this.writeLine();
      else this.plan();
    }, Math.max(1, this.lastLineAt + this.intervalMs - this.now()));
  }

  private unplan(): void {
    if (this.pending !== undefined) this.timer.clear(this.pending);
    this.pending = undefined;
  }

  /** The walk is done: the share is 100% and the line says how long it took. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.unplan();
    this.position = Math.max(this.position, this.to);
    if (this.live.enabled) {
      this.live.draw(this.text(true));
      this.live.finish();
    } else if (this.lines > 0 || this.options.alwaysFinal) {
      this.write(this.text());
    }
  }

  /** Leaves the line as it is (the walk stopped short, or a question is asked next). */
  stop(): void {
    if (this.finished) return;
    this.finished = true;
    this.unplan();
    if (this.live.enabled) this.live.finish();
  }

  /**
   * `customer contact index: 37.2% done, about 2 min 5 s left, at ID 372,001 of 1,000,000`; at the end
   * `customer contact index: 100% done in 3 min 20 s, at ID 1,000,000 of 1,000,000`.
   */
  text(terminal = false): string {
    const estimate = this.estimate();
    const where = (this.options.describe ?? ((position, to) => `${count(position)} of ${count(to)}`))(this.position, this.to, terminal);
    const tail = where ? `, ${where}` : '';
    if (this.finished) return `${this.options.label}: ${formatShare(estimate.share)} done in ${formatDuration(this.now() - (this.options.began ?? this.startedAt))}${tail}`;
    // At the end of the range but not told it is done (the walk's last step is still to come): not 100% yet.
    const when = estimate.share >= 1 ? 'finishing'
      : estimate.remainingMs === null ? 'time left not known yet' : `about ${formatDuration(estimate.remainingMs)} left`;
    return `${this.options.label}: ${formatShare(Math.min(estimate.share, 0.999))} done, ${when}${tail}`;
  }

}

/** `1,000,000`. */
export const count = (n: number) => Math.round(n).toLocaleString('en');

/**
 * The lowest and highest primary key of an entity's table, for a walk's range: MIN and MAX of the primary key
 * are each one step into the index's ends, however large the table (no rows are read in between).
 */
export async function idRange<Entity extends ObjectLiteral>(dataSource: DataSource, entity: EntityTarget<Entity>): Promise<{ min: number; max: number }> {
  const metadata = dataSource.getMetadata(entity);
  const key = metadata.primaryColumns[0].propertyName;
  const row = await dataSource.createQueryBuilder().select(`MIN(t.${key})`, 'min').addSelect(`MAX(t.${key})`, 'max').from(entity, 't').getRawOne<{ min: unknown; max: unknown }>();
  return { min: Number(row?.min ?? 0), max: Number(row?.max ?? 0) };
}

/**
 * Progress of an online ALTER TABLE (an index added to a large WordPress table), which walks the whole table in
 * one statement, so no ID range can be seen from outside. MariaDB counts its own progress in the status variable
 * Innodb_onlineddl_pct_progress (hundredths of a percent: reading the table is the first half, sorting and
 * writing the index the second); it is read every `pollMs` (1 s) on another pooled connection (the data source
 * needs two) while `work` runs. The line appears only once the statement has run for a poll, and not at all where
 * the server has no such figure (MySQL).
 */
export async function withOnlineAlterProgress<T>(dataSource: DataSource, options: Partial<ProgressOptions> & { label: string; pollMs?: number }, work: () => Promise<T>): Promise<T> {
  const began = (options.now ?? Date.now)();
  let reporter: ProgressReporter | undefined;
  let polling = true;
  const read = async (): Promise<number | null> => {
    const rows: { Value?: unknown }[] = await dataSource.query("SHOW GLOBAL STATUS LIKE 'Innodb_onlineddl_pct_progress'");
    return rows.length ? Number(rows[0].Value) : null;
  };
  const poll = async () => {
    while (polling) {
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
      if (!polling) return;
      const hundredths = await read().catch(() => null);
      if (hundredths === null || !polling) return;
      // The pace counts from the first reading: the work before it took an unknown part of the first poll.
      if (!reporter) reporter = new ProgressReporter({ describe: () => '', began, ...options, from: 0, to: 10_000, position: hundredths });
      else reporter.update(hundredths);
    }
  };
  const polled = poll();
  try {
    const result = await work();
    polling = false;
    reporter?.finish();
    return result;
  } finally {
    polling = false;
    reporter?.stop();
    await polled;
  }
}
