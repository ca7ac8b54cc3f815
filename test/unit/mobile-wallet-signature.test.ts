import test from 'ava';
import {
  mobileWalletContentHash,
  mobileWalletSignature,
  mobileWalletStringToSign,
  signMobileWalletRequest,
  verifyMobileWalletWebhook,
  type MobileWalletWebhookRequest,
} from '../../src/payments/providers/mobile-wallet/signature.js';
import { parseMobileWalletEvent } from '../../src/payments/providers/events.js';
import { mobileWalletDelivery } from '../support/fake-mobile-wallet.js';

// Published by the provider (vippsas/webhooks-api request-authentication.md).
const VECTOR = {
  secret: 'A0+AeKBRG2KRGvnNwJpQlb6IJFk48CKXCIcrLoHncVJKDILsQSxS6NWCccwWm6r6FhGKhiHTBsG2wo/xU6FY/A==',
  url: 'https://webhook.site/e2cee29b-012e-4f1d-8ef4-e95fd74a7a63',
  body: '{"some-unique-content":"ee6e441b-cc4a-46f8-895d-a5af79bcc233/hello-world"}',
  date: 'Thu, 30 Mar 2023 08:38:32 GMT',
  contentHash: 'lNlsp1XA03N34HrQsVzPgJKtC+r7l/RBF4V3JQUWMj4=',
  signature: 'agAiSyogQbDHpeucoNwYz+yAr5nJ+v+zasdkSbqzv+U=',
  /** What a base64-decoded key would give: wrong. */
  decodedKeySignature: 'T3+NXHMmhNVEjW5PeJ4Gql70nf0MOXCAY9CoZDxuVQw=',
};

function vectorRequest(overrides: Partial<MobileWalletWebhookRequest> = {}, headers: Record<string, string | undefined> = {}): MobileWalletWebhookRequest {
  return {
    method: 'POST',
    registeredUrl: VECTOR.url,
    body: Buffer.from(VECTOR.body, 'utf8'),
    headers: {
      host: 'webhook.site',
      'x-ms-date': VECTOR.date,
      'x-ms-content-sha256': VECTOR.contentHash,
      authorization: `HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=${VECTOR.signature}`,
      ...headers,
    },
    ...overrides,
  };
}

test('published vector: content hash', (t) => {
  t.is(mobileWalletContentHash(Buffer.from(VECTOR.body, 'utf8')), VECTOR.contentHash);
});

test('published vector: string to sign and signature', (t) => {
  const stringToSign = mobileWalletStringToSign({
    method: 'POST',
    pathAndQuery: '/e2cee29b-012e-4f1d-8ef4-e95fd74a7a63',
    date: VECTOR.date,
    host: 'webhook.site',
    contentHash: VECTOR.contentHash,
  });
  t.is(stringToSign, `POST\n/e2cee29b-012e-4f1d-8ef4-e95fd74a7a63\n${VECTOR.date};webhook.site;${VECTOR.contentHash}`);
  t.is(mobileWalletSignature(stringToSign, VECTOR.secret), VECTOR.signature);
  t.not(mobileWalletSignature(stringToSign, VECTOR.secret), VECTOR.decodedKeySignature);
});

test('published vector: signMobileWalletRequest builds the documented Authorization header', (t) => {
  const signed = signMobileWalletRequest({ url: VECTOR.url, date: VECTOR.date, body: Buffer.from(VECTOR.body), secret: VECTOR.secret });
  t.is(signed.contentHash, VECTOR.contentHash);
  t.is(signed.signature, VECTOR.signature);
  t.is(signed.host, 'webhook.site');
  t.is(signed.authorization, `HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=${VECTOR.signature}`);
});

test('published vector: verifies', (t) => {
  t.like(verifyMobileWalletWebhook(vectorRequest(), { secrets: [VECTOR.secret] }), { ok: true });
});

test('uses the registered host and path, not the host header seen behind a proxy', (t) => {
  const behindProxy = vectorRequest({}, { host: '127.0.0.1:8080' });
  t.true(verifyMobileWalletWebhook(behindProxy, { secrets: [VECTOR.secret] }).ok);
  const wrongUrl = vectorRequest({ registeredUrl: 'https://webhook.site/other-path' });
  t.deepEqual(verifyMobileWalletWebhook(wrongUrl, { secrets: [VECTOR.secret] }), { ok: false, reason: 'signature' });
});

test('a base64-decoded secret does not verify', (t) => {
  const decoded = Buffer.from(VECTOR.secret, 'base64').toString('latin1');
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest(), { secrets: [decoded] }), { ok: false, reason: 'signature' });
  const signedWithDecodedKey = vectorRequest({}, { authorization: `HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=${VECTOR.decodedKeySignature}` });
  t.deepEqual(verifyMobileWalletWebhook(signedWithDecodedKey, { secrets: [VECTOR.secret] }), { ok: false, reason: 'signature' });
});

test('tries every secret', (t) => {
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest(), { secrets: ['', 'an-old-secret', VECTOR.secret] }), { ok: true });
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest(), { secrets: ['an-old-secret'] }), { ok: false, reason: 'signature' });
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest(), { secrets: [] }), { ok: false, reason: 'no_secrets' });
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest(), { secrets: [''] }), { ok: false, reason: 'no_secrets' });
});

