/** The decimals of a currency's major unit (ISO 4217 as Intl knows it: DKK 2, JPY 0); 2 for none or an unknown code. */
export function currencyDecimals(currency: string | null): number {
  if (!currency) return 2;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown currency code: two decimals is the common case.
    return 2;
  }
}

/** Minor units as a decimal string in the currency's major unit (`9900` DKK → `99.00`), without the code. */
export function minorUnitsToDecimal(amountMinor: number, currency: string | null): string {
  const digits = currencyDecimals(currency);
  const sign = amountMinor < 0 ? '-' : '';
  const abs = Math.abs(amountMinor);
  const major = digits === 0 ? String(abs) : `${Math.floor(abs / 10 ** digits)}.${String(abs % 10 ** digits).padStart(digits, '0')}`;
  return `${sign}${major}`;
}
