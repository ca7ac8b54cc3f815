/**
 * A test shop's WordPress and the service behind one HTTPS origin, as a live shop runs them: nginx ends TLS and
 * sends the service's routes (`/wp-json/subscription-support/...`, `/wp-json/renewal-discounts/...`,
 * `/wp-json/payment-hub/...`) to the service and everything else to WordPress. WP admin's staff panels call the
 * service from the browser with the logged-in cookie, which a browser only sends to the same origin.
 *
 *   const api = await startApi(config);                        // test/support/test-shop.ts
 *   const origin = await startAdminOrigin({ shop, apiUrl: api.url });
 *   ... a browser logs in at `${origin.url}/wp-login.php` (support/admin-browser.ts) ...
 *   await origin.stop();                                       // nginx and PHP end, the site gets its address back
 *
 * WordPress is served by PHP's built-in server (support/serve-over-http.ts) with siteurl and home set to the
 * nginx address, and takes a request as HTTPS when nginx says so in X-Forwarded-Proto (the served wp-config.php).
 * The service believes X-Forwarded-Proto from 127.0.0.1 (TRUSTED_PROXIES' default).
 *
 * nginxServerBlock() is the part a shop's own nginx needs (the example in docs/companion.md, "On the shop's own origin"); nginxConfig() wraps it in what
 * a private nginx process needs (its own pid file, logs and temp folders).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/free-port';
import { accepts, serveOverHttp, type ServedShop } from './serve-over-http';
import type { WooCommerceShop } from './woocommerce-shop';

const run = promisify(execFile);

/** The service's route prefixes that browsers reach under `/wp-json/` on the shop's origin. */
export const SERVICE_ROUTE_PREFIXES = ['subscription-support', 'renewal-discounts', 'payment-hub'] as const;

export interface ServerBlockOptions {
  /** Where nginx listens, e.g. `127.0.0.1:8443` or `443`. */
  listen: string;
  serverName: string;
  certificate: string;
  certificateKey: string;
  /** WordPress (PHP) as nginx reaches it, e.g. `http://127.0.0.1:8080`. */
  wordpress: string;
  /** The service as nginx reaches it, e.g. `http://127.0.0.1:3000`. */
  service: string;
}

/** The nginx `server` block that puts the service's routes on the shop's origin. */
export function nginxServerBlock(o: ServerBlockOptions): string {
  const service = o.service.replace(/\/+$/, '');
  const routes = SERVICE_ROUTE_PREFIXES.map((prefix) => `
    location /wp-json/${prefix}/ {
        proxy_pass ${service}/${prefix}/;  # without /wp-json
    }`).join('');
  return `server {
    listen ${o.listen} ssl;
    server_name ${o.serverName};
    ssl_certificate ${o.certificate};
    ssl_certificate_key ${o.certificateKey};
    client_max_body_size 32m;

    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header X-Forwarded-Proto https;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;

    # The service's routes: the browser's WordPress logged-in cookie reaches them on this origin.${routes}

    # Everything else is WordPress.
    location / {
        proxy_pass ${o.wordpress.replace(/\/+$/, '')};
    }
}
`;
}

