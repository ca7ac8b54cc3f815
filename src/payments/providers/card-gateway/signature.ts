import crypto from 'node:crypto';
import { timingSafeStringEqual } from '../../../security/constant-time';

/**
 * Card gateway (Reepay / Frisbii) webhook signature.
 *
 * The provider signs only `timestamp + id` (the string values of those body fields, concatenated with no
 * separator) with HMAC-SHA256 keyed by the webhook secret string (UTF-8, used as is), and puts the lowercase
 * hex digest in the body field `signature`. The rest of the body is NOT authenticated, which is why the
 * processor must read state back from the API instead of trusting body fields.
 */

/** The body fields that take part in the signature. */
export interface CardGatewaySignedFields {
  timestamp: string;
  id: string;
}

/** Lowercase hex HMAC-SHA256(secret, timestamp + id), as the provider computes it. */
export function signCardGatewayEvent(fields: CardGatewaySignedFields, secret: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(fields.timestamp + fields.id, 'utf8').digest('hex');
}

/**
 * True when the payload's `signature` matches `timestamp + id` under one of the secrets.
 * Takes the already-parsed body; anything that is not a string where a string is expected fails.
 * Several secrets may be given so a caller can accept the cached and a freshly fetched secret during rotation.
 */
export function verifyCardGatewaySignature(
  payload: { timestamp?: unknown; id?: unknown; signature?: unknown } | null | undefined,
  secrets: string | readonly string[],
): boolean {
  if (!payload || typeof payload !== 'object') return false;
  const { timestamp, id, signature } = payload;
  if (typeof timestamp !== 'string' || typeof id !== 'string' || typeof signature !== 'string') return false;
  // The digest is 64 hex digits; anything else cannot match.
  if (!/^[0-9a-fA-F]{64}$/.test(signature)) return false;
  // The provider sends lowercase hex; folding case accepts no additional secret, it only avoids a spurious 401.
  const given = signature.toLowerCase();
  let matched = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    if (secret === '') continue; // an unset secret must never verify anything
    // No early exit: the time taken does not reveal which secret (if any) matched.
    if (timingSafeStringEqual(signCardGatewayEvent({ timestamp, id }, secret), given)) matched = true;
  }
  return matched;
}
