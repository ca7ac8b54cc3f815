import { localDateInZone, parseLocalDateTime, type ShopTimeZone } from './shop-time';

/**
 * The Danish bank calendar: which days banks settle payments, and when customers' money arrives.
 *
 * Bank days are Monday to Friday except the days Danmarks Nationalbank and the banks are closed
 * ("Banklukkedage", https://www.nationalbanken.dk/da/vores-arbejde/stabile-priser-pengepolitik-og-dansk-oekonomi/banklukkedage):
 * New Year's Day, Maundy Thursday, Good Friday, Easter Monday, Ascension Day, the Friday after it (a bank
 * closing day since 2009), Whit Monday, Constitution Day (5 June), Christmas Eve, Christmas Day, Boxing Day and
 * New Year's Eve. Great Prayer Day (Store Bededag, Easter + 26) was abolished as a public holiday from 2024 (by the
 * act of February 2023) and has been a bank day since. Easter Sunday and Whit Sunday are Sundays anyway.
 * Salaries, pensions and benefits are paid on the last bank day of the month, available from 00:00 that day.
 *
 * Days are shop-local calendar dates, `YYYY-MM-DD`; the shop's zone (WordPress's `timezone_string` or
 * `gmt_offset`) turns an instant into one. Pure: no clock, no I/O.
 */

const DAY_MS = 86_400_000;
const pad = (n: number) => String(n).padStart(2, '0');
const dayOf = (utcMs: number): string => new Date(utcMs).toISOString().slice(0, 10);
const utcOf = (day: string): number => Date.parse(`${day}T00:00:00Z`);
const dateText = (year: number, month: number, day: number) => `${year}-${pad(month)}-${pad(day)}`;

/** Easter Sunday of `year` in the Gregorian calendar (the anonymous Gregorian algorithm, "Meeus/Jones/Butcher"). */
export function easterSunday(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return dateText(year, month, day);
}

/** The days of `year` on which Danish banks are closed besides weekends (some of them may fall on a weekend), in date order. */
export function bankHolidays(year: number): string[] {
  const easter = utcOf(easterSunday(year));
  const fromEaster = (days: number) => dayOf(easter + days * DAY_MS);
  const days = [
    dateText(year, 1, 1), // Nytårsdag
    fromEaster(-3), // Skærtorsdag
    fromEaster(-2), // Langfredag
    fromEaster(1), // 2. påskedag
    ...(year < 2024 ? [fromEaster(26)] : []), // Store bededag, abolished from 2024
    fromEaster(39), // Kristi himmelfartsdag
    ...(year >= 2009 ? [fromEaster(40)] : []), // Banklukkedag, the Friday after Ascension
    fromEaster(50), // 2. pinsedag
    dateText(year, 6, 5), // Grundlovsdag
    dateText(year, 12, 24), // Juleaftensdag
    dateText(year, 12, 25), // Juledag
    dateText(year, 12, 26), // 2. juledag
    dateText(year, 12, 31), // Nytårsaftensdag
  ];
  return [...new Set(days)].sort();
}

const holidaySets = new Map<number, Set<string>>();
function holidaySet(year: number): Set<string> {
  let set = holidaySets.get(year);
  if (!set) {
    set = new Set(bankHolidays(year));
    if (holidaySets.size > 200) holidaySets.clear();
    holidaySets.set(year, set);
  }
  return set;
}

/** Whether the calendar day `day` (`YYYY-MM-DD`) is a Danish bank day. */
export function isBankDate(day: string): boolean {
  const weekday = new Date(utcOf(day)).getUTCDay();
  if (weekday === 0 || weekday === 6) return false;
  return !holidaySet(Number(day.slice(0, 4))).has(day);
}

/** Whether the instant falls on a Danish bank day in the shop's zone. */
export function isBankDay(at: Date, zone: ShopTimeZone): boolean {
  return isBankDate(localDateInZone(at, zone));
}

/** The first bank day on or after the calendar day `day`. */
export function firstBankDayOnOrAfter(day: string): string {
  let t = utcOf(day);
  while (!isBankDate(dayOf(t))) t += DAY_MS;
  return dayOf(t);
}

/** The last bank day of `month` (1–12) of `year`. */
export function lastBankDayOfMonth(year: number, month: number): string {
  let t = Date.UTC(year, month, 0);
  while (!isBankDate(dayOf(t))) t -= DAY_MS;
  return dayOf(t);
}

/** When customers' money arrives (DUNNING_PAYDAYS): the last bank day of the month, and/or days of the month. */
export interface Paydays {
  lastBankDay: boolean;
  /** Days of the month (1–31), each moved to the next bank day when it is none; one past the month's end is its last day. */
  daysOfMonth: number[];
}

export const DEFAULT_PAYDAYS = 'last-bank-day';

/** Reads DUNNING_PAYDAYS: `last-bank-day`, day numbers such as `1,15`, or both (`15,last-bank-day`); undefined when it is neither. */
export function parsePaydays(raw: string): Paydays | undefined {
  const parts = raw.split(',').map((part) => part.trim().toLowerCase());
  if (!parts.length || parts.some((part) => part === '')) return undefined;
  const paydays: Paydays = { lastBankDay: false, daysOfMonth: [] };
  for (const part of parts) {
    if (part === 'last-bank-day') {
      paydays.lastBankDay = true;
    } else if (/^\d{1,2}$/.test(part) && Number(part) >= 1 && Number(part) <= 31) {
      if (!paydays.daysOfMonth.includes(Number(part))) paydays.daysOfMonth.push(Number(part));
    } else {
      return undefined;
    }
  }
  paydays.daysOfMonth.sort((a, b) => a - b);
  return paydays;
}

/** The bank days on which money arrives for the paydays of `month` of `year` (a moved one may fall in the next month), in order. */
export function paydaysOfMonth(year: number, month: number, paydays: Paydays): string[] {
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const days = paydays.daysOfMonth.map((n) => firstBankDayOnOrAfter(dateText(year, month, Math.min(n, lastDay))));
  if (paydays.lastBankDay) days.push(lastBankDayOfMonth(year, month));
  return [...new Set(days)].sort();
}

/**
 * The first moment after `from` that is `time` (`HH:MM`, shop-local) on a bank day on which money arrives, in the
 * shop's zone. Null only when `paydays` names no day at all.
 */
export function nextPaydayMorning(from: Date, zone: ShopTimeZone, paydays: Paydays, time = '00:15'): Date | null {
  if (!paydays.lastBankDay && !paydays.daysOfMonth.length) return null;
  const today = localDateInZone(from, zone);
  let year = Number(today.slice(0, 4));
  let month = Number(today.slice(5, 7));
  // The previous month's moved paydays may fall in this one (the 31st moved past a weekend), so it is looked at too.
  month -= 1;
  if (month === 0) { month = 12; year -= 1; }
  let soonest: Date | null = null;
  for (let i = 0; i < 15 && !soonest; i += 1) {
    // A month's first payday after `from` is the soonest unless the month before moved one past it: both are looked at.
    for (const [y, m] of [[year, month], [month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1]]) {
      for (const day of paydaysOfMonth(y, m, paydays)) {
        const at = parseLocalDateTime(`${day} ${time}:00`, zone);
        if (at && at.getTime() > from.getTime() && (!soonest || at.getTime() < soonest.getTime())) soonest = at;
      }
    }
    month += 1;
    if (month === 13) { month = 1; year += 1; }
  }
  return soonest;
}
