/**
 * Differences between two WooCommerce snapshots (or parts of them), e.g. the order the service moved and its
 * twin moved by WooCommerce's own calls, as readable lines: `path: a-value vs b-value`.
 */

export interface DiffOptions {
  /**
   * Paths to leave out. A path is dot-separated, array indexes included (`notes.0.content`); in a pattern `*`
   * is one segment and `**` any number (`notes.*.id`, `**.transaction_id`).
   */
  ignore?: string[];
  /**
   * The objects' own ids, [id in a, id in b, placeholder]: a number, an all-digit string or an object key equal
   * to the id reads as the placeholder, and so does the id as a whole number inside other strings (note texts).
   */
  ids?: Array<[number, number, string]>;
  /** Timestamps (ISO 8601 or 'Y-m-d H:i:s', taken as UTC) this many seconds apart or less are equal. */
  timeToleranceSeconds?: number;
  /**
   * Compare transaction ids too. By default each side's own transaction ids (the values at paths ending in
   * transaction_id) read as <TXN> wherever they appear, e.g. in hook arguments and notes.
   */
  transactionIds?: boolean;
  /** Compare note dates too (by default notes.*.date_created is left out). */
  noteDates?: boolean;
  /** Last say on a leaf value before comparing, per side. */
  normalise?: (path: string, value: unknown, side: 'a' | 'b') => unknown;
}

/**
 * Paths that differ between any two objects WooCommerce makes (generated keys, row ids of items, notes, actions
 * and log entries), for `ignore` when comparing two snapshots of twins.
 */
export const VOLATILE_PATHS = [
  'data.order_key',
  'notes.*.id',
  'items.*.data.id',
  'actions.*.action_id',
  'recorded.*.seq',
  'download_permissions.*.permission_id',
  'download_permissions.*.order_key',
  'analytics.order_product_lookup.*.order_item_id',
  'recorded.*.detail.args.*.note_id',
  'refunds.*.id',
];

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('.')
    .map((segment) => (segment === '**' ? '(?:[^.]+\\.)*' : segment === '*' ? '[^.]+\\.' : `${segment.replace(/[|\\{}()[\]^$+?*.]/g, '\\$&')}\\.`))
    .join('');
  return new RegExp(`^${body.replace(/\\\.$/, '')}$`);
}

function timestampMs(value: string): number {
  const iso = value.replace(' ', 'T');
  return Date.parse(/Z|[+-]\d{2}:?\d{2}$/.test(iso) ? iso : `${iso}Z`);
}

/** The non-empty strings found under keys named transaction_id, longest first (so none hides a longer one). */
function transactionIds(value: unknown, found = new Set<string>()): string[] {
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'transaction_id' && typeof v === 'string' && v !== '') found.add(v);
      else transactionIds(v, found);
    }
  }
  return [...found].sort((x, y) => y.length - x.length);
}

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

export function differences(a: unknown, b: unknown, options: DiffOptions = {}): string[] {
  const ignore = [...(options.ignore ?? [])];
  if (!options.noteDates) ignore.push('notes.*.date_created');
  const ignored = ignore.map(globToRegExp);
  const idMaps = {
    a: new Map((options.ids ?? []).map(([idA, , name]) => [String(idA), `<${name}>`])),
    b: new Map((options.ids ?? []).map(([, idB, name]) => [String(idB), `<${name}>`])),
  };
  const txns = { a: options.transactionIds ? [] : transactionIds(a), b: options.transactionIds ? [] : transactionIds(b) };
  const out: string[] = [];

  const leaf = (path: string, value: unknown, side: 'a' | 'b'): unknown => {
    const ids = idMaps[side];
    let v = value;
    if ((typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^\d+$/.test(v))) {
      v = ids.get(String(v)) ?? v;
    } else if (typeof v === 'string' && !TIMESTAMP.test(v)) {
      for (const txn of txns[side]) v = (v as string).split(txn).join('<TXN>');
      // Whole numbers only: not part of a decimal amount or a time of day.
      if (ids.size > 0) v = (v as string).replace(/(?<![\d.,:])\d+(?![\d,:]|\.\d)/g, (digits) => ids.get(digits) ?? digits);
    }
    return options.normalise ? options.normalise(path, v, side) : v;
  };

  const walk = (path: string, x: unknown, y: unknown): void => {
    if (path && ignored.some((re) => re.test(path))) return;
    const join = (key: string) => (path ? `${path}.${key}` : key);
    if (Array.isArray(x) && Array.isArray(y)) {
      for (let i = 0; i < Math.max(x.length, y.length); i++) walk(join(String(i)), x[i], y[i]);
      return;
    }
    if (x && y && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x) && !Array.isArray(y)) {
      // Keys that are the objects' own ids (by_id, products...) are compared under their placeholders.
      const rekey = (o: object, side: 'a' | 'b') =>
        new Map(Object.entries(o).map(([k, v]) => [idMaps[side].get(k) ?? k, v] as [string, unknown]));
      const xm = rekey(x, 'a');
      const ym = rekey(y, 'b');
      for (const key of [...new Set([...xm.keys(), ...ym.keys()])].sort()) walk(join(key), xm.get(key), ym.get(key));
      return;
    }
    const u = leaf(path, x, 'a');
    const w = leaf(path, y, 'b');
    if (typeof u === 'string' && typeof w === 'string' && TIMESTAMP.test(u) && TIMESTAMP.test(w) && options.timeToleranceSeconds !== undefined) {
      if (Math.abs(timestampMs(u) - timestampMs(w)) <= options.timeToleranceSeconds * 1000) return;
    }
    if (JSON.stringify(u) !== JSON.stringify(w)) out.push(`${path || '(root)'}: ${show(u)} vs ${show(w)}`);
  };

  walk('', a, b);
  return out;
}
