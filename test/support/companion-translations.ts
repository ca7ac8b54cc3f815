/**
 * The companion's translations: the .po file in its languages/ folder is the source; WordPress reads the others.
 *
 *   <domain>-<locale>.l10n.php              PHP strings, WordPress 6.5+ (read before the .mo)
 *   <domain>-<locale>.mo                    PHP strings, older WordPress
 *   <domain>-<locale>-<script handle>.json  the panels' strings for wp.i18n (wp_set_script_translations)
 *
 * test/unit/companion-translations.test.ts checks that these say what the .po says and that every string of
 * the panels is translated; running this file writes them again:
 *
 *   npm run build && node dist/test/support/companion-translations.js
 */
import fs from 'node:fs';
import path from 'node:path';

export const COMPANION_DIR = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion');
export const LANGUAGES_DIR = path.join(COMPANION_DIR, 'languages');
export const TEXT_DOMAIN = 'shop-sidecar-companion';
export const SCRIPT_HANDLE = 'shop-sidecar-panels';

export interface Catalog {
  locale: string;
  pluralForms: string;
  headerText: string;
  /**
   * msgid → msgstr, in the file's order. A plural entry is keyed as gettext's .mo keys it, `singular\0plural`,
   * with its forms joined the same way (`form0\0form1`).
   */
  messages: Map<string, string>;
}

function unquote(line: string): string {
  return JSON.parse(line.trim());
}

/** A gettext .po file with single-line or continued msgid/msgstr pairs, and plurals (msgid_plural, msgstr[n]); no contexts. */
export function parsePo(text: string): Catalog {
  interface Entry { id: string; plural: string | null; str: string; forms: string[] }
  const entries: Entry[] = [];
  let current: Entry | null = null;
  let append: ((more: string) => void) | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const form = /^msgstr\[(\d+)\] /.exec(line);
    if (line.startsWith('msgid ')) {
      const entry: Entry = { id: unquote(line.slice(6)), plural: null, str: '', forms: [] };
      current = entry;
      entries.push(entry);
      append = (more) => { entry.id += more; };
    } else if (line.startsWith('msgid_plural ') && current) {
      const entry = current;
      entry.plural = unquote(line.slice(13));
      append = (more) => { entry.plural += more; };
    } else if (line.startsWith('msgstr ') && current) {
      const entry = current;
      entry.str = unquote(line.slice(7));
      append = (more) => { entry.str += more; };
    } else if (form && current) {
      const entry = current;
      const index = Number(form[1]);
      entry.forms[index] = unquote(line.slice(form[0].length));
      append = (more) => { entry.forms[index] += more; };
    } else if (line.startsWith('"') && append) {
      append(unquote(line));
    } else {
      throw new Error(`unexpected .po line: ${raw}`);
    }
  }
  const header = entries.find((entry) => entry.id === '');
  const headers = new Map((header?.str ?? '').split('\n').filter(Boolean).map((line) => {
    const at = line.indexOf(':');
    return [line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim()] as [string, string];
  }));
  return {
    locale: headers.get('language') ?? '',
    pluralForms: headers.get('plural-forms') ?? 'nplurals=2; plural=(n != 1);',
    headerText: header?.str ?? '',
    messages: new Map(entries.filter((entry) => entry.id !== '').map((entry) => (entry.plural === null
      ? [entry.id, entry.str]
      : [`${entry.id}\0${entry.plural}`, entry.forms.join('\0')]))),
  };
}

/** A PHP string literal; a NUL (between a plural's forms) as `"\0"`, which only a double-quoted string can say. */
const phpString = (value: string) => value.split('\0').map((part) => `'${part.replace(/[\\']/g, '\\$&')}'`).join(' . "\\0" . ');

export function renderL10nPhp(catalog: Catalog): string {
  const messages = [...catalog.messages].map(([id, str]) => `\t\t${phpString(id)} => ${phpString(str)},`).join('\n');
  return `<?php\n// Written from ${TEXT_DOMAIN}-${catalog.locale}.po (test/support/companion-translations.ts).\nreturn array(\n`
    + `\t'domain' => ${phpString(TEXT_DOMAIN)},\n\t'language' => ${phpString(catalog.locale)},\n\t'plural-forms' => ${phpString(catalog.pluralForms)},\n`
    + `\t'messages' => array(\n${messages}\n\t),\n);\n`;
}

