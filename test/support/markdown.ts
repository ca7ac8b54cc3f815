import fs from 'node:fs';
import path from 'node:path';

/** The repository's root (this file runs from dist/test/support/). */
export const ROOT = path.resolve(__dirname, '../../..');

/** README.md and every docs/*.md, as paths relative to the root. */
export function documentationFiles(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function readDoc(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

/** The text outside fenced code blocks, line by line (a fenced line becomes an empty one, so line numbers hold). */
export function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** The fenced code blocks: their language and lines, with the line each starts on (1-based, the fence's). */
export function codeBlocks(markdown: string): { language: string; lines: string[]; line: number }[] {
  const blocks: { language: string; lines: string[]; line: number }[] = [];
  let current: { language: string; lines: string[]; line: number } | undefined;
  markdown.split('\n').forEach((line, index) => {
    const fence = /^\s*```\s*([\w-]*)/.exec(line);
    if (fence && !current) current = { language: fence[1], lines: [], line: index + 1 };
    else if (fence && current) {
      blocks.push(current);
      current = undefined;
    } else if (current) current.lines.push(line);
  });
  return blocks;
}

/** A table row's cells, split on the `|` that are not escaped (`\|`), trimmed. */
export function tableCells(row: string): string[] {
  return row.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/** Each table (consecutive lines starting with `|`, outside code): its header's cells and its rows' cells. */
export function tables(markdown: string): { header: string[]; rows: string[][]; line: number }[] {
  const found: { header: string[]; rows: string[][]; line: number }[] = [];
  const lines = proseLines(markdown);
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('|') || (i > 0 && lines[i - 1].startsWith('|'))) continue;
    const block: string[] = [];
    for (let j = i; j < lines.length && lines[j].startsWith('|'); j++) block.push(lines[j]);
    if (block.length < 2 || !/^\|[\s|:-]+\|$/.test(block[1].trim())) continue;
    found.push({ header: tableCells(block[0]), rows: block.slice(2).map(tableCells), line: i + 1 });
  }
  return found;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every heading's anchor in a file, numbered as GitHub numbers repeats (`name`, `name-1`, ...). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every inline link and image outside code: its target and the line it is on. */
export function links(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  proseLines(markdown).forEach((line, index) => {
    // Inline code may hold brackets that are no link.
    const text = line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const match of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ target: match[1], line: index + 1 });
  });
  return found;
}
