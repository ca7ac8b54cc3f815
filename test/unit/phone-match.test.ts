import test from 'ava';
import { defaultCountryChain, normalisePhone, phonesMatch } from '../../src/order-status/phone-match';

const normaliseCases: [string, string | undefined, string | null][] = [
  ['20123456', 'DK', '+4520123456'],
  ['20 12 34 56', 'DK', '+4520123456'],
  ['20-12-34-56', 'DK', '+4520123456'],
  ['+45 20 12 34 56', 'DK', '+4520123456'],
  ['+45 20 12 34 56', undefined, '+4520123456'],
  ['+4520123456', 'SE', '+4520123456'],
  ['0045 20 12 34 56', 'DK', '+4520123456'],
  ['45 20 12 34 56', 'DK', '+4520123456'],
  ['20123456', undefined, null],
  ['070-123 45 67', 'SE', '+46701234567'],
  ['', 'DK', null],
  ['abc', 'DK', null],
  ['12', 'DK', null],
];

for (const [input, country, expected] of normaliseCases) {
  test(`normalise "${input}" with default ${country ?? 'none'} → ${expected}`, (t) => {
    t.is(normalisePhone(input, country), expected);
  });
}

test('the default-country chain is billing, shipping if different, shop, none', (t) => {
  t.deepEqual(defaultCountryChain('DK', 'SE', 'DK'), ['DK', 'SE', undefined]);
  t.deepEqual(defaultCountryChain('DK', 'DK', 'NO'), ['DK', 'NO', undefined]);
  t.deepEqual(defaultCountryChain('', '', 'DK'), ['DK', undefined]);
  t.deepEqual(defaultCountryChain('', '', ''), [undefined]);
  t.deepEqual(defaultCountryChain(' dk ', 'se', 'DK'), ['DK', 'SE', undefined]);
});

const matchCases: [string, string, string, string, string, boolean, string][] = [
  // supplied, stored, billing, shipping, shop, expected, why
  ['20123456', '+45 20 12 34 56', 'DK', 'DK', 'DK', true, 'local number against a stored +45 number'],
  ['+4520123456', '20-12-34-56', 'DK', '', 'DK', true, 'fully qualified against a stored local number'],
  ['20 12 34 56', '20123456', 'DK', '', 'DK', true, 'spaces against plain'],
  ['20123457', '20123456', 'DK', '', 'DK', false, 'a different number'],
  ['+4520123456', '20123456', '', '', 'DK', true, 'empty billing country: the shop country reads the stored number'],
  ['20123456', '20123456', 'SE', '', 'DK', true, 'wrong billing country: the shop country still reads both the same'],
  ['+4520123456', '20123456', 'SE', 'NO', 'SE', false, 'wrong countries everywhere: a stored local number cannot become +45'],
  ['+4520123456', '+4520123456', '', '', '', true, 'no country anywhere, both fully qualified'],
  ['20123456', '20123456', '', '', '', false, 'no country anywhere and no country code: no match'],
  ['070 123 45 67', '+46701234567', 'SE', '', 'DK', true, 'a Swedish customer'],
  ['+46701234567', '0701234567', 'DK', 'SE', 'DK', true, 'shipping country reads the stored Swedish number'],
  ['', '20123456', 'DK', '', 'DK', false, 'empty supplied number'],
];

for (const [supplied, stored, billing, shipping, shop, expected, why] of matchCases) {
  test(`phone match: ${why}`, (t) => {
    t.is(phonesMatch(supplied, stored, defaultCountryChain(billing, shipping, shop)), expected);
  });
}