/** A whole nginx configuration for a private nginx process (`nginx -p dir -c conf`) around nginxServerBlock(). */
export function nginxConfig(dir: string, server: ServerBlockOptions): string {
  const temp = (name: string) => path.join(dir, 'temp', name);
  // As root nginx would run its workers as nobody, who cannot write the temp folders in a private folder.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `# Test-only: one test shop's admin origin (test/woocommerce/support/admin-origin.ts).
${user}worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log ${path.join(dir, 'access.log')};
    client_body_temp_path ${temp('body')};
    proxy_temp_path ${temp('proxy')};
    fastcgi_temp_path ${temp('fastcgi')};
    uwsgi_temp_path ${temp('uwsgi')};
    scgi_temp_path ${temp('scgi')};

${nginxServerBlock(server).replace(/^(?=.)/gm, '    ')}}
`;
}

/** A self-signed certificate for 127.0.0.1 (and localhost), made with openssl in `dir`. */
export async function selfSignedCertificate(dir: string): Promise<{ certificate: string; certificateKey: string }> {
  const certificate = path.join(dir, 'cert.pem');
  const certificateKey = path.join(dir, 'key.pem');
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '7',
    '-keyout', certificateKey, '-out', certificate,
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  return { certificate, certificateKey };
}

export interface AdminOriginOptions {
  shop: WooCommerceShop;
  /** The service's plain-HTTP address, e.g. RunningApi.url. */
  apiUrl: string;
  /** nginx's port (default a free one), e.g. when the service must be told SHOP_URL before the origin starts. */
  port?: number;
  /** How long nginx and PHP may take to accept connections (default 15 s each). */
  startTimeoutMs?: number;
}

export interface AdminOrigin {
  /** `https://127.0.0.1:<port>`: the shop's siteurl and home while it runs, no trailing slash. */
  url: string;
  /** The PHP server behind nginx. */
  served: ServedShop;
  /** The nginx configuration in use. */
  config: string;
  /** The origin's self-signed certificate (PEM): NODE_EXTRA_CA_CERTS for a service process that calls the shop here. */
  certificate: string;
  /** nginx's error and access logs and PHP's output, for a failing test's message. */
  output(): Promise<string>;
  /** Stops nginx and PHP and gives the site its earlier address back. */
  stop(): Promise<void>;
}

function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal); // nginx's master and its worker (it leads its own process group)
      } catch {
        // already gone
      }
    };
    const hard = setTimeout(() => kill('SIGKILL'), 5000);
    child.once('exit', () => { clearTimeout(hard); resolve(); });
    kill('SIGTERM');
  });
}

const readOr = (file: string) => fs.readFile(file, 'utf8').catch(() => '');

export async function startAdminOrigin(options: AdminOriginOptions): Promise<AdminOrigin> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shop-sidecar-admin-origin-'));
  let served: ServedShop | undefined;
  let nginx: ChildProcess | undefined;
  let nginxOutput = '';
  const output = async () => [
    `nginx error.log:\n${(await readOr(path.join(dir, 'error.log'))).slice(-4000)}${nginxOutput.slice(-2000)}`,
    `nginx access.log:\n${(await readOr(path.join(dir, 'access.log'))).slice(-4000)}`,
    `php:\n${served?.output().slice(-4000) ?? ''}`,
  ].join('\n');
  const stop = async () => {
    if (nginx) await stopGroup(nginx);
    await served?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  };

  try {
    const { certificate, certificateKey } = await selfSignedCertificate(dir);
    const port = options.port ?? await freePort();
    const url = `https://127.0.0.1:${port}`;
    served = await serveOverHttp(options.shop, { publicUrl: url, startTimeoutMs: options.startTimeoutMs });
    const config = nginxConfig(dir, {
      listen: `127.0.0.1:${port}`, serverName: '127.0.0.1', certificate, certificateKey,
      wordpress: served.url, service: options.apiUrl,
    });
    for (const name of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await fs.mkdir(path.join(dir, 'temp', name), { recursive: true });
    const configFile = path.join(dir, 'nginx.conf');
    await fs.writeFile(configFile, config);

    // SIDECAR_NGINX: run.sh says where nginx is (/usr/sbin is not on every user's PATH). -e: the log for errors
    // before the configuration is read (otherwise /var/log/nginx/error.log).
    const child = spawn(process.env.SIDECAR_NGINX ?? 'nginx', ['-p', dir, '-c', configFile, '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    nginx = child;
    const keep = (chunk: Buffer) => { nginxOutput = (nginxOutput + chunk.toString('utf8')).slice(-20_000); };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exited = false;
    child.once('exit', () => { exited = true; });
    child.once('error', (error) => { exited = true; nginxOutput += `\n${error.message}`; });

    const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
    while (!(await accepts(port))) {
      if (exited || Date.now() > deadline) throw new Error(`nginx on port ${port} did not start:\n${await output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    let stopped: Promise<void> | null = null;
    return { url, served, config, certificate, output, stop: () => (stopped ??= stop()) };
  } catch (error) {
    await stop();
    throw error;
  }
}
