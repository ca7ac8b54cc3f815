/**
 * How a discount type's amount is read. Schemes live in code (a type row names one); each decides whether
 * the amount is money in the subscription's currency or a percentage of the renewal.
 */
export interface DiscountScheme {
  id: 'fixed_amount' | 'percentage';
  label: string;
  /** `currency`: an amount in the subscription's currency; `percent`: a share of the renewal total. */
  amount_type: 'currency' | 'percent';
  /** The largest amount allowed (percentages: 100); null when bounded only by the subscription's total. */
  max: number | null;
  /** Decimal places of the amount; null for currency amounts, which follow the shop's price decimals. */
  decimals: number | null;
}

export const DISCOUNT_SCHEMES: Record<DiscountScheme['id'], DiscountScheme> = {
  fixed_amount: { id: 'fixed_amount', label: 'Fixed amount', amount_type: 'currency', max: null, decimals: null },
  percentage: { id: 'percentage', label: 'Percentage', amount_type: 'percent', max: 100, decimals: 2 },
};

export function schemeOf(id: string): DiscountScheme | null {
  return Object.prototype.hasOwnProperty.call(DISCOUNT_SCHEMES, id) ? DISCOUNT_SCHEMES[id as DiscountScheme['id']] : null;
}

const SCALE = 8;

/** An amount's digits, as a regular expression's source: up to 18 whole digits and up to SCALE decimals. The contract's amount text is this too. */
export const DECIMAL_DIGITS = '\\d{1,18}(\\.\\d{1,8})?';
const DECIMAL_TEXT = new RegExp(`^${DECIMAL_DIGITS}$`);

/** A non-negative decimal (JSON number or numeric string) as exact text, or null. */
function decimalText(value: unknown): string | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : typeof value === 'string' ? value.trim() : '';
  return DECIMAL_TEXT.test(text) ? text : null;
}

/** The decimal scaled to 10^-8 units, for exact comparisons. */
export function scaled(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole + fraction.padEnd(SCALE, '0').slice(0, SCALE));
}

export type AmountCheck = { ok: true; amount: string } | { ok: false; message: string };

/**
 * Whether `value` is a valid amount for the scheme: positive, within the scheme's maximum, with no more
 * decimals than allowed (currency amounts: the shop's price decimals).
 */
export function checkAmount(scheme: DiscountScheme, value: unknown, priceDecimals: number): AmountCheck {
  const decimal = decimalText(value);
  if (decimal === null) return { ok: false, message: 'amount must be a positive number.' };
  if (scaled(decimal) <= 0n) return { ok: false, message: 'amount must be greater than 0.' };
  const decimals = (decimal.split('.')[1] ?? '').length;
  const allowed = scheme.decimals ?? priceDecimals;
  if (decimals > allowed) return { ok: false, message: `amount may have at most ${allowed} decimals.` };
  if (scheme.max !== null && scaled(decimal) > scaled(String(scheme.max))) {
    return { ok: false, message: `A ${scheme.label.toLowerCase()} discount is at most ${scheme.max}.` };
  }
  return { ok: true, amount: decimal };
}
