import test from 'ava';
import { isoInZone, localDateInZone, parseLocalDateTime, shopTimeZone } from '../../src/shop/shop-time';
import { formatAmount } from '../../src/shared/currency';

const copenhagen = shopTimeZone('Europe/Copenhagen', '0');

test('an instant is shown in the shop zone with its offset, winter and summer', (t) => {
  t.is(isoInZone(new Date('2026-11-20T13:03:00Z'), copenhagen), '2026-11-20T14:03:00+01:00');
  t.is(isoInZone(new Date('2026-07-01T10:00:00Z'), copenhagen), '2026-07-01T12:00:00+02:00');
});

const switches: [string, string, string][] = [
  // Copenhagen springs forward at 01:00 UTC on 2026-03-29 and falls back at 01:00 UTC on 2026-10-25.
  ['Europe/Copenhagen', '2026-03-29T00:59:59Z', '2026-03-29T01:59:59+01:00'],
  ['Europe/Copenhagen', '2026-03-29T01:00:00Z', '2026-03-29T03:00:00+02:00'],
  ['Europe/Copenhagen', '2026-03-29T23:59:59Z', '2026-03-30T01:59:59+02:00'],
  ['Europe/Copenhagen', '2026-10-25T00:59:59Z', '2026-10-25T02:59:59+02:00'],
  ['Europe/Copenhagen', '2026-10-25T01:00:00Z', '2026-10-25T02:00:00+01:00'],
  // New York switches at 07:00 UTC (2026-03-08) and 06:00 UTC (2026-11-01); Lord Howe by half an hour.
  ['America/New_York', '2026-03-08T06:59:00Z', '2026-03-08T01:59:00-05:00'],
  ['America/New_York', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00'],
  ['America/New_York', '2026-11-01T05:59:00Z', '2026-11-01T01:59:00-04:00'],
  ['America/New_York', '2026-11-01T06:00:00Z', '2026-11-01T01:00:00-05:00'],
  ['Australia/Lord_Howe', '2026-04-04T14:59:00Z', '2026-04-05T01:59:00+11:00'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00Z', '2026-04-05T01:30:00+10:30'],
];
for (const [zone, instant, expected] of switches) {
  test(`around a DST switch, ${instant} in ${zone} is ${expected}`, (t) => {
    t.is(isoInZone(new Date(instant), shopTimeZone(zone, '0')), expected);
  });
}

test('the local date rolls over at local midnight', (t) => {
  t.is(localDateInZone(new Date('2026-11-20T23:30:00Z'), copenhagen), '2026-11-21');
});

test('a manual gmt_offset is used when there is no time zone name', (t) => {
  const zone = shopTimeZone('', '-5.5');
  t.is(isoInZone(new Date('2026-11-20T12:00:00Z'), zone), '2026-11-20T06:30:00-05:30');
  t.deepEqual(shopTimeZone('UTC+2', '2'), { kind: 'offset', minutes: 120 });
});

test('a legacy local date string is read in the shop zone', (t) => {
  t.is(parseLocalDateTime('2026-11-20 14:03:00', copenhagen)?.toISOString(), '2026-11-20T13:03:00.000Z');
  t.is(parseLocalDateTime('2026-07-01 12:00:00', copenhagen)?.toISOString(), '2026-07-01T10:00:00.000Z');
  t.is(parseLocalDateTime('not a date', copenhagen), null);
});

const amounts: [string, number, string][] = [
  ['199', 2, '199.00'], ['199.5', 2, '199.50'], ['199.00000000', 2, '199.00'], ['0.005', 2, '0.01'],
  ['1234.5678', 0, '1235'], ['-10.5', 2, '-10.50'], ['0', 2, '0.00'],
];
for (const [stored, decimals, expected] of amounts) {
  test(`amount ${stored} with ${decimals} decimals is ${expected}`, (t) => {
    t.is(formatAmount(stored, decimals), expected);
  });
}
