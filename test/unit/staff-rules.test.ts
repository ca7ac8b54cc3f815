import test from 'ava';
import { emailKey, storedContactKeys, storedPhoneKey, suppliedPhoneKey } from '../../src/customers/contact-keys';
import { checkAmount, DISCOUNT_SCHEMES, schemeOf } from '../../src/renewal-discounts/discount-schemes';
import { orderEditUrl } from '../../src/shop/admin-urls';
import { looksLikeEmail } from '../../src/staff-auth/authenticate-staff.use-case';
import { resolveWordPressSecrets } from '../../src/staff-auth/wordpress-secrets';
import type { WordPressSiteOptions } from '../../src/data-access/wordpress-user-repository';

test('email keys are trimmed and lower-cased; very long addresses are keyed by digest', (t) => {
  t.is(emailKey('  Mette@Example.DK '), 'mette@example.dk');
  t.is(emailKey(''), null);
  t.is(emailKey(null), null);
  const long = `${'a'.repeat(200)}@example.dk`;
  t.regex(emailKey(long)!, /^sha256:[0-9a-f]{64}$/);
  t.is(emailKey(long.toUpperCase()), emailKey(long));
});

test('stored phones are read with the order\'s countries first, supplied ones with the shop\'s', (t) => {
  t.is(storedPhoneKey('20 12 34 56', 'DK', '', 'DK'), '+4520123456');
  t.is(storedPhoneKey('070-123 45 67', 'SE', '', 'DK'), '+46701234567');
  t.is(storedPhoneKey('070-123 45 67', '', 'SE', 'DK'), '+46701234567', 'shipping country when billing is empty');
  t.is(storedPhoneKey('+47 912 34 567', 'DK', '', 'DK'), '+4791234567', 'own country code wins');
  t.is(storedPhoneKey('', 'DK', '', 'DK'), null);
  t.is(storedPhoneKey('n/a', 'DK', '', 'DK'), null);
  t.is(suppliedPhoneKey('0045 20123456', 'DK'), '+4520123456');
  t.is(suppliedPhoneKey('+4520123456', ''), '+4520123456');
  t.is(suppliedPhoneKey('20123456', ''), null, 'no country to read a national number with');
  t.deepEqual(storedContactKeys({ email: 'A@B.dk', phone: '20123456', billingCountry: 'DK', shippingCountry: '' }, 'DK'), { email: 'a@b.dk', phone: '+4520123456' });
});

test('discount amounts follow their scheme', (t) => {
  const percent = schemeOf('percentage')!;
  const money = schemeOf('fixed_amount')!;
  t.is(schemeOf('free_shipping'), null);
  t.is(schemeOf('__proto__'), null);
  t.deepEqual(checkAmount(percent, 100, 2), { ok: true, amount: '100' });
  t.deepEqual(checkAmount(percent, '12.5', 2), { ok: true, amount: '12.5' });
  t.false(checkAmount(percent, 100.0001, 2).ok);
  t.false(checkAmount(percent, 12.125, 2).ok, 'at most 2 decimals');
  t.deepEqual(checkAmount(money, 1000000, 2), { ok: true, amount: '1000000' }, 'money has no fixed maximum here');
  t.false(checkAmount(money, 10.555, 2).ok);
  t.deepEqual(checkAmount(money, 10.5, 0).ok, false, 'a shop without decimals');
  for (const bad of [0, -1, '-1', 'ten', '', null, Number.NaN, Number.POSITIVE_INFINITY, 1e-9, '1e3', [5], { amount: 5 }]) t.false(checkAmount(money, bad, 2).ok, String(bad));
  t.deepEqual(Object.keys(DISCOUNT_SCHEMES), ['fixed_amount', 'percentage']);
});

test('admin edit URLs follow the storage mode and order type', (t) => {
  t.is(orderEditUrl('https://shop.example.dk/', 42, 'shop_order', false), 'https://shop.example.dk/wp-admin/post.php?post=42&action=edit');
  t.is(orderEditUrl('https://shop.example.dk', 42, 'shop_subscription', false), 'https://shop.example.dk/wp-admin/post.php?post=42&action=edit');
  t.is(orderEditUrl('https://shop.example.dk', 42, 'shop_order', true), 'https://shop.example.dk/wp-admin/admin.php?page=wc-orders&action=edit&id=42');
  t.is(orderEditUrl('https://shop.example.dk', 42, 'shop_subscription', true), 'https://shop.example.dk/wp-admin/admin.php?page=wc-orders--shop_subscription&action=edit&id=42');
});

test('is_email-like checks for application password usernames', (t) => {
  for (const good of ['admin@shop.example.dk', 'a.b+c@example.co.uk']) t.true(looksLikeEmail(good), good);
  for (const bad of ['admin', 'a@b', '@example.dk', 'a@@example.dk', 'a@example..dk', 'a b@example.dk', 'a@-x.dk']) t.false(looksLikeEmail(bad), bad);
});

const options = (partial: Partial<WordPressSiteOptions> = {}): WordPressSiteOptions => ({ userRoles: null, applicationPasswordsInUse: false, ...partial });

test('wp_salt: constants win, options fill the gaps, sample phrases and duplicated constants are ignored', (t) => {
  const all = { loggedInKey: 'LK', loggedInSalt: 'LS', nonceKey: 'NK', nonceSalt: 'NS' };
  t.deepEqual(resolveWordPressSecrets(all, options()), { loggedIn: 'LKLS', nonce: 'NKNS' });
  t.deepEqual(resolveWordPressSecrets({}, options({ loggedInKey: 'lk', loggedInSalt: 'ls', nonceKey: 'nk', nonceSalt: 'ns' })), { loggedIn: 'lkls', nonce: 'nkns' });
  t.deepEqual(resolveWordPressSecrets({ ...all, nonceSalt: 'put your unique phrase here' }, options({ nonceSalt: 'ns' })), { loggedIn: 'LKLS', nonce: 'NKns' });
  t.deepEqual(resolveWordPressSecrets({ ...all, nonceKey: 'LK' }, options({ loggedInKey: 'lk', nonceKey: 'nk' })), { loggedIn: 'lkLS', nonce: 'nkNS' }, 'two equal constants are both ignored');
  t.is(resolveWordPressSecrets({ loggedInKey: 'LK' }, options()), null, 'nothing to verify with');
});
