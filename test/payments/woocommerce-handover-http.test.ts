import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { selfSignedCertificate } from '../../src/entry-points/cli/self-signed-certificate';
import { setOption } from '../../src/demo/woocommerce-schema';
import { handOverKey } from '../../src/woocommerce-handover/handover-signature';
import { paymentHub } from '../support/cli-process';
import { FakeWordPress, LOGGED_IN_KEY, LOGGED_IN_SALT } from '../support/fake-wordpress';
import { cardGatewayDelivery, FakeCardGateway } from '../support/fake-card-gateway';
import { eventually, openHub, startTestWorker } from '../support/payment-hub-fixture';
import { request } from '../support/http-client';
import { createTestShop, startApi, type TestShop } from '../support/test-shop';

// The prompt hand-over as the service does it: right after a decision commits, a signed request asks
// WordPress to apply it. WordPress is played here by a small HTTP server that checks the signature the
// way the companion plugin does and marks the changes applied; test/woocommerce runs the real plugin.

let shop: TestShop;
let card: FakeCardGateway;

test.before(async () => {
  shop = await createTestShop('handover_http', { hpos: false });
  card = new FakeCardGateway();
  await card.start();
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) }), 'no');
});

test.after.always(async () => {
  await card?.stop();
  await shop?.drop();
});

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const changesOf = (objectId: number) => q(`SELECT id, op, status FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [objectId]);

function configFor(wordpress: FakeWordPress, overrides: Record<string, string> = {}) {
  return shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    SHOP_URL: wordpress.url, WP_LOGGED_IN_KEY: LOGGED_IN_KEY, WP_LOGGED_IN_SALT: LOGGED_IN_SALT, ...overrides,
  });
}

/** The operator CLI, configured by `env` alone. */
const cli = (args: string[], env: Record<string, string>) => paymentHub(args, env);

async function settle(hub: Awaited<ReturnType<typeof openHub>>, orderId: number) {
  card.setInvoice(`order-${orderId}`, { state: 'settled', amount: 14900, customer: 'cust-ho' });
  const delivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: `order-${orderId}` }, card.webhookSecret);
  const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), 'invoice_settled', delivery.body);
  if (stored.kind !== 'stored') throw new Error('not stored');
  return hub.processCardGatewayWebhook.execute(stored.id);
}

test.serial('When a payment decision commits, Then WordPress is asked at once, with a request signed by the key derived from the site\'s salts, to apply that change', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  const hub = await openHub(configFor(wordpress), () => new Date());
  try {
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
    const decided = Date.now();
    t.like(await settle(hub, orderId), { kind: 'done', status: 'PROCESSED' });
    const [change] = await changesOf(orderId);
    await eventually(async () => (await changesOf(orderId))[0].status === 'applied', 5000, 'the change applied');
    t.deepEqual(wordpress.received.map((received) => received.ids), [[change.id]], 'one request, for that change');
    t.true(wordpress.received[0].verified);
    t.true(Math.abs(wordpress.received[0].timestamp * 1000 - decided) < 5000, 'signed with the wall clock');
  } finally {
    await hub.close();
    await wordpress.stop();
  }
});

test.serial('When WordPress answers 503, Then the hand-over asks again with growing waits until it is applied, and /health shows how far the shop lags meanwhile', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  wordpress.failures.push(503, 503);
  const config = configFor(wordpress);
  const hub = await openHub(config, () => new Date());
  const api = await startApi(config);
  try {
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
    await settle(hub, orderId);
    await eventually(async () => wordpress.received.length >= 2, 5000, 'a second request');
    const health = await request(api.url, 'GET', '/health');
    t.like(health.json.woocommerce, { mode: 'companion', changes_waiting: 1 });
    await eventually(async () => (await changesOf(orderId))[0].status === 'applied', 10_000, 'the change applied after the failures');
    t.is(wordpress.received.length, 3, 'asked again after each failure, not more');
    const gaps = wordpress.received.slice(1).map((received, i) => received.timestamp - wordpress.received[i].timestamp);
    t.true(gaps[1] >= gaps[0], `waits grow: ${gaps}`);
    const after = await request(api.url, 'GET', '/health');
    t.like(after.json.woocommerce, { changes_waiting: 0, handover_lag_seconds: 0 });
  } finally {
    await api.stop();
    await hub.close();
    await wordpress.stop();
  }
});

test.serial('When WordPress leaves a change pending (another run is applying an earlier change of its order), Then the hand-over asks for it again within seconds, and no more once it is applied', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  wordpress.busyRequests = 2;
  const hub = await openHub(configFor(wordpress), () => new Date());
  try {
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
    await settle(hub, orderId);
    const [change] = await changesOf(orderId);
    await eventually(async () => (await changesOf(orderId))[0].status === 'applied', 5000, 'the change applied once the order was free');
    t.deepEqual(wordpress.received.map((received) => received.ids), [[change.id], [change.id], [change.id]], 'asked again after each pending answer, and no more once applied');
    const gaps = wordpress.received.slice(1).map((received, i) => received.timestamp - wordpress.received[i].timestamp);
    t.true(gaps.every((gap) => gap <= 2), `asked again within seconds: ${gaps}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.is(wordpress.received.length, 3, 'nothing asked after it was applied');
  } finally {
    await hub.close();
    await wordpress.stop();
  }
});

