import fs from 'node:fs';
import net from 'node:net';

/** Linux's default when /proc does not say (net.ipv4.ip_local_port_range). */
const DEFAULT_EPHEMERAL = { low: 32768, high: 60999 };
/** Above the ports of the machine's own services (MariaDB 3306, Redis 6379, the test fakes' well-known ones). */
const LOWEST = 10_000;
const TRIES = 50;

/** The ports the kernel hands to outgoing connections that do not name one. */
function ephemeralRange(): { low: number; high: number } {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low <= high) return { low, high };
  } catch {
    // Not Linux, or no /proc: the default below.
  }
  return DEFAULT_EPHEMERAL;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on 127.0.0.1 that was free when asked, for a process the test starts later (nothing holds it in
 * between). It is chosen outside the kernel's ephemeral range: a port from `listen(0)` is from that range, and any
 * outgoing connection on the machine (a database client, PHP, Chromium) may take it as its own local port before
 * the started process listens, which ended a CI run with EADDRINUSE. Chosen at random, so that test files running
 * at once rarely pick the same one.
 */
export async function freePort(): Promise<number> {
  const { low, high } = ephemeralRange();
  const span = low - LOWEST >= 65535 - high ? { from: LOWEST, to: low - 1 } : { from: high + 1, to: 65535 };
  if (span.to - span.from < 1000) return anyFreePort();
  for (let attempt = 0; attempt < TRIES; attempt += 1) {
    const port = span.from + Math.floor(Math.random() * (span.to - span.from + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${span.from} and ${span.to} after ${TRIES} tries`);
}

/** A machine whose ephemeral range leaves too few ports outside it: whatever port the kernel gives. */
function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
