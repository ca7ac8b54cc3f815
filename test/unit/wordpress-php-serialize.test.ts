import test from 'ava';
import {
  isSerialized,
  maybeUnserialize,
  phpList,
  phpSerialize,
  phpUnserialize,
  type PhpSerializable,
  type UnserializeErrorCode,
} from '../../src/wordpress/php-serialize';

// Exact PHP serialize() output for these values (format per the PHP manual; the capabilities
// example is the one in the WordPress reference notes).
const known: [PhpSerializable, string][] = [
  [null, 'N;'],
  [true, 'b:1;'],
  [false, 'b:0;'],
  [0, 'i:0;'],
  [-42, 'i:-42;'],
  [1.5, 'd:1.5;'],
  [0.1, 'd:0.1;'],
  [-0.25, 'd:-0.25;'],
  [1e25, 'd:1.0E+25;'],
  [1e-5, 'd:1.0E-5;'],
  ['', 's:0:"";'],
  ['Zoë', 's:4:"Zoë";'],
  ['say "hi"; {ok}', 's:14:"say "hi"; {ok}";'],
  [['a', 'b'], 'a:2:{i:0;s:1:"a";i:1;s:1:"b";}'],
  [{ shop_manager: true }, 'a:1:{s:12:"shop_manager";b:1;}'],
  [{ '5': 'five', x: [] }, 'a:2:{i:5;s:4:"five";s:1:"x";a:0:{}}'],
];

for (const [value, serialized] of known) {
  test(`serialize ${JSON.stringify(value)}`, (t) => {
    t.is(phpSerialize(value), serialized);
  });
}

test('round trips nested WordPress-like data', (t) => {
  const value = {
    '9cd2ce6feacab2192444ba7d94070a84d56fe095711cbbd71f0a6205defcd148': { expiration: 1767225600, ip: '127.0.0.1', ua: 'Mozilla/5.0 (Zoë; ☃)', login: 1767052800 },
    list: [1, 2.5, 'three', null, false, { nested: ['deep'] }],
    empty: '',
  };
  const parsed = phpUnserialize(phpSerialize(value));
  t.true(parsed.ok);
  if (parsed.ok) t.deepEqual(parsed.value, { ...value, list: { 0: 1, 1: 2.5, 2: 'three', 3: null, 4: false, 5: { nested: { 0: 'deep' } } } });
});

test('reads a list through phpList', (t) => {
  const parsed = phpUnserialize('a:3:{i:0;s:1:"a";i:1;i:2;i:2;b:1;}');
  t.true(parsed.ok);
  if (parsed.ok) t.deepEqual(phpList(parsed.value), ['a', 2, true]);
  const notList = phpUnserialize('a:1:{i:1;s:1:"a";}');
  if (notList.ok) t.is(phpList(notList.value), null);
  t.is(phpList('text'), null);
});

test('reads floats in every form PHP writes', (t) => {
  for (const [text, value] of [['d:1.0E+25;', 1e25], ['d:-0.5;', -0.5], ['d:3;', 3], ['d:1.0E-5;', 1e-5]] as const) {
    const parsed = phpUnserialize(text);
    t.deepEqual(parsed, { ok: true, value }, text);
  }
  const nan = phpUnserialize('d:NAN;');
  t.true(nan.ok && Number.isNaN(nan.value as number));
  t.deepEqual(phpUnserialize('d:-INF;'), { ok: true, value: Number.NEGATIVE_INFINITY });
});

