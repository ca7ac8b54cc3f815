import test from 'ava';
import { createShopDataSource } from '../../src/data-access/data-source';
import { DunningCaseReportRepository } from '../../src/data-access/dunning-case-report-repository';
import type { PreparedStatement } from '../../src/data-access/prepared-statement';
import { insertDunningCases, type SeedCase } from '../support/dunning-cases';
import { request } from '../support/http-client';
import { parsePrometheusText, series, total, type Sample } from '../support/prometheus-text';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// The dunning counters of GET /metrics, read from sidecar_dunning_cases: a known history seeded straight into
// the table, then cases that change between two scrapes.

const DAY = 86_400_000;
const now = Date.now();
const gmt = (time: number) => new Date(time).toISOString().slice(0, 23).replace('T', ' ');
let shop: TestShop;
let api: RunningApi;

const HISTORY: SeedCase[] = [
  { subscription: 1, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 20, status: 'RECOVERED', attempts: 2, closed: 19, means: 'service_retry', recovered: 9900 },
  { subscription: 2, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 14900, opened: 15, status: 'RECOVERED', attempts: 3, closed: 12, means: 'service_retry', recovered: 14900 },
  { subscription: 3, provider: 'card_gateway', reason: 'hard_declined', currency: 'DKK', amount: 9900, opened: 10, status: 'RECOVERED', attempts: 2, closed: 8, means: 'new_payment_method', recovered: 9900 },
  { subscription: 4, provider: 'card_gateway', reason: 'hard_declined', currency: 'DKK', amount: 9900, opened: 25, status: 'LOST', attempts: 1, closed: 11 },
  { subscription: 5, provider: 'card_gateway', reason: 'processing_error', currency: 'EUR', amount: 1250, opened: 5, status: 'RECOVERED', attempts: 1, closed: 4, means: 'reconciliation', recovered: 1250 },
  { subscription: 6, provider: 'mobile_wallet', reason: 'user_action_required', currency: 'NOK', amount: 19900, opened: 12, status: 'LOST', attempts: 1, closed: 2 },
  { subscription: 7, provider: 'mobile_wallet', reason: 'technical_error', currency: 'SEK', amount: 4995, opened: 3, status: 'RECOVERED', attempts: 4, closed: 1, means: 'provider_retry', recovered: 4995 },
  { subscription: 8, provider: 'mobile_wallet', reason: 'charge_amount_too_high', currency: 'DKK', amount: 29900, opened: 2, status: 'OPEN', attempts: 1 },
  { subscription: 9, provider: 'card_gateway', reason: 'unknown', currency: 'DKK', amount: 9900, opened: 1, status: 'OPEN', attempts: 2 },
  { subscription: 10, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 7, status: 'RECOVERED', attempts: 2, closed: 6, means: 'service_retry', recovered: 7425 },
  // A currency without decimals: 1000 JPY is 1000 in the counter.
  { subscription: 11, provider: 'card_gateway', reason: 'soft_declined', currency: 'JPY', amount: 1000, opened: 100, status: 'RECOVERED', attempts: 1, closed: 99, means: 'service_retry', recovered: 1000 },
];

/** 300 cases long ago: 200 recovered by the service's retries (two charges each), 100 lost. */
const LONG_AGO: SeedCase[] = Array.from({ length: 300 }, (_, i) => ({
  subscription: 1000 + i, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900,
  opened: 400 + i, status: i % 3 ? 'RECOVERED' : 'LOST', attempts: 2, closed: 399 + i, ...(i % 3 ? { means: 'service_retry', recovered: 9900 } : {}),
}));

