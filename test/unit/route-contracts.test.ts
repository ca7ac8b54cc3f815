import test from 'ava';
import { orderStatusContract, customerLookupContract } from '../../src/entry-points/http/routes/helpdesk.contract';
import { pauseContract, recordedReasonContract, recordReasonsContract } from '../../src/entry-points/http/routes/subscription-support.contract';
import { createDiscountContract, discountsContract } from '../../src/entry-points/http/routes/renewal-discounts.contract';
import { webhookContract } from '../../src/entry-points/http/routes/webhook.contract';
import {
  cardGatewayEventShape, MOBILE_WALLET_AGREEMENT_EVENTS, MOBILE_WALLET_CHARGE_EVENTS, mobileWalletEventShape, parseMobileWalletEvent,
} from '../../src/payments/providers/events';
import type { Checked } from '../../src/entry-points/http/contract/route-contract';

const refusal = <T>(checked: Checked<T>) => (checked.ok ? null : { status: checked.refusal.status, code: checked.refusal.code, data: checked.refusal.data });

test('The pause contract takes real YYYY-MM-DD dates only', (t) => {
  for (const good of ['2026-12-24', '2028-02-29']) t.true(pauseContract.checkBody({ end_date: good }).ok, good);
  for (const bad of ['2026-02-29', '2026-13-01', '2026-1-01', '24-12-2026', '2026-12-24T00:00:00Z', '', 20261224, null]) {
    t.deepEqual(refusal(pauseContract.checkBody({ end_date: bad })), { status: 400, code: 'invalid_params', data: { params: ['end_date'] } }, String(bad));
  }
  t.deepEqual(refusal(pauseContract.checkBody({})), { status: 400, code: 'invalid_params', data: { params: ['end_date'] } });
});

test('The order status body: a bad field is invalid_params naming it, before anything missing; blanks and nulls are missing', (t) => {
  const check = (body: Record<string, unknown>) => refusal(orderStatusContract.checkBody(body));
  t.is(check({ order_number: '1001', email: 'a@b.dk' }), null);
  t.is(check({ order_number: 1001, phone: '+45 20 12 34 56' }), null);
  t.is(check({ order_number: ' 1001 ', email: '', phone: '20123456' }), null);
  for (const body of [{}, { order_number: '1001' }, { order_number: '  ', email: 'a@b.dk' }, { order_number: '1001', email: ' ', phone: null }, { order_number: null, email: 'a@b.dk' }]) {
    t.deepEqual(check(body), { status: 400, code: 'missing_params', data: {} }, JSON.stringify(body));
  }
  t.deepEqual(check({ order_number: [1], email: 42 }), { status: 400, code: 'invalid_params', data: { params: ['order_number', 'email'] } });
  t.deepEqual(check({ order_number: 0, phone: 'x'.repeat(321) }), { status: 400, code: 'invalid_params', data: { params: ['order_number', 'phone'] } });
  t.deepEqual(check({ order_number: 1.5 }), { status: 400, code: 'invalid_params', data: { params: ['order_number'] } });
  t.deepEqual(check({ email: 'x'.repeat(321) }), { status: 400, code: 'invalid_params', data: { params: ['email'] } }, 'invalid before missing');
});

test('The order status query string: any lookup field there is params_must_be_in_body naming each', (t) => {
  t.true(orderStatusContract.checkQuery('/helpdesk/v1/order-status?debug=1').ok);
  const checked = orderStatusContract.checkQuery('/helpdesk/v1/order-status?phone=1&email=x&other=2');
  t.deepEqual(refusal(checked), { status: 400, code: 'params_must_be_in_body', data: { params: ['email', 'phone'] } });
});

test('The customer lookup: exactly one of email and phone, once, at most 320 characters', (t) => {
  const check = (query: string) => refusal(customerLookupContract.checkQuery(`/list?${query}`));
  for (const good of ['email=a%40b.dk', 'phone=20123456', 'email=&phone=20123456', 'email=a%40b.dk&consumer_key=ck']) t.is(check(good), null, good);
  for (const both of ['email=a%40b.dk&phone=1', '', 'email=', 'email=%20&phone=']) {
    t.deepEqual(check(both), { status: 400, code: 'invalid_params', data: { params: ['email', 'phone'] } }, both);
  }
  t.deepEqual(check('email=a&email=b'), { status: 400, code: 'invalid_params', data: { params: ['email'] } });
  t.is(check('email=a%40b.dk&__proto__=x&__proto__=y&constructor=z'), null, 'any other names are parameters like any other, and ignored');
  t.deepEqual(check('__proto__=x&__proto__=y'), { status: 400, code: 'invalid_params', data: { params: ['email', 'phone'] } });
  t.deepEqual(check(`phone=${'1'.repeat(321)}`), { status: 400, code: 'invalid_params', data: { params: ['phone'] } });
});

