/**
 * A lone UTF-16 surrogate. JSON's `\ud800` escapes can put one in a parsed string, and no UTF-8 text
 * can hold it: MySQL would store U+FFFD in its place (two different values become one) and
 * encodeURIComponent throws on it (a provider could never be asked about it).
 */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether every string in a parsed JSON value (object keys included, at any depth) is well-formed Unicode. */
export function wellFormed(value: unknown): boolean {
  // Iterative: a body may nest deeper than the call stack goes.
  const pending: unknown[] = [value];
  while (pending.length) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return false;
    } else if (Array.isArray(item)) {
      pending.push(...item);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        if (LONE_SURROGATE.test(key)) return false;
        pending.push(child);
      }
    }
  }
  return true;
}

/** The fields of a JSON object body whose value is not well-formed text; `body` when a field's own name is not. */
export function malformedFields(body: Record<string, unknown>): string[] {
  const fields = new Set<string>();
  for (const [key, value] of Object.entries(body)) {
    if (!wellFormed(key)) fields.add('body');
    else if (!wellFormed(value)) fields.add(key);
  }
  return [...fields];
}
