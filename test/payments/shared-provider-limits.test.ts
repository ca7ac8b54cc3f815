import crypto from 'node:crypto';
import test from 'ava';
import { RedisProviderLimits } from '../../src/data-access/provider-limit-store';
import { silentLogger } from '../../src/logger';
import { CardGatewayClient } from '../../src/payments/providers/card-gateway/client';
import { readAllInvoices, startEnforcingGateway } from '../support/fake-card-gateway';

// Several processes using one provider account (the API's instances, workers, the CLI) keep the account's
// request limits together in Redis. Each RedisProviderLimits here stands for one process: its own Redis
// connection and its own leases.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function processes(count: number): RedisProviderLimits[] {
  return Array.from({ length: count }, () => new RedisProviderLimits(REDIS_URL, silentLogger));
}

/** A fresh account, so that runs of this file never share keys. */
const account = () => `key-${crypto.randomBytes(6).toString('hex')}`;

test('Given 10 calls in flight per account, When two processes ask for 8 places each, Then they get 10 together, and a place given back is taken by the other', async (t) => {
  const [first, second] = processes(2);
  t.teardown(() => Promise.all([first.close(), second.close()]));
  const credential = account();
  const limits = { concurrent: 10, perSecond: 1000 };
  const a = first.places('card_gateway', 'http://gateway.invalid', credential, 'reads');
  const b = second.places('card_gateway', 'http://gateway.invalid', credential, 'reads');
  const fromA = await a.take(limits, 8, 10_000);
  const fromB = await b.take(limits, 8, 10_000);
  t.is(fromA?.leases.length, 8);
  t.is(fromB?.leases.length, 2);
  t.true(fromB!.retryInMs > 0 && fromB!.retryInMs <= 50, 'asked to look again shortly');
  a.give(fromA!.leases[0]!);
  a.give(fromA!.leases[1]!);
  await new Promise((resolve) => setTimeout(resolve, 20)); // given back together at the end of the turn
  const again = await b.take(limits, 5, 10_000);
  t.is(again?.leases.length, 2);
  const other = await first.places('card_gateway', 'http://gateway.invalid', account(), 'reads').take(limits, 10, 10_000);
  t.is(other?.leases.length, 10, 'another account has limits of its own');
});

test('Given 10 starts a second per account, When two processes ask for 30 at once, Then 5 start between them (half a second of calls) and the next waits about 100 ms', async (t) => {
  const [first, second] = processes(2);
  t.teardown(() => Promise.all([first.close(), second.close()]));
  const credential = account();
  const limits = { concurrent: 1000, perSecond: 10 };
  // Both connected first: a connection opened between the two asks would let a sixth token accrue meanwhile.
  await Promise.all([first, second].map((process) => process.places('card_gateway', 'http://gateway.invalid', account(), 'writes').take(limits, 1, 10_000)));
  // A token accrues every 100 ms, so what a busy machine spends between the asks is allowed for, measured.
  const asked = performance.now();
  const fromA = await first.places('card_gateway', 'http://gateway.invalid', credential, 'writes').take(limits, 15, 10_000);
  const fromB = await second.places('card_gateway', 'http://gateway.invalid', credential, 'writes').take(limits, 15, 10_000);
  const accrued = Math.floor((performance.now() - asked) / 100);
  const started = fromA!.leases.length + fromB!.leases.length;
  t.true(started >= 5 && started <= 5 + accrued, `${started} started, with ${accrued} tokens accrued between the asks`);
  t.true(fromB!.retryInMs >= 1 && fromB!.retryInMs <= 100, `retry in ${fromB!.retryInMs} ms`);
  const rested = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 320));
  const later = await second.places('card_gateway', 'http://gateway.invalid', credential, 'writes').take(limits, 15, 10_000);
  const restedMs = performance.now() - rested;
  // At 10 a second, refilled from below one token, never beyond the bucket of 5.
  const most = Math.min(5, Math.ceil(restedMs / 100) + 1);
  t.true(later!.leases.length >= 3 && later!.leases.length <= most, `${later!.leases.length} tokens after ${Math.round(restedMs)} ms at 10 a second`);
});

