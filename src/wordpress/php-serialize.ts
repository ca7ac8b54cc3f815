/**
 * PHP `serialize()` / `unserialize()` for the values WordPress stores in its options and meta
 * (capabilities, roles, session tokens, application passwords, ...).
 *
 * Unserializing is deliberately narrower than PHP: objects, enums and references are refused, and
 * so is anything PHP would read with a warning (trailing data, a length that does not match).
 * A refused value is reported, never thrown, so callers can treat it as "no data" and fail closed.
 */

export type PhpScalar = null | boolean | number | string;
/**
 * A PHP array. Keys are strings on this side ("0", "1", ... for a list); read lists with
 * `phpList`. Integer-like keys lose PHP's insertion order (JavaScript sorts them first), which no
 * value this service reads depends on.
 */
export interface PhpArray {
  [key: string]: PhpValue;
}
export type PhpValue = PhpScalar | PhpArray;

export type UnserializeErrorCode =
  | 'syntax'
  | 'object_refused'
  | 'reference_refused'
  | 'length_mismatch'
  | 'trailing_data'
  | 'integer_out_of_range'
  | 'duplicate_key'
  | 'too_deep';

export interface UnserializeError {
  code: UnserializeErrorCode;
  /** Byte offset in the UTF-8 input where the problem was found. */
  offset: number;
  message: string;
}

export type UnserializeResult = { ok: true; value: PhpValue } | { ok: false; error: UnserializeError };

/** Input accepted by `phpSerialize`: JSON-like data. JavaScript arrays become PHP lists. */
export type PhpSerializable = null | boolean | number | string | PhpSerializable[] | { [key: string]: PhpSerializable };

// PHP itself allows 4096 levels; WordPress data never nests beyond a handful, and a lower bound keeps
// a hostile value from exhausting the stack.
const MAX_DEPTH = 512;

class Refusal {
  constructor(readonly error: UnserializeError) {}
}

export function phpUnserialize(text: string): UnserializeResult {
  const parser = new Parser(Buffer.from(text, 'utf8'));
  try {
    const value = parser.value(0);
    if (parser.pos !== parser.buf.length) parser.fail('trailing_data', 'data after the serialized value');
    return { ok: true, value };
  } catch (caught) {
    if (caught instanceof Refusal) return { ok: false, error: caught.error };
    throw caught;
  }
}

class Parser {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  fail(code: UnserializeErrorCode, message: string, at = this.pos): never {
    throw new Refusal({ code, offset: at, message });
  }

  private expect(char: string): void {
    if (this.buf[this.pos] !== char.charCodeAt(0)) this.fail('syntax', `expected "${char}"`);
    this.pos += 1;
  }

  /** Bytes up to (not including) `terminator`, consuming the terminator. */
  private until(terminator: string): string {
    const end = this.buf.indexOf(terminator.charCodeAt(0), this.pos);
    if (end === -1) this.fail('syntax', `missing "${terminator}"`);
    const token = this.buf.toString('latin1', this.pos, end);
    this.pos = end + 1;
    return token;
  }

  private unsigned(terminator: string): number {
    const start = this.pos;
    const digits = this.until(terminator);
    if (!/^\d+$/.test(digits)) this.fail('syntax', 'expected a length', start);
    const n = Number(digits);
    if (!Number.isSafeInteger(n)) this.fail('length_mismatch', 'length out of range', start);
    return n;
  }

  private integer(terminator: string): number {
    const start = this.pos;
    const digits = this.until(terminator);
    if (!/^[+-]?\d+$/.test(digits)) this.fail('syntax', 'expected an integer', start);
    const n = Number(digits);
    // PHP would silently turn an out-of-range integer into a float; here it would lose digits.
    if (!Number.isSafeInteger(n)) this.fail('integer_out_of_range', 'integer beyond 2^53', start);
    return n === 0 ? 0 : n;
  }

  private string(): string {
    const start = this.pos;
    const length = this.unsigned(':');
    this.expect('"');
    const end = this.pos + length;
    // The declared length is in bytes; a length that stops short of (or runs past) the closing quote
    // is exactly the corruption that happens when UTF-8 text is edited without recounting.
    if (end + 2 > this.buf.length || this.buf[end] !== 0x22 || this.buf[end + 1] !== 0x3b) {
      this.fail('length_mismatch', 'string length does not match its content', start);
    }
    const value = this.buf.toString('utf8', this.pos, end);
    this.pos = end + 2;
    return value;
  }

  private double(): number {
    const start = this.pos;
    const token = this.until(';');
    if (token === 'NAN') return Number.NaN;
    if (token === 'INF') return Number.POSITIVE_INFINITY;
    if (token === '-INF') return Number.NEGATIVE_INFINITY;
    if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(token)) this.fail('syntax', 'expected a float', start);
    return Number(token);
  }

  private array(depth: number): PhpArray {
    const count = this.unsigned(':');
    this.expect('{');
    const result: PhpArray = {};
    for (let i = 0; i < count; i += 1) {
      const keyAt = this.pos;
      const key = this.key();
      const value = this.value(depth + 1);
      if (Object.prototype.hasOwnProperty.call(result, key)) this.fail('duplicate_key', `duplicate key "${key}"`, keyAt);
      // defineProperty so that a key such as "__proto__" stays an ordinary own property.
      Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
    }
    this.expect('}');
    return result;
  }

  private key(): string {
    const type = this.buf[this.pos];
    this.pos += 1;
    if (type === 0x69 /* i */) {
      this.expect(':');
      return String(this.integer(';'));
    }
    if (type === 0x73 /* s */) {
      this.expect(':');
      return this.string();
    }
    return this.fail('syntax', 'array keys must be integers or strings', this.pos - 1);
  }

  value(depth: number): PhpValue {
    if (depth > MAX_DEPTH) this.fail('too_deep', 'nesting too deep');
    const at = this.pos;
    const type = String.fromCharCode(this.buf[this.pos] ?? 0);
    this.pos += 1;
    if (type === 'N') {
      this.expect(';');
      return null;
    }
    switch (type) {
      case 'O':
      case 'C':
      case 'E':
        return this.fail('object_refused', 'objects and enums are refused', at);
      case 'r':
      case 'R':
        return this.fail('reference_refused', 'references are refused', at);
    }
    this.expect(':');
    switch (type) {
      case 'b': {
        const flag = this.until(';');
        if (flag !== '0' && flag !== '1') this.fail('syntax', 'expected b:0 or b:1', at);
        return flag === '1';
      }
      case 'i':
        return this.integer(';');
      case 'd':
        return this.double();
      case 's':
        return this.string();
      case 'a':
        return this.array(depth);
      default:
        return this.fail('syntax', `unknown type "${type}"`, at);
    }
  }
}

