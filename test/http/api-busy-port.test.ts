import net from 'node:net';
import test from 'ava';
import { freePort } from '../support/free-port';
import { startServiceProcess } from '../support/service-process';
import { createTestShop, HELPDESK_KEY, HELPDESK_SECRET, type TestShop } from '../support/test-shop';

// The real `npm run api` on a port another process holds.

let shop: TestShop;
let holder: net.Server;
let port: number;

test.before(async () => {
  shop = await createTestShop('api_busy_port');
  port = await freePort();
  holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
});

test.after.always(async () => {
  await new Promise((resolve) => holder?.close(resolve));
  await shop?.drop();
});

test('When PORT is taken by another process, Then `npm run api` exits non-zero with one line naming the port and PORT, no stack trace', async (t) => {
  const api = startServiceProcess('api', {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix, HOST: '127.0.0.1', PORT: String(port), SHOP_URL: 'https://shop.example.dk',
    HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET,
  });
  const code = await Promise.race([api.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
  await api.kill();
  t.is(code, 1);
  const errors = api.logs.filter((line) => line.level !== 'info');
  t.deepEqual(errors.map((line) => [line.event, line.message]), [
    ['api_cannot_listen', `port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port`],
  ], JSON.stringify(api.logs));
  t.false(api.logs.some((line) => line.event === 'api_listening'));
});