test('Path IDs that cannot be are the route\'s not-found, naming the segment\'s own kind', (t) => {
  t.deepEqual(pauseContract.checkParams({ subscriptionId: '42' }), { ok: true, value: { subscriptionId: 42 } });
  // Only plain digits are an ID: what ajv's own coercion would read as a number (Infinity from `1e309`) is not one.
  for (const bad of ['abc', '0', '-1', '1.5', '', undefined, '1e309', 'Infinity', 'NaN', '0x10', '1e3', '1.0', '+1', ' 1', '007', '9007199254740992', '9'.repeat(400)]) {
    t.deepEqual(refusal(pauseContract.checkParams({ subscriptionId: bad as string })), { status: 404, code: 'subscription_not_found', data: {} }, String(bad));
  }
  t.deepEqual(refusal(recordedReasonContract.checkParams({ subscriptionId: '42', entryId: 'abc' })), { status: 404, code: 'cancellation_reason_not_found', data: {} });
  t.deepEqual(refusal(webhookContract.checkParams({ provider: 'paypal' })), { status: 404, code: 'unknown_provider', data: {} });
});

test('The discount list reads its query as numbers, with its defaults, and names each bad one', (t) => {
  t.deepEqual(discountsContract.checkQuery('/d?subscription=7'), { ok: true, value: { subscription: 7, page: 1, per_page: 100 } });
  t.deepEqual(refusal(discountsContract.checkQuery('/d?subscription=x&order=0&page=1.5&per_page=101')),
    { status: 400, code: 'invalid_params', data: { params: ['subscription', 'order', 'page', 'per_page'] } });
  t.deepEqual(refusal(discountsContract.checkQuery('/d?subscription=1e309&order=0x10&page=Infinity&per_page=%2B5')),
    { status: 400, code: 'invalid_params', data: { params: ['subscription', 'order', 'page', 'per_page'] } });
  t.deepEqual(discountsContract.checkQuery('/d?page=90071992547409&per_page=100'), { ok: true, value: { page: 90071992547409, per_page: 100 } }, 'the last page\'s first row is a number held exactly');
  t.false(discountsContract.checkQuery('/d?page=90071992547410').ok);
});

test('Request bodies name every bad field in the order the contract declares them', (t) => {
  t.deepEqual(refusal(createDiscountContract.checkBody({ order: -1, created_via: '', amount: null, type: [], subscription: 'x' })),
    { status: 400, code: 'invalid_params', data: { params: ['subscription', 'type', 'amount', 'created_via', 'order'] } });
  t.deepEqual(refusal(recordReasonsContract.checkBody({ reason_post_ids: Array(51).fill(1) })), { status: 400, code: 'invalid_params', data: { params: ['reason_post_ids'] } });
  t.true(createDiscountContract.checkBody({ subscription: '12', type: 1, amount: '10.50', order: null }).ok);
});

test('The webhook route documents the event schemas its use cases check with', (t) => {
  const members = (webhookContract.shapes.body!.schema as unknown as { anyOf: unknown[] }).anyOf;
  t.is(members[0], cardGatewayEventShape.schema);
  t.is(members[1], mobileWalletEventShape.schema);
});

test('A mobile wallet event names the ids it is read back by: an agreement event its agreement, a charge event its agreement and charge', (t) => {
  const [agreementEvent] = MOBILE_WALLET_AGREEMENT_EVENTS;
  const [chargeEvent] = MOBILE_WALLET_CHARGE_EVENTS;
  t.truthy(parseMobileWalletEvent({ eventType: agreementEvent, agreementId: 'agr_1' }));
  t.truthy(parseMobileWalletEvent({ eventType: chargeEvent, agreementId: 'agr_1', chargeId: 'chr_1' }));
  t.truthy(parseMobileWalletEvent({ eventType: 'recurring.some-new-event.v1' }), 'an event this version does not know needs neither');
  for (const body of [
    { eventType: agreementEvent }, { eventType: agreementEvent, agreementId: '  ' }, { eventType: agreementEvent, agreementId: 7 },
    { eventType: chargeEvent, agreementId: 'agr_1' }, { eventType: chargeEvent, chargeId: 'chr_1' }, { eventType: chargeEvent, agreementId: 'agr_1', chargeId: '' },
    { eventType: ' ' }, {},
  ]) {
    t.is(parseMobileWalletEvent(body), null, JSON.stringify(body));
  }
});
