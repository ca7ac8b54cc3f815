import test from 'ava';
import { createShopDataSource } from '../../src/data-access/data-source';
import { DunningCaseReportRepository } from '../../src/data-access/dunning-case-report-repository';
import type { Bindable } from '../../src/data-access/prepared-statement';
import { paymentHub, type CommandRun } from '../support/cli-process';
import { insertDunningCases, type SeedCase } from '../support/dunning-cases';
import { createTestShop, type TestShop } from '../support/test-shop';

// `payment-hub dunning report` as the operator runs it (the built bin script in a child process), over a known
// history of dunning cases written straight into sidecar_dunning_cases, figure by figure.

const DAY = 86_400_000;
let shop: TestShop;
const now = Date.now();

const cli = (args: string[], env: Record<string, string> = {}): Promise<CommandRun> =>
  paymentHub(['dunning', 'report', ...args], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, ...env });

/** A UTC date `days` from today, as `--since` takes it. */
const utcDate = (days: number) => new Date(now + days * DAY).toISOString().slice(0, 10);

/** The history: eleven cases in the last 30 days, two before. */
const HISTORY: SeedCase[] = [
  { subscription: 101, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 20, status: 'RECOVERED', attempts: 2, closed: 19, means: 'service_retry', recovered: 9900 },
  { subscription: 102, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 14900, opened: 15, status: 'RECOVERED', attempts: 3, closed: 12, means: 'service_retry', recovered: 14900 },
  { subscription: 103, provider: 'card_gateway', reason: 'hard_declined', currency: 'DKK', amount: 9900, opened: 10, status: 'RECOVERED', attempts: 2, closed: 8.4, means: 'new_payment_method', recovered: 9900 },
  { subscription: 104, provider: 'card_gateway', reason: 'hard_declined', currency: 'DKK', amount: 9900, opened: 25, status: 'LOST', attempts: 1, closed: 11 },
  { subscription: 105, provider: 'card_gateway', reason: 'processing_error', currency: 'EUR', amount: 1250, opened: 5, status: 'RECOVERED', attempts: 1, closed: 4.75, means: 'reconciliation', recovered: 1250 },
  { subscription: 106, provider: 'mobile_wallet', reason: 'user_action_required', currency: 'NOK', amount: 19900, opened: 12, status: 'LOST', attempts: 1, closed: 2 },
  // A second renewal of the same subscription, lost too: one lost subscription.
  { subscription: 106, provider: 'mobile_wallet', reason: 'user_action_required', currency: 'NOK', amount: 19900, opened: 28, status: 'LOST', attempts: 1, closed: 14 },
  { subscription: 107, provider: 'mobile_wallet', reason: 'technical_error', currency: 'SEK', amount: 4995, opened: 3, status: 'RECOVERED', attempts: 4, closed: 1, means: 'provider_retry', recovered: 4995 },
  { subscription: 108, provider: 'mobile_wallet', reason: 'charge_amount_too_high', currency: 'DKK', amount: 29900, opened: 2, status: 'OPEN', attempts: 1 },
  { subscription: 109, provider: 'card_gateway', reason: 'unknown', currency: 'DKK', amount: 9900, opened: 1, status: 'OPEN', attempts: 2 },
  // Paid at a lower total than the renewal's (a renewal discount): what was paid counts.
  { subscription: 110, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 7, status: 'RECOVERED', attempts: 2, closed: 6, means: 'service_retry', recovered: 7425 },
  // Before the last 30 days.
  { subscription: 111, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 40, status: 'RECOVERED', attempts: 3, closed: 38, means: 'service_retry', recovered: 9900 },
  { subscription: 112, provider: 'mobile_wallet', reason: 'user_action_required', currency: 'NOK', amount: 19900, opened: 45, status: 'LOST', attempts: 1, closed: 30.5 },
];

/** A long history long before: enough rows that reading the whole table would show in the plans below. */
const LONG_AGO: SeedCase[] = Array.from({ length: 1500 }, (_, i) => ({
  subscription: 20_000 + i, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900,
  opened: 400 + i / 5, status: i % 3 ? 'RECOVERED' : 'LOST', attempts: 2, closed: 399 + i / 5, ...(i % 3 ? { means: 'service_retry', recovered: 9900 } : {}),
}));

/** Each group's count figures alone (as before the pace was added), and its pace alone. */
const counts = (groups: Record<string, any>) => Object.fromEntries(Object.entries(groups).map(([name, { attempts_per_recovery: _a, median_days_to_recover: _m, ...rest }]) => [name, rest]));
const pace = (groups: Record<string, any>) => Object.fromEntries(Object.entries(groups).map(([name, row]) => [name, [row.attempts_per_recovery, row.median_days_to_recover]]));

