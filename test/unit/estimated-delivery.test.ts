import test from 'ava';
import { addBusinessDays, carrierBusinessDays, estimateDelivery } from '../../src/order-status/estimated-delivery';

// 2026-11-16 is a Monday.
const businessDayCases: [string, number, string, string][] = [
  ['2026-11-16', 2, '2026-11-18', 'Monday + 2 is Wednesday'],
  ['2026-11-19', 2, '2026-11-23', 'Thursday + 2 skips the weekend'],
  ['2026-11-20', 2, '2026-11-24', 'Friday + 2 is Tuesday'],
  ['2026-11-20', 3, '2026-11-25', 'Friday + 3 is Wednesday'],
  ['2026-11-20', 7, '2026-12-01', 'Friday + 7 is the Tuesday after next'],
  ['2026-11-20', 6, '2026-11-30', 'Friday + 6 is the Monday after next'],
  ['2026-11-21', 2, '2026-11-24', 'Saturday + 2 counts from Monday'],
  ['2026-11-22', 2, '2026-11-24', 'Sunday + 2 counts from Monday'],
  ['2026-12-31', 2, '2027-01-04', 'across the new year and a weekend'],
];

for (const [from, days, expected, name] of businessDayCases) {
  test(`business days: ${name}`, (t) => {
    t.is(addBusinessDays(from, days), expected);
  });
}

const carrierCases: [string, string, number | null][] = [
  ['dao', 'DK', 2], ['dao', 'SE', 2], ['dhl', 'DK', 3], ['dhl', 'dk', 3], ['dhl', 'SE', 7], ['dhl', '', 7],
  ['bladkompagniet', 'DK', 6], ['bladkompagniet', 'NO', 6], ['flat_rate', 'DK', null], ['', 'DK', null],
];

for (const [carrier, country, days] of carrierCases) {
  test(`carrier ${carrier || '(none)'} to ${country || '(no country)'} takes ${days} business days`, (t) => {
    t.is(carrierBusinessDays(carrier, country), days);
  });
}

test('When the shipping country is empty, Then the billing country decides the DHL days', (t) => {
  t.is(estimateDelivery({ shippingMethodIds: ['dhl'], shippingCountry: '', billingCountry: 'DK', baseDate: '2026-11-16' }), '2026-11-19');
  t.is(estimateDelivery({ shippingMethodIds: ['dhl'], shippingCountry: '', billingCountry: 'DE', baseDate: '2026-11-16' }), '2026-11-25');
});

test('When the shipping country is set, Then it wins over the billing country', (t) => {
  t.is(estimateDelivery({ shippingMethodIds: ['dhl'], shippingCountry: 'SE', billingCountry: 'DK', baseDate: '2026-11-16' }), '2026-11-25');
});

test('When there is no base date or no listed carrier, Then there is no estimate', (t) => {
  t.is(estimateDelivery({ shippingMethodIds: ['dao'], shippingCountry: 'DK', billingCountry: 'DK', baseDate: null }), null);
  t.is(estimateDelivery({ shippingMethodIds: ['flat_rate'], shippingCountry: 'DK', billingCountry: 'DK', baseDate: '2026-11-16' }), null);
  t.is(estimateDelivery({ shippingMethodIds: [], shippingCountry: 'DK', billingCountry: 'DK', baseDate: '2026-11-16' }), null);
});

test('When an order has an unlisted and a listed shipping item, Then the listed carrier is used', (t) => {
  t.is(estimateDelivery({ shippingMethodIds: ['flat_rate', 'dao'], shippingCountry: 'DK', billingCountry: 'DK', baseDate: '2026-11-16' }), '2026-11-18');
});
