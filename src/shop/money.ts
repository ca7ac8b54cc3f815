import { isoExponent } from '../shared/currency';

/**
 * The decimals of a currency's minor unit as ISO 4217 has them (DKK 2, ISK and JPY 0), from the one table of
 * exponents (src/shared/currency.ts); 2 for none.
 */
export function currencyDecimals(currency: string | null): number {
  return currency ? isoExponent(currency) : 2;
}

/** Minor units as a decimal string in the currency's major unit (`9900` DKK → `99.00`), without the code. */
export function minorUnitsToDecimal(amountMinor: number, currency: string | null): string {
  const digits = currencyDecimals(currency);
  const sign = amountMinor < 0 ? '-' : '';
  const abs = Math.abs(amountMinor);
  const major = digits === 0 ? String(abs) : `${Math.floor(abs / 10 ** digits)}.${String(abs % 10 ** digits).padStart(digits, '0')}`;
  return `${sign}${major}`;
}
