import test from 'ava';
import { signCardGatewayEvent, verifyCardGatewaySignature } from '../../src/payments/providers/card-gateway/signature.js';
import { parseCardGatewayEvent } from '../../src/payments/providers/events.js';
import { cardGatewayDelivery } from '../support/fake-card-gateway.js';

// Self-computed from the documented formula hex(HMAC-SHA256(secret, timestamp + id)) with the secret the
// provider's own plugin tests use; the provider publishes no secret for its example signature.
const VECTOR = {
  secret: 'test_secret_key',
  timestamp: '2015-06-25T12:10:00.64Z',
  id: '8ab4b56439944e62ababca7954355578',
  signature: '52593696d7c167c58f89231ff058d3c1fe4936dc2b095ceb04b80821103cfc6c',
};

// The docs' example body (its signature was made with an unpublished secret).
const DOCS_EXAMPLE = {
  id: VECTOR.id,
  event_id: '680bd8055b5c444bb467dcb731c65bf9',
  event_type: 'invoice_settled',
  timestamp: VECTOR.timestamp,
  signature: '7a591eddc400af4c8a64ff551ff90b37d79471bd2c9a5a2fcd4ed6944f39cb09',
  customer: 'OVAFIJ',
  invoice: 'inv-1',
  transaction: 'b3c4e9d0a1f2e3d4c5b6a7980f1e2d3c',
};

test('signs timestamp + id as lowercase hex HMAC-SHA256 (test vector)', (t) => {
  t.is(signCardGatewayEvent({ timestamp: VECTOR.timestamp, id: VECTOR.id }, VECTOR.secret), VECTOR.signature);
});

test('verifies the test vector', (t) => {
  t.true(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, id: VECTOR.id, signature: VECTOR.signature }, VECTOR.secret));
});

test('the order is timestamp first, with no separator', (t) => {
  t.false(verifyCardGatewaySignature({ timestamp: VECTOR.id, id: VECTOR.timestamp, signature: VECTOR.signature }, VECTOR.secret));
  const withSeparator = signCardGatewayEvent({ timestamp: `${VECTOR.timestamp}.`, id: VECTOR.id }, VECTOR.secret);
  t.not(withSeparator, VECTOR.signature);
});

test('rejects another secret, a changed id or a changed timestamp', (t) => {
  const base = { timestamp: VECTOR.timestamp, id: VECTOR.id, signature: VECTOR.signature };
  t.false(verifyCardGatewaySignature(base, 'other_secret'));
  t.false(verifyCardGatewaySignature({ ...base, id: `${VECTOR.id.slice(0, -1)}9` }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ ...base, timestamp: '2015-06-25T12:10:00.65Z' }, VECTOR.secret));
});

test('the docs example signature does not verify with the plugin test secret', (t) => {
  t.false(verifyCardGatewaySignature(DOCS_EXAMPLE, VECTOR.secret));
});

test('body fields other than timestamp and id are not signed', (t) => {
  // Documented weakness: the processor must read state back from the API.
  const payload = { ...DOCS_EXAMPLE, signature: VECTOR.signature, invoice: 'inv-999', event_type: 'invoice_failed' };
  t.true(verifyCardGatewaySignature(payload, VECTOR.secret));
});

test('accepts an uppercase hex signature but no other shape', (t) => {
  const base = { timestamp: VECTOR.timestamp, id: VECTOR.id };
  t.true(verifyCardGatewaySignature({ ...base, signature: VECTOR.signature.toUpperCase() }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ ...base, signature: VECTOR.signature.slice(0, 62) }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ ...base, signature: `${VECTOR.signature}00` }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ ...base, signature: Buffer.from(VECTOR.signature, 'hex').toString('base64') }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ ...base, signature: '' }, VECTOR.secret));
});

test('rejects missing or non-string fields and empty secrets', (t) => {
  t.false(verifyCardGatewaySignature(null, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, signature: VECTOR.signature }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ timestamp: 1435234200, id: VECTOR.id, signature: VECTOR.signature }, VECTOR.secret));
  t.false(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, id: VECTOR.id, signature: VECTOR.signature }, ''));
  t.false(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, id: VECTOR.id, signature: VECTOR.signature }, []));
});

test('tries every given secret (rotation)', (t) => {
  const payload = { timestamp: VECTOR.timestamp, id: VECTOR.id, signature: VECTOR.signature };
  t.true(verifyCardGatewaySignature(payload, ['old_secret', VECTOR.secret]));
  t.false(verifyCardGatewaySignature(payload, ['old_secret', 'older_secret']));
});

test('the secret is used as UTF-8 text, not decoded', (t) => {
  const secret = 'c2VjcmV0'; // looks like base64 of "secret"
  const signature = signCardGatewayEvent({ timestamp: VECTOR.timestamp, id: VECTOR.id }, secret);
  t.true(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, id: VECTOR.id, signature }, secret));
  t.false(verifyCardGatewaySignature({ timestamp: VECTOR.timestamp, id: VECTOR.id, signature }, 'secret'));
});

test('a fake delivery round-trips through parse and verify', (t) => {
  const delivery = cardGatewayDelivery({ event_type: 'invoice_failed', invoice: 'order-42', customer: 'customer-7' }, 'webhook_secret_x');
  const event = parseCardGatewayEvent(delivery.body);
  t.truthy(event);
  t.true(verifyCardGatewaySignature(event!, 'webhook_secret_x'));
  t.false(verifyCardGatewaySignature(event!, 'webhook_secret_y'));
  t.is(delivery.headers['content-type'], 'application/json');
});

test('parseCardGatewayEvent types supported events and keeps unsupported ones', (t) => {
  const invoice = parseCardGatewayEvent({ ...DOCS_EXAMPLE, credit_note: 'cn-1' });
  t.like(invoice, { supported: true, eventType: 'invoice_settled', invoice: 'inv-1', eventId: DOCS_EXAMPLE.event_id, creditNote: 'cn-1' });

  const method = parseCardGatewayEvent({ ...DOCS_EXAMPLE, event_type: 'customer_payment_method_added', invoice: undefined, payment_method: 'ca_123', payment_method_reference: 'cs_9' });
  t.like(method, { supported: true, eventType: 'customer_payment_method_added', paymentMethod: 'ca_123', customer: 'OVAFIJ', paymentMethodReference: 'cs_9' });

  const other = parseCardGatewayEvent({ ...DOCS_EXAMPLE, event_type: 'subscription_renewal', subscription: 'sub-1' });
  t.like(other, { supported: false, eventType: 'subscription_renewal', subscription: 'sub-1' });

  t.is(parseCardGatewayEvent(JSON.stringify(DOCS_EXAMPLE))?.eventType, 'invoice_settled');
});

test('parseCardGatewayEvent rejects malformed deliveries', (t) => {
  t.is(parseCardGatewayEvent('not json'), null);
  t.is(parseCardGatewayEvent([DOCS_EXAMPLE]), null);
  t.is(parseCardGatewayEvent({ ...DOCS_EXAMPLE, event_id: undefined }), null);
  t.is(parseCardGatewayEvent({ ...DOCS_EXAMPLE, signature: 42 }), null);
  // An invoice event without its invoice handle, a payment method event without its payment method.
  t.is(parseCardGatewayEvent({ ...DOCS_EXAMPLE, invoice: undefined }), null);
  t.is(parseCardGatewayEvent({ ...DOCS_EXAMPLE, event_type: 'customer_payment_method_failed', invoice: undefined }), null);
});
