import test from 'ava';
import {
  checkLoggedInCookie,
  cookieName,
  loggedInCookieHmac,
  makeLoggedInCookie,
  parseLoggedInCookie,
  passFrag,
  readCookie,
  serializeSessionTokens,
  sessionTokenValid,
  sessionTokenVerifier,
  verifyLoggedInCookieHmac,
  type LoggedInCookie,
} from '../../src/wordpress/logged-in-cookie';
import { phpSerialize } from '../../src/wordpress/php-serialize';

// Expected values below were computed with Python's hmac/hashlib, independently of this code:
//   key  = hmac(secret, f"{login}|{frag}|{exp}|{token}", md5).hexdigest()
//   hmac = hmac(key.encode(), f"{login}|{exp}|{token}", sha256).hexdigest()
const secret = 'logged-in-key-for-tests' + 'logged-in-salt-for-tests';
const login = 'shop manager';
const expiration = 1767225600; // 2026-01-01T00:00:00Z
const token = 'Zq3XvW8pLkT2nB6rYd9sHf4jMc7gA1eQo5uIxRtE0wK';
const wpPass = '$wp$2y$10$lRb1YbfKKFeEaRrCIctp7OGNziJGSNaN5nuBEFk0lSu/VYlpdDsV2';
const phpassPass = '$P$B12345678L6Lpt4BxNotVIMILOa9u81';
const wpPassHmac = 'a13d4799790d36ce593f807fd0ae7036a2058bb94838efd2f73050848efcb4cb';
const phpassPassHmac = 'f20f72483f519511e1d45e916b82cee9fabe25c5b17dee8172636423eeefb3c6';

test('cookie name is wordpress_logged_in_ + md5(siteurl)', (t) => {
  t.is(cookieName('https://shop.example'), 'wordpress_logged_in_b15a974586f1633a4cbe2a623056822e');
});

test('pass_frag: characters 8-11 for $P$ and $2y$, the last four otherwise', (t) => {
  t.is(passFrag(phpassPass).toString(), '5678');
  t.is(passFrag('$2y$10$abcdEFGHijkl').toString(), 'bcdE');
  t.is(passFrag(wpPass).toString(), 'DsV2');
  t.is(passFrag('$generic$abcdefgh').toString(), 'efgh');
  t.is(passFrag('5f4dcc3b5aa765d61d8327deb882cf99').toString(), 'cf99');
});

test('HMAC matches an independent computation for both hash styles', (t) => {
  t.is(loggedInCookieHmac({ login, expiration, token }, wpPass, secret), wpPassHmac);
  t.is(loggedInCookieHmac({ login, expiration: String(expiration), token }, phpassPass, secret), phpassPassHmac);
  t.true(verifyLoggedInCookieHmac({ login, expiration, token, hmac: wpPassHmac }, wpPass, secret));
  t.false(verifyLoggedInCookieHmac({ login, expiration, token, hmac: wpPassHmac.toUpperCase() }, wpPass, secret));
});

test('parses the URL-encoded cookie browsers send', (t) => {
  const raw = `shop+manager%7C${expiration}%7C${token}%7C${wpPassHmac}`;
  const parsed = parseLoggedInCookie(raw);
  t.deepEqual(parsed, { ok: true, cookie: { login, expiration: String(expiration), expiresAt: expiration, token, hmac: wpPassHmac } });
  t.deepEqual(parseLoggedInCookie(encodeURIComponent(`${login}|${expiration}|${token}|${wpPassHmac}`)), parsed);
  t.deepEqual(parseLoggedInCookie(`${login}|${expiration}|${token}|${wpPassHmac}`), parsed, 'an already decoded value reads the same');
});

test('refuses malformed cookies', (t) => {
  t.deepEqual(parseLoggedInCookie(''), { ok: false, error: 'empty' });
  t.deepEqual(parseLoggedInCookie('0'), { ok: false, error: 'empty' });
  t.deepEqual(parseLoggedInCookie(`a|${expiration}|${token}`), { ok: false, error: 'malformed' });
  t.deepEqual(parseLoggedInCookie(`a|${expiration}|${token}|h|extra`), { ok: false, error: 'malformed' });
  t.deepEqual(parseLoggedInCookie(`a|soon|${token}|h`), { ok: false, error: 'bad_expiration' });
  t.deepEqual(parseLoggedInCookie(`a|-5|${token}|h`), { ok: false, error: 'bad_expiration' });
  t.deepEqual(parseLoggedInCookie(`a|123abc|${token}|h`), { ok: false, error: 'bad_expiration' });
});

test('readCookie takes the first cookie of that name', (t) => {
  const name = cookieName('https://shop.example');
  t.is(readCookie(`other=1; ${name}=first; ${name}=second`, name), 'first');
  t.is(readCookie('other=1', name), null);
  t.is(readCookie(undefined, name), null);
});

const now = expiration - 86400;
const sessions = serializeSessionTokens([{ token, expiration }]);