test('When a process dies holding places, Then they are free again once their leases end', async (t) => {
  const [dying, living] = processes(2);
  t.teardown(() => living.close());
  const credential = account();
  const limits = { concurrent: 4, perSecond: 1000 };
  t.is((await dying.places('card_gateway', 'http://gateway.invalid', credential, 'reads').take(limits, 4, 300))?.leases.length, 4);
  await dying.close(); // gone without giving anything back
  const places = living.places('card_gateway', 'http://gateway.invalid', credential, 'reads');
  t.is((await places.take(limits, 4, 10_000))?.leases.length, 0);
  await new Promise((resolve) => setTimeout(resolve, 350));
  t.is((await places.take(limits, 4, 10_000))?.leases.length, 4);
});

test('Given a gateway enforcing its documented limits, When two processes read 60 invoices each at once, Then none is turned away and no more than 10 are in flight', async (t) => {
  const fake = await startEnforcingGateway(t, 120, 100);
  const stores = processes(2);
  t.teardown(() => Promise.all(stores.map((store) => store.close())));
  const clients = stores.map((shared) => new CardGatewayClient({ apiUrl: fake.url, apiKey: fake.apiKey, timeoutMs: 5000, shared }));
  t.true(await readAllInvoices(clients, 120));
  t.is(fake.rateLimited, 0, 'no call turned away');
  t.true(fake.maxInFlight <= 10, `at most 10 in flight (saw ${fake.maxInFlight})`);
});

test('Given the same two processes keeping their limits apart, Then the gateway turns calls away (what sharing prevents)', async (t) => {
  const fake = await startEnforcingGateway(t, 120, 100);
  const clients = [0, 1].map(() => new CardGatewayClient({ apiUrl: fake.url, apiKey: fake.apiKey, timeoutMs: 5000 }));
  t.true(await readAllInvoices(clients, 120), 'the 429s were asked again');
  t.true(fake.rateLimited > 0, 'calls turned away');
});

test('When Redis cannot be reached, Then calls go by the process\'s own limits at once instead of waiting for it', async (t) => {
  const fake = await startEnforcingGateway(t, 20);
  // Nothing listens on port 1: the connection is refused at once.
  const shared = new RedisProviderLimits('redis://127.0.0.1:1', silentLogger);
  t.teardown(() => shared.close());
  const client = new CardGatewayClient({ apiUrl: fake.url, apiKey: fake.apiKey, timeoutMs: 5000, shared });
  const started = Date.now();
  t.true(await readAllInvoices([client], 20));
  t.true(Date.now() - started < 3000, `answered in ${Date.now() - started} ms`);
  t.is(fake.rateLimited, 0);
  t.true(fake.maxInFlight <= 10);
});

// Serial: its busy second would upset the timing of the tests beside it.
test.serial('When Redis grants places after the process stopped waiting for its answer (a busy event loop), Then those places go back at once instead of staying taken until their leases end', async (t) => {
  const [busy, other] = processes(2);
  t.teardown(() => Promise.all([busy.close(), other.close()]));
  const credential = account();
  const limits = { concurrent: 10, perSecond: 1000 };
  const places = busy.places('card_gateway', 'http://gateway.invalid', credential, 'reads');
  // Connected, with the script loaded, so that the next question is one round trip.
  const first = await places.take(limits, 1, 10_000);
  places.give(first!.leases[0]!);
  await new Promise((resolve) => setTimeout(resolve, 20));

  const asked = places.take(limits, 10, 10_000);
  // The process busy past the question's one-second bound, as under a heavy load: its timer runs before it reads Redis' answer.
  await new Promise<void>((resolve) => setImmediate(() => {
    const until = Date.now() + 1200;
    while (Date.now() < until);
    resolve();
  }));
  t.is(await asked, null, 'the process goes by its own limits meanwhile');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const taken = await other.places('card_gateway', 'http://gateway.invalid', credential, 'reads').take(limits, 10, 10_000);
  t.is(taken?.leases.length, 10, 'no place is held for a caller that no longer waits');
});
