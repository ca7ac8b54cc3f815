import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { loadConfig } from '../src/config';
import { createShopDataSource } from '../src/data-access/data-source';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase } from '../src/demo/woocommerce-schema';
import { signCardGatewayEvent } from '../src/payments/providers/card-gateway/signature';
import { FakeCardGateway } from '../test/support/fake-card-gateway';
import { startProcess, type MeasureRow } from './common';

const dbName = 'shop_sidecar_bench_payments';
const prefix = 'wp_';
const SECRET = 'bench-webhook-secret';

function delivery(eventId: string, invoice: string): string {
  const id = crypto.randomBytes(16).toString('hex');
  const timestamp = new Date().toISOString();
  return JSON.stringify({ id, event_id: eventId, event_type: 'invoice_settled', timestamp, invoice, customer: 'bench-customer', signature: signCardGatewayEvent({ timestamp, id }, SECRET) });
}

/** CPU seconds a process has used so far (user and system), from /proc; null where that cannot be read. */
function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    // Fields 14 and 15 (utime, stime), counted after the command name, which may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The pid of a local server program (the database, Redis), to count its CPU; undefined when it is not found. */
function pidOf(...names: string[]): number | undefined {
  try {
    return Number(execFileSync('pidof', ['-s', ...names], { encoding: 'utf8' }).trim()) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Card-gateway webhooks: signed deliveries accepted per second by the API (one in ten a repeat that
 * must be deduplicated), then events processed per second by one worker against a loopback provider,
 * once answering at once and once answering in 150 ms (a batch of deliveries each). Targets: one
 * worker >= 1,000 events/s with the provider answering at once, >= 500 events/s at 150 ms.
 */
export async function benchPayments(duration: number): Promise<MeasureRow[]> {
  const admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
  await dropDatabase(admin, dbName);
  await createDatabase(admin, dbName);
  await admin.end();
  const db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: dbName, connectionLimit: 2 });
  await createWooCommerceTables(db, prefix);
  await configureShop(db, prefix, { hpos: false, sync: false, defaultCountry: 'DK', timezone: 'Europe/Copenhagen', sequentialPlugin: 'none' });
  const env = { DB_NAME: dbName, DB_TABLE_PREFIX: prefix };
  const migrations = createShopDataSource(loadConfig(env).db, 1);
  await migrations.initialize();
  await migrations.runMigrations();
  await migrations.destroy();

  const fake = new FakeCardGateway({ webhookSecret: SECRET });
  await fake.start();
  const port = 19000 + Math.floor(Math.random() * 1000);
  const serviceEnv = { ...env, PORT: String(port), HOST: '127.0.0.1', CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: SECRET, TLS_CERT_FILE: '', TLS_KEY_FILE: '' };
  const api = await startProcess('dist/src/entry-points/http/main.js', serviceEnv, 'ignore');
  const rows: MeasureRow[] = [];
  const pendingCount = async () => Number((await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${prefix}sidecar_webhooks WHERE status = 'PENDING'`))[0][0].n);
  let sent = 0;
  const recent: string[] = [];

  /** `duration` seconds of signed deliveries through the API (no worker running). */
  const intake = async () => {
    const requests = [{
      method: 'POST', path: '/payment-hub/v1/webhook/card_gateway', headers: { 'content-type': 'application/json' },
      setupRequest: (req: autocannon.RequestSpec) => {
        sent += 1;
        // Every tenth delivery repeats a recent event, as a provider's retry would.
        if (sent % 10 === 0 && recent.length) return { ...req, body: delivery(recent[sent % recent.length], `inv-${sent}`) };
        const eventId = `evt-${sent}-${crypto.randomBytes(4).toString('hex')}`;
        recent.push(eventId);
        if (recent.length > 100) recent.shift();
        const invoice = `inv-${sent}`;
        fake.setInvoice(invoice, { state: 'settled', amount: 9900 });
        return { ...req, body: delivery(eventId, invoice) };
      },
    }];
    return autocannon({ url: `http://127.0.0.1:${port}`, connections: 10, duration, requests });
  };

  /** Starts one worker and times it until no webhook is PENDING. */
  const processAll = async (measure: string, target: number) => {
    const batch = await pendingCount();
    const servers = { database: pidOf('mariadbd', 'mysqld'), redis: pidOf('redis-server') };
    const cpuBefore = { database: cpuSeconds(servers.database), redis: cpuSeconds(servers.redis), bench: process.cpuUsage() };
    const started = Date.now();
    const worker = await startProcess('dist/src/entry-points/worker/main.js', serviceEnv, 'ignore');
    try {
      let pending = batch;
      while (pending > 0 && Date.now() - started < 600_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        pending = await pendingCount();
      }
      const seconds = (Date.now() - started) / 1000;
      // CPU per event, which varies far less from run to run than the rate on a shared machine.
      const perEvent = (used: number | null, before: number | null) => (used === null || before === null ? 'n/a' : `${((used - before) * 1000 / batch).toFixed(2)} ms`);
      const benchCpu = process.cpuUsage(cpuBefore.bench);
      const cpu = `CPU per event: worker ${perEvent(cpuSeconds(worker.pid), 0)}, database ${perEvent(cpuSeconds(servers.database), cpuBefore.database)}, `
        + `Redis ${perEvent(cpuSeconds(servers.redis), cpuBefore.redis)}, provider and bench ${perEvent((benchCpu.user + benchCpu.system) / 1e6, 0)}`;
      const [byStatus] = await db.query<mysql.RowDataPacket[]>(`SELECT status, COUNT(*) AS n FROM ${prefix}sidecar_webhooks GROUP BY status`);
      const rate = Math.round(batch / seconds);
      rows.push({
        measure,
        value: rate.toLocaleString('en'),
        detail: `${batch} events in ${seconds.toFixed(1)} s (from worker start); target >= ${target.toLocaleString('en')}/s: ${rate >= target ? 'met' : 'not met'}; ${cpu}; all webhooks so far: ${byStatus.map((r) => `${r.status} ${r.n}`).join(', ')}`,
      });
    } finally {
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker.once('exit', resolve));
    }
  };

  try {
    const accepted = await intake();
    const [[stored]] = await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${prefix}sidecar_webhooks`);
    rows.push({
      measure: 'signed deliveries accepted / s (API, 10 connections)',
      value: Math.round(accepted.requests.average).toLocaleString('en'),
      detail: `p50 ${accepted.latency.p50} ms, p99 ${accepted.latency.p99} ms; ${accepted.requests.total} deliveries, ${stored.n} stored, ${accepted['2xx']} answered 200, ${accepted.non2xx} other, ${accepted.errors} errors`,
    });
    await processAll('events processed / s (one worker, loopback provider answering at once)', 1000);

    fake.latencyMs = 150;
    await intake();
    await processAll('events processed / s (one worker, loopback provider answering in 150 ms)', 500);
  } finally {
    api.kill('SIGTERM');
    await fake.stop();
    await db.end();
  }
  return rows;
}
