import crypto from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { loadConfig } from '../src/config';
import { createShopDataSource } from '../src/data-access/data-source';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase } from '../src/demo/woocommerce-schema';
import { basic, simultaneous } from '../test/support/http-client';
import { startProcess, type MeasureRow } from './common';

const dbName = 'shop_sidecar_bench_hardening';
const prefix = 'wp_';
const SECRET = 'bench-hardening-secret';

/**
 * The limits under attack and on stopping: 300 simultaneous failing lookups with the helpdesk key, and 300
 * simultaneous requests with a wrong secret, each set from one client address (the default limit, 10
 * failures); then the API's exit after SIGTERM while four keep-alive clients keep sending. Each run uses a
 * key name and an address of its own, so blocks left in Redis by an earlier run count for nothing here.
 */
export async function benchHardening(): Promise<MeasureRow[]> {
  const admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
  await dropDatabase(admin, dbName);
  await createDatabase(admin, dbName);
  await admin.end();
  const db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: dbName, connectionLimit: 2 });
  try {
    await createWooCommerceTables(db, prefix);
    await configureShop(db, prefix, { hpos: false, sync: false, defaultCountry: 'DK', timezone: 'Europe/Copenhagen', sequentialPlugin: 'none' });
  } finally {
    await db.end();
  }
  const env = { DB_NAME: dbName, DB_TABLE_PREFIX: prefix };
  const migrations = createShopDataSource(loadConfig(env).db, 1);
  await migrations.initialize();
  await migrations.runMigrations();
  await migrations.destroy();

  const run = crypto.randomBytes(4).toString('hex');
  const key = `bench-${run}`;
  const port = 20000 + Math.floor(Math.random() * 1000);
  const serviceEnv = { ...env, PORT: String(port), HOST: '127.0.0.1', HELPDESK_API_KEY: key, HELPDESK_API_SECRET: SECRET, TLS_CERT_FILE: '', TLS_KEY_FILE: '' };
  const url = `http://127.0.0.1:${port}`;
  const rows: MeasureRow[] = [];

  const api = await startProcess('dist/src/entry-points/http/main.js', serviceEnv, 'ignore');
  try {
    // An address of the IPv6 documentation range, in a /64 of this run's own for each attack (addresses
    // are counted per /64); the loopback peer is a trusted proxy, so the forwarded address counts.
    const from = (n: number) => ({ 'x-forwarded-proto': 'https', 'x-forwarded-for': `2001:db8:${run.slice(0, 4)}:${n}${run.slice(4, 7)}::1` });
    const attacks: [string, number, Record<string, string>][] = [
      ['lookups with the right key, all failing (404)', 404, { ...from(1), authorization: basic(key, SECRET) }],
      ['requests with a wrong secret (401)', 401, { ...from(2), authorization: basic(key, 'wrong-secret') }],
    ];
    for (const [what, failed, headers] of attacks) {
      const counts = await simultaneous(url, 300, 'POST', '/helpdesk/v1/order-status', { headers, body: { order_number: '424242', email: 'guess@example.dk' } });
      const evaluated = counts[failed] ?? 0;
      rows.push({
        measure: `evaluated of 300 simultaneous ${what}`,
        value: String(evaluated),
        detail: `answers: ${Object.entries(counts).map(([status, n]) => `${n} × ${status}`).join(', ')}; target <= 10: ${evaluated <= 10 ? 'met' : 'not met'}`,
      });
    }
  } catch (error) {
    api.kill('SIGTERM');
    throw error;
  }
  rows.push(await exitUnderLoad(api, url));
  return rows;
}

/** SIGTERM while four keep-alive clients keep asking for /health; the seconds until the process has exited. */
async function exitUnderLoad(api: ChildProcess, url: string): Promise<MeasureRow> {
  const load = autocannon({ url: `${url}/health`, connections: 4, duration: 30 });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
  const signalled = Date.now();
  api.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 15_000))]);
  const seconds = (Date.now() - signalled) / 1000;
  load.stop();
  if (code === 'running') api.kill('SIGKILL');
  const result = await load;
  return {
    measure: 'API exit after SIGTERM, four keep-alive clients sending',
    value: code === 'running' ? 'over 15 s' : `${seconds.toFixed(1)} s`,
    detail: `exit code ${code === 'running' ? 'none (killed)' : code}; ${result.requests.total} requests answered meanwhile; target <= 10 s: ${code !== 'running' && seconds <= 10 ? 'met' : 'not met'}`,
  };
}
