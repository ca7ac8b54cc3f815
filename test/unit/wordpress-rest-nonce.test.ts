import test from 'ava';
import { createRestNonce, nonceTick, verifyRestNonce } from '../../src/wordpress/rest-nonce';

// Expected nonces computed with Python's hmac (independently of this code):
//   hmac(NONCE_KEY + NONCE_SALT, f"{tick}|wp_rest|{uid}|{token}", md5).hexdigest()[-12:-2]
const nonceKeySalt = 'nonce-key-for-tests' + 'nonce-salt-for-tests';
const token = 'Zq3XvW8pLkT2nB6rYd9sHf4jMc7gA1eQo5uIxRtE0wK';
const context = { uid: 7, token, nonceKeySalt };
const now = 1767226600;
const expected: Record<number, string> = { 40909: 'aa6fddd03d', 40908: 'd8dcdee1c4', 40907: 'c2444e4e88' };

test('the tick is ceil(now / 12 h) by default', (t) => {
  t.is(nonceTick(now), 40909);
  t.is(nonceTick(43200), 1);
  t.is(nonceTick(43201), 2);
  t.is(nonceTick(100, 200), 1);
});

test('nonces match an independent computation', (t) => {
  for (const [tick, nonce] of Object.entries(expected)) t.is(createRestNonce({ ...context, tick: Number(tick) }), nonce);
});

test('a nonce from this tick scores 1, from the previous tick 2', (t) => {
  t.is(verifyRestNonce('aa6fddd03d', context, now), 1);
  t.is(verifyRestNonce('d8dcdee1c4', context, now), 2);
  // 12 hours later the current nonce has become the previous one.
  t.is(verifyRestNonce('aa6fddd03d', context, now + 43200), 2);
});

test('a nonce two ticks old, or for another user, session or action, is rejected', (t) => {
  t.is(verifyRestNonce('c2444e4e88', context, now), 0);
  t.is(verifyRestNonce('aa6fddd03d', context, now + 86400), 0);
  t.is(verifyRestNonce('aa6fddd03d', { ...context, uid: 8 }, now), 0);
  t.is(verifyRestNonce('aa6fddd03d', { ...context, token: token.slice(1) }, now), 0);
  t.is(verifyRestNonce('aa6fddd03d', { ...context, action: 'other' }, now), 0);
  t.is(verifyRestNonce('aa6fddd03d', { ...context, nonceKeySalt: 'x' }, now), 0);
  t.is(verifyRestNonce('AA6FDDD03D', context, now), 0);
  t.is(verifyRestNonce('', context, now), 0);
  t.is(verifyRestNonce('0', context, now), 0);
});
