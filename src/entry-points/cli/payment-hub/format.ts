import Table from 'cli-table3';
import { minorUnitsToDecimal } from '../../../shop/money';

/** Pure text helpers of the operator CLI: tables, the progress bar, amounts. */

export interface Column {
  header: string;
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis so one long error message cannot push every row off screen. */
  maxWidth?: number;
  /** Longer cells are wrapped onto more lines instead, at spaces where they can be: for text read whole (a diagnosis). */
  wrapAt?: number;
}

/**
 * Stored values come from providers and customers: control characters (newlines, escape sequences)
 * would break the row layout or drive the operator's terminal, so they become spaces.
 */
export function cell(value: unknown, maxWidth = Infinity): string {
  const text = value === null || value === undefined ? '' : String(value);
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return flat.length > maxWidth ? `${flat.slice(0, Math.max(0, maxWidth - 1)).trimEnd()}…` : flat;
}

/** `text` in lines of at most `width` characters, broken at spaces; a longer word (a URL) is broken where it must. */
export function wrapped(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/ +/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = '';
    }
    let rest = word;
    // Only a word longer than a whole line comes here with the line empty.
    for (; rest.length > width; rest = rest.slice(width)) lines.push(rest.slice(0, width));
    line = line ? `${line} ${rest}` : rest;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/** No borders: columns two spaces apart, as wp-cli and ps print them. */
const PLAIN: Partial<Record<'top' | 'top-mid' | 'top-left' | 'top-right' | 'bottom' | 'bottom-mid' | 'bottom-left' | 'bottom-right' | 'left' | 'left-mid' | 'mid' | 'mid-mid' | 'right' | 'right-mid' | 'middle', string>> = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
};

/**
 * An aligned plain-text table: a header row, then one line per row; no trailing spaces. cli-table3 lays it
 * out by the width a terminal gives each character (a customer's name in Chinese, an emoji), not by its
 * length in UTF-16 units.
 */
export function renderTable(columns: Column[], rows: unknown[][]): string {
  const table = new Table({
    head: columns.map((column) => column.header),
    chars: PLAIN,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    colAligns: columns.map((column) => column.align ?? 'left'),
    wordWrap: false,
  });
  table.push(...rows.map((row) => columns.map((column, i) => (column.wrapAt ? wrapped(cell(row[i]), column.wrapAt) : cell(row[i], column.maxWidth)))));
  return table.toString().split('\n').map((line) => line.trimEnd()).join('\n');
}

/** `key: value` lines with the keys padded to one width. */
export function renderFields(fields: [string, unknown][]): string {
  const width = Math.max(0, ...fields.map(([key]) => key.length)) + 1;
  return fields.map(([key, value]) => `${`${key}:`.padEnd(width)} ${cell(value)}`.trimEnd()).join('\n');
}

/** `[#####-----] 12/40`. */
export function progressBar(done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1;
  const filled = Math.floor(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
}

/** Minor units as `99.00 DKK`, with the currency's own number of decimals (JPY has none). */
export function formatAmount(amountMinor: number | null, currency: string | null): string {
  if (amountMinor === null) return '';
  return `${minorUnitsToDecimal(amountMinor, currency)}${currency ? ` ${currency}` : ''}`;
}

/** Non-empty meta values as `key=value, ...`, keys sorted so rows read alike. */
export function formatMeta(meta: Record<string, string>): string {
  return Object.keys(meta).sort().filter((key) => meta[key] !== '').map((key) => `${key}=${meta[key]}`).join(', ');
}

/** `a,b , c` (or repeated flags) as a list without blanks or repeats. */
export function parseList(raw: string | string[]): string[] {
  const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((part) => String(part).split(','));
  return [...new Set(parts.map((part) => part.trim()).filter(Boolean))];
}
