import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config';
import {
  bankHolidays, easterSunday, firstBankDayOnOrAfter, isBankDate, isBankDay, lastBankDayOfMonth, nextPaydayMorning, parsePaydays, paydaysOfMonth,
} from '../../src/shop/danish-bank-calendar';
import { shopTimeZone } from '../../src/shop/shop-time';
import { paydayAttemptTime } from '../../src/dunning/dunning';
import { WALLET_DUE_IN_DAYS } from '../../src/dunning/charge-rules/charge-rules';

// The Danish bank calendar against the published list of days the banks are closed, and the payday rule.

/**
 * The days Danish banks are closed besides weekends, written out by hand, not computed. 2026 and 2027: Danmarks
 * Nationalbank, "Banklukkedage" (nationalbanken.dk/da/vores-arbejde/stabile-priser-pengepolitik-og-dansk-oekonomi/banklukkedage),
 * as read in November 2026 (its 2027 list leaves out 25 and 26 December, a Saturday and a Sunday; they are added here).
 * 2028 to 2030 are not published there yet: the same closing days (Nytårsdag, Skærtorsdag, Langfredag, 2. påskedag,
 * Kristi himmelfartsdag, the Friday after it, 2. pinsedag, Grundlovsdag, Juleaftensdag, Juledag, 2. juledag,
 * Nytårsaftensdag; no Store bededag since 2024) on the dates of those years' Easter (16 April 2028, 1 April 2029,
 * 21 April 2030). In 2028 Whit Monday is Constitution Day, 5 June.
 */
const OFFICIAL: Record<number, string[]> = {
  2026: ['2026-01-01', '2026-04-02', '2026-04-03', '2026-04-06', '2026-05-14', '2026-05-15', '2026-05-25', '2026-06-05',
    '2026-12-24', '2026-12-25', '2026-12-26', '2026-12-31'],
  2027: ['2027-01-01', '2027-03-25', '2027-03-26', '2027-03-29', '2027-05-06', '2027-05-07', '2027-05-17', '2027-06-05',
    '2027-12-24', '2027-12-25', '2027-12-26', '2027-12-31'],
  2028: ['2028-01-01', '2028-04-13', '2028-04-14', '2028-04-17', '2028-05-25', '2028-05-26', '2028-06-05',
    '2028-12-24', '2028-12-25', '2028-12-26', '2028-12-31'],
  2029: ['2029-01-01', '2029-03-29', '2029-03-30', '2029-04-02', '2029-05-10', '2029-05-11', '2029-05-21', '2029-06-05',
    '2029-12-24', '2029-12-25', '2029-12-26', '2029-12-31'],
  2030: ['2030-01-01', '2030-04-18', '2030-04-19', '2030-04-22', '2030-05-30', '2030-05-31', '2030-06-05', '2030-06-10',
    '2030-12-24', '2030-12-25', '2030-12-26', '2030-12-31'],
};

const DAY_MS = 86_400_000;
const daysOf = (year: number) => {
  const days: string[] = [];
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
};
const weekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());

test('Easter Sunday 2026 to 2030', (t) => {
  t.deepEqual([2026, 2027, 2028, 2029, 2030].map(easterSunday), ['2026-04-05', '2027-03-28', '2028-04-16', '2029-04-01', '2030-04-21']);
});

for (const year of [2026, 2027, 2028, 2029, 2030]) {
  test(`${year}: the bank holidays are the published ones, and every other weekday is a bank day`, (t) => {
    t.deepEqual(bankHolidays(year), OFFICIAL[year]);
    const closedWeekdays = daysOf(year).filter((day) => !weekend(day) && !isBankDate(day));
    t.deepEqual(closedWeekdays, OFFICIAL[year].filter((day) => !weekend(day)));
    for (const day of daysOf(year).filter(weekend)) t.false(isBankDate(day), `${day} is a weekend day`);
  });
}

test('Great Prayer Day is a bank day from 2024; it was a holiday before', (t) => {
  t.true(isBankDate('2024-04-26'));
  t.true(isBankDate('2026-05-01'));
  t.true(bankHolidays(2023).includes('2023-05-05'));
  t.false(isBankDate('2023-05-05'));
});

test('A bank day is read in the shop\'s zone', (t) => {
  const copenhagen = shopTimeZone('Europe/Copenhagen', undefined);
  // 23:30 UTC on Sunday 29 November 2026 is 00:30 on Monday 30 November in Copenhagen.
  t.true(isBankDay(new Date('2026-11-29T23:30:00Z'), copenhagen));
  t.false(isBankDay(new Date('2026-11-29T23:30:00Z'), shopTimeZone(undefined, '0')));
});

test('The last bank day of the month, when the month ends on a weekend or a holiday', (t) => {
  t.is(lastBankDayOfMonth(2026, 11), '2026-11-30'); // a Monday
  t.is(lastBankDayOfMonth(2026, 1), '2026-01-30'); // 31 January is a Saturday
  t.is(lastBankDayOfMonth(2026, 5), '2026-05-29'); // 30 and 31 May are a weekend
  t.is(lastBankDayOfMonth(2026, 12), '2026-12-30'); // 31 December is a bank holiday
  t.is(lastBankDayOfMonth(2027, 12), '2027-12-30');
  t.is(lastBankDayOfMonth(2030, 5), '2030-05-29'); // 30 May Ascension, 31 May the day after
  t.is(lastBankDayOfMonth(2029, 3), '2029-03-28'); // 29 Maundy Thursday, 30 Good Friday, 31 a Saturday
});

