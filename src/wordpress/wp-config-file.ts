/**
 * Reads the settings of a WordPress `wp-config.php` without running PHP and without executing anything in
 * the file: a small PHP tokenizer finds `define( 'NAME', value )` calls and the `$table_prefix = ...;`
 * assignment whose value is a literal (a string, a number, true/false/null) or, for flags, constants
 * joined by `|`. A value written as an expression (`getenv(...)`, a concatenation, a variable) cannot be
 * known without running the file: it is reported by name, with the expression, so the operator can set it
 * in the environment instead.
 */

export type WpConfigValue = string | number | boolean | null;

export interface WpConfigFile {
  /** Constants whose value is a literal, by name; the first define of a name wins, as in PHP. */
  constants: Map<string, WpConfigValue>;
  /** Constants defined with an expression: name → the expression's text. */
  expressions: Map<string, string>;
  /** `$table_prefix`, when assigned a string literal. */
  tablePrefix?: string;
  /** `$table_prefix`'s expression when it is not a literal. */
  tablePrefixExpression?: string;
}

/** `text` is the token as written, `at` where it starts in the file. */
type Token = { text: string; at: number } & (
  | { kind: 'string'; value: string; interpolated: boolean }
  | { kind: 'number'; value: number }
  | { kind: 'word'; value: string }
  | { kind: 'variable'; value: string }
  | { kind: 'symbol'; value: string });

/** PHP's predefined mysqli client flags that WordPress's MYSQL_CLIENT_FLAGS may name. */
export const MYSQLI_CLIENT_FLAGS: Record<string, number> = {
  MYSQLI_CLIENT_COMPRESS: 32,
  MYSQLI_CLIENT_FOUND_ROWS: 2,
  MYSQLI_CLIENT_IGNORE_SPACE: 256,
  MYSQLI_CLIENT_INTERACTIVE: 1024,
  MYSQLI_CLIENT_SSL: 2048,
  MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT: 64,
};

export function parseWpConfig(source: string): WpConfigFile {
  const tokens = tokenize(source);
  const result: WpConfigFile = { constants: new Map(), expressions: new Map() };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token.kind === 'word' && token.value.toLowerCase() === 'define' && tokens[i + 1]?.value === '(' && tokens[i - 1]?.value !== '->' && tokens[i - 1]?.value !== '::') {
      const name = tokens[i + 2];
      if (name?.kind !== 'string' || name.interpolated || tokens[i + 3]?.value !== ',') continue;
      const { value, end } = expressionUntil(tokens, i + 4, [',', ')']);
      i = end;
      if (result.constants.has(name.value) || result.expressions.has(name.value)) continue;
      const literal = literalOf(value);
      if (literal.ok) result.constants.set(name.value, literal.value);
      else result.expressions.set(name.value, written(source, value));
    } else if (token.kind === 'variable' && token.value === 'table_prefix' && tokens[i + 1]?.value === '=') {
      const { value, end } = expressionUntil(tokens, i + 2, [';']);
      i = end;
      if (result.tablePrefix !== undefined || result.tablePrefixExpression !== undefined) continue;
      const literal = literalOf(value);
      if (literal.ok && typeof literal.value === 'string') result.tablePrefix = literal.value;
      else result.tablePrefixExpression = written(source, value);
    }
  }
  return result;
}

/** An expression as the file writes it. */
function written(source: string, tokens: Token[]): string {
  if (!tokens.length) return '';
  const last = tokens[tokens.length - 1];
  return source.slice(tokens[0].at, last.at + last.text.length).replace(/\s+/g, ' ');
}

/** The tokens from `start` up to (not including) the first of `stops` at depth 0; `end` is that stop's index. */
function expressionUntil(tokens: Token[], start: number, stops: string[]): { value: Token[]; end: number } {
  let depth = 0;
  let i = start;
  for (; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token.kind === 'symbol') {
      if (depth === 0 && stops.includes(token.value)) break;
      if (token.value === '(' || token.value === '[') depth += 1;
      if (token.value === ')' || token.value === ']') depth -= 1;
      if (depth < 0) break;
    }
  }
  return { value: tokens.slice(start, i), end: i };
}

function literalOf(tokens: Token[]): { ok: true; value: WpConfigValue } | { ok: false } {
  if (tokens.length === 1) {
    const [token] = tokens;
    if (token.kind === 'string' && !token.interpolated) return { ok: true, value: token.value };
    if (token.kind === 'number') return { ok: true, value: token.value };
    if (token.kind === 'word') {
      const word = token.value.toLowerCase();
      if (word === 'true') return { ok: true, value: true };
      if (word === 'false') return { ok: true, value: false };
      if (word === 'null') return { ok: true, value: null };
      if (token.value in MYSQLI_CLIENT_FLAGS) return { ok: true, value: MYSQLI_CLIENT_FLAGS[token.value] };
    }
    return { ok: false };
  }
  // Flags: numbers and mysqli's flag constants joined by `|`.
  if (tokens.length % 2 === 1 && tokens.every((token, index) => (index % 2 === 1 ? token.value === '|' : token.kind === 'number' || (token.kind === 'word' && token.value in MYSQLI_CLIENT_FLAGS)))) {
    let flags = 0;
    for (let index = 0; index < tokens.length; index += 2) {
      const token = tokens[index];
      flags |= token.kind === 'number' ? token.value : MYSQLI_CLIENT_FLAGS[token.value as string];
    }
    return { ok: true, value: flags };
  }
  return { ok: false };
}

