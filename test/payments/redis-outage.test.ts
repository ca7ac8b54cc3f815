import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import test from 'ava';
import { request } from '../support/http-client';
import { cardGatewayDelivery, FakeCardGateway } from '../support/fake-card-gateway';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// A Redis of this test's own, so it can be stopped and started while webhooks arrive.
let redis: ChildProcess | null = null;
let port = 0;
let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return free;
}

async function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await eventually(() => new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  }), 10_000, 'redis to start');
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = null;
  if (!child) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function deliverSettled(handle: string) {
  fake.setInvoice(handle, { state: 'settled', amount: 1000 });
  const delivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: handle }, fake.webhookSecret);
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: delivery.headers, body: delivery.body });
  return { status: res.status, eventId: String(delivery.payload.event_id) };
}

test.before(async () => {
  port = await freePort();
  await startRedis();
  shop = await createTestShop('redis_outage', {});
  fake = new FakeCardGateway();
  await fake.start();
  const config = shop.config({ REDIS_URL: `redis://127.0.0.1:${port}`, CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey });
  api = await startApi(config);
  worker = await startTestWorker(config);
});

test.after.always(async () => {
  await worker?.stop();
  await api?.stop();
  await fake?.stop();
  await stopRedis();
  await shop?.drop();
});

test('When Redis stops while webhooks arrive and then starts again, Then every webhook is accepted, stored and reaches a final state once', async (t) => {
  const eventIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    const { status, eventId } = await deliverSettled(`inv-before-${i}`);
    t.is(status, 200);
    eventIds.push(eventId);
  }

  await stopRedis();
  for (let i = 0; i < 10; i++) {
    const { status, eventId } = await deliverSettled(`inv-during-${i}`);
    t.is(status, 200, 'the row is the outbox: the answer does not depend on Redis');
    eventIds.push(eventId);
  }

  await startRedis();
  for (let i = 0; i < 5; i++) {
    const { status, eventId } = await deliverSettled(`inv-after-${i}`);
    t.is(status, 200);
    eventIds.push(eventId);
  }

  const rows = await eventually(async () => {
    const [found] = await shop.db.query(`SELECT external_id, status, attempts FROM ${shop.prefix}sidecar_webhooks`) as any[];
    return found.length === eventIds.length && found.every((row: any) => row.status === 'PROCESSED') ? found : null;
  }, 30_000, 'every webhook to be processed');
  t.deepEqual(rows.map((row: any) => row.external_id).sort(), [...eventIds].sort());
  const [payments] = await shop.db.query(`SELECT status, COUNT(*) AS n FROM ${shop.prefix}sidecar_payments GROUP BY status`) as any[];
  t.deepEqual(payments.map((row: any) => [row.status, Number(row.n)]), [['CAPTURED', 20]]);
  t.true(rows.every((row: any) => row.attempts === 1), 'each webhook was processed exactly once');
});
