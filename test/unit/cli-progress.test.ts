import test from 'ava';
import { estimateProgress, formatDuration, formatShare, progressIntervalMs, ProgressReporter, type LiveLine } from '../../src/entry-points/cli/progress';

/** A clock the test moves by hand. */
function fakeClock(start = 1_000_000) {
  let at = start;
  return { now: () => at, advance: (ms: number) => { at += ms; } };
}

/** A terminal's line that keeps what was drawn. */
class RecordedLine implements LiveLine {
  readonly drawn: string[] = [];
  finished = 0;
  constructor(readonly enabled: boolean) {}
  draw(text: string): void { this.drawn.push(text); }
  finish(): void { this.finished += 1; }
}

test('The share done is the position within the range, and the time left the rest at the pace so far', (t) => {
  const e = estimateProgress({ from: 0, to: 1_000_000, startPosition: 0, startedAt: 0, position: 250_000, now: 60_000 });
  t.is(e.share, 0.25);
  t.is(e.elapsedMs, 60_000);
  // 250,000 IDs a minute: 750,000 more take three minutes.
  t.is(e.remainingMs, 180_000);
});

test('A resumed walk shows the share of the whole range, and its pace counts only what this run did', (t) => {
  // Resumed at ID 600,000 of 1,000 to 1,001,000; 100,000 IDs in 20 s; 301,000 left.
  const e = estimateProgress({ from: 1000, to: 1_001_000, startPosition: 600_000, startedAt: 5000, position: 700_000, now: 25_000 });
  t.is(e.share, 0.699);
  t.is(e.remainingMs, 60_200);
  const whole = estimateProgress({ from: 0, to: 1_000_000, startPosition: 600_000, startedAt: 5000, position: 700_000, now: 25_000 });
  t.is(whole.share, 0.7);
  t.is(whole.remainingMs, 60_000);
});

test('Before the walk has moved no time left is claimed; past the end it is done', (t) => {
  t.is(estimateProgress({ from: 0, to: 100, startPosition: 0, startedAt: 0, position: 0, now: 10_000 }).remainingMs, null);
  t.is(estimateProgress({ from: 0, to: 100, startPosition: 0, startedAt: 0, position: 10, now: 0 }).remainingMs, null);
  const past = estimateProgress({ from: 0, to: 100, startPosition: 0, startedAt: 0, position: 130, now: 5 });
  t.is(past.share, 1);
  t.is(past.remainingMs, 0);
  t.is(estimateProgress({ from: 7, to: 7, startPosition: 7, startedAt: 0, position: 7, now: 0 }).share, 1, 'an empty range is all done');
});

test('Durations and shares read as an operator says them', (t) => {
  t.is(formatDuration(850), '850 ms');
  t.is(formatDuration(42_400), '42 s');
  t.is(formatDuration(185_000), '3 min 5 s');
  t.is(formatDuration(7_800_000), '2 h 10 min');
  t.is(formatShare(0.3724), '37.2%');
  t.is(formatShare(0.9996), '99.9%', 'not 100% before the end');
  t.is(formatShare(1), '100%');
});

test('Off a terminal a line is written once per interval with the share and the time left, and one at the end', (t) => {
  const clock = fakeClock();
  const lines: string[] = [];
  const progress = new ProgressReporter({
    label: 'customer contact index', from: 0, to: 1_000_000, now: clock.now, live: new RecordedLine(false), write: (line) => lines.push(line),
    intervalMs: 5000, describe: (position, to) => `at ID ${position} of ${to}`,
  });
  clock.advance(2000);
  progress.update(100_000);
  t.deepEqual(lines, [], 'nothing before the first interval');
  clock.advance(3000);
  progress.update(250_000);
  t.deepEqual(lines, ['customer contact index: 25.0% done, about 15 s left, at ID 250000 of 1000000']);
  clock.advance(1000);
  progress.update(300_000);
  t.is(lines.length, 1, 'no second line within the interval');
  clock.advance(4000);
  // The end moved (orders arrived meanwhile).
  progress.update(500_000, 1_250_000);
  t.is(lines[1], 'customer contact index: 40.0% done, about 15 s left, at ID 500000 of 1250000');
  clock.advance(15_000);
  progress.finish();
  t.is(lines[2], 'customer contact index: 100% done in 25 s, at ID 1250000 of 1250000');
  progress.update(7);
  t.is(lines.length, 3, 'nothing after the end');
});

test('Off a terminal a short walk writes nothing, unless its last line is asked for', (t) => {
  const clock = fakeClock();
  const quiet: string[] = [];
  const short = new ProgressReporter({ label: 'retrying', from: 0, to: 3, now: clock.now, live: new RecordedLine(false), write: (line) => quiet.push(line), intervalMs: 5000 });
  short.update(3);
  short.finish();
  t.deepEqual(quiet, []);
  const told: string[] = [];
  const migrate = new ProgressReporter({ label: 'index', from: 0, to: 3, now: clock.now, live: new RecordedLine(false), write: (line) => told.push(line), intervalMs: 5000, alwaysFinal: true });
  clock.advance(300);
  migrate.finish();
  t.deepEqual(told, ['index: 100% done in 300 ms, 3 of 3']);
});

test('On a terminal the line is redrawn at every step and ends at 100%', (t) => {
  const clock = fakeClock();
  const live = new RecordedLine(true);
  const lines: string[] = [];
  const progress = new ProgressReporter({ label: 'reconcile', from: 0, to: 200, now: clock.now, live, write: (line) => lines.push(line) });
  t.deepEqual(live.drawn, ['reconcile: 0.0% done, time left not known yet, 0 of 200']);
  clock.advance(1000);
  progress.update(50);
  t.is(live.drawn[1], 'reconcile: 25.0% done, about 3 s left, 50 of 200');
  clock.advance(1000);
  progress.update(100);
  t.is(live.drawn[2], 'reconcile: 50.0% done, about 2 s left, 100 of 200');
  clock.advance(2000);
  progress.finish();
  t.is(live.drawn[3], 'reconcile: 100% done in 4 s, 200 of 200');
  t.is(live.finished, 1);
  t.deepEqual(lines, [], 'no plain lines on a terminal');
});

