import net from 'node:net';

/**
 * A loopback TCP proxy the test controls, standing between the service and MariaDB or Redis, to make the
 * network fail the ways that close nothing: a pulled cable or a firewall that drops a flow (`vanish`), and a
 * slow link (`delay`). Neither side ever hears a FIN or an RST from it while a fault lasts, so a client
 * learns of the fault only by noticing that its answers do not come.
 */

/** What passed, or did not, for the logs. */
export interface FaultProxyCounts {
  /** Connections the proxy accepted. */
  accepted: number;
  /** Of those, the ones it connected onward to the target. */
  connectedOnward: number;
  /** Connections the fault cut off for good: open at a vanish, or accepted during one. */
  cutOff: number;
  bytesToTarget: number;
  bytesToClient: number;
  /** Bytes that arrived on a cut-off connection, from either side, and went nowhere. */
  bytesSwallowed: number;
  /** Chunks held back by a delay before going on to the target. */
  chunksDelayed: number;
}

/** One accepted connection and, unless a vanish was on when it came, its connection onward. */
interface Passage {
  client: net.Socket;
  target: net.Socket | null;
  dead: boolean;
  /** Bytes to the target waiting out a delay, oldest first, each with the moment it may go. */
  held: { chunk: Buffer; dueAt: number }[];
  timer: NodeJS.Timeout | null;
  /** The client half-closed while bytes were held: the target hears the FIN after them. */
  endAfterHeld: boolean;
}

export class FaultProxy {
  readonly host = '127.0.0.1';
  readonly counts: FaultProxyCounts = { accepted: 0, connectedOnward: 0, cutOff: 0, bytesToTarget: 0, bytesToClient: 0, bytesSwallowed: 0, chunksDelayed: 0 };
  private readonly passages = new Set<Passage>();
  private vanished = false;
  private delayMs = 0;
  private listening: net.Server | null = null;

  private constructor(private readonly target: { host: string; port: number }) {}

  /** A proxy on an ephemeral port of 127.0.0.1, passing every connection on to `target`. */
  static async start(target: { host?: string; port: number }): Promise<FaultProxy> {
    const proxy = new FaultProxy({ host: target.host ?? '127.0.0.1', port: target.port });
    // Half-open allowed on both sides: a FIN is passed on as a FIN (or swallowed), never answered by one of ours.
    const server = net.createServer({ allowHalfOpen: true }, (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, proxy.host, () => resolve());
    });
    proxy.listening = server;
    return proxy;
  }

  get port(): number {
    return (this.listening!.address() as net.AddressInfo).port;
  }

  /** Connections still held open by the proxy, and how many of them are cut off. */
  get open(): { passages: number; dead: number } {
    let dead = 0;
    for (const passage of this.passages) if (passage.dead) dead += 1;
    return { passages: this.passages.size, dead };
  }

  /**
   * From now on nothing passes on any connection open now, and connections accepted from now on are never
   * connected onward; nothing is closed. Whatever arrives is still read, and dropped, as a blackhole swallows
   * packets: neither side's writes are held back by a full buffer, which would tell it something is wrong.
   */
  vanish(): void {
    this.vanished = true;
    for (const passage of this.passages) this.cutOff(passage);
  }

  /** New connections work again; the ones the vanish cut off stay dead (and open) until `close()`. */
  restore(): void {
    this.vanished = false;
  }

  /** Every chunk to the target goes `ms` after it arrived, in the order the chunks arrived. */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** New chunks go at once again, after those still held back, which keep their order and their time. */
  undelay(): void {
    this.delayMs = 0;
  }

  /** Destroys every connection, dead or alive, and stops listening (teardown). */
  async close(): Promise<void> {
    const server = this.listening;
    for (const passage of this.passages) {
      if (passage.timer) clearTimeout(passage.timer);
      passage.client.destroy();
      passage.target?.destroy();
    }
    this.passages.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.counts.accepted += 1;
    client.setNoDelay(true);
    client.on('error', () => undefined);
    const passage: Passage = { client, target: null, dead: false, held: [], timer: null, endAfterHeld: false };
    this.passages.add(passage);
    if (this.vanished) {
      passage.dead = true;
      this.counts.cutOff += 1;
      client.on('data', (chunk: Buffer) => { this.counts.bytesSwallowed += chunk.length; });
      return;
    }
    const target = net.connect({ host: this.target.host, port: this.target.port, allowHalfOpen: true });
    passage.target = target;
    this.counts.connectedOnward += 1;
    target.setNoDelay(true);
    target.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => this.toTarget(passage, chunk));
    target.on('data', (chunk: Buffer) => {
      if (passage.dead) {
        this.counts.bytesSwallowed += chunk.length;
        return;
      }
      this.counts.bytesToClient += chunk.length;
      client.write(chunk);
    });
    client.on('end', () => {
      if (passage.dead) return;
      if (passage.held.length) passage.endAfterHeld = true;
      else target.end();
    });
    target.on('end', () => {
      if (!passage.dead) client.end();
    });
    // While alive the proxy is transparent: one side gone (closed, reset, or refused onward) takes the other.
    const gone = (other: net.Socket) => () => {
      if (passage.dead) return;
      other.destroy();
      if (passage.timer) clearTimeout(passage.timer);
      this.passages.delete(passage);
    };
    client.on('close', gone(target));
    target.on('close', gone(client));
  }

  private toTarget(passage: Passage, chunk: Buffer): void {
    if (passage.dead) {
      this.counts.bytesSwallowed += chunk.length;
      return;
    }
    // Bytes still held keep later ones behind them, even once the delay is off.
    if (this.delayMs === 0 && passage.held.length === 0) {
      this.counts.bytesToTarget += chunk.length;
      passage.target!.write(chunk);
      return;
    }
    this.counts.chunksDelayed += 1;
    passage.held.push({ chunk, dueAt: Date.now() + this.delayMs });
    this.release(passage);
  }

  /** Sends the held chunks whose time has come, oldest first, and waits for the next one's. */
  private release(passage: Passage): void {
    if (passage.timer || passage.dead) return;
    const next = passage.held[0];
    if (!next) {
      if (passage.endAfterHeld) passage.target!.end();
      return;
    }
    passage.timer = setTimeout(() => {
      passage.timer = null;
      if (passage.dead) return;
      while (passage.held.length && passage.held[0]!.dueAt <= Date.now()) {
        const { chunk } = passage.held.shift()!;
        this.counts.bytesToTarget += chunk.length;
        passage.target!.write(chunk);
      }
      this.release(passage);
    }, Math.max(0, next.dueAt - Date.now()));
  }

  private cutOff(passage: Passage): void {
    if (passage.dead) return;
    passage.dead = true;
    this.counts.cutOff += 1;
    if (passage.timer) clearTimeout(passage.timer);
    passage.timer = null;
    for (const { chunk } of passage.held) this.counts.bytesSwallowed += chunk.length;
    passage.held = [];
    passage.endAfterHeld = false;
  }
}
