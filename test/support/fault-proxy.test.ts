import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { FaultProxy } from './fault-proxy';
import { eventually } from './payment-hub-fixture';

// The fault proxy against a tiny echo server: what the network fault tests rely on it to do.

/** An echo server that notes the connections it gets and whether any of them was closed by the other side. */
async function echoServer(t: ExecutionContext) {
  const sockets: net.Socket[] = [];
  const ended: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.push(socket);
    socket.on('data', (chunk) => socket.write(chunk));
    socket.on('end', () => {
      ended.push(socket);
      socket.end();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as net.AddressInfo).port, sockets, ended };
}

/** A client connection through the proxy, keeping what comes back and when, and whether the proxy closed it. */
/** An echo server and a proxy in front of it, both gone when the test ends. */
async function proxiedEcho(t: ExecutionContext) {
  const echo = await echoServer(t);
  const proxy = await FaultProxy.start({ port: echo.port });
  t.teardown(() => proxy.close());
  return { echo, proxy };
}

async function connect(t: ExecutionContext, proxy: FaultProxy) {
  const socket = net.connect({ host: proxy.host, port: proxy.port, allowHalfOpen: true });
  const client = { socket, received: '', arrivals: [] as { text: string; at: number }[], ended: false, closed: false };
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    client.received += text;
    client.arrivals.push({ text, at: Date.now() });
  });
  socket.on('end', () => { client.ended = true; });
  socket.on('close', () => { client.closed = true; });
  socket.on('error', () => undefined);
  t.teardown(() => { socket.destroy(); });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

async function echoes(client: Client, text: string): Promise<boolean> {
  const before = client.received.length;
  client.socket.write(text);
  return eventually(async () => client.received.slice(before) === text, 2000, `the echo of ${text}`).then(() => true, () => false);
}

/** Nothing comes back within a while, and the connection stays open. */
async function silent(client: Client, text: string): Promise<boolean> {
  const before = client.received.length;
  client.socket.write(text);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return client.received.length === before && !client.ended && !client.closed;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('Bytes pass both ways, and a half-close passes as a half-close', async (t) => {
  const { echo, proxy } = await proxiedEcho(t);
  const client = await connect(t, proxy);
  t.true(await echoes(client, 'hello'));
  client.socket.end();
  await eventually(async () => echo.ended.length === 1, 2000, 'the FIN to reach the server');
  t.true(await eventually(async () => client.ended, 2000, 'the server\'s FIN to come back').then(() => true, () => false));
  t.deepEqual(proxy.counts, { accepted: 1, connectedOnward: 1, cutOff: 0, bytesToTarget: 5, bytesToClient: 5, bytesSwallowed: 0, chunksDelayed: 0 });
});

test('When the target vanishes, Then nothing passes on old or new connections and nothing is closed; once restored, new connections work and the old ones stay dead', async (t) => {
  const { echo, proxy } = await proxiedEcho(t);
  const before = await connect(t, proxy);
  t.true(await echoes(before, 'alive'));

  proxy.vanish();
  t.true(await silent(before, 'lost'), 'an open connection passes nothing and is not closed');
  const during = await connect(t, proxy);
  t.true(await silent(during, 'lost too'), 'a connection made during the fault is accepted, passes nothing, and is not closed');
  t.is(echo.sockets.length, 1, 'it was never connected onward');
  // The blackhole swallows in both directions: the server's own writes go nowhere either, and its FIN too.
  echo.sockets[0]!.write('from the server');
  echo.sockets[0]!.end();
  before.socket.end();
  await pause(300);
  t.false(before.ended || before.closed, 'the server\'s FIN did not reach the client');
  t.is(echo.ended.length, 0, 'the client\'s FIN did not reach the server');

  proxy.restore();
  const after = await connect(t, proxy);
  t.true(await echoes(after, 'back'), 'a new connection works again');
  t.true(await silent(during, 'still lost'), 'one made during the fault stays dead');
  t.false(echo.sockets[0]!.destroyed, 'the server\'s side of the old connection was never closed');
  t.like(proxy.counts, { accepted: 3, connectedOnward: 2, cutOff: 2 });
  t.true(proxy.counts.bytesSwallowed >= 'lostlost toofrom the serverstill lost'.length);
  t.deepEqual(proxy.open, { passages: 3, dead: 2 });

  await proxy.close();
  await eventually(async () => [before, during, after].every((client) => client.ended || client.closed), 2000, 'close() to end every connection');
  t.pass();
});

test('When bytes to the target are delayed, Then each chunk arrives that much later, in order; after undelay the held chunks still go first', async (t) => {
  const { echo, proxy } = await proxiedEcho(t);
  const client = await connect(t, proxy);
  t.true(await echoes(client, 'x'));

  proxy.delay(300);
  const sentAt = Date.now();
  for (const text of ['a', 'b', 'c']) {
    client.socket.write(text);
    await pause(50);
  }
  await eventually(async () => client.received === 'xabc', 2000, 'the delayed chunks');
  const firstAfter = client.arrivals.find((arrival) => arrival.text.includes('a'))!.at - sentAt;
  t.true(firstAfter >= 290, `the first delayed chunk came back after ${firstAfter} ms`);

  // Held chunks keep later ones behind them once the delay is lifted.
  client.socket.write('d');
  await pause(20);
  proxy.undelay();
  client.socket.write('e');
  await pause(100);
  t.is(client.received, 'xabc', 'the chunk sent after the undelay waits behind the held one');
  await eventually(async () => client.received === 'xabcde', 2000, 'the held and the later chunk');

  const fastFrom = Date.now();
  t.true(await echoes(client, 'f'));
  t.true(Date.now() - fastFrom < 200, 'without a delay, bytes go at once');
  t.is(proxy.counts.chunksDelayed, 5);
});