test('A day that is no bank day moves to the next bank day', (t) => {
  t.is(firstBankDayOnOrAfter('2026-11-30'), '2026-11-30');
  t.is(firstBankDayOnOrAfter('2026-11-28'), '2026-11-30');
  t.is(firstBankDayOnOrAfter('2026-12-24'), '2026-12-28');
  t.is(firstBankDayOnOrAfter('2026-12-31'), '2027-01-04');
  t.is(firstBankDayOnOrAfter('2026-04-02'), '2026-04-07');
});

test('DUNNING_PAYDAYS: last-bank-day, days of the month, or both', (t) => {
  t.deepEqual(parsePaydays('last-bank-day'), { lastBankDay: true, daysOfMonth: [] });
  t.deepEqual(parsePaydays('15, 1'), { lastBankDay: false, daysOfMonth: [1, 15] });
  t.deepEqual(parsePaydays('15,Last-Bank-Day,15'), { lastBankDay: true, daysOfMonth: [15] });
  for (const wrong of ['', '0', '32', 'last', '1,,15', '1.5', 'payday', '15,']) t.is(parsePaydays(wrong), undefined, wrong);
  t.deepEqual(paydaysOfMonth(2026, 11, parsePaydays('1,15,last-bank-day')!), ['2026-11-02', '2026-11-16', '2026-11-30']);
  t.deepEqual(paydaysOfMonth(2027, 2, parsePaydays('31')!), ['2027-03-01'], 'past the month\'s end: its last day, moved to a bank day');
});

test('DUNNING_PAYDAYS in the configuration: unset is last-bank-day; a wrong one is refused naming the setting', (t) => {
  const config = (env: Record<string, string>) => loadConfig({ DB_NAME: 'x', ...env }).dunning.paydays;
  t.deepEqual(config({}), { lastBankDay: true, daysOfMonth: [] });
  t.deepEqual(config({ DUNNING_PAYDAYS: '1,15' }), { lastBankDay: false, daysOfMonth: [1, 15] });
  t.throws(() => config({ DUNNING_PAYDAYS: 'friday' }), { instanceOf: ConfigError, message: /^DUNNING_PAYDAYS must be last-bank-day, days of the month/ });
});

test('The next payday morning: 00:15 shop time on the first payday bank day after the moment', (t) => {
  const zone = shopTimeZone('Europe/Copenhagen', undefined);
  const last = parsePaydays('last-bank-day')!;
  // Declined on Friday 20 November 2026: Monday 30 November, 00:15 in Copenhagen (CET, UTC+1).
  t.is(nextPaydayMorning(new Date('2026-11-20T08:00:00Z'), zone, last)!.toISOString(), '2026-11-29T23:15:00.000Z');
  // On payday after the morning: the next month's, 30 December (31 December is a bank holiday).
  t.is(nextPaydayMorning(new Date('2026-11-30T09:00:00Z'), zone, last)!.toISOString(), '2026-12-29T23:15:00.000Z');
  // Summer time (CEST, UTC+2): 29 May 2026, as 30 and 31 May are a weekend.
  t.is(nextPaydayMorning(new Date('2026-05-20T08:00:00Z'), zone, last)!.toISOString(), '2026-05-28T22:15:00.000Z');
  // The 15th on a Sunday moves to Monday the 16th.
  t.is(nextPaydayMorning(new Date('2026-11-03T08:00:00Z'), zone, parsePaydays('1,15')!)!.toISOString(), '2026-11-15T23:15:00.000Z');
  // The 31st of January 2026 (a Saturday) moved to Monday 2 February comes after the 1st (a Sunday, also 2 February): once.
  t.is(nextPaydayMorning(new Date('2026-01-20T08:00:00Z'), zone, parsePaydays('1,31')!)!.toISOString(), '2026-02-01T23:15:00.000Z');
});

test('A payday attempt: a card is charged on the payday morning; a wallet charge is made two days ahead at midday, so that it is due on payday', (t) => {
  // 00:15 on Monday 30 November 2026 in Copenhagen (UTC+1).
  const morning = new Date('2026-11-29T23:15:00Z');
  const now = new Date('2026-11-20T08:00:00Z');
  t.is(paydayAttemptTime('card_gateway', morning, now).toISOString(), morning.toISOString());
  const wallet = paydayAttemptTime('mobile_wallet', morning, now);
  t.is(wallet.toISOString(), '2026-11-28T11:15:00.000Z', '12:15 on Saturday 28 November in Copenhagen');
  // The wallet charge an attempt then makes is due WALLET_DUE_IN_DAYS after it, on its UTC date: payday.
  t.is(new Date(wallet.getTime() + WALLET_DUE_IN_DAYS * 86_400_000).toISOString().slice(0, 10), '2026-11-30');
  t.is(paydayAttemptTime('mobile_wallet', morning, new Date('2026-11-29T08:00:00Z')).toISOString(), '2026-11-29T08:00:00.000Z', 'never before now');
});
