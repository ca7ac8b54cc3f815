import type { Provider } from '../../entities';

/**
 * Amounts between WooCommerce's decimal text and each provider's integer minor units, in one table.
 *
 * A provider's minor unit is not always ISO 4217's: card schemes (and PSPs such as Adyen) still count ISK in
 * hundredths, which ISO dropped. So each provider states what it was confirmed to use, and ISO 4217 is the base
 * for the rest. Sources (shared/reference/payment-providers.md, Part 4):
 * - card gateway: "amount in the smallest unit for the account currency"; the official WooCommerce plugin
 *   (reepay/reepay-woocommerce-payment `includes/Functions/currency.php`, `rp_get_currency_multiplier`)
 *   multiplies ISK by 1 and every other currency by 100, rounding with PHP's round(). For DKK, EUR, SEK, NOK
 *   and ISK the plugin and ISO agree. For JPY, KWD and the other currencies whose ISO exponent is not 2 they
 *   do not (the plugin sends JPY times 100); ISO is kept here, as the gateway's own words say, but no source
 *   confirms the gateway's unit for them.
 * - mobile wallet: "amounts are specified in minor units ... 1 kr = 100 øre" (vippsas/vipps-recurring-api
 *   `docs/openapi.yaml`, its last version of Dec 2023, which took NOK only and promised DKK and EUR); the
 *   official plugin (vippsas/vipps-recurring-woocommerce, `get_supported_currency`, 2025) offers NOK, DKK,
 *   EUR and SEK and multiplies by 100. Any other currency is refused here rather than sent.
 */

/** ISO 4217 exponents other than 2 (List One); every other code has 2. */
const ISO_4217_EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};
const DEFAULT_EXPONENT = 2;

interface ProviderCurrencies {
  /** Exponents the provider was confirmed to use where a reader might expect otherwise, over ISO 4217. */
  exponents: Readonly<Record<string, number>>;
  /** The currencies the provider takes, or 'any' (the account's own configuration decides). */
  accepts: readonly string[] | 'any';
}

const PROVIDERS: Readonly<Record<Provider, ProviderCurrencies>> = {
  // ISK as ISO has it, stated because the card schemes themselves still use 2: the plugin sends whole krónur.
  card_gateway: { exponents: { ISK: 0 }, accepts: 'any' },
  mobile_wallet: { exponents: {}, accepts: ['NOK', 'DKK', 'EUR', 'SEK'] },
};

export type CurrencyRefusal =
  | { ok: false; kind: 'unsupported_currency'; message: string }
  | { ok: false; kind: 'malformed_amount'; message: string }
  | { ok: false; kind: 'out_of_range'; message: string };

/** `rounded`: the amount had more decimals than the provider's unit, and was rounded half away from zero (as PHP's round()). */
export type MinorUnits = { ok: true; minor: number; rounded: boolean } | CurrencyRefusal;
export type DecimalAmount = { ok: true; text: string } | CurrencyRefusal;

/** The ISO 4217 exponent of a code (2 for a code not listed, as for most). */
export function isoExponent(currency: string): number {
  return ISO_4217_EXPONENTS[currency.trim().toUpperCase()] ?? DEFAULT_EXPONENT;
}

/** The decimals of the provider's unit for this currency, or null when the provider does not take it. */
export function currencyExponent(provider: Provider, currency: string): number | null {
  const code = currency.trim().toUpperCase();
  const table = PROVIDERS[provider];
  if (!/^[A-Z]{3}$/.test(code) || (table.accepts !== 'any' && !table.accepts.includes(code))) return null;
  return table.exponents[code] ?? isoExponent(code);
}

function unsupported(provider: Provider, currency: string): CurrencyRefusal {
  return { ok: false, kind: 'unsupported_currency', message: `the ${provider} does not take ${JSON.stringify(currency)}` };
}

/**
 * Plain decimal text for a number: its shortest round-trip form, which is what a person wrote (199.99, not
 * 199.990000000000009). Exponent notation only happens past 1e21 (refused later) or below 1e-6.
 */
function decimalOf(amount: number): string | null {
  if (!Number.isFinite(amount)) return null;
  const text = String(amount);
  return /e/i.test(text) ? amount.toFixed(20) : text;
}

/**
 * An amount as the provider's integer minor units: from the decimal text WooCommerce stores ('199.00',
 * '1990', '-50.00') without going through floating point; a number is read as its shortest decimal form.
 */
export function toMinorUnits(provider: Provider, currency: string, amount: string | number): MinorUnits {
  const exponent = currencyExponent(provider, currency);
  if (exponent === null) return unsupported(provider, currency);
  if (typeof amount === 'number' && Math.abs(amount) >= 1e21) return { ok: false, kind: 'out_of_range', message: `${amount} ${currency} is beyond the amounts that can be sent` };
  const text = typeof amount === 'number' ? decimalOf(amount) : amount.trim();
  const match = text === null ? null : /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === '' && !match[3])) return { ok: false, kind: 'malformed_amount', message: `${JSON.stringify(String(amount))} is not a decimal amount` };
  const [, sign, whole, fraction = ''] = match;
  const kept = fraction.slice(0, exponent).padEnd(exponent, '0');
  const dropped = fraction.slice(exponent);
  let magnitude = BigInt((whole || '0') + kept);
  if (dropped !== '' && dropped[0] >= '5') magnitude += 1n;
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, kind: 'out_of_range', message: `${text} ${currency} is beyond the amounts that can be sent` };
  const minor = Number(magnitude);
  return { ok: true, minor: sign === '-' && minor !== 0 ? -minor : minor, rounded: /[1-9]/.test(dropped) };
}

/** The provider's integer minor units as decimal text in the currency's major unit, exact: 19900 DKK → '199.00', 1990 ISK → '1990'. */
export function fromMinorUnits(provider: Provider, currency: string, minor: number): DecimalAmount {
  const exponent = currencyExponent(provider, currency);
  if (exponent === null) return unsupported(provider, currency);
  if (!Number.isSafeInteger(minor)) return { ok: false, kind: 'out_of_range', message: `${minor} is not a whole number of minor units` };
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const major = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return { ok: true, text: minor < 0 ? `-${major}` : major };
}

/** The stored decimal with the shop's number of decimals, without float rounding surprises. */
export function formatAmount(stored: string, decimals: number): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(stored.trim());
  if (!match) return stored;
  const [, sign, whole, fraction = ''] = match;
  const scaled = BigInt((whole || '0') + fraction.padEnd(decimals + 1, '0').slice(0, decimals + 1));
  const rounded = (scaled + 5n) / 10n;
  const digits = rounded.toString().padStart(decimals + 1, '0');
  const text = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
  return rounded === 0n ? text : `${sign}${text}`;
}

/** An amount in the provider's minor units of `currency` as WooCommerce's decimal text with the shop's decimals. */
export function minorToShopAmount(provider: Provider, currency: string, minor: number, decimals: number): string {
  const amount = fromMinorUnits(provider, currency, minor);
  return formatAmount(amount.ok ? amount.text : (minor / 100).toFixed(2), decimals);
}
