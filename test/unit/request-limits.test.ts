import test from 'ava';
import sinon from 'sinon';
import { CardGatewayClient } from '../../src/payments/providers/card-gateway/client.js';
import { pauseAfterRateLimit, providerCallsWaitingAtLimits, RequestGate } from '../../src/payments/providers/request-limits.js';
import { FakeCardGateway, readAllInvoices, startEnforcingGateway } from '../support/fake-card-gateway.js';

/** Enters `count` calls at once and reports how many are in after each step of the fake clock. */
function enterMany(gate: RequestGate, count: number, waitMs: number) {
  const entered: boolean[] = [];
  const done = Array.from({ length: count }, () => gate.enter(waitMs).then((ok) => { entered.push(ok); return ok; }));
  return { entered, done };
}

test.serial('Given 10 calls in flight at most, When 25 arrive at once, Then 10 start and each one that leaves lets the next in, in arrival order', async (t) => {
  const clock = sinon.useFakeTimers();
  try {
    const gate = new RequestGate({ concurrent: 10, perSecond: Infinity });
    const order: number[] = [];
    const calls = Array.from({ length: 25 }, (_, i) => gate.enter(1000).then((ok) => { if (ok) order.push(i); return ok; }));
    await clock.tickAsync(0);
    t.deepEqual(gate.load, { inFlight: 10, waiting: 15 });
    gate.leave();
    gate.leave();
    await clock.tickAsync(0);
    t.deepEqual(gate.load, { inFlight: 10, waiting: 13 });
    t.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    await clock.tickAsync(1000);
    t.deepEqual(await Promise.all(calls), [...Array(12).fill(true), ...Array(13).fill(false)], 'the rest gave up at their bound');
    t.deepEqual(gate.load, { inFlight: 10, waiting: 0 });
  } finally {
    clock.restore();
  }
});

test.serial('Given 25 calls a second, When 200 arrive at once, Then 13 start at once and 25 more each second (38 at most in any one second, well under the burst of 50 the gateway allows)', async (t) => {
  const clock = sinon.useFakeTimers();
  try {
    const gate = new RequestGate({ concurrent: 1000, perSecond: 25 });
    const { entered } = enterMany(gate, 200, 60_000);
    await clock.tickAsync(0);
    t.is(entered.length, 13);
    const perSecond: number[] = [];
    for (let second = 1; second <= 4; second += 1) {
      const before = entered.length;
      await clock.tickAsync(1000);
      perSecond.push(entered.length - before);
    }
    t.deepEqual(perSecond, [25, 25, 25, 25]);
    t.true(entered.every(Boolean));
  } finally {
    clock.restore();
  }
});

test('A 429 waits for Retry-After in seconds or as a date, else 1, 2 and 4 s, and never more than 8 s', (t) => {
  const now = Date.parse('2026-11-25T10:00:00Z');
  t.is(pauseAfterRateLimit(undefined, 0, now), 1000);
  t.is(pauseAfterRateLimit(undefined, 1, now), 2000);
  t.is(pauseAfterRateLimit(undefined, 2, now), 4000);
  t.is(pauseAfterRateLimit('3', 0, now), 3000);
  t.is(pauseAfterRateLimit('120', 0, now), 8000);
  t.is(pauseAfterRateLimit('Wed, 25 Nov 2026 10:00:02 GMT', 0, now), 2000);
  t.is(pauseAfterRateLimit('soon', 1, now), 2000);
});

test('When the card gateway turns a call away with 429 (code 123), Then the client asks again after a pause and gives the answer, not the refusal', async (t) => {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  t.teardown(() => fake.stop());
  fake.setInvoice('inv-429', { state: 'settled', amount: 10000, customer: 'cust-1' });
  fake.failNextReads(429, 1, 123, '/v1/invoice/inv-429');
  const client = new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs: 2000 });
  const started = Date.now();
  const result = await client.getInvoice('inv-429');
  t.like(result, { ok: true, value: { handle: 'inv-429', state: 'settled' } });
  t.is(fake.requestsTo('GET', '/v1/invoice/inv-429').length, 2);
  t.true(Date.now() - started >= 950, 'asked again after about a second');
});