const refusals: [string, UnserializeErrorCode, string][] = [
  ['O:8:"stdClass":0:{}', 'object_refused', 'an object'],
  ['a:1:{s:4:"user";O:7:"WP_User":0:{}}', 'object_refused', 'an object inside an array'],
  ['C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}', 'object_refused', 'a custom-serialized object'],
  ['E:7:"Foo:Bar";', 'object_refused', 'an enum'],
  ['a:2:{i:0;s:1:"x";i:1;r:2;}', 'reference_refused', 'a value reference'],
  ['a:2:{i:0;s:1:"x";i:1;R:2;}', 'reference_refused', 'a variable reference'],
  ['i:1;x', 'trailing_data', 'trailing garbage'],
  ['b:1;b:0;', 'trailing_data', 'two values'],
  ['s:3:"Zoë";', 'length_mismatch', 'a character count where bytes are due (Zoë is 4 bytes)'],
  ['s:5:"Zoë";', 'length_mismatch', 'a length one byte too long'],
  ['s:0:"x";', 'length_mismatch', 'a zero length before content'],
  ['s:1:"ë";', 'length_mismatch', 'a length ending inside a multibyte character'],
  ['s:10:"short";', 'length_mismatch', 'a length past the end of the input'],
  ['a:2:{i:0;b:1;}', 'syntax', 'fewer entries than declared'],
  ['a:1:{i:0;b:1;i:1;b:0;}', 'syntax', 'more entries than declared'],
  ['a:2:{s:1:"k";i:1;s:1:"k";i:2;}', 'duplicate_key', 'a duplicate key'],
  ['a:1:{b:1;i:1;}', 'syntax', 'a boolean key'],
  ['b:2;', 'syntax', 'a boolean other than 0 or 1'],
  ['i:12a;', 'syntax', 'a malformed integer'],
  ['i:99999999999999999999;', 'integer_out_of_range', 'an integer beyond 2^53'],
  ['d:1.2.3;', 'syntax', 'a malformed float'],
  ['', 'syntax', 'empty input'],
  ['s:3:"abc"', 'length_mismatch', 'a missing semicolon after a string'],
  ['x:1;', 'syntax', 'an unknown type'],
  ['a:1:{i:0;' + 'a:1:{i:0;'.repeat(600) + 'N;' + '}'.repeat(601), 'too_deep', 'absurd nesting'],
];

for (const [text, code, name] of refusals) {
  test(`refuses ${name}`, (t) => {
    const parsed = phpUnserialize(text);
    t.false(parsed.ok);
    if (!parsed.ok) t.is(parsed.error.code, code);
  });
}

test('multibyte strings use byte lengths', (t) => {
  t.deepEqual(phpUnserialize('s:4:"Zoë";'), { ok: true, value: 'Zoë' });
  t.deepEqual(phpUnserialize('s:5:"☃ë";'), { ok: true, value: '☃ë' });
  t.deepEqual(phpUnserialize('s:4:"😀";'), { ok: true, value: '😀' });
});

test('a "__proto__" key stays an ordinary key', (t) => {
  const parsed = phpUnserialize('a:1:{s:9:"__proto__";a:1:{s:5:"admin";b:1;}}');
  t.true(parsed.ok);
  if (!parsed.ok) return;
  const value = parsed.value as Record<string, unknown>;
  t.is(Object.getPrototypeOf(value), Object.prototype);
  t.deepEqual(Object.keys(value), ['__proto__']);
  t.is((value as { admin?: unknown }).admin, undefined);
});

// Cases from WordPress's own tests for is_serialized() (tests/phpunit/tests/functions/Functions_IsSerialized_Test.php).
const serializedCases: [string, boolean][] = [
  ['a:0:{}', true],
  ['a:7:{i:0;i:1;i:1;i:1;i:2;i:2;i:3;i:3;i:4;i:5;i:5;i:8;i:6;i:13;}', true],
  ['O:8:"stdClass":0:{}', true],
  ['N;', true],
  ['b:1;', true],
  ['b:0;', true],
  ['i:-1;', true],
  ['d:1.1;', true],
  ['s:30:"this string will be serialized";', true],
  ['s:3:"a\nb";', true],
  ['   s:25:"this string is serialized";   ', true],
  ['E:7:"Foo:bar";', true],
  ['d:1.7976931348623157E+308;', true],
  ['a string', false],
  ['a\nb', false],
  ['garbage:a:0:garbage;', false],
  ['s:4:test;', false],
  ['s:3', false],
  ['s!3:"foo";', false],
  ['s:3:"foo"', false],
  ['C:16:"Serialized_Class":6:{a:0:{}}', false],
];

for (const [text, expected] of serializedCases) {
  test(`is_serialized(${JSON.stringify(text)}) is ${expected}`, (t) => {
    t.is(isSerialized(text), expected);
  });
}

test('maybeUnserialize leaves plain strings alone and unserializes the rest', (t) => {
  t.deepEqual(maybeUnserialize('hello'), { ok: true, value: 'hello' });
  t.deepEqual(maybeUnserialize('s:4:test;'), { ok: true, value: 's:4:test;' });
  t.deepEqual(maybeUnserialize('d:1e5;'), { ok: true, value: 'd:1e5;' }, 'lowercase e is not is_serialized');
  t.deepEqual(maybeUnserialize('  a:1:{s:4:"read";b:1;}\n'), { ok: true, value: { read: true } });
  t.deepEqual(maybeUnserialize('i:5;'), { ok: true, value: 5 });
  const object = maybeUnserialize('O:8:"stdClass":0:{}');
  t.false(object.ok);
  const broken = maybeUnserialize('s:3:"Zoë";');
  t.false(broken.ok, 'WordPress would get false here; we report it');
});
