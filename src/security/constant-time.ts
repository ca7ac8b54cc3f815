import crypto from 'node:crypto';

/** PHP `hash_equals`: constant time for equal lengths; different lengths are simply unequal. */
export function timingSafeStringEqual(known: string, supplied: string): boolean {
  const a = Buffer.from(known, 'utf8');
  const b = Buffer.from(supplied, 'utf8');
  if (a.length !== b.length) {
    crypto.timingSafeEqual(a, a);
    return false;
  }
  return crypto.timingSafeEqual(a, b);
}

// Digests under a per-process key make every comparison the same length, so neither a length
// difference nor the position of the first wrong byte shows in the timing. One-shot hashing of the key
// and the text: an HMAC object per digest cost more than the comparison itself on the order status route.
const comparisonKey = crypto.randomBytes(32).toString('hex');
const digest = (text: string) => crypto.hash('sha256', comparisonKey + text, 'buffer');

/** Equality of two secrets or customer details whose lengths must not show either. */
export function constantTimeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(digest(a), digest(b));
}
