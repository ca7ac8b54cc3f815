/**
 * The password checks WordPress performs on a user's stored password hash (`wp_check_password`, 6.8+) and on
 * application passwords (`WP_Application_Passwords::check_password`), without PHP.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { blake2b } from 'blakejs';
import { timingSafeStringEqual } from '../security/constant-time';

export function md5Hex(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

// WordPress refuses longer passwords before hashing them (a CPU-exhaustion guard), except on the
// legacy MD5 path, which it checks first.
const MAX_PASSWORD_BYTES = 4096;

/** `wp_check_password` as of WordPress 6.8, in the same order of checks. */
export async function checkWordPressPassword(password: string, hash: string): Promise<boolean> {
  if (Buffer.byteLength(hash, 'utf8') <= 32) return timingSafeStringEqual(hash, md5Hex(password));
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return false;
  if (hash.startsWith('$wp')) return bcryptVerify(wordPressPrehash(password), hash.slice(3));
  if (hash.startsWith('$P$')) return checkPhpassPassword(password, hash);
  return bcryptVerify(password, hash);
}

/** The value WordPress 6.8+ feeds to bcrypt: base64(HMAC-SHA384(password, 'wp-sha384')). */
export function wordPressPrehash(password: string): string {
  return createHmac('sha384', 'wp-sha384').update(password, 'utf8').digest('base64');
}

const BCRYPT_HASH = /^\$2([aby])\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** PHP `password_verify` for bcrypt hashes; any other algorithm is refused (fails closed). */
async function bcryptVerify(password: string, hash: string): Promise<boolean> {
  const match = BCRYPT_HASH.exec(hash);
  if (!match) return false;
  const cost = Number(match[2]);
  if (cost < 4 || cost > 31) return false;
  // PHP's crypt() reads the password as a C string: nothing after a NUL byte takes part.
  const nul = password.indexOf('\0');
  const key = nul === -1 ? password : password.slice(0, nul);
  // PHP's $2a$ deliberately diverges from other bcrypt implementations for 8-bit passwords (its
  // countermeasure for the old sign-extension bug); refuse rather than guess.
  if (match[1] === 'a' && /[^\x00-\x7f]/.test(key)) return false;
  let computed: string;
  try {
    computed = await bcrypt.hash(key, hash.slice(0, 29));
  } catch {
    return false;
  }
  return timingSafeStringEqual(hash, computed);
}

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** phpass's own base-64 (little-endian groups, ./0-9A-Za-z), as used in `$P$` hashes. */
export function phpassEncode64(input: Uint8Array, count: number): string {
  let output = '';
  let i = 0;
  while (i < count) {
    let value = input[i++] ?? 0;
    output += ITOA64[value & 0x3f];
    if (i < count) value |= (input[i] ?? 0) << 8;
    output += ITOA64[(value >> 6) & 0x3f];
    if (i++ >= count) break;
    if (i < count) value |= (input[i] ?? 0) << 16;
    output += ITOA64[(value >> 12) & 0x3f];
    if (i++ >= count) break;
    output += ITOA64[(value >> 18) & 0x3f];
  }
  return output;
}

/**
 * phpass portable hash (`$P$`, as written by `PasswordHash(8, true)`): null when the setting is
 * unusable, as phpass's crypt_private returns an error marker then.
 */
function phpassCrypt(password: string, setting: string): string | null {
  if (!setting.startsWith('$P$')) return null;
  const countLog2 = ITOA64.indexOf(setting.charAt(3));
  if (countLog2 < 7 || countLog2 > 30) return null;
  const salt = setting.slice(4, 12);
  if (Buffer.byteLength(salt, 'utf8') !== 8) return null;
  const pw = Buffer.from(password, 'utf8');
  let hash = createHash('md5').update(salt, 'utf8').update(pw).digest();
  for (let count = 2 ** countLog2; count > 0; count -= 1) {
    hash = createHash('md5').update(hash).update(pw).digest();
  }
  return setting.slice(0, 12) + phpassEncode64(hash, 16);
}

/** phpass `CheckPassword` for `$P$` hashes. */
export function checkPhpassPassword(password: string, hash: string): boolean {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return false;
  const computed = phpassCrypt(password, hash);
  return computed !== null && timingSafeStringEqual(hash, computed);
}

/**
 * A `$P$` hash as WordPress before 6.8 wrote it (8 → count character "B", 2^13 rounds). `salt`, if
 * given, is the 8 characters after "$P$B"; otherwise 6 random bytes encoded as phpass does.
 */
export function phpassHash(password: string, salt?: string): string {
  const chosen = salt ?? phpassEncode64(randomBytes(6), 6);
  if (!/^[./0-9A-Za-z]{8}$/.test(chosen)) throw new RangeError('phpass salt must be 8 characters of ./0-9A-Za-z');
  const hash = phpassCrypt(password, `$P$B${chosen}`);
  if (hash === null) throw new RangeError('unusable phpass setting');
  return hash;
}

const PHP_TRIM = /^[ \t\n\r\0\x0B]+|[ \t\n\r\0\x0B]+$/g;

/** `wp_hash_password` (6.8+, default bcrypt): "$wp" + bcrypt($2y$) of the pre-hash of trim(password). */
export async function hashPasswordLikeWordPress(password: string, cost = 10): Promise<string> {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return '*';
  const salt = (await bcrypt.genSalt(cost)).replace(/^\$2[ab]\$/, '$2y$');
  return '$wp' + (await bcrypt.hash(wordPressPrehash(password.replace(PHP_TRIM, '')), salt));
}

const FAST_HASH_KEY = Buffer.from('wp_fast_hash_6.8+', 'utf8');

/** `wp_fast_hash`: "$generic$" + base64url(BLAKE2b-240 keyed with "wp_fast_hash_6.8+"). */
export function hashApplicationPassword(password: string): string {
  const digest = blake2b(Buffer.from(password, 'utf8'), FAST_HASH_KEY, 30);
  return '$generic$' + Buffer.from(digest).toString('base64url');
}

/**
 * `WP_Application_Passwords::check_password`: "$generic$" hashes (6.8+) by re-hashing; anything else
 * was written by `wp_hash_password` before 6.8 and goes through `wp_check_password`.
 */
export async function checkApplicationPassword(password: string, hash: string): Promise<boolean> {
  if (!hash.startsWith('$generic$')) return checkWordPressPassword(password, hash);
  return timingSafeStringEqual(hash, hashApplicationPassword(password));
}

/** WordPress strips everything but ASCII letters and digits from a supplied application password. */
export function normalizeApplicationPassword(supplied: string): string {
  return supplied.replace(/[^a-z\d]/gi, '');
}

