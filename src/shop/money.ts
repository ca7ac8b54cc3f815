import type { PriceFormat } from '../data-access/shop-settings-repository';
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

/** WooCommerce's own symbols (get_woocommerce_currency_symbols()) of the currencies a Nordic shop takes; others by their code. */
const SYMBOLS: Record<string, string> = { DKK: 'kr.', SEK: 'kr', NOK: 'kr', ISK: 'kr.', EUR: '€', USD: '$', GBP: '£' };

/**
 * An amount as the shop shows prices (wc_price() without its HTML): `decimals` digits, WooCommerce's separators and
 * the currency's symbol where the shop puts it (`kr. 199,00` for a Danish shop with the symbol on the left and a space).
 */
export function shopPrice(amount: string | number, currency: string, decimals: number, format: PriceFormat | undefined): string {
  const { position, thousandSeparator, decimalSeparator } = format ?? { position: 'left', thousandSeparator: ',', decimalSeparator: '.' };
  const value = Number(amount);
  const fixed = Math.abs(Number.isFinite(value) ? value : 0).toFixed(decimals);
  const [whole, fraction] = fixed.split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, thousandSeparator);
  const number = `${value < 0 ? '-' : ''}${grouped}${fraction ? `${decimalSeparator}${fraction}` : ''}`;
  const symbol = SYMBOLS[currency] ?? currency;
  switch (position) {
    case 'right': return `${number}${symbol}`;
    case 'right_space': return `${number} ${symbol}`;
    case 'left_space': return `${symbol} ${number}`;
    default: return `${symbol}${number}`;
  }
}