test.serial('When WordPress does not share the service\'s salts, Then it refuses, nothing is applied, and the service does not hammer it', async (t) => {
  const wordpress = new FakeWordPress(shop, handOverKey('some-other-site-salts'));
  await wordpress.start();
  const hub = await openHub(configFor(wordpress), () => new Date());
  try {
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
    await settle(hub, orderId);
    await eventually(async () => wordpress.received.length >= 1, 5000, 'a request');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    t.is(wordpress.received.length, 1, 'a refusal is asked again only after the longest wait');
    t.deepEqual((await changesOf(orderId)).map((change) => change.status), ['pending'], 'Action Scheduler stays the safety net');
  } finally {
    await hub.close();
    await wordpress.stop();
  }
});

test.serial('When a change was stored while WordPress was away, Then the worker\'s pass hands it over once WordPress answers', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  const config = configFor(wordpress);
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
  // Stored by a process whose WordPress address led nowhere (its hand-over failed and it then ended).
  const away = await openHub({ ...config, shopUrl: 'http://127.0.0.1:9' }, () => new Date());
  try {
    await settle(away, orderId);
  } finally {
    await away.close();
  }
  t.deepEqual((await changesOf(orderId)).map((change) => change.status), ['pending']);
  const worker = await startTestWorker(config, { clock: () => new Date(Date.now() + 10_000) });
  try {
    await worker.tick();
    await eventually(async () => (await changesOf(orderId))[0].status === 'applied', 5000, 'the waiting change applied');
    const [change] = await changesOf(orderId);
    t.true(wordpress.received.some((received) => received.ids.includes(change.id)));
  } finally {
    await worker.stop();
    await wordpress.stop();
  }
});

test.serial('payment-hub woocommerce status shows the lag and whether WordPress answers; hand-over hands every waiting change over now', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
  const away = await openHub({ ...configFor(wordpress), shopUrl: 'http://127.0.0.1:9' }, () => new Date(Date.now() - 42_000));
  try {
    await settle(away, orderId);
  } finally {
    await away.close();
  }
  const env = { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: wordpress.url, WP_LOGGED_IN_KEY: LOGGED_IN_KEY, WP_LOGGED_IN_SALT: LOGGED_IN_SALT };
  try {
    const status = await cli(['woocommerce', 'status', '--json'], env);
    t.is(status.code, 0, status.stderr);
    const shown = JSON.parse(status.stdout);
    t.like(shown, { mode: 'companion', changes_waiting: 1, route: 'applied', companion_version: 3, route_message: null });
    t.true(shown.handover_lag_seconds >= 40, `lag ${shown.handover_lag_seconds}`);
    t.deepEqual(wordpress.received.map((received) => received.ids), [[]], 'the check hands nothing over');

    const handedOver = await cli(['woocommerce', 'hand-over', '--json'], env);
    t.is(handedOver.code, 0, handedOver.stderr);
    const [change] = await changesOf(orderId);
    t.deepEqual(JSON.parse(handedOver.stdout), { handed_over: [{ id: change.id, status: 'applied', result: 'applied by fake' }], error: null });
    t.is(change.status, 'applied');

    const refused = await cli(['woocommerce', 'status', '--json'], { ...env, WP_LOGGED_IN_SALT: 'not-the-site-salt' });
    t.is(refused.code, 1);
    t.like(JSON.parse(refused.stdout), { route: 'refused', changes_waiting: 0, handover_lag_seconds: 0 });
  } finally {
    await wordpress.stop();
  }
});

test.serial('When WordPress is served over HTTPS with a private certificate authority, Then the hand-over works once Node is told of it (NODE_EXTRA_CA_CERTS), and says why not before', async (t) => {
  const tls = selfSignedCertificate(fs.mkdtempSync(path.join(os.tmpdir(), 'handover-tls-')));
  const wordpress = new FakeWordPress(shop, undefined, tls);
  await wordpress.start();
  const env = { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, SHOP_URL: wordpress.url, WP_LOGGED_IN_KEY: LOGGED_IN_KEY, WP_LOGGED_IN_SALT: LOGGED_IN_SALT };
  try {
    const untrusted = await cli(['woocommerce', 'status', '--json'], env);
    t.is(untrusted.code, 1);
    t.like(JSON.parse(untrusted.stdout), { route: 'unreachable' });
    t.regex(JSON.parse(untrusted.stdout).route_message, /SELF_SIGNED|certificate/i);
    const trusted = await cli(['woocommerce', 'status', '--json'], { ...env, NODE_EXTRA_CA_CERTS: tls.certFile });
    t.is(trusted.code, 0, trusted.stderr);
    t.like(JSON.parse(trusted.stdout), { route: 'applied', companion_version: 3 });
  } finally {
    await wordpress.stop();
  }
});

test.serial('When WordPress runs an older companion (version 1, no hand-over route), Then nothing is sent and Action Scheduler applies the change as before', async (t) => {
  const wordpress = new FakeWordPress(shop);
  await wordpress.start();
  await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 1, seen: Math.floor(Date.now() / 1000) }), 'no');
  const hub = await openHub(configFor(wordpress), () => new Date());
  try {
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK' });
    t.like(await settle(hub, orderId), { kind: 'done', status: 'PROCESSED' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    t.deepEqual(wordpress.received, []);
    t.deepEqual((await changesOf(orderId)).map((change) => change.status), ['pending'], 'left to Action Scheduler');
  } finally {
    await setOption(shop.db, shop.prefix, 'shop_sidecar_companion', JSON.stringify({ version: 3, seen: Math.floor(Date.now() / 1000) }), 'no');
    await hub.close();
    await wordpress.stop();
  }
});
