import test from 'ava';
import {
  consumerSecretMatches,
  generateApiKey,
  hashConsumerKey,
  isApiKeyPermission,
  methodAllowed,
} from '../../src/wordpress/woocommerce-api-key';

test('the stored key is HMAC-SHA256(ck, "wc-api") in hex', (t) => {
  // Computed with Python: hmac.new(b'wc-api', ck, hashlib.sha256).hexdigest()
  t.is(hashConsumerKey('ck_0123456789abcdef0123456789abcdef01234567'), '4ffbd479cad9f24fb43a1516cb436a9dad0e2e23ef491464e29c2d81dae32edd');
});

const table: [string, string, boolean][] = [
  ['read', 'GET', true],
  ['read', 'HEAD', true],
  ['read', 'POST', false],
  ['read', 'DELETE', false],
  ['write', 'GET', false],
  ['write', 'HEAD', false],
  ['write', 'POST', true],
  ['write', 'PUT', true],
  ['write', 'PATCH', true],
  ['write', 'DELETE', true],
  ['read_write', 'GET', true],
  ['read_write', 'PATCH', true],
  ['read', 'OPTIONS', true],
  ['write', 'OPTIONS', true],
  ['nonsense', 'OPTIONS', true],
  ['nonsense', 'GET', false],
  ['read_write', 'TRACE', false],
  ['read_write', 'get', false],
];

for (const [permissions, method, allowed] of table) {
  test(`${permissions} ${allowed ? 'allows' : 'refuses'} ${method}`, (t) => {
    t.is(methodAllowed(permissions, method), allowed);
  });
}

test('generated keys have WooCommerce shapes and stored forms', (t) => {
  const key = generateApiKey();
  t.regex(key.consumerKey, /^ck_[0-9a-f]{40}$/);
  t.regex(key.consumerSecret, /^cs_[0-9a-f]{40}$/);
  t.is(key.consumerSecret.length, 43);
  t.is(key.storedKey, hashConsumerKey(key.consumerKey));
  t.is(key.truncatedKey, key.consumerKey.slice(-7));
  t.not(generateApiKey().consumerKey, key.consumerKey);
});

test('secrets compare exactly', (t) => {
  t.true(consumerSecretMatches('cs_abc', 'cs_abc'));
  t.false(consumerSecretMatches('cs_abc', 'cs_abd'));
  t.false(consumerSecretMatches('cs_abc', 'cs_ab'));
});

test('permission values', (t) => {
  t.true(isApiKeyPermission('read_write'));
  t.false(isApiKeyPermission('admin'));
});
