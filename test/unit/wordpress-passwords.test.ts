import { createHash } from 'node:crypto';
import test from 'ava';
import bcrypt from 'bcryptjs';
import {
  checkApplicationPassword,
  checkPhpassPassword,
  checkWordPressPassword,
  hashApplicationPassword,
  hashPasswordLikeWordPress,
  normalizeApplicationPassword,
  phpassHash,
} from '../../src/wordpress/passwords';
import { timingSafeStringEqual } from '../../src/security/constant-time';

// Published phpass portable hashes:
// - openwall/phpass test.php: "A correct portable hash for 'test12345'".
// - passlib's phpass test vectors ("" and "compL3X!", and a UTF-8 password, passlib's UPASS_TABLE).
// - John the Ripper 1.7.9 test vectors as quoted by passlib (the "$P$B" one uses WordPress's own cost).
const phpassVectors: [string, string, string][] = [
  ['test12345', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0', 'openwall test.php'],
  ['', '$P$7JaFQsPzJSuenezefD/3jHgt5hVfNH0', 'passlib, empty password'],
  ['compL3X!', '$P$FiS0N5L672xzQx1rt1vgdJQRYKnQM9/', 'passlib'],
  ['t\u00e1\u0411\u2113\u0259', '$P$7SMy8VxnfsIy2Sxm7fJxDSdil.h7TW.', 'passlib, UTF-8 password'],
  ['JohnRipper', '$P$B12345678L6Lpt4BxNotVIMILOa9u81', 'John the Ripper'],
  ['thisisalongertestPW', '$P$912345678LIjjb6PhecupozNBmDndU0', 'John the Ripper'],
];

for (const [password, hash, source] of phpassVectors) {
  test(`phpass vector (${source}): ${hash}`, async (t) => {
    t.true(checkPhpassPassword(password, hash));
    t.true(await checkWordPressPassword(password, hash));
    t.false(await checkWordPressPassword(password + 'x', hash));
  });
}

test('phpass refuses a hash with a bad character and unusable settings', (t) => {
  t.false(checkPhpassPassword('test12345', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r!L0'));
  t.false(checkPhpassPassword('test12345', '$P$5IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'), 'count below 2^7');
  t.false(checkPhpassPassword('test12345', '$H$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'), '$H$ is not a WordPress prefix');
});

test('phpassHash reproduces the John the Ripper "$P$B" vector from its salt', (t) => {
  t.is(phpassHash('JohnRipper', '12345678'), '$P$B12345678L6Lpt4BxNotVIMILOa9u81');
});

// An independent phpass: a bit-stream base-64 instead of phpass's grouped loop.
function referencePhpass(password: string, setting: string): string {
  const alphabet = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const rounds = 1 << alphabet.indexOf(setting[3] as string);
  let digest = createHash('md5').update(setting.slice(4, 12) + password).digest();
  for (let i = 0; i < rounds; i += 1) digest = createHash('md5').update(Buffer.concat([digest, Buffer.from(password)])).digest();
  let bits = 0n;
  for (let i = digest.length - 1; i >= 0; i -= 1) bits = (bits << 8n) | BigInt(digest[i] as number);
  let out = '';
  for (let i = 0; i < 22; i += 1) out += alphabet[Number((bits >> BigInt(6 * i)) & 63n)];
  return setting.slice(0, 12) + out;
}

test('phpassHash with a random salt agrees with an independent implementation', (t) => {
  for (const password of ['correct horse', 'Zoë ☃', '']) {
    const hash = phpassHash(password);
    t.regex(hash, /^\$P\$B[./0-9A-Za-z]{30}$/);
    t.is(hash, referencePhpass(password, hash.slice(0, 12)));
    t.true(checkPhpassPassword(password, hash));
  }
  t.throws(() => phpassHash('x', 'short'));
});

test('plain MD5 hashes (length <= 32) are compared as lowercase hex', async (t) => {
  t.true(await checkWordPressPassword('password', '5f4dcc3b5aa765d61d8327deb882cf99'));
  t.false(await checkWordPressPassword('password', '5F4DCC3B5AA765D61D8327DEB882CF99'));
  t.false(await checkWordPressPassword('Password', '5f4dcc3b5aa765d61d8327deb882cf99'));
  t.false(await checkWordPressPassword('', ''));
});

test('bcrypt hashes from the PHP manual verify as password_verify does', async (t) => {
  t.true(await checkWordPressPassword('rasmuslerdorf', '$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq'));
  t.true(await checkWordPressPassword('rasmuslerdorf', '$2y$12$4Umg0rCJwMswRw/l.SwHvuQV01coP0eWmGzd61QH2RvAOMANUBGC.'));
  t.false(await checkWordPressPassword('rasmuslerdorF', '$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq'));
});

test('a $wp$ hash published with its password verifies', async (t) => {
  // From the PasswordHasherTest of the public PHP package AhmedJAlsarem\LaravelBcryptPassword.
  const hash = '$wp$2y$10$y6/UfA/WhvVLZK6RxBSJE./L6YpJN8ChGg15a0Pqry/bTGsDuMR1q';
  t.true(await checkWordPressPassword('Na101918!', hash));
  t.false(await checkWordPressPassword('wrong_password', hash));
  t.false(await checkWordPressPassword('Na101918!', hash.slice(3)), 'without the prefix it is a different hash');
});

test('hashPasswordLikeWordPress trims when hashing, and verification does not', async (t) => {
  const hash = await hashPasswordLikeWordPress('  s3cret pass\n');
  t.regex(hash, /^\$wp\$2y\$10\$[./A-Za-z0-9]{53}$/);
  t.true(await checkWordPressPassword('s3cret pass', hash));
  t.false(await checkWordPressPassword('  s3cret pass\n', hash));
  t.false(await checkWordPressPassword('s3cret pas', hash));
});

test('long passwords are refused except on the MD5 path, as in wp_check_password', async (t) => {
  const long = 'x'.repeat(4097);
  t.false(await checkWordPressPassword(long, phpassHash(long, 'abcdefgh')));
  t.true(await checkWordPressPassword(long, createHash('md5').update(long).digest('hex')));
  t.is(await hashPasswordLikeWordPress(long), '*');
});

test('a plain bcrypt password is read up to its first NUL, like PHP crypt()', async (t) => {
  const hash = (await bcrypt.hash('abc', 4)).replace(/^\$2b\$/, '$2y$');
  t.true(await checkWordPressPassword('abc', hash));
  t.true(await checkWordPressPassword('abc\0def', hash));
  t.false(await checkWordPressPassword('abcdef', hash));
});

test('unknown or malformed hashes never verify', async (t) => {
  for (const hash of [
    '$argon2id$v=19$m=65536,t=4,p=1$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG',
    '$2x$10$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq',
    '$2y$10$tooShort',
    '$wp$garbage-garbage-garbage-garbage-garbage',
    '*',
  ]) {
    t.false(await checkWordPressPassword('rasmuslerdorf', hash), hash);
  }
});

// Vector computed with Python's hashlib.blake2b (an independent BLAKE2 implementation):
// '$generic$' + urlsafe_b64encode(blake2b(pw, key=b'wp_fast_hash_6.8+', digest_size=30)).rstrip('=')
const appPassword = 'abcdABCD1234efghEFGH5678';
const appPasswordHash = '$generic$m3p-vGVHJEquVtpOZroIk-ieMdJ7txFHWU5XUhH-';

test('application passwords hash like wp_fast_hash', async (t) => {
  t.is(hashApplicationPassword(appPassword), appPasswordHash);
  t.true(await checkApplicationPassword(appPassword, appPasswordHash));
  t.false(await checkApplicationPassword(appPassword.toLowerCase(), appPasswordHash));
  t.false(await checkApplicationPassword(appPassword, appPasswordHash.slice(9)));
});

test('application passwords created before 6.8 ($P$) still verify', async (t) => {
  const hash = phpassHash(appPassword);
  t.true(await checkApplicationPassword(appPassword, hash));
  t.false(await checkApplicationPassword('abcdABCD1234efghEFGH5679', hash));
});

test('supplied application passwords lose their spaces and punctuation', (t) => {
  t.is(normalizeApplicationPassword('abcd ABCD 1234 efgh-EFGH 5678'), appPassword);
  t.is(normalizeApplicationPassword('ÿabcd'), 'abcd');
});

test('timingSafeStringEqual', (t) => {
  t.true(timingSafeStringEqual('abc', 'abc'));
  t.false(timingSafeStringEqual('abc', 'abd'));
  t.false(timingSafeStringEqual('abc', 'abcd'));
});
