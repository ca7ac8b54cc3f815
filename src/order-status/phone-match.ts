import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/**
 * E.164 form of a phone number read with a default country, or null. A number written with its
 * country code but without "+" (e.g. "45 20 12 34 56") is also tried as international when a
 * default country is in play.
 */
export function normalisePhone(text: string, defaultCountry?: string): string | null {
  const country = defaultCountry && /^[A-Z]{2}$/i.test(defaultCountry) ? (defaultCountry.toUpperCase() as CountryCode) : undefined;
  const direct = parse(text, country);
  if (direct) return direct;
  // Without a default country only a number carrying its own "+" country code may match (rule 5).
  const digits = text.replace(/\D/g, '');
  return !country || /^\s*\+/.test(text) || digits.length < 8 ? null : parse(`+${digits}`, undefined);
}

function parse(text: string, country: CountryCode | undefined): string | null {
  try {
    const parsed = parsePhoneNumberFromString(text, country ? { defaultCountry: country } : undefined);
    return parsed && parsed.isPossible() ? parsed.number : null;
  } catch {
    return null;
  }
}

/**
 * The default countries tried, in order (SPEC 4.1.1 rule 5): billing country, shipping country
 * if different, the shop's base country, then none (only fully qualified numbers match).
 */
export function defaultCountryChain(billingCountry: string, shippingCountry: string, shopCountry: string): (string | undefined)[] {
  const chain: (string | undefined)[] = [];
  for (const country of [billingCountry, shippingCountry, shopCountry]) {
    const code = country.trim().toUpperCase();
    if (code && !chain.includes(code)) chain.push(code);
  }
  chain.push(undefined);
  return chain;
}

/** Whether two numbers are the same under any default country of the chain. Always walks the whole chain. */
export function phonesMatch(supplied: string, stored: string, chain: (string | undefined)[]): boolean {
  let matched = false;
  for (const country of chain) {
    const a = normalisePhone(supplied, country);
    const b = normalisePhone(stored, country);
    matched = (a !== null && a === b) || matched;
  }
  return matched;
}