/** The values of a PHP list (keys 0..n-1 in order), or null for anything else. */
export function phpList(value: PhpValue | undefined): PhpValue[] | null {
  if (!isPhpArray(value)) return null;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i += 1) if (keys[i] !== String(i)) return null;
  return keys.map((key) => value[key] as PhpValue);
}

export function isPhpArray(value: PhpValue | undefined): value is PhpArray {
  return typeof value === 'object' && value !== null;
}

/** An entry of a PHP array, only when it is the array's own key (never something inherited). */
export function phpGet(array: PhpArray, key: string): PhpValue | undefined {
  return Object.prototype.hasOwnProperty.call(array, key) ? array[key] : undefined;
}

export function phpSerialize(value: PhpSerializable): string {
  if (value === null) return 'N;';
  switch (typeof value) {
    case 'boolean':
      return value ? 'b:1;' : 'b:0;';
    case 'number':
      return Number.isSafeInteger(value) && !Object.is(value, -0) ? `i:${value};` : `d:${phpFloat(value)};`;
    case 'string':
      return `s:${Buffer.byteLength(value, 'utf8')}:"${value}";`;
    case 'object': {
      const entries: [string, PhpSerializable][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
      const body = entries.map(([key, v]) => serializeKey(key) + phpSerialize(v)).join('');
      return `a:${entries.length}:{${body}}`;
    }
    default:
      throw new TypeError(`cannot serialize a ${typeof value}`);
  }
}

// PHP turns a decimal-integer string key into an integer key, so "5" is written as i:5.
function serializeKey(key: string): string {
  return /^(0|-?[1-9]\d*)$/.test(key) && Number.isSafeInteger(Number(key)) ? `i:${key};` : phpSerialize(key);
}

/**
 * A float as PHP (serialize_precision -1) writes it: the shortest round-trip digits, plain notation
 * for decimal exponents -4 < e <= 17 and "1.5E+25" style otherwise, no ".0" on whole numbers.
 */
function phpFloat(value: number): string {
  if (Number.isNaN(value)) return 'NAN';
  if (!Number.isFinite(value)) return value > 0 ? 'INF' : '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = (mantissa ?? '').replace('.', '');
  const decimalPoint = Number(exponentText) + 1; // position of the point after the first digit group
  if (decimalPoint < -3 || decimalPoint > 17) {
    const exp = decimalPoint - 1;
    const frac = digits.length > 1 ? digits.slice(1) : '0';
    return `${sign}${digits[0]}.${frac}E${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
  }
  if (decimalPoint <= 0) return `${sign}0.${'0'.repeat(-decimalPoint)}${digits}`;
  if (decimalPoint >= digits.length) return sign + digits + '0'.repeat(decimalPoint - digits.length);
  return `${sign}${digits.slice(0, decimalPoint)}.${digits.slice(decimalPoint)}`;
}

const PHP_TRIM = /^[ \t\n\r\0\x0B]+|[ \t\n\r\0\x0B]+$/g;

/** WordPress `is_serialized()` (strict by default): whether `maybe_unserialize` would unserialize. */
export function isSerialized(data: string, strict = true): boolean {
  const text = data.replace(PHP_TRIM, '');
  if (text === 'N;') return true;
  if (Buffer.byteLength(text, 'utf8') < 4 || text[1] !== ':') return false;
  if (strict) {
    const last = text[text.length - 1];
    if (last !== ';' && last !== '}') return false;
  } else {
    const semicolon = text.indexOf(';');
    const brace = text.indexOf('}');
    if (semicolon === -1 && brace === -1) return false;
    if (semicolon !== -1 && semicolon < 3) return false;
    if (brace !== -1 && brace < 4) return false;
  }
  const token = text[0];
  switch (token) {
    case 's':
      if (strict ? text[text.length - 2] !== '"' : !text.includes('"')) return false;
      return /^s:[0-9]+:/.test(text);
    case 'a':
    case 'O':
    case 'E':
      return new RegExp(`^${token}:[0-9]+:`).test(text);
    case 'b':
    case 'i':
    case 'd':
      return new RegExp(`^${token}:[0-9.E+-]+;${strict ? '$' : ''}`).test(text);
    default:
      return false;
  }
}

/**
 * WordPress `maybe_unserialize()`: a value that does not look serialized is the string itself;
 * one that does is unserialized (after PHP's trim). Where WordPress would get `false` from a broken
 * or object-bearing value, this reports the refusal instead.
 */
export function maybeUnserialize(text: string): UnserializeResult {
  if (!isSerialized(text)) return { ok: true, value: text };
  return phpUnserialize(text.replace(PHP_TRIM, ''));
}