export function renderScriptJson(catalog: Catalog): string {
  const messages: Record<string, unknown> = { '': { domain: 'messages', lang: catalog.locale, 'plural-forms': catalog.pluralForms } };
  // Jed's format (wp.i18n): a plural is keyed by its singular, with its forms in order.
  for (const [id, str] of catalog.messages) messages[id.split('\0')[0]] = str.split('\0');
  return `${JSON.stringify({ domain: 'messages', locale_data: { messages } }, null, 1)}\n`;
}

/** GNU gettext's binary catalog: header, two tables of (length, offset), then the NUL-ended strings. */
export function renderMo(catalog: Catalog): Buffer {
  const pairs = [['', catalog.headerText] as [string, string], ...catalog.messages]
    .map(([id, str]) => [Buffer.from(id, 'utf8'), Buffer.from(str, 'utf8')] as const)
    .sort(([a], [b]) => Buffer.compare(a, b));
  const count = pairs.length;
  const headerSize = 28;
  const tables = headerSize + count * 16;
  const head = Buffer.alloc(tables);
  head.writeUInt32LE(0x950412de, 0);
  head.writeUInt32LE(0, 4);
  head.writeUInt32LE(count, 8);
  head.writeUInt32LE(headerSize, 12);
  head.writeUInt32LE(headerSize + count * 8, 16);
  head.writeUInt32LE(0, 20);
  head.writeUInt32LE(tables, 24);
  const strings: Buffer[] = [];
  let offset = tables;
  const place = (bytes: Buffer, table: number, index: number) => {
    head.writeUInt32LE(bytes.length, table + index * 8);
    head.writeUInt32LE(offset, table + index * 8 + 4);
    strings.push(bytes, Buffer.alloc(1));
    offset += bytes.length + 1;
  };
  pairs.forEach(([id], index) => place(id, headerSize, index));
  pairs.forEach(([, str], index) => place(str, headerSize + count * 8, index));
  return Buffer.concat([head, ...strings]);
}

/** The strings the companion's PHP and script give to WordPress's translation functions. */
export function translatableStrings(): string[] {
  const files = [
    'assets/panels.js',
    'includes/admin-panels.php',
    'includes/emails.php',
    'includes/class-shop-sidecar-email-payment-method-needed.php',
    'templates/emails/shop-sidecar-payment-method-needed.php',
    'templates/emails/plain/shop-sidecar-payment-method-needed.php',
  ].map((file) => path.join(COMPANION_DIR, file));
  const found = new Set<string>();
  const call = /(?:__|esc_html__|esc_attr__)\(\s*'((?:[^'\\]|\\.)*)'\s*,\s*'shop-sidecar-companion'\s*\)/g;
  // _n( 'singular', 'plural', count, 'domain' ): keyed as the catalog keys plurals.
  const plural = /_n\(\s*'((?:[^'\\]|\\.)*)'\s*,\s*'((?:[^'\\]|\\.)*)'\s*,[^,]+,\s*'shop-sidecar-companion'\s*\)/g;
  const unescape = (text: string) => text.replace(/\\'/g, '\'');
  for (const file of files) {
    const source = fs.readFileSync(file, 'utf8');
    for (const match of source.matchAll(call)) found.add(unescape(match[1]));
    for (const match of source.matchAll(plural)) found.add(`${unescape(match[1])}\0${unescape(match[2])}`);
  }
  return [...found].sort();
}

export function translationFiles(locale: string): { name: string; content: string | Buffer }[] {
  const catalog = parsePo(fs.readFileSync(path.join(LANGUAGES_DIR, `${TEXT_DOMAIN}-${locale}.po`), 'utf8'));
  return [
    { name: `${TEXT_DOMAIN}-${locale}.l10n.php`, content: renderL10nPhp(catalog) },
    { name: `${TEXT_DOMAIN}-${locale}.mo`, content: renderMo(catalog) },
    { name: `${TEXT_DOMAIN}-${locale}-${SCRIPT_HANDLE}.json`, content: renderScriptJson(catalog) },
  ];
}

export const LOCALES = ['da_DK'];

if (require.main === module) {
  for (const locale of LOCALES) {
    for (const file of translationFiles(locale)) {
      fs.writeFileSync(path.join(LANGUAGES_DIR, file.name), file.content);
      console.log(`wrote ${path.join(LANGUAGES_DIR, file.name)}`);
    }
  }
}