const dump = async () => JSON.stringify((await shop.db.query(`SELECT * FROM ${shop.prefix}sidecar_dunning_cases ORDER BY id`))[0]);

function json(t: { is(a: unknown, b: unknown, message?: string): void }, run: CommandRun): any {
  t.is(run.code, 0, run.stderr);
  t.is(run.stderr, '');
  return JSON.parse(run.stdout);
}

test.before(async () => {
  shop = await createTestShop('dunning_report');
  await insertDunningCases(shop.db, shop.prefix, HISTORY, now, 5000);
  await insertDunningCases(shop.db, shop.prefix, LONG_AGO, now, 10_000);
  await shop.db.query(`ANALYZE TABLE ${shop.prefix}sidecar_dunning_cases`);
  // The check before the renewal's record: a renewal due 5 days ago fixed the day before (saved), one due 3 days ago
  // never fixed, one due 60 days ago fixed (before the period).
  const at = (days: number) => new Date(now - days * DAY).toISOString().slice(0, 19).replace('T', ' ');
  for (const [subscription, due, fixed] of [[301, 5, 6], [302, 3, null], [303, 60, 61]] as const) {
    await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_pre_renewal_checks (subscription_id, next_payment, provider, payment_method, finding, asked_at, fixed_at, fixed_method)
      VALUES (?, ?, 'card_gateway', 'ca_old', 'card_failed', ?, ?, ?)`, [subscription, at(due), at(due + 3), fixed === null ? null : at(fixed), fixed === null ? null : 'ca_new']);
  }
});

test.after.always(async () => {
  await shop?.drop();
});

test('When dunning report --json runs with no --since, Then it prints the last 30 days figure by figure, and nothing else', async (t) => {
  const run = await cli(['--json']);
  const report = json(t, run);
  t.deepEqual(Object.keys(report), ['since', 'until', 'failed_renewals', 'recovered', 'by_reason', 'by_means', 'median_days_to_recover', 'lost_subscriptions', 'attempts_per_recovery',
    'window_days', 'recovered_share', 'saved_before_failure', 'by_provider'], 'no arms while the holdout has no member');

  const until = Date.parse(report.until);
  t.regex(report.until, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  t.true(until >= now && until - now < 60_000, `until ${report.until} is when the command ran`);
  t.is(Date.parse(report.since), until - 30 * DAY, 'since is 30 days before until');

  t.is(report.failed_renewals, 11);
  t.deepEqual(report.recovered, { count: 6, amount: { DKK: '421.25', EUR: '12.50', SEK: '49.95' } });
  t.deepEqual(pace(report.by_reason), {
    soft_declined: [2.33, 1], hard_declined: [2, 1.6], user_action_required: [null, null], charge_amount_too_high: [null, null],
    processing_error: [1, 0.3], technical_error: [4, 2], unknown: [null, null],
  });
  t.deepEqual(pace(report.by_means), {
    service_retry: [2.33, 1], staff_charge: [null, null], new_payment_method: [2, 1.6], provider_retry: [4, 2], shop_payment: [null, null], reconciliation: [1, 0.3],
  });
  t.deepEqual(report.by_provider, {
    card_gateway: { failed: 7, recovered: 5, attempts_per_recovery: 2, median_days_to_recover: 1 },
    mobile_wallet: { failed: 4, recovered: 1, attempts_per_recovery: 4, median_days_to_recover: 2 },
  });
  t.is(report.window_days, 28);
  // The two still open (1 and 2 days old) are not counted yet; the lost ones brought back 0:
  // 483.70 recovered of 1005.45 failed (in minor units of each renewal's currency).
  t.is(report.recovered_share, '0.4811');
  t.is(report.saved_before_failure, 1, 'the renewal due 5 days ago, fixed after its notice');
  t.deepEqual(counts(report.by_reason), {
    soft_declined: { failed: 3, recovered: 3 },
    hard_declined: { failed: 2, recovered: 1 },
    user_action_required: { failed: 2, recovered: 0 },
    charge_amount_too_high: { failed: 1, recovered: 0 },
    processing_error: { failed: 1, recovered: 1 },
    technical_error: { failed: 1, recovered: 1 },
    unknown: { failed: 1, recovered: 0 },
  });
  t.deepEqual(counts(report.by_means), {
    service_retry: { count: 3, amount: { DKK: '322.25' } },
    staff_charge: { count: 0, amount: {} },
    new_payment_method: { count: 1, amount: { DKK: '99.00' } },
    provider_retry: { count: 1, amount: { SEK: '49.95' } },
    shop_payment: { count: 0, amount: {} },
    reconciliation: { count: 1, amount: { EUR: '12.50' } },
  });
  // Days to recover: 0.25, 1, 1, 1.6, 2, 3: the median is (1 + 1.6) / 2.
  t.is(report.median_days_to_recover, 1.3);
  t.is(report.lost_subscriptions, 2, 'two lost renewals of one subscription count once');
  // Charges of the six recovered: 2 + 3 + 2 + 1 + 4 + 2 = 14.
  t.is(report.attempts_per_recovery, 2.33);
});

test('When --since reaches further back, Then the older cases count too; when it is recent, only the cases opened from that day on', async (t) => {
  const wider = json(t, await cli([`--since=${utcDate(-50)}`, '--json']));
  t.is(wider.since, `${utcDate(-50)}T00:00:00.000Z`);
  t.is(wider.failed_renewals, 13);
  t.deepEqual(wider.recovered, { count: 7, amount: { DKK: '520.25', EUR: '12.50', SEK: '49.95' } });
  t.deepEqual(wider.by_reason.soft_declined, { failed: 4, recovered: 4, attempts_per_recovery: 2.5, median_days_to_recover: 1.5 });
  t.deepEqual(wider.by_reason.user_action_required, { failed: 3, recovered: 0, attempts_per_recovery: null, median_days_to_recover: null });
  t.deepEqual(wider.by_means.service_retry, { count: 4, amount: { DKK: '421.25' }, attempts_per_recovery: 2.5, median_days_to_recover: 1.5 });
  t.is(wider.recovered_share, '0.4470');
  t.is(wider.median_days_to_recover, 1.6);
  t.is(wider.lost_subscriptions, 3);
  t.is(wider.attempts_per_recovery, 2.43);

  // The cases opened 3, 2 and 1 days ago; the one opened 5 days ago is before the 4th day's midnight.
  const recent = json(t, await cli(['--since', utcDate(-4), '--json']));
  t.is(recent.since, `${utcDate(-4)}T00:00:00.000Z`);
  t.is(recent.failed_renewals, 3);
  t.deepEqual(recent.recovered, { count: 1, amount: { SEK: '49.95' } });
  t.deepEqual(counts(recent.by_reason), {
    charge_amount_too_high: { failed: 1, recovered: 0 },
    technical_error: { failed: 1, recovered: 1 },
    unknown: { failed: 1, recovered: 0 },
  });
  t.deepEqual(counts(recent.by_means), {
    service_retry: { count: 0, amount: {} },
    staff_charge: { count: 0, amount: {} },
    new_payment_method: { count: 0, amount: {} },
    provider_retry: { count: 1, amount: { SEK: '49.95' } },
    shop_payment: { count: 0, amount: {} },
    reconciliation: { count: 0, amount: {} },
  });
  t.is(recent.median_days_to_recover, 2);
  t.is(recent.lost_subscriptions, 0);
  t.is(recent.attempts_per_recovery, 4);
  t.is(recent.recovered_share, '1.0000', 'the two open ones are too young to count: only the recovered one is');
});

test('When nothing failed in the period, Then the counts are 0, the amounts empty and the median and attempts null', async (t) => {
  const today = json(t, await cli([`--since=${utcDate(0)}`, '--json']));
  t.deepEqual({ ...today, until: null }, {
    since: `${utcDate(0)}T00:00:00.000Z`,
    until: null,
    failed_renewals: 0,
    recovered: { count: 0, amount: {} },
    by_reason: {},
    by_means: Object.fromEntries(['service_retry', 'staff_charge', 'new_payment_method', 'provider_retry', 'shop_payment', 'reconciliation']
      .map((means) => [means, { count: 0, amount: {}, attempts_per_recovery: null, median_days_to_recover: null }])),
    median_days_to_recover: null,
    lost_subscriptions: 0,
    attempts_per_recovery: null,
    window_days: 28,
    recovered_share: null,
    saved_before_failure: 0,
    by_provider: {},
  });
  const text = await cli([`--since=${utcDate(0)}`]);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /No renewal payment failed in the period/);
});

test('When the report reads a period, Then each of its statements finds the period\'s cases through the opened_at index', async (t) => {
  const dataSource = createShopDataSource(shop.config().db, 1);
  await dataSource.initialize();
  try {
    const repository = new DunningCaseReportRepository(dataSource);
    // The statements as the repository sends them (in one round trip), explained one by one.
    const { sql, values } = (repository as unknown as { period: Bindable<'since' | 'until'> }).period
      .with({ since: new Date(now - 30 * DAY).toISOString().slice(0, 23).replace('T', ' '), until: new Date(now).toISOString().slice(0, 23).replace('T', ' ') });
    const statements = sql.split(';\n');
    t.is(statements.length, 6);
    let offset = 0;
    for (const statement of statements) {
      const count = (statement.match(/\?/g) ?? []).length;
      const [plan] = await shop.db.query<any[]>(`EXPLAIN ${statement}`, values.slice(offset, offset + count));
      offset += count;
      t.is(plan[0].key, 'opened_at', statement);
    }
  } finally {
    await dataSource.destroy();
  }
});

test('When dunning report runs without --json, Then an operator reads the figures and the two short tables', async (t) => {
  const run = await cli([]);
  t.is(run.code, 0, run.stderr);
  t.is(run.stderr, '');
  const out = run.stdout;
  t.regex(out, /^Dunning of the renewals that failed from \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC to \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\n/);
  t.regex(out, /^Failed renewals:\s+11$/m);
  t.regex(out, /^Recovered:\s+6 \(55%\)$/m);
  t.regex(out, /^Recovered amount:\s+421\.25 DKK, 12\.50 EUR, 49\.95 SEK$/m);
  t.regex(out, /^Still in dunning:\s+2$/m);
  t.regex(out, /^Lost:\s+3 renewal\(s\), 2 subscription\(s\)$/m);
  t.regex(out, /^Median days to recover:\s+1\.3$/m);
  t.regex(out, /^Attempts per recovery:\s+2\.33$/m);
  t.regex(out, /^Recovered share \(28 days\):\s+48\.1%$/m);
  t.regex(out, /^Saved before failure:\s+1$/m);
  t.regex(out, /^REASON\s+FAILED\s+RECOVERED\s+RATE\s+ATTEMPTS\s+DAYS$/m);
  t.regex(out, /^soft_declined\s+3\s+3\s+100%\s+2\.33\s+1\.0$/m);
  t.regex(out, /^hard_declined\s+2\s+1\s+50%\s+2\.00\s+1\.6$/m);
  t.regex(out, /^user_action_required\s+2\s+0\s+0%\s+-\s+-$/m);
  t.regex(out, /^RECOVERED BY\s+COUNT\s+AMOUNT\s+ATTEMPTS\s+DAYS$/m);
  t.regex(out, /^service_retry\s+3\s+322\.25 DKK\s+2\.33\s+1\.0$/m);
  t.regex(out, /^reconciliation\s+1\s+12\.50 EUR\s+1\.00\s+0\.3$/m);
  t.regex(out, /^PROVIDER\s+FAILED\s+RECOVERED\s+ATTEMPTS\s+DAYS$/m);
  t.regex(out, /^card_gateway\s+7\s+5\s+2\.00\s+1\.0$/m);
  t.notRegex(out, /Holdout/, 'no holdout section while it has no member');
});

for (const [what, args, message] of [
  ['a month that does not exist', ['--since=2026-13-01'], /--since takes a date as YYYY-MM-DD/],
  ['a day that does not exist', ['--since=2026-02-30'], /--since takes a date as YYYY-MM-DD/],
  ['a word', ['--since=yesterday'], /--since takes a date as YYYY-MM-DD/],
  ['a date and time', ['--since=2026-11-01T10:00:00Z'], /--since takes a date as YYYY-MM-DD/],
  ['no date', ['--since'], /--since takes a date as YYYY-MM-DD/],
  ['tomorrow', [`--since=${utcDate(1)}`], /is in the future/],
  ['an unknown option', ['--until=2026-11-01'], /Unknown argument/],
] as const) {
  test(`When --since is ${what}, Then it is a usage error (exit 2) with a clear message and nothing is read or changed`, async (t) => {
    const before = await dump();
    const run = await cli([...args, '--json']);
    t.is(run.code, 2, run.stderr);
    t.is(run.stdout, '', 'no JSON document for a usage error');
    t.regex(run.stderr, message);
    t.is(await dump(), before);
  });
}

test('When the database cannot be reached, Then the report fails with exit 1 and says why', async (t) => {
  const run = await cli(['--json'], { DB_NAME: `${shop.dbName}_missing` });
  t.is(run.code, 1);
  t.is(run.stdout, '');
  t.regex(run.stderr, /cannot connect to the database/);
});
