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
  /** msgid → msgstr, in the file's order. */
  messages: Map<string, string>;
}

function unquote(line: string): string {
  return JSON.parse(line.trim());
}

/** A gettext .po file with single-line or continued msgid/msgstr pairs (no plurals, no contexts). */
export function parsePo(text: string): Catalog {
  const entries: { id: string; str: string }[] = [];
  let current: { id: string; str: string } | null = null;
  let field: 'id' | 'str' | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('msgid ')) {
      current = { id: unquote(line.slice(6)), str: '' };
      entries.push(current);
      field = 'id';
    } else if (line.startsWith('msgstr ')) {
      current!.str = unquote(line.slice(7));
      field = 'str';
    } else if (line.startsWith('"') && current && field) {
      current[field] += unquote(line);
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
    messages: new Map(entries.filter((entry) => entry.id !== '').map((entry) => [entry.id, entry.str])),
  };
}

const phpString = (value: string) => `'${value.replace(/[\\']/g, '\\$&')}'`;

export function renderL10nPhp(catalog: Catalog): string {
  const messages = [...catalog.messages].map(([id, str]) => `\t\t${phpString(id)} => ${phpString(str)},`).join('\n');
  return `<?php\n// Written from ${TEXT_DOMAIN}-${catalog.locale}.po (test/support/companion-translations.ts).\nreturn array(\n`
    + `\t'domain' => ${phpString(TEXT_DOMAIN)},\n\t'language' => ${phpString(catalog.locale)},\n\t'plural-forms' => ${phpString(catalog.pluralForms)},\n`
    + `\t'messages' => array(\n${messages}\n\t),\n);\n`;
}

export function renderScriptJson(catalog: Catalog): string {
  const messages: Record<string, unknown> = { '': { domain: 'messages', lang: catalog.locale, 'plural-forms': catalog.pluralForms } };
  for (const [id, str] of catalog.messages) messages[id] = [str];
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
  for (const file of files) {
    for (const match of fs.readFileSync(file, 'utf8').matchAll(call)) found.add(match[1].replace(/\\'/g, '\''));
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
