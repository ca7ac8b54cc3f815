import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient } from 'redis';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { redisNamespace } from '../../src/data-access/redis';
import { basic, request } from '../support/http-client';
import { createTestShop, HELPDESK_SECRET, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Who failed attempts count against: the client's address whatever user name it sends (an IPv6 /64,
// X-Forwarded-For believed from trusted proxies only), and never the helpdesk key alone. Each test has
// a helpdesk key and client addresses of its own, as the tests share one shop's counts.

const LIMITS = { HELPDESK_THROTTLE_MAX_FAILURES: '10', HELPDESK_THROTTLE_WINDOW_SECONDS: '900', HELPDESK_THROTTLE_BLOCK_SECONDS: '900' };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-throttle-'));
let shop: TestShop;
let orderId: number;
const running: RunningApi[] = [];

test.before(async () => {
  shop = await createTestShop('os_throttle_subjects');
  orderId = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    billing: { first_name: 'Anna', country: 'DK', email: 'anna@example.dk' }, lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }],
  });
});

test.after.always(async () => {
  await Promise.allSettled(running.map((a) => a.stop()));
  await shop?.drop();
});

/** An API of its own per test (its own helpdesk key, so the tests' counts stay apart). */
async function api(key: string, env: Record<string, string> = {}): Promise<RunningApi> {
  const started = await startApi(shop.config({ ...LIMITS, HELPDESK_API_KEY: key, ...env }));
  running.push(started);
  return started;
}

const lookup = (a: RunningApi, headers: Record<string, string>, body: unknown = { order_number: String(orderId), email: 'anna@example.dk' }) =>
  request(a.url, 'POST', '/helpdesk/v1/order-status', { headers: { 'x-forwarded-proto': 'https', ...headers }, body });
const from = (address: string) => ({ 'x-forwarded-for': address });

/** The statuses of `n` requests one after another, each with a user name never sent before. */
async function rotatingNames(a: RunningApi, n: number, headers: (i: number) => Record<string, string>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await lookup(a, { authorization: basic(`user-${i}-${Math.random()}`, 'secret'), ...headers(i) })).status);
  return statuses;
}

const expectBlockedAfterTen = (statuses: number[]) => [...new Array(10).fill(401), ...new Array(statuses.length - 10).fill(429)];

// Serial, so it runs before the others and the keys it counts are its own.
test.serial('When every request sends a new Basic user name, Then the client address is blocked after the limit, and it leaves two Redis keys, not one per name', async (t) => {
  const redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
  const namespace = `${redisNamespace(shop.dbName, shop.prefix)}:helpdesk-throttle`;
  const keys = async () => {
    const found: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: `${namespace}:*`, COUNT: 1000 })) found.push(...batch);
    return found;
  };
  try {
    const before = await keys();
    const a = await api('key-rotating-names');
    const statuses = await rotatingNames(a, 40, () => from('203.0.113.10'));
    t.deepEqual(statuses, expectBlockedAfterTen(statuses));
    const added = (await keys()).filter((key) => !before.includes(key));
    t.true(added.length <= 2, `${added.length} keys: ${added.join(', ')}`);
  } finally {
    await redis.close();
  }
});

test('When requests come through a trusted proxy with X-Forwarded-For, Then each client address is limited apart', async (t) => {
  const a = await api('key-behind-proxy');
  const statuses = await rotatingNames(a, 15, () => ({ 'x-forwarded-for': '198.51.100.1, 203.0.113.20' }));
  t.deepEqual(statuses, expectBlockedAfterTen(statuses), 'the right-most address the proxy saw counts, not the one the client wrote');
  t.is((await lookup(a, { authorization: basic('someone', 'secret'), 'x-forwarded-for': '198.51.100.1, 203.0.113.21' })).status, 401, 'another client of the proxy is not blocked');
});

test('When one client rotates through the addresses of its IPv6 /64, Then the whole /64 is limited; the next /64 is not', async (t) => {
  const a = await api('key-ipv6');
  const statuses = await rotatingNames(a, 15, (i) => from(`2001:db8:aa:1:${(i + 1).toString(16)}::${i + 7}`));
  t.deepEqual(statuses, expectBlockedAfterTen(statuses));
  t.is((await lookup(a, { authorization: basic('someone', 'secret'), ...from('2001:db8:aa:2::1') })).status, 401);
});

test('When X-Forwarded-For comes from an address that is not a trusted proxy, Then it is ignored and the peer is limited', async (t) => {
  const { certFile, keyFile } = selfSignedCertificate(path.join(tmp, 'tls'));
  const a = await api('key-untrusted-proxy', { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, TRUSTED_PROXIES: '10.9.9.9' });
  const statuses = await rotatingNames(a, 15, (i) => from(`192.0.2.${i + 1}`));
  t.deepEqual(statuses, expectBlockedAfterTen(statuses));
});

test('When failed lookups with the right key reach the limit, Then the key is blocked from every address (SPEC 5.1: per API key)', async (t) => {
  const a = await api('key-lookups');
  const helpdesk = (address: string) => ({ authorization: basic('key-lookups', HELPDESK_SECRET), ...from(address) });
  for (let i = 0; i < 10; i++) t.is((await lookup(a, helpdesk(`192.0.2.${100 + i}`), { order_number: String(orderId), email: `guess${i}@example.dk` })).status, 404);
  t.is((await lookup(a, helpdesk('192.0.2.200'))).status, 429);
});

test('When someone elsewhere sends wrong secrets with the helpdesk key\'s name, Then only that address is blocked; the helpdesk keeps being answered', async (t) => {
  const a = await api('key-elsewhere');
  const attacker = { authorization: basic('key-elsewhere', 'guessed-secret'), ...from('198.51.100.66') };
  const statuses: number[] = [];
  for (let i = 0; i < 15; i++) statuses.push((await lookup(a, attacker)).status);
  t.deepEqual(statuses, expectBlockedAfterTen(statuses));
  t.is((await lookup(a, { ...attacker, authorization: basic('key-elsewhere', HELPDESK_SECRET) })).status, 429, 'the blocked address is refused even with the right secret');
  t.is((await lookup(a, { authorization: basic('key-elsewhere', HELPDESK_SECRET), ...from('192.0.2.10') })).status, 200, 'the helpdesk, at its own address, is not locked out');
});
