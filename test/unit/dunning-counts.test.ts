import test from 'ava';
import type { DunningCaseCount } from '../../src/data-access/dunning-case-report-repository';
import { DunningCounts, type DunningCaseCounts } from '../../src/observability/dunning-metrics';

// DunningCounts keeps the counts of the closed cases and reads only the recent ones on each scrape: whatever
// happens to the cases, what it answers must be what reading the whole table would give.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Row { provider: string; reason: string; status: 'OPEN' | 'RECOVERED' | 'LOST'; means: string | null; currency: string; openedAt: number; attempts: number; recoveredMinor: number }

/** sidecar_dunning_cases in memory, answering the repository's two queries, counting the rows each reads. */
class Table implements DunningCaseCounts {
  rows: Row[] = [];
  rowsRead = 0;
  /** Whether a reading started at the table's first case (the kept counts read whole). */
  readWhole = false;

  async countsOpenedIn(from: Date | null, until: Date | null): Promise<DunningCaseCount[]> {
    const rows = this.rows.filter((row) => (!from || row.openedAt >= from.getTime()) && (!until || row.openedAt < until.getTime()));
    this.rowsRead += rows.length;
    if (!from) this.readWhole = true;
    return group(rows);
  }

  async oldestOpenOpenedAt(): Promise<Date | null> {
    const open = this.rows.filter((row) => row.status === 'OPEN').map((row) => row.openedAt);
    return open.length ? new Date(Math.min(...open)) : null;
  }
}

function group(rows: Row[]): DunningCaseCount[] {
  const out = new Map<string, DunningCaseCount>();
  for (const row of rows) {
    const key = JSON.stringify([row.provider, row.reason, row.status, row.means, row.currency]);
    const count = out.get(key) ?? { provider: row.provider, reason: row.reason, status: row.status, means: row.means, currency: row.currency, count: 0, charges: 0, recoveredMinor: 0 };
    count.count += 1;
    count.charges += row.attempts;
    count.recoveredMinor += row.status === 'RECOVERED' ? row.recoveredMinor : 0;
    out.set(key, count);
  }
  return [...out.values()];
}

const sorted = (counts: DunningCaseCount[]) => counts.map((count) => JSON.stringify(count)).sort();

/** A small deterministic random sequence, so a failure can be run again as it was. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test('Over 60 days of cases opening, being charged again, recovering and being lost, every reading equals the whole table\'s, and most scrapes read only the recent cases', async (t) => {
  const table = new Table();
  let clock = Date.UTC(2026, 0, 1);
  const counts = new DunningCounts(table, () => new Date(clock), { settleMs: DAY, rereadMs: 6 * HOUR });
  const next = random(7);
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
  let largestRead = 0;
  let wholeReads = 0;
  for (let hour = 0; hour < 60 * 24; hour++) {
    clock += HOUR;
    for (let i = 0; i < 3; i++) {
      if (next() < 0.5) {
        table.rows.push({
          provider: pick(['card_gateway', 'mobile_wallet']), reason: pick(['soft_declined', 'hard_declined', 'technical_error']), status: 'OPEN', means: null,
          currency: pick(['DKK', 'EUR']), openedAt: clock - Math.floor(next() * 60_000), attempts: 1, recoveredMinor: 0,
        });
      }
    }
    for (const row of table.rows.filter((candidate) => candidate.status === 'OPEN')) {
      const age = clock - row.openedAt;
      const roll = next();
      if (roll < 0.02) row.attempts += 1;
      else if (roll < 0.05 || age > 10 * DAY) Object.assign(row, roll < 0.04 ? { status: 'RECOVERED', means: pick(['service_retry', 'new_payment_method']), recoveredMinor: 9900 } : { status: 'LOST' });
    }
    table.rowsRead = 0;
    table.readWhole = false;
    t.deepEqual(sorted(await counts.read()), sorted(group(table.rows)), `hour ${hour}`);
    if (table.readWhole) wholeReads += 1;
    else largestRead = Math.max(largestRead, table.rowsRead);
  }
  t.true(table.rows.length > 1000, `${table.rows.length} cases`);
  // Between the rereads (every 6 hours), a scrape reads the cases dunning still works on (at most 10 days') and a day more.
  t.is(wholeReads, 60 * 4);
  t.true(largestRead < table.rows.length / 3, `a scrape read ${largestRead} of ${table.rows.length} cases`);
});

test('When an OPEN case older than the kept counts turns up, Then the whole table is read again at once', async (t) => {
  const table = new Table();
  let clock = Date.UTC(2026, 5, 1);
  const counts = new DunningCounts(table, () => new Date(clock), { settleMs: HOUR, rereadMs: 30 * DAY });
  const row = (status: Row['status'], openedAt: number): Row => ({ provider: 'card_gateway', reason: 'soft_declined', status, means: status === 'RECOVERED' ? 'service_retry' : null, currency: 'DKK', openedAt, attempts: 1, recoveredMinor: status === 'RECOVERED' ? 100 : 0 });
  table.rows.push(row('LOST', clock - 5 * DAY), row('RECOVERED', clock - 4 * DAY));
  t.deepEqual(sorted(await counts.read()), sorted(group(table.rows)));
  clock += DAY;
  // A case written late with an old opened_at (its closing is seen at once, not after the reread).
  const late = row('OPEN', clock - 3 * DAY);
  table.rows.push(late);
  table.readWhole = false;
  t.deepEqual(sorted(await counts.read()), sorted(group(table.rows)));
  t.true(table.readWhole);
  late.status = 'LOST';
  clock += HOUR;
  t.deepEqual(sorted(await counts.read()), sorted(group(table.rows)));
});

test('When scrapes arrive while a reading runs, Then they share it; a failed reading is not kept', async (t) => {
  const table = new Table();
  let calls = 0;
  let fail = true;
  const slow: DunningCaseCounts = {
    countsOpenedIn: (from, until) => table.countsOpenedIn(from, until),
    async oldestOpenOpenedAt() {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (fail) throw new Error('database away');
      return null;
    },
  };
  const counts = new DunningCounts(slow);
  const failed = await Promise.allSettled([counts.read(), counts.read()]);
  t.deepEqual(failed.map((result) => result.status), ['rejected', 'rejected']);
  t.is(calls, 1);
  fail = false;
  t.deepEqual(await Promise.all([counts.read(), counts.read()]), [[], []]);
  t.is(calls, 2);
});
