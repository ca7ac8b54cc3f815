import type { Argv } from 'yargs';
import { parseList, renderFields, renderTable, type Column } from './format';
import { printJson, printText } from './runtime';

/**
 * The output options of the operator CLI, in wp-cli's manner: `--format` picks the shape, `--fields`
 * the fields, and `--json` is short for `--format=json`. Field names are the snake_case names of
 * SPEC and of the REST answers, the same in every format.
 */
export const LIST_FORMATS = ['table', 'json', 'csv', 'ids', 'count'] as const;
export const ITEM_FORMATS = ['table', 'json', 'csv'] as const;
/** Commands that act rather than read: the human text, or one JSON document. */
export const RESULT_FORMATS = ['table', 'json'] as const;
export type Format = (typeof LIST_FORMATS)[number];

export interface Field<T> {
  /** The snake_case name: the JSON key, the CSV header, what `--fields` names. */
  name: string;
  /** The table header. */
  header: string;
  /** The label of a `label: value` line when one item is shown (default: the header). */
  label?: string;
  /** The value in JSON and CSV. */
  value: (item: T) => unknown;
  /** The table cell, when it reads better than the value (an amount with its currency). */
  text?: (item: T) => unknown;
  align?: Column['align'];
  maxWidth?: number;
}

export interface FieldSet<T> {
  fields: Field<T>[];
  /** The table's columns when no `--fields` is given; JSON and CSV carry every field. */
  tableDefault: string[];
}

export interface OutputArgs {
  format?: string;
  json?: boolean;
  fields?: string | string[];
}

/** Adds `--format`, `--json` and (with a field set) `--fields`, checked before the command runs. */
export function outputOptions<A, T>(c: Argv<A>, formats: readonly Format[], set?: FieldSet<T>): Argv<A & OutputArgs & { json: boolean }> {
  let built = (c as Argv)
    .option('format', { type: 'string', choices: formats as Format[], describe: 'output format (default: table)' })
    .option('json', { type: 'boolean', default: false, describe: 'the same as --format=json' });
  if (set) {
    built = built.option('fields', { type: 'string', describe: `comma-separated fields: ${set.fields.map((field) => field.name).join(', ')}` });
  }
  return built.check((argv) => {
    const args = argv as OutputArgs;
    if (args.json && args.format !== undefined && args.format !== 'json') throw new Error(`--json and --format=${args.format} contradict each other`);
    if (set && args.fields !== undefined) fieldsOf(set, args.fields);
    return true;
  }) as unknown as Argv<A & OutputArgs & { json: boolean }>;
}

export function formatOf(argv: OutputArgs): Format {
  return argv.json ? 'json' : ((argv.format as Format | undefined) ?? 'table');
}

/** The fields `--fields` names, in its order; every field for JSON and CSV, the default columns for a table. */
function selected<T>(set: FieldSet<T>, raw: string | string[] | undefined, format: Format): Field<T>[] {
  if (raw !== undefined) return fieldsOf(set, raw);
  return format === 'table' ? set.tableDefault.map((name) => set.fields.find((field) => field.name === name)!) : set.fields;
}

function fieldsOf<T>(set: FieldSet<T>, raw: string | string[]): Field<T>[] {
  const names = parseList(raw);
  if (names.length === 0) throw new Error('--fields names no field');
  const unknown = names.filter((name) => !set.fields.some((field) => field.name === name));
  if (unknown.length) throw new Error(`unknown field ${unknown.join(', ')}; fields: ${set.fields.map((field) => field.name).join(', ')}`);
  return names.map((name) => set.fields.find((field) => field.name === name)!);
}

/** One item as its JSON object. */
export function record<T>(item: T, fields: Field<T>[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field.name, field.value(item)]));
}

/** A list in the chosen format. `empty` is the table's line when there is nothing to list. */
export function printList<T extends { id: number }>(items: T[], set: FieldSet<T>, argv: OutputArgs, empty: string): void {
  const format = formatOf(argv);
  switch (format) {
    case 'count':
      return printText(String(items.length));
    case 'ids':
      // Space-separated on one line, as wp-cli prints them; nothing at all for an empty list.
      if (items.length) printText(items.map((item) => item.id).join(' '));
      return;
    case 'json': {
      const fields = selected(set, argv.fields, format);
      return printJson(items.map((item) => record(item, fields)));
    }
    case 'csv': {
      const fields = selected(set, argv.fields, format);
      return void process.stdout.write(renderCsv(fields.map((field) => field.name), items.map((item) => fields.map((field) => field.value(item)))));
    }
    case 'table': {
      const fields = selected(set, argv.fields, format);
      if (items.length === 0) return printText(empty);
      return printText(renderTable(fields.map(({ header, align, maxWidth }) => ({ header, align, maxWidth })),
        items.map((item) => fields.map((field) => (field.text ?? field.value)(item)))));
    }
  }
}

/**
 * One item in the chosen format: a JSON object, CSV with one row, or for a table `label: value` lines,
 * then each `blocks` field (a raw body) under its label as it is, not flattened onto one line.
 */
export function printItem<T>(item: T, set: FieldSet<T>, argv: OutputArgs, blocks: string[] = []): void {
  const format = formatOf(argv);
  const fields = selected(set, argv.fields, format);
  if (format === 'json') return printJson(record(item, fields));
  if (format === 'csv') return void process.stdout.write(renderCsv(fields.map((field) => field.name), [fields.map((field) => field.value(item))]));
  const label = (field: Field<T>) => field.label ?? field.header;
  const lines = fields.filter((field) => !blocks.includes(field.name));
  if (lines.length) printText(renderFields(lines.map((field) => [label(field), (field.text ?? field.value)(item)])));
  for (const field of fields.filter((field) => blocks.includes(field.name))) printText(`${label(field)}:\n${String(field.value(item) ?? '')}`);
}

/**
 * CSV with a header row, quoted as RFC 4180 says: a value with a comma, a double quote, CR or LF is put in
 * double quotes, and its double quotes doubled. Lines end in LF. null is an empty value; objects and arrays
 * are written as JSON.
 */
export function renderCsv(header: string[], rows: unknown[][]): string {
  const line = (values: unknown[]) => values.map(csvValue).join(',');
  return [line(header), ...rows.map(line)].map((text) => `${text}\n`).join('');
}

function csvValue(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