test('A resumed walk starts at its share, and its first time left comes from its own pace', (t) => {
  const clock = fakeClock();
  const live = new RecordedLine(true);
  const progress = new ProgressReporter({ label: 'index', from: 0, to: 1000, position: 400, now: clock.now, live });
  t.regex(live.drawn[0], /^index: 40\.0% done, time left not known yet, 400 of 1,000$/);
  clock.advance(10_000);
  progress.update(500);
  t.regex(live.drawn[1], /^index: 50\.0% done, about 50 s left, 500 of 1,000$/);
});

test('At the end of the range but not yet told it is done, the line says finishing, not 100%', (t) => {
  const clock = fakeClock();
  const lines: string[] = [];
  const progress = new ProgressReporter({ label: 'index', from: 0, to: 10, now: clock.now, live: new RecordedLine(false), write: (line) => lines.push(line), intervalMs: 0 });
  clock.advance(1000);
  progress.update(10);
  t.deepEqual(lines, ['index: 99.9% done, finishing, 10 of 10']);
});

test('The position can be told differently on a terminal (a bar) and in plain lines', (t) => {
  const clock = fakeClock();
  const live = new RecordedLine(true);
  const describe = (position: number, to: number, terminal: boolean) => (terminal ? `[${'#'.repeat(position)}${'-'.repeat(to - position)}] ${position}/${to}` : `${position} of ${to} retried`);
  const progress = new ProgressReporter({ label: 'retrying', from: 0, to: 4, now: clock.now, live, describe });
  clock.advance(1000);
  progress.update(1);
  t.is(live.drawn[1], 'retrying: 25.0% done, about 3 s left, [#---] 1/4');
  t.is(progress.text(), 'retrying: 25.0% done, about 3 s left, 1 of 4 retried');
});

test('PROGRESS_INTERVAL_SECONDS sets the interval between plain lines; anything else keeps 5 s', (t) => {
  t.is(progressIntervalMs({}), 5000);
  t.is(progressIntervalMs({ PROGRESS_INTERVAL_SECONDS: '0' }), 0);
  t.is(progressIntervalMs({ PROGRESS_INTERVAL_SECONDS: '30' }), 30_000);
  t.is(progressIntervalMs({ PROGRESS_INTERVAL_SECONDS: 'often' }), 5000);
  t.is(progressIntervalMs({ PROGRESS_INTERVAL_SECONDS: '-1' }), 5000);
});

/** Timers on the fake clock: `advance` moves it a millisecond at a time and runs what falls due. */
function fakeTimers(clock: ReturnType<typeof fakeClock>) {
  let due: { at: number; run: () => void } | undefined;
  return {
    set: (run: () => void, ms: number) => { due = { at: clock.now() + ms, run }; return due; },
    clear: (handle: unknown) => { if (due === handle) due = undefined; },
    advance(ms: number) {
      for (let i = 0; i < ms; i += 1) {
        clock.advance(1);
        if (due && due.at <= clock.now()) {
          const { run } = due;
          due = undefined;
          run();
        }
      }
    },
  };
}

test('Off a terminal a line is written every interval by the clock, also while one step takes longer than that, and none after the end', (t) => {
  const clock = fakeClock();
  const timers = fakeTimers(clock);
  const lines: string[] = [];
  const progress = new ProgressReporter({
    label: 'retrying FAILED webhooks', from: 0, to: 4, now: clock.now, timer: timers, live: new RecordedLine(false), write: (line) => lines.push(line), intervalMs: 5000,
  });
  timers.advance(4999);
  t.deepEqual(lines, [], 'nothing before the first interval');
  // The first webhook takes 12 s: a line at 5 s and at 10 s without a step told.
  timers.advance(7001);
  t.deepEqual(lines, [
    'retrying FAILED webhooks: 0.0% done, time left not known yet, 0 of 4',
    'retrying FAILED webhooks: 0.0% done, time left not known yet, 0 of 4',
  ]);
  progress.update(1);
  t.is(lines.length, 2, 'a step within the interval since the last line writes none');
  // The next line comes an interval after the last one, with the pace known.
  timers.advance(3000);
  t.is(lines[2], 'retrying FAILED webhooks: 25.0% done, about 45 s left, 1 of 4');
  timers.advance(2000);
  progress.update(2);
  t.is(lines.length, 3);
  timers.advance(3000);
  t.is(lines[3], 'retrying FAILED webhooks: 50.0% done, about 20 s left, 2 of 4');
  progress.finish();
  t.is(lines[4], 'retrying FAILED webhooks: 100% done in 20 s, 4 of 4');
  timers.advance(20_000);
  t.is(lines.length, 5, 'nothing after the end');
});

test('On a terminal, or with PROGRESS_INTERVAL_SECONDS=0, no timer is set: the line moves with the steps', (t) => {
  const clock = fakeClock();
  let set = 0;
  const timer = { set: () => { set += 1; return set; }, clear() {} };
  const onTerminal = new ProgressReporter({ label: 'x', from: 0, to: 2, now: clock.now, timer, live: new RecordedLine(true) });
  onTerminal.update(1);
  const everyStep = new ProgressReporter({ label: 'x', from: 0, to: 2, now: clock.now, timer, live: new RecordedLine(false), write: () => undefined, intervalMs: 0 });
  everyStep.update(1);
  t.is(set, 0);
});
