/**
 * Serves a test shop's WordPress over HTTP with PHP's built-in web server, for tests that need WordPress to answer
 * requests as a live shop does (the companion's hand-over route, WP-Cron spawned by visits).
 *
 *   const served = await serveOverHttp(shop);   // siteurl and home are now served.url
 *   ... fetch(`${served.url}/?rest_route=/shop-sidecar/v1/apply`, ...) ...
 *   await served.stop();                         // the server ends, the site gets its earlier address back
 *
 * The site runs WP-Cron as a shop without a system cron does: each request may spawn a loopback request to
 * wp-cron.php, so the server runs several workers (PHP_CLI_SERVER_WORKERS) and such a request cannot deadlock.
 * The shop's CLI driver (shop.php(), snapshot, sql...) keeps WP-Cron off (test/woocommerce/php/bootstrap.php):
 * reading the shop while it is served never runs scheduled work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../../support/free-port';
import { phpCacheArgs, phpDir, type WooCommerceShop } from './woocommerce-shop';

export interface ServedShop {
  /**
   * The server's address, e.g. `http://127.0.0.1:41234`, no trailing slash: the site's siteurl and home too,
   * unless ServeOptions.publicUrl named another.
   */
  url: string;
  /** The server's last output (request lines, PHP's log), for a failing test's message. */
  output(): string;
  /** Stops the server, requests still running included, and gives the site its earlier address back. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** PHP_CLI_SERVER_WORKERS (default 4): requests served at once, WP-Cron's loopback request among them. */
  workers?: number;
  /** How long to wait for the server to accept connections (default 15 s). */
  startTimeoutMs?: number;
  /**
   * The site's address (siteurl and home) while served, when a proxy in front of the server is where browsers
   * reach it (e.g. `https://127.0.0.1:<nginx port>`, support/admin-origin.ts); default the server's own address.
   */
  publicUrl?: string;
  /** The port to serve on (default a free one): a test that must name the shop's address before serving it. */
  port?: number;
}

const OUTPUT_KEPT = 200_000;

export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => { socket.destroy(); resolve(false); });
  });
}

const phpString = (value: string) => `'${value.replace(/[\\']/g, '\\$&')}'`;

/**
 * The served folder: the stack's WordPress tree (top-level scripts copied, the rest linked), the shop's own
 * wp-content, and a wp-config.php that loads the shop as the CLI driver does (bootstrap.php). http-router.php
 * explains why.
 */
async function webRoot(shop: WooCommerceShop): Promise<string> {
  const web = path.join(shop.siteDir, 'web');
  await fs.rm(web, { recursive: true, force: true });
  await fs.mkdir(web, { recursive: true });
  for (const entry of await fs.readdir(shop.wpDir, { withFileTypes: true })) {
    // Debian's wp-config.php (reads /etc/wordpress) is replaced; its .htaccess is a link to /etc.
    if (entry.name === 'wp-config.php' || entry.name === 'wp-content' || entry.name.startsWith('.')) continue;
    const from = path.join(shop.wpDir, entry.name);
    // A copy, so that its __DIR__ (and wp-load.php's ABSPATH) is the served folder.
    if (entry.isFile() && entry.name.endsWith('.php')) await fs.copyFile(from, path.join(web, entry.name));
    else await fs.symlink(from, path.join(web, entry.name));
  }
  await fs.symlink(path.join(shop.siteDir, 'wp-content'), path.join(web, 'wp-content'));
  await fs.writeFile(path.join(web, 'wp-config.php'), [
    '<?php',
    '// Test-only: the served test shop (test/woocommerce/support/serve-over-http.ts).',
    // Behind a TLS proxy on this machine (support/admin-origin.ts) the request is HTTPS as the browser made it:
    // WordPress then makes https URLs and secure cookies, as it does behind a real shop's TLS proxy.
    "if ( 'https' === ( $_SERVER['HTTP_X_FORWARDED_PROTO'] ?? '' ) && in_array( $_SERVER['REMOTE_ADDR'] ?? '', array( '127.0.0.1', '::1' ), true ) ) {",
    "\t$_SERVER['HTTPS'] = 'on';",
    '}',
    `require ${phpString(path.join(phpDir(), 'bootstrap.php'))};`,
    '',
  ].join('\n'));
  return web;
}

function stopProcessGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal); // the server and its workers (it leads its own process group)
      } catch {
        // already gone
      }
    };
    const hard = setTimeout(() => kill('SIGKILL'), 5000);
    child.once('exit', () => { clearTimeout(hard); resolve(); });
    kill('SIGTERM');
  });
}

/**
 * Serves `shop` at `http://127.0.0.1:<free port>` until `stop()`. Its siteurl and home point there (or to
 * `options.publicUrl`) meanwhile, and Subscriptions keeps taking it for the live site, not a staging copy.
 */
export async function serveOverHttp(shop: WooCommerceShop, options: ServeOptions = {}): Promise<ServedShop> {
  const web = await webRoot(shop);
  const port = options.port ?? await freePort();
  const url = `http://127.0.0.1:${port}`;
  const moved = await shop.php<{ previous: string; is_duplicate_site: boolean }>('site_url', { url: options.publicUrl ?? url });
  if (moved.is_duplicate_site) throw new Error('Subscriptions takes the served shop for a staging copy');

  let output = '';
  const child = spawn('php', [
    ...phpCacheArgs(), '-d', 'opcache.enable=1',
    '-S', `127.0.0.1:${port}`, '-t', web, path.join(phpDir(), 'http-router.php'),
  ], {
    env: { ...shop.env, SIDECAR_WEB_DIR: web, PHP_CLI_SERVER_WORKERS: String(options.workers ?? 4) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  child.once('exit', () => { exited = true; });

  const restore = async () => {
    await stopProcessGroup(child);
    await shop.php('site_url', { url: moved.previous });
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
  while (!(await accepts(port))) {
    if (exited || Date.now() > deadline) {
      await restore();
      throw new Error(`php -S on port ${port} did not start:\n${output.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  let stopped: Promise<void> | null = null;
  return {
    url,
    output: () => output,
    stop: () => (stopped ??= restore()),
  };
}
