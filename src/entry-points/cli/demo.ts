import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../config';
import { createShopDataSource } from '../../data-access/data-source';
import { configureShop, createWooCommerceTables } from '../../demo/woocommerce-schema';
import { DEMO_MARKER_TABLE, freshDemoDatabase } from '../../demo/demo-database';
import { seedDemoShop, type DemoSamples } from '../../demo/demo-shop';
import { ShopSeeder, shopTables } from '../../demo/shop-seeder';
import { WpUser } from '../../../entities';
import { selfSignedCertificate } from './self-signed-certificate';
import { migrateShop } from './migrate-shop';
import { silentLogger } from '../../logger';
import { signCardGatewayEvent } from '../../payments/providers/card-gateway/signature';
import { addressFree } from '../http/listen';

/**
 * `npm run demo`: a demo shop database shaped like a real WooCommerce one (posts and HPOS tables,
 * HPOS authoritative with sync on), seeded, migrated, served over HTTPS with a self-signed
 * certificate with the worker running beside it, and a list of requests to paste. Ctrl+C stops it.
 * DEMO_DB_NAME (shop_sidecar_demo) is made afresh on each run, and only when the demo made it itself
 * (src/demo/demo-database.ts); DEMO_HOST and DEMO_PORT (127.0.0.1, 8443) are where it serves.
 */
const env = process.env;
const dbName = env.DEMO_DB_NAME ?? 'shop_sidecar_demo';
const prefix = 'wp_';
const port = env.DEMO_PORT || '8443';
const host = env.DEMO_HOST || '127.0.0.1';
const projectRoot = path.resolve(__dirname, '../../../..');

interface DemoShop {
  samples: DemoSamples;
  /** A WooCommerce REST API key of the demo's shop manager, for the staff routes. */
  apiKey: { consumerKey: string; consumerSecret: string };
}

/** Why the demo stops before it starts anything: one line, and a non-zero exit. */
class DemoRefusal extends Error {}

async function prepareDatabase(): Promise<DemoShop> {
  const connection = { host: env.DB_HOST ?? '127.0.0.1', port: Number(env.DB_PORT ?? 3306), user: env.DB_USER ?? 'root', password: env.DB_PASSWORD ?? '' };
  const admin = await mysql.createConnection(connection);
  try {
    const fresh = await freshDemoDatabase(admin, dbName);
    if (fresh.kind === 'not_the_demos') {
      throw new DemoRefusal(`database "${dbName}" exists and the demo did not create it (it has no ${DEMO_MARKER_TABLE} table), so it is left as it is: set DEMO_DB_NAME to another name`);
    }
  } finally {
    await admin.end();
  }
  const db = mysql.createPool({ ...connection, database: dbName, connectionLimit: 4, dateStrings: true, timezone: 'Z' });
  try {
    await createWooCommerceTables(db, prefix);
    const mode = { hpos: true, sync: true };
    await configureShop(db, prefix, { ...mode, defaultCountry: 'DK', timezone: 'Europe/Copenhagen', currency: 'DKK', sequentialPlugin: 'none', siteUrl: 'https://shop.example.dk' });
    const samples = await seedDemoShop(db, prefix, mode, { orders: 300 });
    const manager = (await shopTables(db, prefix)).createQueryBuilder().select('u.id', 'id').from(WpUser, 'u')
      .where('u.login = :login', { login: samples.users.shopManager.login });
    const [[{ id }]] = await db.query<mysql.RowDataPacket[]>(...manager.getQueryAndParameters());
    const apiKey = await new ShopSeeder(db, prefix, mode).createApiKey(Number(id), 'read_write', 'Demo helpdesk');
    return { samples, apiKey };
  } finally {
    await db.end();
  }
}

function start(name: string, script: string, childEnv: NodeJS.ProcessEnv): ChildProcess {
  // The IPC channel carries the service's `ready` (sent once it listens, as PM2's wait_ready has it).
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/src/entry-points', script)], { env: childEnv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`demo: the ${name} stopped (${signal ?? code}); stopping the demo\n`);
      stopAll(1);
    }
  });
  return child;
}

let stopping = false;
const children: ChildProcess[] = [];
function stopAll(code: number): void {
  stopping = true;
  // The timer below is unref'd: when the children are gone first, the demo ends on its own, with this code.
  process.exitCode = code;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 1500).unref();
}

