import net from 'node:net';
import test from 'ava';
import { WebhookQueue } from '../../src/data-access/webhook-queue';
import { eventually } from '../support/payment-hub-fixture';
import { PrivateRedis } from '../support/private-redis';
import { capturingLogger } from '../support/staff-api';

/**
 * A TCP door in front of a Redis of this test's own. While `refuse` is set it accepts a connection and
 * drops it as soon as the client speaks: what a client sees when Redis dies, or is still starting, just
 * as it connects.
 */
class FlakyDoor {
  refuse = true;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    if (this.refuse) {
      client.once('data', () => client.destroy());
      return;
    }
    const upstream = net.connect(this.redis.port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });

  constructor(private readonly redis: PrivateRedis) {}

  async open(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `redis://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let redis: PrivateRedis;
test.before(async () => { redis = await PrivateRedis.start(); });
test.after.always(async () => { await redis?.stop(); });

for (const role of ['producer', 'worker'] as const) {
  test(`When the ${role}'s queue connects to a Redis that drops it mid-handshake, Then it opens again and takes jobs once Redis answers`, async (t) => {
    const door = new FlakyDoor(redis);
    const url = await door.open();
    const log = capturingLogger();
    const queue = new WebhookQueue(url, `door-${role}-${Date.now()}`, role, log);
    const handled: number[] = [];
    if (role === 'worker') queue.process(5, async (job) => { handled.push(job.webhookId); });
    try {
      await eventually(async () => log.entries.some((entry) => entry.event === 'queue_unavailable'), 10_000, 'the queue to be unavailable');
      t.false(await queue.enqueue(1), 'refused while Redis drops every connection');
      door.refuse = false;
      await eventually(async () => log.entries.some((entry) => entry.event === 'queue_available'), 15_000, 'the queue to be available');
      t.true(await queue.enqueue(2, 2000));
      if (role === 'worker') await eventually(async () => handled.includes(2), 10_000, 'the job to be processed');
    } finally {
      await queue.close(1000);
      await door.close();
    }
  });
}
