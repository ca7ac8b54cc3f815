import test from 'ava';
import { currencyExponent, fromMinorUnits, isoExponent, toMinorUnits } from '../../src/shared/currency';

// Amounts between WooCommerce's decimal text and each provider's minor units, exactly.

const minor = (...args: Parameters<typeof toMinorUnits>) => {
  const result = toMinorUnits(...args);
  if (!result.ok) throw new Error(result.message);
  return result.minor;
};
const decimal = (...args: Parameters<typeof fromMinorUnits>) => {
  const result = fromMinorUnits(...args);
  if (!result.ok) throw new Error(result.message);
  return result.text;
};

test('DKK: øre at both providers, from the text WooCommerce stores and back', (t) => {
  for (const provider of ['card_gateway', 'mobile_wallet'] as const) {
    t.is(minor(provider, 'DKK', '199.00'), 19900);
    t.is(minor(provider, 'DKK', '199'), 19900);
    t.is(minor(provider, 'DKK', '199.5'), 19950);
    t.is(minor(provider, 'DKK', '0.01'), 1);
    t.is(decimal(provider, 'DKK', 19900), '199.00');
    t.is(decimal(provider, 'DKK', 5), '0.05');
  }
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '199.00'), { ok: true, minor: 19900, rounded: false });
});

test('No float drift: amounts whose float times 100 is not whole come out exact', (t) => {
  // 19.99 * 100 = 1998.9999999999998 and 1.005 * 100 = 100.49999999999999 in floating point.
  t.is(minor('card_gateway', 'DKK', '19.99'), 1999);
  t.is(minor('card_gateway', 'DKK', 19.99), 1999);
  t.is(minor('card_gateway', 'DKK', '4.35'), 435);
  t.is(minor('card_gateway', 'DKK', '9007199254740.99'), 900719925474099);
  t.is(decimal('card_gateway', 'DKK', 900719925474099), '9007199254740.99');
});

test('ISK: whole krónur at the card gateway (its plugin multiplies by 1), not hundredths', (t) => {
  t.is(currencyExponent('card_gateway', 'ISK'), 0);
  t.is(minor('card_gateway', 'ISK', '1990'), 1990);
  t.is(minor('card_gateway', 'ISK', '1990.00'), 1990);
  t.is(decimal('card_gateway', 'ISK', 1990), '1990');
});

test('JPY and KWD follow ISO 4217 at the card gateway: 0 and 3 decimals', (t) => {
  t.is(minor('card_gateway', 'JPY', '1990'), 1990);
  t.is(minor('card_gateway', 'JPY', '1990.00'), 1990);
  t.is(decimal('card_gateway', 'JPY', 1990), '1990');
  t.is(minor('card_gateway', 'KWD', '1.234'), 1234);
  t.is(decimal('card_gateway', 'KWD', 1234), '1.234');
  t.is(isoExponent('jpy'), 0);
  t.is(isoExponent('EUR'), 2);
});

test('Rounding: more decimals than the unit holds round half away from zero, as the gateway plugin\'s round() does, and say so', (t) => {
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '199.995'), { ok: true, minor: 20000, rounded: true });
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '199.994999'), { ok: true, minor: 19999, rounded: true });
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '1.005'), { ok: true, minor: 101, rounded: true });
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '199.9900'), { ok: true, minor: 19999, rounded: false }, 'zeros past the unit are not rounding');
  t.deepEqual(toMinorUnits('card_gateway', 'ISK', '1990.50'), { ok: true, minor: 1991, rounded: true });
  t.deepEqual(toMinorUnits('card_gateway', 'ISK', '1990.49'), { ok: true, minor: 1990, rounded: true });
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', '-50.005'), { ok: true, minor: -5001, rounded: true }, 'a refund\'s negative total, away from zero');
  t.is(minor('card_gateway', 'DKK', '-0.001'), 0);
  t.is(decimal('card_gateway', 'DKK', -5001), '-50.01');
});

test('The mobile wallet takes NOK, DKK, EUR and SEK only; anything else is refused, not sent', (t) => {
  for (const currency of ['NOK', 'DKK', 'EUR', 'SEK']) t.is(minor('mobile_wallet', currency, '499'), 49900, currency);
  t.like(toMinorUnits('mobile_wallet', 'ISK', '1990'), { ok: false, kind: 'unsupported_currency' });
  t.like(fromMinorUnits('mobile_wallet', 'USD', 100), { ok: false, kind: 'unsupported_currency' });
  t.is(currencyExponent('mobile_wallet', 'JPY'), null);
});

test('Malformed amounts, currency codes and sizes are refused with a typed outcome', (t) => {
  for (const amount of ['', '.', 'abc', '1,99', '1.2.3', '1e3', ' ', '+'] as const) {
    t.like(toMinorUnits('card_gateway', 'DKK', amount), { ok: false, kind: 'malformed_amount' }, JSON.stringify(amount));
  }
  t.like(toMinorUnits('card_gateway', 'DKK', Number.NaN), { ok: false, kind: 'malformed_amount' });
  t.like(toMinorUnits('card_gateway', 'DK', '1.00'), { ok: false, kind: 'unsupported_currency' });
  t.like(toMinorUnits('card_gateway', 'DKK', '90071992547409.92'), { ok: false, kind: 'out_of_range' });
  t.like(toMinorUnits('card_gateway', 'DKK', 1e21), { ok: false, kind: 'out_of_range' });
  t.like(fromMinorUnits('card_gateway', 'DKK', 1.5), { ok: false, kind: 'out_of_range' });
  t.deepEqual(toMinorUnits('card_gateway', 'DKK', 0.1 + 0.2), { ok: true, minor: 30, rounded: true }, 'a float sum is read as the decimal it prints as');
  t.is(minor('card_gateway', 'DKK', 1e-7), 0);
  t.is(minor('card_gateway', 'DKK', ' 199.00 '), 19900, 'surrounding blanks are not part of the amount');
  t.is(minor('card_gateway', 'dkk', '.5'), 50);
});