/** A signed card-gateway delivery of an event the service stores but has nothing to do for (so it needs no provider). */
function signedDemoWebhook(webhookSecret: string): string {
  const id = crypto.randomBytes(16).toString('hex');
  const timestamp = new Date().toISOString();
  const event = { id, event_id: crypto.randomBytes(16).toString('hex'), event_type: 'customer_changed', timestamp, customer: 'demo-customer', signature: signCardGatewayEvent({ timestamp, id }, webhookSecret) };
  return JSON.stringify(event);
}

/** The demo's shop manager, as the helpdesk card's agent (src/demo/demo-shop.ts makes them). */
const DEMO_AGENT = 'butik@example.dk';

function printRequests(base: string, key: string, secret: string, { samples, apiKey }: DemoShop, webhookSecret: string, cardToken: string): void {
  const staff = `-u '${apiKey.consumerKey}:${apiKey.consumerSecret}'`;
  const auth = `-u '${key}:${secret}'`;
  const post = (body: object, extra = '') =>
    `curl -sk ${auth} -H 'Content-Type: application/json' -X POST '${base}/helpdesk/v1/order-status${extra}' -d '${JSON.stringify(body)}'`;
  const lines = [
    '',
    `Demo shop database "${dbName}" is ready and the API is serving ${base} (self-signed certificate: -k).`,
    '',
    '# Order found by billing email (200)',
    post({ order_number: samples.match.order_number, email: samples.match.email }),
    '# Order found by billing phone, written another way (200)',
    post({ order_number: samples.phoneMatch.order_number, phone: samples.phoneMatch.phone }),
    '# Right order number, wrong email (404 order_not_found)',
    post({ order_number: samples.mismatch.order_number, email: samples.mismatch.email }),
    '# No such order (404 order_not_found, the same bytes as above)',
    post({ order_number: samples.notFound.order_number, email: samples.notFound.email }),
    '# Order number alone (400 missing_params)',
    post({ order_number: samples.match.order_number }),
    '# Parameters in the query string (400 params_must_be_in_body)',
    post({ order_number: samples.match.order_number, email: samples.match.email }, `?email=${encodeURIComponent(samples.match.email)}`),
    '# No credentials (401 unauthorized)',
    `curl -sk -H 'Content-Type: application/json' -X POST '${base}/helpdesk/v1/order-status' -d '${JSON.stringify({ order_number: samples.match.order_number, email: samples.match.email })}'`,
    '# Customer lookup by phone, with the shop manager\'s WooCommerce REST API key (200)',
    `curl -sk ${staff} '${base}/shop/v3/helpdesk/v1/list?phone=${encodeURIComponent(samples.phoneMatch.phone)}'`,
    '# Customer lookup with both parameters (400 invalid_params)',
    `curl -sk ${staff} '${base}/shop/v3/helpdesk/v1/list?phone=1&email=a%40b.dk'`,
    '# The helpdesk card of a conversation, as Dixa asks for it, with the shop manager as the agent (200: the customer, their orders, links; docs/helpdesk-card.md)',
    `curl -sk -H 'Authorization: Bearer ${cardToken}' '${base}/helpdesk/v1/card?email=${encodeURIComponent(samples.match.email)}&phone=&agent=${encodeURIComponent(DEMO_AGENT)}'`,
    '# The card\'s template, to paste into Dixa',
    'npx payment-hub helpdesk card-template',
    '# Renewal discount types (200)',
    `curl -sk ${staff} '${base}/renewal-discounts/v1/renewal-discount-types'`,
    '# What the service knows of an order\'s payments, as the Payments panel in WP admin shows it (200; this order has none)',
    `curl -sk ${staff} '${base}/payment-hub/v1/orders/${samples.match.order_id}/payments'`,
    '# Health (200)',
    `curl -sk '${base}/health'`,
    '# A signed card-gateway webhook (200: stored, then SKIPPED by the worker: nothing to do for this event type)',
    `curl -sk -H 'Content-Type: application/json' -X POST '${base}/payment-hub/v1/webhook/card_gateway' -d '${signedDemoWebhook(webhookSecret)}'`,
    '# The same webhook with a wrong signature (401 invalid_signature)',
    `curl -sk -H 'Content-Type: application/json' -X POST '${base}/payment-hub/v1/webhook/card_gateway' -d '${signedDemoWebhook('wrong-secret')}'`,
    '# What the worker made of the webhooks',
    `DB_NAME=${dbName} npx payment-hub webhooks list`,
    '# What dunning won back from failed renewals in the last 30 days (none has failed in the demo shop)',
    `DB_NAME=${dbName} npx payment-hub dunning report`,
    '# The whole installation checked, configured from the demo shop\'s wp-config.php as an operator would (docs/operators-guide.md: "Moving from the PHP plugins")',
    `WP_CONFIG_FILE=${path.relative(process.cwd(), demoWpConfig) || demoWpConfig} npx payment-hub doctor`,
    '',
    'Press Ctrl+C to stop.',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

/**
 * Resolves with true once the service says it is ready (the API: it listens), false if it exits first. Not a
 * connection to the port: another process holding it would answer just as well.
 */
function ready(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    child.on('message', (message) => { if (message === 'ready') resolve(true); });
    child.once('exit', () => resolve(false));
  });
}