function cookieFor(userPass: string, overrides: Partial<{ expiration: number; token: string; login: string }> = {}): LoggedInCookie {
  const raw = makeLoggedInCookie({ login: overrides.login ?? login, userPass, token: overrides.token ?? token, expiration: overrides.expiration ?? expiration, key: secret });
  const parsed = parseLoggedInCookie(encodeURIComponent(raw));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.cookie;
}

test('makeLoggedInCookie builds what WordPress would', (t) => {
  t.is(makeLoggedInCookie({ login, userPass: wpPass, token, expiration, key: secret }), `${login}|${expiration}|${token}|${wpPassHmac}`);
});

test('accepts a valid cookie with a live session', (t) => {
  const cookie = cookieFor(wpPass);
  t.deepEqual(checkLoggedInCookie({ cookie, userPass: wpPass, sessionTokens: sessions, secret, nowSeconds: now }), { ok: true, cookie });
});

test('rejects an expired cookie, with an hour of grace for POST', (t) => {
  const cookie = cookieFor(wpPass);
  const base = { cookie, userPass: wpPass, sessionTokens: sessions, secret };
  t.true(checkLoggedInCookie({ ...base, nowSeconds: expiration }).ok, 'valid up to the second it expires');
  t.deepEqual(checkLoggedInCookie({ ...base, nowSeconds: expiration + 1 }), { ok: false, reason: 'expired' });
  const lateSessions = serializeSessionTokens([{ token, expiration: expiration + 7200 }]);
  t.true(checkLoggedInCookie({ ...base, sessionTokens: lateSessions, nowSeconds: expiration + 3600, method: 'POST' }).ok);
  t.deepEqual(checkLoggedInCookie({ ...base, nowSeconds: expiration + 3601, method: 'POST' }), { ok: false, reason: 'expired' });
});

test('rejects a wrong or tampered HMAC', (t) => {
  const cookie = cookieFor(wpPass);
  const base = { userPass: wpPass, sessionTokens: sessions, secret, nowSeconds: now };
  t.deepEqual(checkLoggedInCookie({ ...base, cookie: { ...cookie, hmac: phpassPassHmac } }), { ok: false, reason: 'bad_hmac' });
  t.deepEqual(checkLoggedInCookie({ ...base, cookie: { ...cookie, login: 'admin' } }), { ok: false, reason: 'bad_hmac' });
  t.deepEqual(
    checkLoggedInCookie({ ...base, cookie: { ...cookie, expiration: String(expiration + 86400), expiresAt: expiration + 86400 } }),
    { ok: false, reason: 'bad_hmac' },
    'a stretched expiration is not signed',
  );
  t.deepEqual(checkLoggedInCookie({ ...base, cookie, secret: secret + 'x' }), { ok: false, reason: 'bad_hmac' });
});

test('a password change (new pass_frag) voids existing cookies', (t) => {
  const cookie = cookieFor(phpassPass);
  const base = { cookie, sessionTokens: sessions, secret, nowSeconds: now };
  t.true(checkLoggedInCookie({ ...base, userPass: phpassPass }).ok);
  t.deepEqual(checkLoggedInCookie({ ...base, userPass: wpPass }), { ok: false, reason: 'bad_hmac' });
  const sameFragmentElsewhere = phpassPass.slice(0, 12) + 'x'.repeat(22);
  t.true(checkLoggedInCookie({ ...base, userPass: sameFragmentElsewhere }).ok, 'only the fragment takes part, as in WordPress');
});

test('rejects a cookie whose session is missing or expired', (t) => {
  const cookie = cookieFor(wpPass);
  const base = { cookie, userPass: wpPass, secret, nowSeconds: now };
  t.deepEqual(checkLoggedInCookie({ ...base, sessionTokens: null }), { ok: false, reason: 'bad_session' });
  t.deepEqual(checkLoggedInCookie({ ...base, sessionTokens: serializeSessionTokens([{ token: 'another-token', expiration }]) }), { ok: false, reason: 'bad_session' });
  t.deepEqual(checkLoggedInCookie({ ...base, sessionTokens: serializeSessionTokens([{ token, expiration: now - 1 }]) }), { ok: false, reason: 'bad_session' });
  t.deepEqual(checkLoggedInCookie({ ...base, sessionTokens: 'a:0:{}' }), { ok: false, reason: 'bad_session' });
  t.deepEqual(checkLoggedInCookie({ ...base, sessionTokens: 'O:8:"stdClass":0:{}' }), { ok: false, reason: 'bad_session' });
});

test('session tokens are keyed by sha256(token) and expire at their own time', (t) => {
  t.is(sessionTokenVerifier(token), '9cd2ce6feacab2192444ba7d94070a84d56fe095711cbbd71f0a6205defcd148');
  t.true(sessionTokenValid(sessions, token, expiration));
  t.false(sessionTokenValid(sessions, token, expiration + 1));
  const legacy = phpSerialize({ [sessionTokenVerifier(token)]: expiration });
  t.true(sessionTokenValid(legacy, token, now), 'a bare integer is an expiration');
  const noExpiration = phpSerialize({ [sessionTokenVerifier(token)]: { ip: '127.0.0.1' } });
  t.false(sessionTokenValid(noExpiration, token, now));
});