const DOUBLE_QUOTED_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', v: '\v', e: '\x1b', f: '\f', '\\': '\\', $: '$', '"': '"', '0': '\0' };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  // Only PHP code counts: text outside `<?php ... ?>` is output, not settings.
  let inPhp = false;
  while (i < source.length) {
    if (!inPhp) {
      const open = source.indexOf('<?', i);
      if (open < 0) break;
      i = source.startsWith('<?php', open) ? open + 5 : source.startsWith('<?=', open) ? open + 3 : open + 2;
      inPhp = true;
      continue;
    }
    const char = source[i];
    if (source.startsWith('?>', i)) {
      inPhp = false;
      i += 2;
    } else if (/\s/.test(char)) {
      i += 1;
    } else if (source.startsWith('//', i) || (char === '#' && source[i + 1] !== '[')) {
      // A line comment ends at the line's end or at `?>`.
      while (i < source.length && source[i] !== '\n' && !source.startsWith('?>', i)) i += 1;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (char === "'") {
      let value = '';
      let j = i + 1;
      for (; j < source.length && source[j] !== "'"; j += 1) {
        if (source[j] === '\\' && (source[j + 1] === "'" || source[j + 1] === '\\')) j += 1;
        value += source[j];
      }
      tokens.push({ kind: 'string', value, interpolated: false, text: source.slice(i, j + 1), at: i });
      i = j + 1;
    } else if (char === '"') {
      let value = '';
      let interpolated = false;
      let j = i + 1;
      for (; j < source.length && source[j] !== '"'; j += 1) {
        if (source[j] === '\\' && j + 1 < source.length) {
          const next = source[j + 1];
          if (next in DOUBLE_QUOTED_ESCAPES) {
            value += DOUBLE_QUOTED_ESCAPES[next];
            j += 1;
            continue;
          }
          const hex = /^x([0-9A-Fa-f]{1,2})/.exec(source.slice(j + 1, j + 4));
          if (hex) {
            value += String.fromCharCode(parseInt(hex[1], 16));
            j += hex[0].length;
            continue;
          }
          value += '\\';
          continue;
        }
        // `$name` or `{$` inside double quotes is a variable PHP would put in: not knowable here.
        if (source[j] === '$' && /[A-Za-z_{]/.test(source[j + 1] ?? '')) interpolated = true;
        value += source[j];
      }
      tokens.push({ kind: 'string', value, interpolated, text: source.slice(i, j + 1), at: i });
      i = j + 1;
    } else if (/[0-9]/.test(char)) {
      const match = /^(0x[0-9A-Fa-f_]+|0b[01_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?)/.exec(source.slice(i))!;
      const text = match[0].replace(/_/g, '');
      const value = /^0x/i.test(text) ? parseInt(text.slice(2), 16) : /^0b/i.test(text) ? parseInt(text.slice(2), 2) : /^0[0-7]+$/.test(text) ? parseInt(text, 8) : Number(text);
      tokens.push({ kind: 'number', value, text: match[0], at: i });
      i += match[0].length;
    } else if (char === '$' && /[A-Za-z_]/.test(source[i + 1] ?? '')) {
      const match = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(source.slice(i))!;
      tokens.push({ kind: 'variable', value: match[1], text: match[0], at: i });
      i += match[0].length;
    } else if (/[A-Za-z_\\]/.test(char)) {
      const match = /^[A-Za-z_\\][A-Za-z0-9_\\]*/.exec(source.slice(i))!;
      // A leading backslash names the global namespace: `\define(...)` is define().
      tokens.push({ kind: 'word', value: match[0].replace(/^\\/, ''), text: match[0], at: i });
      i += match[0].length;
    } else {
      const symbol = ['->', '::', '=>', '==', '!=', '.='].find((candidate) => source.startsWith(candidate, i)) ?? char;
      tokens.push({ kind: 'symbol', value: symbol, text: symbol, at: i });
      i += symbol.length;
    }
  }
  return tokens;
}

/** What WordPress's `wpdb::parse_db_host()` makes of DB_HOST: host, port, socket, and whether the host is IPv6. */
export interface DbHost {
  host: string;
  port: number | null;
  socket: string | null;
  ipv6: boolean;
}

/**
 * `wpdb::parse_db_host()`: the socket is peeled off from the first `:/`; an address with two colons or more is
 * IPv6 (`[::1]:3307` or `::1`); else `host:port`. Null when it cannot be parsed, as WordPress gives up then.
 */
export function parseDbHost(value: string): DbHost | null {
  let host = value;
  let socket: string | null = null;
  const socketAt = host.indexOf(':/');
  if (socketAt >= 0) {
    socket = host.slice(socketAt + 1);
    host = host.slice(0, socketAt);
  }
  const ipv6 = (host.match(/:/g) ?? []).length > 1;
  const match = ipv6 ? /^(?:\[)?(?<host>[0-9a-fA-F:]+)(?:\]:(?<port>\d+))?/.exec(host) : /^(?<host>[^:/]*)(?::(?<port>\d+))?/.exec(host);
  if (!match?.groups) return null;
  const port = match.groups.port ? Number(match.groups.port) : null;
  return { host: match.groups.host ?? '', port: port || null, socket, ipv6 };
}
