import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { basic } from '../support/http-client';
import { eventually } from '../support/payment-hub-fixture';
import { freePort } from '../support/free-port';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, type TestShop } from '../support/test-shop';

// The real `npm run api` process, stopped with SIGTERM (as PM2 stops it) while keep-alive clients keep sending.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-shutdown-'));
const marker = path.join(tmp, 'slow-started');
let shop: TestShop;
let api: ServiceProcess;
let port: number;
let slowOrderId: number;

type Outcome =
  | { kind: 'answered'; status: number; connection: string | undefined }
  | { kind: 'unanswered'; code: string } // the connection ended before any byte of an answer: nothing was cut
  | { kind: 'cut'; detail: string }; // an answer began and did not arrive whole

/** One request on `agent`; an answer is whole when its body has the length it announced. */
function send(agent: http.Agent, method: string, pathname: string, body?: unknown): Promise<Outcome> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { 'x-forwarded-proto': 'https', authorization: basic(HELPDESK_KEY, HELPDESK_SECRET) };
  if (text) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  return new Promise((resolve) => {
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent }, (res) => {
      answered = true;
      let received = 0;
      res.on('data', (chunk: Buffer) => { received += chunk.length; });
      res.on('aborted', () => resolve({ kind: 'cut', detail: `${method} ${pathname}: aborted after ${received} bytes` }));
      res.on('error', (error) => resolve({ kind: 'cut', detail: `${method} ${pathname}: ${error.message}` }));
      res.on('end', () => {
        const expected = Number(res.headers['content-length']);
        resolve(received === expected
          ? { kind: 'answered', status: res.statusCode ?? 0, connection: res.headers.connection }
          : { kind: 'cut', detail: `${method} ${pathname}: ${received} of ${expected} bytes` });
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) resolve({ kind: 'unanswered', code: error.code ?? error.message });
    });
    req.end(text);
  });
}

/** A keep-alive client sending request after request on one connection (reconnecting when it closes) until refused. */
async function hammer(outcomes: Outcome[], stop: { now: boolean }): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; !stop.now; i++) {
      const outcome = i % 2
        ? await send(agent, 'GET', '/health')
        : await send(agent, 'POST', '/helpdesk/v1/order-status', { order_number: '999999', email: 'nobody@example.dk' });
      outcomes.push(outcome);
      if (outcome.kind === 'unanswered' && outcome.code === 'ECONNREFUSED') return;
    }
  } finally {
    agent.destroy();
  }
}

test.before(async () => {
  shop = await createTestShop('api_shutdown');
  slowOrderId = await shop.seeder.createOrder({
    status: 'processing', createdGmt: new Date('2026-11-16T08:00:00Z'), currency: 'DKK', total: '100',
    billing: { first_name: 'Anna', country: 'DK', email: 'anna@example.dk' }, lineItems: [{ name: 'Kaffe', qty: 1, total: '100' }],
  });
  const extensions = path.join(tmp, 'extensions.js');
  // A filter that takes 1.5 s, so a lookup is surely in progress when the signal comes.
  fs.writeFileSync(extensions, `
    const fs = require('node:fs');
    module.exports = {
      async helpdesk_order_status_data(data) {
        fs.writeFileSync(${JSON.stringify(marker)}, 'started');
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return data;
      },
    };`);
  port = await freePort();
  api = startServiceProcess('api', {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, HOST: '127.0.0.1', PORT: String(port), SHOP_URL: 'https://shop.example.dk',
    HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET, HELPDESK_THROTTLE_MAX_FAILURES: '1000000', SITE_EXTENSIONS: extensions,
  });
  await api.logged('api_listening');
});

test.after.always(async () => {
  await api?.kill();
  await shop?.drop();
});

test('When SIGTERM comes while keep-alive clients keep sending, Then the API answers what is in progress with Connection: close, cuts nothing and exits within 10 s', async (t) => {
  const outcomes: Outcome[] = [];
  const stop = { now: false };
  const hammers = Array.from({ length: 4 }, () => hammer(outcomes, stop));
  await eventually(async () => outcomes.filter((o) => o.kind === 'answered').length >= 20, 20_000, 'the clients to be answered');

  const slowAgent = new http.Agent({ keepAlive: true });
  const slow = send(slowAgent, 'POST', '/helpdesk/v1/order-status', { order_number: String(slowOrderId), email: 'anna@example.dk' });
  await eventually(async () => fs.existsSync(marker), 20_000, 'the slow lookup to be in progress');

  const signalled = Date.now();
  api.signal('SIGTERM');
  const exit = await Promise.race([api.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
  const seconds = (Date.now() - signalled) / 1000;
  stop.now = true;
  await Promise.all(hammers);
  slowAgent.destroy();

  t.is(exit, 0, `exit after ${seconds.toFixed(1)} s`);
  t.true(seconds < 10, `exited ${seconds.toFixed(1)} s after SIGTERM`);
  const slowOutcome = await slow;
  t.deepEqual(slowOutcome, { kind: 'answered', status: 200, connection: 'close' }, 'the lookup in progress was answered, with Connection: close');
  t.deepEqual(outcomes.filter((o) => o.kind === 'cut'), [], 'no answer was cut');
  t.true(outcomes.some((o) => o.kind === 'answered' && o.connection === 'close'), 'the busy clients were told to close');
  t.true(outcomes.filter((o) => o.kind === 'answered').every((o) => o.kind === 'answered' && (o.status === 200 || o.status === 404)));
});
