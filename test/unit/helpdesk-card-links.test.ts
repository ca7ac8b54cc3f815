import test from 'ava';
import { CARD_ACTION_LIFETIME_MS, CardActionLinks } from '../../src/helpdesk-card/card-action-links';
import { shopPrice } from '../../src/shop/money';

const claims = { action: 'pause' as const, subscriptionId: 42, orderId: null, customer: 'mette@example.dk', agentUserId: 7, agentEmail: 'agent@shop.example.dk' };
const at = new Date('2026-11-29T10:00:00Z');

test('A link made for an agent, customer, subscription and action reads back as made, until its 15 minutes have passed', (t) => {
  const links = new CardActionLinks('token-a');
  const token = links.make(claims, at);
  t.regex(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'URL-safe, nothing to encode');
  const read = links.verify(token, new Date(at.getTime() + CARD_ACTION_LIFETIME_MS - 1));
  t.true(read.ok);
  if (read.ok) t.like(read.claims, { ...claims, expiresAt: at.getTime() + CARD_ACTION_LIFETIME_MS });
  t.deepEqual(links.verify(token, new Date(at.getTime() + CARD_ACTION_LIFETIME_MS)), { ok: false, reason: 'expired' });
});

test('Each link is its own (a nonce of its own), and a link signed under another token, altered, or not a link at all is refused as altered', (t) => {
  const links = new CardActionLinks('token-a');
  const one = links.make(claims, at);
  const two = links.make(claims, at);
  t.not(one, two);
  t.deepEqual(new CardActionLinks('token-b').verify(one, at), { ok: false, reason: 'altered' }, 'a new HELPDESK_CARD_TOKEN voids the links shown');
  const [body, signature] = one.split('.');
  const fields = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
  fields[2] = 43;
  t.deepEqual(links.verify(`${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${signature}`, at), { ok: false, reason: 'altered' }, 'another subscription');
  fields[2] = 42;
  fields[1] = 'force_activate';
  t.deepEqual(links.verify(`${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${signature}`, at), { ok: false, reason: 'altered' }, 'another action');
  for (const junk of ['', '.', 'a.b.c', `${body}.`, 'x'.repeat(5000), `${body}.${signature}x`]) t.deepEqual(links.verify(junk, at), { ok: false, reason: 'altered' }, junk.slice(0, 20));
});

test('Prices as WooCommerce shows them: the separators and the symbol\'s place of the shop\'s currency options', (t) => {
  const danish = { position: 'right_space' as const, thousandSeparator: '.', decimalSeparator: ',' };
  t.is(shopPrice('1199.5', 'DKK', 2, danish), '1.199,50 kr.');
  t.is(shopPrice('199', 'DKK', 2, { ...danish, position: 'left_space' }), 'kr. 199,00');
  t.is(shopPrice('-5', 'EUR', 2, { position: 'left', thousandSeparator: ',', decimalSeparator: '.' }), '€-5.00');
  t.is(shopPrice('1234567.891', 'SEK', 0, { position: 'right', thousandSeparator: ' ', decimalSeparator: ',' }), '1 234 568kr');
  t.is(shopPrice('99', 'XYZ', 2, undefined), 'XYZ99.00', 'an unknown currency by its code');
});
