/**
 * WooCommerce REST API keys (`wp_woocommerce_api_keys`) as `WC_REST_Authentication` checks them
 * over HTTPS Basic auth.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { timingSafeStringEqual } from '../security/constant-time';

export type ApiKeyPermission = 'read' | 'write' | 'read_write';

export function isApiKeyPermission(value: unknown): value is ApiKeyPermission {
  return value === 'read' || value === 'write' || value === 'read_write';
}

/** `wc_api_hash`: what WooCommerce stores as the key for a given `ck_...` key. */
export function hashConsumerKey(consumerKey: string): string {
  return createHmac('sha256', 'wc-api').update(consumerKey, 'utf8').digest('hex');
}

/** The secret is stored in clear; WooCommerce compares it with hash_equals. */
export function consumerSecretMatches(storedSecret: string, suppliedSecret: string): boolean {
  return timingSafeStringEqual(storedSecret, suppliedSecret);
}

/**
 * WooCommerce's permission check by HTTP method. Permissions come straight from the database, so
 * any value other than the three known ones grants nothing (OPTIONS aside, which is always allowed).
 */
export function methodAllowed(permissions: ApiKeyPermission | string, method: string): boolean {
  switch (method) {
    case 'HEAD':
    case 'GET':
      return permissions === 'read' || permissions === 'read_write';
    case 'POST':
    case 'PUT':
    case 'PATCH':
    case 'DELETE':
      return permissions === 'write' || permissions === 'read_write';
    case 'OPTIONS':
      return true;
    default:
      return false;
  }
}

export interface GeneratedApiKey {
  consumerKey: string;
  consumerSecret: string;
  /** The key as WooCommerce stores it. */
  storedKey: string;
  /** The truncated key WooCommerce shows: the last 7 characters of the key. */
  truncatedKey: string;
}

/** A key pair shaped like WooCommerce's (`ck_`/`cs_` + 40 hex), with its stored forms. For tests and the demo. */
export function generateApiKey(): GeneratedApiKey {
  const consumerKey = 'ck_' + randomBytes(20).toString('hex');
  const consumerSecret = 'cs_' + randomBytes(20).toString('hex');
  return { consumerKey, consumerSecret, storedKey: hashConsumerKey(consumerKey), truncatedKey: consumerKey.slice(-7) };
}