async function scrape(): Promise<Sample[]> {
  const res = await request(api.url, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.text}`);
  return parsePrometheusText(res.text);
}

const CARD = 'card_gateway';
const WALLET = 'mobile_wallet';

test.before(async () => {
  shop = await createTestShop('dunning_metrics');
  await insertDunningCases(shop.db, shop.prefix, HISTORY, now, 100);
  await insertDunningCases(shop.db, shop.prefix, LONG_AGO, now, 10_000);
  api = await startApi(shop.config());
});

test.after.always(async () => {
  await api?.stop();
  await shop?.drop();
});

test.serial('When /metrics is scraped, Then the dunning counters carry every case the table holds', async (t) => {
  const m = await scrape();
  const at = (name: string, labels: Record<string, string>) => {
    t.is(series(m, name, labels).length, 1, `${name} ${JSON.stringify(labels)} is served`);
    return total(m, name, labels);
  };
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: CARD, reason: 'soft_declined' }), 4 + 300);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: CARD, reason: 'hard_declined' }), 2);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: CARD, reason: 'processing_error' }), 1);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: CARD, reason: 'unknown' }), 1);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: WALLET, reason: 'user_action_required' }), 1);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: WALLET, reason: 'technical_error' }), 1);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: WALLET, reason: 'charge_amount_too_high' }), 1);
  t.is(at('sidecar_dunning_failed_renewals_total', { provider: WALLET, reason: 'non_technical_error' }), 0, 'a reason with no case yet is 0, not missing');
  t.is(total(m, 'sidecar_dunning_failed_renewals_total'), HISTORY.length + LONG_AGO.length);

  t.is(at('sidecar_dunning_recovered_total', { provider: CARD, reason: 'soft_declined', means: 'service_retry' }), 4 + 200);
  t.is(at('sidecar_dunning_recovered_total', { provider: CARD, reason: 'hard_declined', means: 'new_payment_method' }), 1);
  t.is(at('sidecar_dunning_recovered_total', { provider: CARD, reason: 'processing_error', means: 'reconciliation' }), 1);
  t.is(at('sidecar_dunning_recovered_total', { provider: WALLET, reason: 'technical_error', means: 'provider_retry' }), 1);
  t.is(at('sidecar_dunning_recovered_total', { provider: WALLET, reason: 'charge_amount_too_high', means: 'new_payment_method' }), 0);
  t.is(total(m, 'sidecar_dunning_recovered_total'), 207);

  t.is(at('sidecar_dunning_lost_total', { provider: CARD, reason: 'soft_declined' }), 100);
  t.is(at('sidecar_dunning_lost_total', { provider: CARD, reason: 'hard_declined' }), 1);
  t.is(at('sidecar_dunning_lost_total', { provider: WALLET, reason: 'user_action_required' }), 1);
  t.is(at('sidecar_dunning_lost_total', { provider: CARD, reason: 'unknown' }), 0);
  t.is(total(m, 'sidecar_dunning_lost_total'), 102);

  // In the currency's major unit: what was paid (7425 for the discounted renewal), not the renewal's total.
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'DKK', means: 'service_retry' }), 20_122.25);
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'DKK', means: 'new_payment_method' }), 99);
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'EUR', means: 'reconciliation' }), 12.5);
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'SEK', means: 'provider_retry' }), 49.95);
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'JPY', means: 'service_retry' }), 1000);
  t.is(at('sidecar_dunning_recovered_amount_total', { currency: 'NOK', means: 'service_retry' }), 0, 'a currency seen in a case starts at 0 for every means');

  t.is(at('sidecar_dunning_recovered_charges_total', { provider: CARD, means: 'service_retry' }), 2 + 3 + 2 + 1 + 400);
  t.is(at('sidecar_dunning_recovered_charges_total', { provider: WALLET, means: 'provider_retry' }), 4);
  t.is(at('sidecar_dunning_open_cases', { provider: CARD }), 1);
  t.is(at('sidecar_dunning_open_cases', { provider: WALLET }), 1);

  // The recovered share of the last 28 days, as `dunning report` counts it: the two OPEN cases (1 and 2 days old)
  // are not counted yet, the lost ones brought back 0; 483.70 of 806.45 (each in its currency's minor units).
  t.is(at('sidecar_dunning_share_renewals', { arm: 'service' }), 8);
  t.is(at('sidecar_dunning_share_renewals', { arm: 'baseline' }), 0);
  t.true(Math.abs(at('sidecar_dunning_recovered_share', { arm: 'service' }) - 48_370 / 80_645) < 1e-9);
  t.is(series(m, 'sidecar_dunning_recovered_share', { arm: 'baseline' }).length, 0, 'no share for an arm with no renewal');
  t.is(series(m, 'sidecar_dunning_holdout_difference').length, 0, 'no difference without the holdout');
});

test.serial('When cases open, recover and are lost between two scrapes, Then the next scrape has moved the counters by them', async (t) => {
  const before = await scrape();
  const table = `${shop.prefix}sidecar_dunning_cases`;
  await shop.db.query(`UPDATE ${table} SET status = 'RECOVERED', recovered_by = 'new_payment_method', recovered_amount_minor = 29900, attempts = 2, closed_at = ? WHERE subscription_id = 8`, [gmt(Date.now())]);
  await shop.db.query(`UPDATE ${table} SET status = 'LOST', closed_at = ? WHERE subscription_id = 9`, [gmt(Date.now())]);
  await insertDunningCases(shop.db, shop.prefix, [
    { subscription: 12, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 9900, opened: 0, status: 'OPEN', attempts: 1 },
  ], Date.now(), 50_000);
  const after = await scrape();
  const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
  t.is(moved('sidecar_dunning_recovered_total', { provider: WALLET, reason: 'charge_amount_too_high', means: 'new_payment_method' }), 1);
  t.is(moved('sidecar_dunning_recovered_amount_total', { currency: 'DKK', means: 'new_payment_method' }), 299);
  t.is(moved('sidecar_dunning_recovered_charges_total', { provider: WALLET, means: 'new_payment_method' }), 2);
  t.is(moved('sidecar_dunning_lost_total', { provider: CARD, reason: 'unknown' }), 1);
  t.is(moved('sidecar_dunning_failed_renewals_total', { provider: CARD, reason: 'soft_declined' }), 1);
  t.is(moved('sidecar_dunning_failed_renewals_total', {}), 1);
  t.is(total(after, 'sidecar_dunning_open_cases', { provider: CARD }), 1);
  t.is(total(after, 'sidecar_dunning_open_cases', { provider: WALLET }), 0);
});

test.serial('When the holdout has members in the last 28 days, Then each arm\'s share, the difference and its 95% interval are served', async (t) => {
  // Six baseline renewals of 100.00 DKK: three paid in full, two lost, one paid 30 days after its failure (outside the window: 0),
  // and one older than 28 days (outside the metrics' window altogether).
  await insertDunningCases(shop.db, shop.prefix, [
    ...[1, 2, 3].map((i) => ({ subscription: 60 + i, provider: 'card_gateway' as const, reason: 'soft_declined', currency: 'DKK', amount: 10_000, opened: 10 + i, status: 'RECOVERED' as const, attempts: 2, closed: 9 + i, means: 'service_retry', recovered: 10_000, arm: 'baseline' as const })),
    ...[4, 5].map((i) => ({ subscription: 60 + i, provider: 'card_gateway' as const, reason: 'soft_declined', currency: 'DKK', amount: 10_000, opened: 10 + i, status: 'LOST' as const, attempts: 3, closed: 1, arm: 'baseline' as const })),
    { subscription: 66, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 10_000, opened: 27, status: 'OPEN', attempts: 4, arm: 'baseline' },
    { subscription: 67, provider: 'card_gateway', reason: 'soft_declined', currency: 'DKK', amount: 10_000, opened: 40, status: 'LOST', attempts: 4, closed: 30, arm: 'baseline' },
  ], Date.now(), 60_000);
  const m = await scrape();
  // The service arm now (after the scrape before): the eight above, the wallet's 299.00 recovered and the card's 99.00 lost.
  const service: [number, number][] = [[9900, 9900], [14900, 14900], [9900, 9900], [9900, 0], [1250, 1250], [19900, 0], [4995, 4995], [9900, 7425], [29900, 29900], [9900, 0]];
  const baseline: [number, number][] = [[10_000, 10_000], [10_000, 10_000], [10_000, 10_000], [10_000, 0], [10_000, 0]];
  const arm = (cases: [number, number][]) => {
    const w = cases.reduce((sum, [x]) => sum + x, 0);
    const share = cases.reduce((sum, [, r]) => sum + r, 0) / w;
    return { share, variance: cases.reduce((sum, [x, r]) => sum + (r - share * x) ** 2, 0) / w ** 2 };
  };
  const s = arm(service);
  const b = arm(baseline);
  t.is(total(m, 'sidecar_dunning_share_renewals', { arm: 'service' }), 10);
  t.is(total(m, 'sidecar_dunning_share_renewals', { arm: 'baseline' }), 5, 'the open one of 27 days is not counted yet, the one of 40 days is outside the window');
  t.true(Math.abs(total(m, 'sidecar_dunning_recovered_share', { arm: 'service' }) - s.share) < 1e-9);
  t.true(Math.abs(total(m, 'sidecar_dunning_recovered_share', { arm: 'baseline' }) - 0.6) < 1e-9);
  t.true(Math.abs(total(m, 'sidecar_dunning_holdout_difference', { figure: 'difference' }) - (s.share - 0.6)) < 1e-9);
  const half = 1.959963984540054 * Math.sqrt(s.variance + b.variance);
  t.true(Math.abs(total(m, 'sidecar_dunning_holdout_difference', { figure: 'low' }) - (s.share - 0.6 - half)) < 1e-9);
  t.true(Math.abs(total(m, 'sidecar_dunning_holdout_difference', { figure: 'high' }) - (s.share - 0.6 + half)) < 1e-9);
});

test('When the counters are read, Then the open cases come from the status_deadline index and the recent ones from opened_at', async (t) => {
  const dataSource = createShopDataSource(shop.config().db, 1);
  await dataSource.initialize();
  try {
    const repository = new DunningCaseReportRepository(dataSource) as unknown as { counts: PreparedStatement<'from' | 'until'>; oldestOpen: PreparedStatement<never> };
    await shop.db.query(`ANALYZE TABLE ${shop.prefix}sidecar_dunning_cases`);
    const recent = repository.counts.with({ from: gmt(now - 3 * DAY), until: '9999-12-31 23:59:59.999' });
    const [recentPlan] = await shop.db.query<any[]>(`EXPLAIN ${recent.sql}`, recent.values);
    t.is(recentPlan[0].key, 'opened_at', recent.sql);
    const [openPlan] = await shop.db.query<any[]>(`EXPLAIN ${repository.oldestOpen.sql}`);
    t.is(openPlan[0].key, 'status_deadline', repository.oldestOpen.sql);
  } finally {
    await dataSource.destroy();
  }
});