test('When the card gateway keeps answering 429, Then the client gives up after three more tries and returns the refusal with its code', async (t) => {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  t.teardown(() => fake.stop());
  fake.failNextReads(429, 10, 122, '/v1/invoice/inv-busy');
  const client = new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs: 2000 });
  const result = await client.getInvoice('inv-busy');
  t.like(result, { ok: false, kind: 'http', status: 429, code: 122 });
  t.is(fake.requestsTo('GET', '/v1/invoice/inv-busy').length, 4);
});

test('Given a gateway that enforces its documented limits, When 80 reads are asked at once, Then every one is answered and none is turned away', async (t) => {
  const fake = await startEnforcingGateway(t, 80, 50);
  const client = new CardGatewayClient({ apiUrl: fake.url, apiKey: fake.apiKey, timeoutMs: 2000 });
  t.true(await readAllInvoices([client], 80));
  t.is(fake.rateLimited, 0);
  t.true(fake.maxInFlight <= 10);
});

test.serial('Calls waiting for their place under the limits are counted for the watchdog, and no longer once they start', async (t) => {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  t.teardown(() => fake.stop());
  fake.latencyMs = 300;
  fake.setInvoice('inv-slow', { state: 'settled', amount: 100, customer: 'c' });
  const client = new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs: 5000, limits: { reads: { concurrent: 10, perSecond: 1000 }, writes: { concurrent: 10, perSecond: 1000 } } });
  const calls = Array.from({ length: 15 }, () => client.getInvoice('inv-slow'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(providerCallsWaitingAtLimits(), 5);
  t.true((await Promise.all(calls)).every((result) => result.ok));
  t.is(providerCallsWaitingAtLimits(), 0);
});

test.serial('Given a charge request with a time to leave, When it is still waiting for its place under the limits at that time, Then it gives up unsent and never reaches the gateway later', async (t) => {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  t.teardown(() => fake.stop());
  fake.setPaymentMethod('ca-leave', { customer: 'cust-leave', state: 'active' });
  const client = new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs: 5000, limits: { reads: { concurrent: 1, perSecond: 1000 }, writes: { concurrent: 1, perSecond: 1000 } } });
  const charge = (handle: string, leaveBy?: number) => client.createCharge({ handle, key: `key-${handle}`, amount: 9900, currency: 'DKK', source: 'ca-leave', customerHandle: 'cust-leave', settle: true, leaveBy });
  // The one write in flight is held at the gateway; the second waits behind it.
  fake.holdRequests((path) => path === '/v1/charge');
  const first = charge('order-1-retry1');
  const waiting = charge('order-2-retry1', Date.now() + 300);
  const late = await waiting;
  t.like(late, { ok: false, kind: 'timeout', notSent: true });
  fake.releaseHeld();
  t.like(await first, { ok: true });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const handles = fake.requestsTo('POST', '/v1/charge').map((request) => (request.json as { handle: string }).handle);
  t.deepEqual(handles, ['order-1-retry1'], 'the late request was never sent');
});

test.serial('Given a charge request with a time to leave, When the gateway answers 429 and its pause would end after that time, Then the 429 is the answer and it is not asked again', async (t) => {
  const fake = new FakeCardGateway();
  const { url } = await fake.start();
  t.teardown(() => fake.stop());
  fake.setPaymentMethod('ca-busy', { customer: 'cust-busy', state: 'active' });
  // ERRORS: 429 with 122 "Request rate limit exceeded"; the client pauses at least a second before asking again.
  fake.queueChargeOutcome({ kind: 'http', status: 429, code: 122 }, { kind: 'settled' });
  const client = new CardGatewayClient({ apiUrl: url, apiKey: fake.apiKey, timeoutMs: 5000 });
  const answer = await client.createCharge({ handle: 'order-3-retry1', key: 'key-3', amount: 9900, currency: 'DKK', source: 'ca-busy', customerHandle: 'cust-busy', settle: true, leaveBy: Date.now() + 500 });
  t.like(answer, { ok: false, status: 429 });
  await new Promise((resolve) => setTimeout(resolve, 1200));
  t.is(fake.requestsTo('POST', '/v1/charge').length, 1, 'turned away once, not asked again after its time to leave');
});
