import crypto from 'node:crypto';
import { defaultCountryChain, normalisePhone } from '../order-status/phone-match';

/**
 * The keys a customer is found by, computed the same way for what the shop stores (when indexing, and
 * when re-checking a hit) and for what the helpdesk supplies: the email trimmed and lower-cased, the
 * phone in E.164. One place for the rule, so the index and the check can never disagree.
 */
export interface ContactKeys {
  email: string | null;
  phone: string | null;
}

/** The index column holds at most 191 bytes; longer addresses (legal up to 320) are keyed by their digest. */
const MAX_EMAIL_KEY_BYTES = 191;

export function emailKey(email: string | null | undefined): string | null {
  const normalised = (email ?? '').trim().toLowerCase();
  if (normalised === '') return null;
  if (Buffer.byteLength(normalised, 'utf8') <= MAX_EMAIL_KEY_BYTES) return normalised;
  return `sha256:${crypto.createHash('sha256').update(normalised).digest('hex')}`;
}

/**
 * A stored billing phone in E.164, read with the order's own countries first (billing, then shipping,
 * then the shop's base country, then none), as the order status route reads it. Null when unreadable.
 */
export function storedPhoneKey(phone: string | null | undefined, billingCountry: string, shippingCountry: string, shopCountry: string): string | null {
  const text = (phone ?? '').trim();
  if (text === '') return null;
  for (const country of defaultCountryChain(billingCountry, shippingCountry, shopCountry)) {
    const e164 = normalisePhone(text, country);
    if (e164) return e164;
  }
  return null;
}

/** A phone the helpdesk supplies: with its own country code, or national for the shop's base country. */
export function suppliedPhoneKey(phone: string, shopCountry: string): string | null {
  const text = phone.trim();
  if (text === '') return null;
  return normalisePhone(text, shopCountry || undefined) ?? normalisePhone(text);
}

export interface StoredContact {
  email: string | null | undefined;
  phone: string | null | undefined;
  billingCountry: string;
  shippingCountry: string;
}

export function storedContactKeys(contact: StoredContact, shopCountry: string): ContactKeys {
  return {
    email: emailKey(contact.email),
    phone: storedPhoneKey(contact.phone, contact.billingCountry, contact.shippingCountry, shopCountry),
  };
}