/** Where the demo writes the wp-config.php a WordPress of the demo shop would have. */
const demoWpConfig = path.join(projectRoot, 'demo', 'wp-config.php');

/** The demo shop's wp-config.php: its database settings and table prefix, as WordPress would hold them. */
function writeDemoWpConfig(): void {
  const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const host = `${env.DB_HOST ?? '127.0.0.1'}:${env.DB_PORT ?? '3306'}`;
  fs.mkdirSync(path.dirname(demoWpConfig), { recursive: true });
  fs.writeFileSync(demoWpConfig, [
    '<?php',
    '// The demo shop of `npm run demo`, as WordPress would be configured for it.',
    `define( 'DB_NAME', ${quoted(dbName)} );`,
    `define( 'DB_USER', ${quoted(env.DB_USER ?? 'root')} );`,
    `define( 'DB_PASSWORD', ${quoted(env.DB_PASSWORD ?? '')} );`,
    `define( 'DB_HOST', ${quoted(host)} );`,
    `define( 'DB_CHARSET', 'utf8mb4' );`,
    `define( 'WP_SITEURL', 'https://shop.example.dk' );`,
    `$table_prefix = ${quoted(prefix)};`,
    "if ( ! defined( 'ABSPATH' ) ) { define( 'ABSPATH', __DIR__ . '/' ); }",
    "require_once ABSPATH . 'wp-settings.php';",
    '',
  ].join('\n'));
}

async function main(): Promise<void> {
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw new DemoRefusal('DEMO_PORT must be a whole number from 1 to 65535');
  // Before the database is touched: the API would find the port taken only after the seeding.
  const address = await addressFree(Number(port), host, { port: 'DEMO_PORT', host: 'DEMO_HOST' });
  if (address.kind === 'refused') throw new DemoRefusal(address.message);
  process.stdout.write(`demo: creating and seeding the demo shop database "${dbName}"...\n`);
  const shop = await prepareDatabase();
  writeDemoWpConfig();
  const { certFile, keyFile } = selfSignedCertificate(path.join(projectRoot, 'demo', 'tls'));
  const key = env.HELPDESK_API_KEY || 'helpdesk-demo';
  const secret = env.HELPDESK_API_SECRET || crypto.randomBytes(12).toString('hex');
  const webhookSecret = env.CARD_GATEWAY_WEBHOOK_SECRET || crypto.randomBytes(16).toString('hex');
  const cardToken = env.HELPDESK_CARD_TOKEN || crypto.randomBytes(16).toString('hex');
  const childEnv: NodeJS.ProcessEnv = {
    ...env,
    DB_NAME: dbName,
    DB_TABLE_PREFIX: prefix,
    HOST: host,
    PORT: port,
    TLS_CERT_FILE: certFile,
    TLS_KEY_FILE: keyFile,
    HELPDESK_API_KEY: key,
    HELPDESK_API_SECRET: secret,
    SHOP_URL: 'https://shop.example.dk',
    CARD_GATEWAY_WEBHOOK_SECRET: webhookSecret,
    HELPDESK_CARD_TOKEN: cardToken,
  };
  const config = loadConfig(childEnv);
  const dataSource = createShopDataSource(config.db, 1);
  await dataSource.initialize();
  await migrateShop(dataSource, silentLogger, (line) => process.stdout.write(`demo: ${line}\n`));
  await dataSource.destroy();

  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));
  const api = start('API', 'http/main.js', childEnv);
  children.push(api, start('worker', 'worker/main.js', childEnv));
  // The API that exits instead has said why in its own line, and the demo stops (start() above).
  if (!(await ready(api))) return;
  printRequests(`https://127.0.0.1:${port}`, key, secret, shop, webhookSecret, cardToken);
}

main().catch((error) => {
  if (error instanceof DemoRefusal) process.stderr.write(`demo: ${error.message}\n`);
  else process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  stopAll(1);
});