test('a changed body fails the content hash, even by one byte or whitespace', (t) => {
  const reserialised = Buffer.from(JSON.stringify(JSON.parse(VECTOR.body), null, 1));
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest({ body: reserialised }), { secrets: [VECTOR.secret] }), { ok: false, reason: 'content_hash' });
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest({ body: Buffer.from(`${VECTOR.body}\n`) }), { secrets: [VECTOR.secret] }), { ok: false, reason: 'content_hash' });
});

test('a body whose hash header was recomputed still fails the signature', (t) => {
  const body = Buffer.from('{"eventType":"recurring.charge-captured.v1"}');
  const request = vectorRequest({ body }, { 'x-ms-content-sha256': mobileWalletContentHash(body) });
  t.deepEqual(verifyMobileWalletWebhook(request, { secrets: [VECTOR.secret] }), { ok: false, reason: 'signature' });
});

test('the date, method and query are signed', (t) => {
  t.deepEqual(verifyMobileWalletWebhook(vectorRequest({}, { 'x-ms-date': 'Thu, 30 Mar 2023 08:38:33 GMT' }), { secrets: [VECTOR.secret] }), {
    ok: false,
    reason: 'signature',
  });
  t.false(verifyMobileWalletWebhook(vectorRequest({ method: 'PUT' }), { secrets: [VECTOR.secret] }).ok);
  t.false(verifyMobileWalletWebhook(vectorRequest({ registeredUrl: `${VECTOR.url}?x=1` }), { secrets: [VECTOR.secret] }).ok);
});

test('missing headers', (t) => {
  for (const name of ['x-ms-date', 'x-ms-content-sha256', 'authorization']) {
    t.deepEqual(verifyMobileWalletWebhook(vectorRequest({}, { [name]: undefined }), { secrets: [VECTOR.secret] }), { ok: false, reason: 'missing_headers' }, name);
  }
});

test('falls back to X-Vipps-Authorization and tolerates header case', (t) => {
  const original = vectorRequest();
  const auth = original.headers.authorization as string;
  const fallback = vectorRequest({}, { authorization: undefined, 'x-vipps-authorization': auth });
  t.true(verifyMobileWalletWebhook(fallback, { secrets: [VECTOR.secret] }).ok);
  const mixedCase = { ...original, headers: { 'X-MS-Date': VECTOR.date, 'X-MS-Content-SHA256': VECTOR.contentHash, Authorization: auth } };
  t.true(verifyMobileWalletWebhook(mixedCase, { secrets: [VECTOR.secret] }).ok);
  t.true(verifyMobileWalletWebhook({ ...original, headers: { ...original.headers, authorization: [auth] } }, { secrets: [VECTOR.secret] }).ok);
});

test('malformed Authorization headers', (t) => {
  for (const authorization of [
    VECTOR.signature,
    `Bearer ${VECTOR.signature}`,
    `HMAC-SHA256 Signature=${VECTOR.signature}`,
    'HMAC-SHA256 SignedHeaders=host;x-ms-date;x-ms-content-sha256&Signature=' + VECTOR.signature,
    'HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=',
  ]) {
    t.deepEqual(verifyMobileWalletWebhook(vectorRequest({}, { authorization }), { secrets: [VECTOR.secret] }), { ok: false, reason: 'malformed_authorization' }, authorization);
  }
});

test('a fake delivery verifies against a URL with port and query, and parses', (t) => {
  const url = 'https://shop.example:8443/payment-hub/v1/webhook/mobile_wallet?env=test';
  const event = { eventType: 'recurring.charge-failed.v1', agreementId: 'agr_1', chargeId: 'chr-1', amount: 9900, failureReason: 'user_action_required' };
  const delivery = mobileWalletDelivery(event, { secret: 's3cret', url, date: new Date('2024-01-02T03:04:05Z') });
  t.is(delivery.headers.host, 'shop.example:8443');
  t.is(delivery.headers['x-ms-date'], 'Tue, 02 Jan 2024 03:04:05 GMT');
  const result = verifyMobileWalletWebhook({ method: 'POST', registeredUrl: url, headers: delivery.headers, body: delivery.body }, { secrets: ['s3cret'] });
  t.true(result.ok);
  t.like(parseMobileWalletEvent(delivery.body), { supported: true, eventType: 'recurring.charge-failed.v1', chargeId: 'chr-1', amount: 9900, failureReason: 'user_action_required' });
});

test('parseMobileWalletEvent', (t) => {
  t.like(parseMobileWalletEvent({ eventType: 'recurring.agreement-stopped.v1', agreementId: 'agr_1', actor: 'MERCHANT', occurred: '2024-01-01T00:00:00Z' }), {
    supported: true,
    agreementId: 'agr_1',
    actor: 'MERCHANT',
  });
  const refunded = parseMobileWalletEvent({ eventType: 'recurring.charge-refunded.v1', agreementId: 'agr_1', chargeId: 'chr-2', transactionId: 't-1', amount: 'x' });
  t.like(refunded, { supported: true, transactionId: 't-1' });
  t.false('amount' in refunded!, 'a wrongly typed optional field is dropped, not fatal');
  t.like(parseMobileWalletEvent({ eventType: 'epayments.payment.created.v1', msn: 123456 }), { supported: false, msn: '123456' });
  t.is(parseMobileWalletEvent({ eventType: 'recurring.charge-captured.v1', agreementId: 'agr_1' }), null);
  t.is(parseMobileWalletEvent({ eventType: 'recurring.agreement-activated.v1' }), null);
  t.is(parseMobileWalletEvent({ agreementId: 'agr_1' }), null);
  t.is(parseMobileWalletEvent(Buffer.from('{')), null);
});
