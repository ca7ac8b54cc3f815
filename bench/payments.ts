import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { loadConfig } from '../src/config';
import { createShopDataSource } from '../src/data-access/data-source';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase } from '../src/demo/woocommerce-schema';
import { signCardGatewayEvent } from '../src/payments/providers/card-gateway/signature';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../test/support/fake-card-gateway';
import { CARD_GATEWAY_LIMITS } from '../src/payments/providers/card-gateway/client';
import { cpuSeconds, machineBusySeconds, startProcess, type MeasureRow } from './common';
import type { ProbeSample } from './worker-probe';

const dbName = 'shop_sidecar_bench_payments';
const prefix = 'wp_';
const SECRET = 'bench-webhook-secret';
const WORKER = 'dist/src/entry-points/worker/main.js';
/** The probe sits beside this file once built (dist/bench/). */
const PROBE = path.join(__dirname, 'worker-probe.js');

/**
 * The worker curve: the same backlog processed by 1, 2 and 4 worker processes (BENCH_WORKERS) with the
 * provider answering in BENCH_PROVIDER_LATENCY_MS (150), BENCH_CURVE_EVENTS events each time (10,000),
 * BENCH_CURVE_ROUNDS times each (3), the worker counts taking turns so that a change in the machine's
 * load falls on all of them. BENCH_PROBE=0 leaves the worker probe out. The card gateway's request
 * limits are raised for the account (as the gateway does on request), so the curve shows the worker's own
 * pace; BENCH_DOCUMENTED_LIMITS=1 keeps the documented ones (25 reads a second), the pace of a shop
 * whose limits are not raised, with the loopback gateway enforcing them, so that each run shows whether
 * the workers together stayed within them (calls turned away, most in flight).
 */
const curveWorkers = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number).filter((n) => n > 0);
const curveEvents = Number(process.env.BENCH_CURVE_EVENTS ?? 10_000);
const curveRounds = Number(process.env.BENCH_CURVE_ROUNDS ?? 3);
const curveLatencyMs = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 150);
const probeWorkers = process.env.BENCH_PROBE !== '0';
const documentedLimits = process.env.BENCH_DOCUMENTED_LIMITS === '1';
const providerLimits = documentedLimits ? {} : RAISED_LIMITS_ENV;
/** BENCH_DIAGNOSE=1 also prints what the database's threads were doing during each run. */
const diagnose = process.env.BENCH_DIAGNOSE === '1';

function delivery(eventId: string, invoice: string): string {
  const id = crypto.randomBytes(16).toString('hex');
  const timestamp = new Date().toISOString();
  return JSON.stringify({ id, event_id: eventId, event_type: 'invoice_settled', timestamp, invoice, customer: 'bench-customer', signature: signCardGatewayEvent({ timestamp, id }, SECRET) });
}

/**
 * The pids of the database and Redis this bench uses, to count their CPU, asked of the servers themselves
 * (other programs on the machine may run servers of the same name); undefined where not found.
 */
async function serverPids(db: mysql.Pool): Promise<{ database: number | undefined; redis: number | undefined }> {
  let database: number | undefined;
  try {
    const [[row]] = await db.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS file');
    database = Number(readFileSync(String(row.file), 'utf8').trim()) || undefined;
  } catch {
    database = undefined;
  }
  let redis: number | undefined;
  try {
    redis = Number(/^process_id:(\d+)/m.exec(execFileSync('redis-cli', ['info', 'server'], { encoding: 'utf8' }))?.[1]) || undefined;
  } catch {
    redis = undefined;
  }
  return { database, redis };
}

/** Redis's calls and microseconds per command so far (INFO commandstats); empty when redis-cli is missing. */
async function redisCommandStats(): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  try {
    const { stdout } = await promisify(execFile)('redis-cli', ['info', 'commandstats'], { encoding: 'utf8' });
    for (const match of stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) stats.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  } catch {
    // no figures
  }
  return stats;
}

const STATUS_NAMES = ['Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_deadlocks', 'Innodb_data_fsyncs', 'Com_commit', 'Questions'];

async function serverStatus(db: mysql.Pool): Promise<Record<string, number>> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(`SHOW GLOBAL STATUS WHERE Variable_name IN (?)`, [STATUS_NAMES]);
  return Object.fromEntries(rows.map((row) => [String(row.Variable_name), Number(row.Value)]));
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);
const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a');

/** One poll of a run: how many events were done, and the CPU every process had used by then. */
interface Poll {
  at: number;
  done: number;
  cpu: { workers: number; database: number; redis: number; bench: number; machine: number };
  providerInFlight: number;
  served: { count: number; ms: number };
}

/** What one run of the worker curve measured. */
export interface WorkerRun {
  workers: number;
  latencyMs: number;
  events: number;
  /** From the first worker's start to none PENDING. */
  seconds: number;
  rate: number;
  /** Between 10% and 90% done, which leaves start-up and the last stragglers out. */
  steadyRate: number;
  startupSeconds: number;
  cpuPerEventMs: { workers: number; database: number; redis: number; bench: number };
  /** The database's CPU per event on this bench's own connections, over the whole run (the server may serve others too). */
  databaseOwnMs: number;
  /** Cores busy in the 10–90% part: the whole machine, and what the processes not counted above used (the API, other people's work). */
  machineCores: { busy: number; others: number };
  /** In the steady part, means of the samples. */
  providerInFlight: number;
  /** The provider's mean answer time in the steady part, as its server saw it. */
  providerAnswerMs: number;
  perWorker: { provider: number; waitingForSocket: number; loopDelayP99Ms: number; poolWaiting: number; acquireMs: number; holdMs: number; poolHeldShare: number; running: number; fetching: number }[];
  /** Share of the events each worker claimed, smallest and largest, in percent. */
  shares: number[];
  claimsPerStatement: number;
  lockWaitsSeen: number;
  perEvent: { rowLockWaits: number; rowLockMs: number; deadlocks: number; logFsyncs: number; commits: number; statements: number; redisCalls: number; redisUsec: number };
  redisTop: string;
  outcomes: string;
  benchLoopDelayP99Ms: number;
  /** As the provider saw it: calls it turned away with 429 and the most it held at once (all workers together). */
  provider: { turnedAway: number; mostInFlight: number };
}

export interface PaymentsResult {
  rows: MeasureRow[];
  /** Markdown: the worker curve and what each run saw. */
  sections: string[];
}

/**
 * Card-gateway webhooks: signed deliveries accepted per second by the API (one in ten a repeat that
 * must be deduplicated), events processed per second by one worker against a loopback provider
 * answering at once, and the worker curve: the same backlog processed by 1, 2 and 4 workers at a
 * provider answering in 150 ms. Targets: one worker >= 1,000 events/s with the provider answering at
 * once, >= 500 events/s at 150 ms; two workers >= 1.6 times one at 150 ms.
 */
export async function benchPayments(duration: number): Promise<PaymentsResult> {
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
  // Kept to the documented limits, the gateway turns away what goes over them (10 in flight, bursts of 50 a second).
  if (documentedLimits) fake.enforceLimits(CARD_GATEWAY_LIMITS.reads.concurrent, 2 * CARD_GATEWAY_LIMITS.reads.perSecond);
  // Calls the provider holds right now, counted on its own server (all workers together).
  let providerInFlight = 0;
  // Answers given and the time they took, arrival to close (the set latency plus this process's lateness).
  const providerServed = { count: 0, ms: 0 };
  (fake as unknown as { server: http.Server }).server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    providerInFlight += 1;
    const arrived = performance.now();
    res.once('close', () => {
      providerInFlight -= 1;
      providerServed.count += 1;
      providerServed.ms += performance.now() - arrived;
    });
  });
  // The provider's 150 ms timers run in this process: its lateness is the provider's extra latency.
  const benchLoop = monitorEventLoopDelay({ resolution: 10 });
  benchLoop.enable();

  const port = 19000 + Math.floor(Math.random() * 1000);
  const serviceEnv = { ...env, PORT: String(port), HOST: '127.0.0.1', CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: SECRET, TLS_CERT_FILE: '', TLS_KEY_FILE: '', ...providerLimits };
  const api = await startProcess('dist/src/entry-points/http/main.js', serviceEnv, 'ignore');
  const rows: MeasureRow[] = [];
  const sections: string[] = [];
  const table = `${prefix}sidecar_webhooks`;
  const pendingCount = async () => Number((await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE status = 'PENDING'`))[0][0].n);
  const maxId = async () => Number((await db.query<mysql.RowDataPacket[]>(`SELECT COALESCE(MAX(id), 0) AS n FROM ${table}`))[0][0].n);
  let sent = 0;
  const recent: string[] = [];
  const servers = await serverPids(db);

  const deliveryRequest = (unique: boolean) => [{
    method: 'POST' as const, path: '/payment-hub/v1/webhook/card_gateway', headers: { 'content-type': 'application/json' },
    setupRequest: (req: autocannon.RequestSpec) => {
      sent += 1;
      // Every tenth delivery repeats a recent event, as a provider's retry would.
      if (!unique && sent % 10 === 0 && recent.length) return { ...req, body: delivery(recent[sent % recent.length], `inv-${sent}`) };
      const eventId = `evt-${sent}-${crypto.randomBytes(4).toString('hex')}`;
      recent.push(eventId);
      if (recent.length > 100) recent.shift();
      const invoice = `inv-${sent}`;
      fake.setInvoice(invoice, { state: 'settled', amount: 9900 });
      return { ...req, body: delivery(eventId, invoice) };
    },
  }];

  /** `duration` seconds of signed deliveries through the API (no worker running). */
  const intake = () => autocannon({ url: `http://127.0.0.1:${port}`, connections: 10, duration, requests: deliveryRequest(false) });
  /** Exactly `events` new deliveries through the API, each stored and queued once. */
  const backlog = (events: number) => autocannon({ url: `http://127.0.0.1:${port}`, connections: 10, amount: events, requests: deliveryRequest(true) });

  /**
   * Starts `workers` worker processes together and times them until no webhook is PENDING; `fromId`: the
   * first webhook of this backlog.
   */
  const runWorkers = async (workers: number, latencyMs: number, fromId: number): Promise<WorkerRun> => {
    fake.latencyMs = latencyMs;
    fake.requests.length = 0;
    const turnedAwayBefore = fake.rateLimited;
    fake.maxInFlight = 0;
    const events = await pendingCount();
    const statusBefore = await serverStatus(db);
    const redisBefore = await redisCommandStats();
    const probes: ProbeSample[][] = Array.from({ length: workers }, () => []);
    const children: ChildProcess[] = [];
    const benchCpu = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1e6; };
    const poll = (done: number): Poll => ({
      at: Date.now(),
      done,
      cpu: {
        workers: children.reduce((total, child) => total + (cpuSeconds(child.pid) ?? 0), 0),
        database: cpuSeconds(servers.database) ?? NaN,
        redis: cpuSeconds(servers.redis) ?? NaN,
        bench: benchCpu(),
        machine: machineBusySeconds() ?? NaN,
      },
      providerInFlight,
      served: { ...providerServed },
    });
    const started = Date.now();
    const polls: Poll[] = [{ ...poll(0), at: started }];
    benchLoop.reset();
    const benchLoopP99: number[] = [];
    let lockWaitsSeen = 0;
    let died: string | undefined;
    const connectionCpu = new Map<number, { first: number; last: number }>();
    const threadStates = new Map<string, number>();
    let threadSamples = 0;
    try {
      await Promise.all(Array.from({ length: workers }, async (_, index) => {
        const child = await startProcess(WORKER, serviceEnv, process.env.BENCH_WORKER_LOG === '1' ? 'inherit' : 'ignore', probeWorkers ? ['--require', PROBE] : []);
        children.push(child);
        child.once('exit', (code) => { died ??= `a worker exited with ${code} before the backlog was done`; });
        child.on('message', (message: { probe?: ProbeSample }) => { if (message?.probe) probes[index].push(message.probe); });
      }));
      let pending = events;
      let tick = 0;
      while (pending > 0 && Date.now() - started < 300_000) {
        if (died) throw new Error(died);
        await new Promise((resolve) => setTimeout(resolve, 100));
        pending = await pendingCount();
        polls.push(poll(events - pending));
        tick += 1;
        if (diagnose && tick % 3 === 0) {
          // What the database's threads are doing: state and the statement's first words.
          const [threads] = await db.query<mysql.RowDataPacket[]>(
            `SELECT state, LEFT(REGEXP_REPLACE(info, '\\s+', ' '), 60) AS statement FROM information_schema.processlist WHERE command <> 'Sleep' AND id <> CONNECTION_ID() AND db = ?`, [dbName]);
          for (const thread of threads) {
            const key = `${thread.state || '-'} | ${thread.statement ?? ''}`;
            threadStates.set(key, (threadStates.get(key) ?? 0) + 1);
          }
          threadSamples += 1;
        }
        if (tick % 5 === 0) {
          // The database's CPU spent on this bench's connections alone (other programs may use the same server):
          // one thread per connection, named by the process list's TID.
          const [ours] = await db.query<mysql.RowDataPacket[]>(`SELECT tid FROM information_schema.processlist WHERE db = ? AND tid IS NOT NULL`, [dbName]);
          for (const { tid } of ours) {
            const used = cpuSeconds(servers.database === undefined ? undefined : Number(tid), servers.database);
            if (used === null) continue;
            const seen = connectionCpu.get(Number(tid));
            connectionCpu.set(Number(tid), { first: seen?.first ?? used, last: used });
          }
          const [[waits]] = await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'`);
          lockWaitsSeen = Math.max(lockWaitsSeen, Number(waits.n));
          benchLoopP99.push(benchLoop.percentile(99) / 1e6);
          benchLoop.reset();
        }
      }
      // The workers' CPU before they stop (stopping costs some too).
      polls[polls.length - 1] = poll(events - pending);
      if (pending > 0) throw new Error(`${pending} webhooks still PENDING after 300 s`);
    } finally {
      died = 'stopped';
      await Promise.all(children.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }))));
    }
    if (diagnose && threadSamples) {
      process.stdout.write(`bench: ${workers} worker(s): database threads busy on average, by state and statement (${threadSamples} samples):\n`);
      for (const [key, count] of [...threadStates].sort((a, b) => b[1] - a[1]).slice(0, 12)) process.stdout.write(`bench:   ${(count / threadSamples).toFixed(2)}  ${key}\n`);
    }
    const last = polls[polls.length - 1];
    const seconds = (last.at - started) / 1000;
    // The moment a share of the events was done, between the polls around it.
    const when = (share: number) => {
      const target = share * events;
      const after = polls.findIndex((p) => p.done >= target);
      if (after <= 0) return { at: polls[Math.max(after, 0)].at, index: Math.max(after, 0) };
      const before = polls[after - 1];
      const fraction = (target - before.done) / Math.max(1, polls[after].done - before.done);
      return { at: before.at + fraction * (polls[after].at - before.at), index: after };
    };
    const from = when(0.1);
    const to = when(0.9);
    const steady = polls.slice(from.index, to.index + 1);
    const [first, end] = [steady[0], steady[steady.length - 1]];
    const doneInWindow = Math.max(1, end.done - first.done);
    const cpuPerEvent = (key: keyof Poll['cpu']) => ((end.cpu[key] - first.cpu[key]) * 1000) / doneInWindow;
    const inWindow = (samples: ProbeSample[]) => samples.filter((s) => s.at >= from.at && s.at <= to.at);
    const perWorker = probes.map((samples) => {
      const window = inWindow(samples);
      /** How much a running total of the probe grew over the window. */
      const growth = (total: (sample: ProbeSample) => number) => (window.length > 1 ? total(window[window.length - 1]) - total(window[0]) : 0);
      const acquisitions = growth((s) => s.pool.acquisitions);
      const acquireMs = growth((s) => s.pool.acquireMs);
      const holds = growth((s) => s.pool.holds);
      const holdMs = growth((s) => s.pool.holdMs);
      // Connection-time held over connection-time open: near 1, every connection is always taken.
      const openMs = growth((s) => s.at) * mean(window.map((s) => s.pool.open));
      return {
        provider: mean(window.map((s) => s.provider.inFlight)),
        waitingForSocket: mean(window.map((s) => s.provider.waitingForSocket)),
        loopDelayP99Ms: mean(window.map((s) => s.loopDelay.p99Ms)),
        poolWaiting: mean(window.map((s) => s.pool.waiting)),
        acquireMs: acquisitions ? acquireMs / acquisitions : NaN,
        holdMs: holds ? holdMs / holds : NaN,
        poolHeldShare: openMs ? holdMs / openMs : NaN,
        running: mean(window.map((s) => s.queue.running)),
        fetching: mean(window.map((s) => s.queue.fetching)),
      };
    });
    // Each worker's claim tokens start with its own random prefix (the last 6 characters count claims).
    const [holders] = await db.query<mysql.RowDataPacket[]>(
      `SELECT LEFT(claim_token, CHAR_LENGTH(claim_token) - 6) AS holder, COUNT(*) AS n, COUNT(DISTINCT claim_token) AS claims
       FROM ${table} WHERE id >= ? AND claim_token IS NOT NULL GROUP BY holder`, [fromId]);
    const claimed = holders.reduce((total, row) => total + Number(row.n), 0);
    const claims = holders.reduce((total, row) => total + Number(row.claims), 0);
    const [byStatus] = await db.query<mysql.RowDataPacket[]>(`SELECT status, COUNT(*) AS n FROM ${table} WHERE id >= ? GROUP BY status`, [fromId]);
    const statusAfter = await serverStatus(db);
    const redisAfter = await redisCommandStats();
    const delta = (name: string) => ((statusAfter[name] ?? NaN) - (statusBefore[name] ?? NaN)) / events;
    const redisDelta = [...redisAfter].map(([name, after]) => ({ name, calls: after.calls - (redisBefore.get(name)?.calls ?? 0), usec: after.usec - (redisBefore.get(name)?.usec ?? 0) }))
      .filter((command) => command.calls > 0 && command.name !== 'info').sort((a, b) => b.calls - a.calls);
    return {
      workers, latencyMs, events, seconds,
      rate: events / seconds,
      steadyRate: (0.8 * events) / ((to.at - from.at) / 1000),
      startupSeconds: (from.at - started) / 1000,
      cpuPerEventMs: { workers: cpuPerEvent('workers'), database: cpuPerEvent('database'), redis: cpuPerEvent('redis'), bench: cpuPerEvent('bench') },
      databaseOwnMs: connectionCpu.size ? ([...connectionCpu.values()].reduce((total, used) => total + used.last - used.first, 0) * 1000) / events : NaN,
      machineCores: (() => {
        const seconds = Math.max(0.001, (end.at - first.at) / 1000);
        const used = (key: keyof Poll['cpu']) => end.cpu[key] - first.cpu[key];
        const busy = used('machine') / seconds;
        return { busy, others: busy - (used('workers') + used('database') + used('redis') + used('bench')) / seconds };
      })(),
      providerInFlight: mean(steady.map((p) => p.providerInFlight)),
      providerAnswerMs: (end.served.ms - first.served.ms) / Math.max(1, end.served.count - first.served.count),
      perWorker,
      shares: holders.map((row) => (100 * Number(row.n)) / Math.max(1, claimed)).sort((a, b) => a - b),
      claimsPerStatement: claimed / Math.max(1, claims),
      lockWaitsSeen,
      perEvent: {
        rowLockWaits: delta('Innodb_row_lock_waits'), rowLockMs: delta('Innodb_row_lock_time'), deadlocks: delta('Innodb_deadlocks'),
        logFsyncs: delta('Innodb_data_fsyncs'), commits: delta('Com_commit'), statements: delta('Questions'),
        redisCalls: redisDelta.reduce((total, command) => total + command.calls, 0) / events,
        redisUsec: redisDelta.reduce((total, command) => total + command.usec, 0) / events,
      },
      redisTop: redisDelta.slice(0, 6).map((command) => `${command.name} ${(command.calls / events).toFixed(2)}`).join(', '),
      outcomes: byStatus.map((row) => `${row.status} ${row.n}`).join(', '),
      benchLoopDelayP99Ms: benchLoopP99.length ? Math.max(...benchLoopP99) : NaN,
      provider: { turnedAway: fake.rateLimited - turnedAwayBefore, mostInFlight: fake.maxInFlight },
    };
  };

  const cpuText = (run: WorkerRun) => {
    const c = run.cpuPerEventMs;
    return `${fixed(c.workers, 2)} / ${fixed(c.database, 2)} / ${fixed(c.redis, 2)} / ${fixed(c.bench, 2)}`;
  };

  try {
    const accepted = await intake();
    const [[stored]] = await db.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table}`);
    rows.push({
      measure: 'signed deliveries accepted / s (API, 10 connections)',
      value: Math.round(accepted.requests.average).toLocaleString('en'),
      detail: `p50 ${accepted.latency.p50} ms, p99 ${accepted.latency.p99} ms; ${accepted.requests.total} deliveries, ${stored.n} stored, ${accepted['2xx']} answered 200, ${accepted.non2xx} other, ${accepted.errors} errors`,
    });
    const atOnce = await runWorkers(1, 0, 0);
    process.stdout.write(`bench: one worker, provider at once: ${Math.round(atOnce.rate)} events/s (${Math.round(atOnce.steadyRate)} in the steady part)\n`);
    rows.push({
      measure: 'events processed / s (one worker, loopback provider answering at once)',
      value: Math.round(atOnce.rate).toLocaleString('en'),
      detail: `${atOnce.events} events in ${atOnce.seconds.toFixed(1)} s (from worker start; ${Math.round(atOnce.steadyRate)}/s from 10% to 90% done); target >= 1,000/s: ${atOnce.rate >= 1000 ? 'met' : 'not met'}; `
        + `CPU per event (10–90%): worker ${fixed(atOnce.cpuPerEventMs.workers, 2)} ms, database ${fixed(atOnce.cpuPerEventMs.database, 2)} ms, Redis ${fixed(atOnce.cpuPerEventMs.redis, 2)} ms, provider and bench ${fixed(atOnce.cpuPerEventMs.bench, 2)} ms; ${atOnce.outcomes}`,
    });

    // The worker curve: counts taking turns, round after round, each from a fresh backlog of the same size.
    const runs: WorkerRun[] = [];
    for (let round = 1; round <= curveRounds; round += 1) {
      for (const workers of curveWorkers) {
        const fromId = (await maxId()) + 1;
        const made = await backlog(curveEvents);
        if (made.non2xx || made.errors) process.stdout.write(`bench: backlog: ${made.non2xx} deliveries refused, ${made.errors} errors\n`);
        const run = await runWorkers(workers, curveLatencyMs, fromId);
        runs.push(run);
        process.stdout.write(`bench: round ${round}, ${workers} worker(s) at ${curveLatencyMs} ms: ${Math.round(run.rate)} events/s from start, ${Math.round(run.steadyRate)}/s from 10% to 90% `
          + `(${run.events} events in ${run.seconds.toFixed(1)} s; CPU ms/event worker/db/redis/bench ${cpuText(run)}, db on our connections ${fixed(run.databaseOwnMs, 2)}; machine cores busy ${fixed(run.machineCores.busy, 2)}, not ours ${fixed(run.machineCores.others, 2)}; provider in flight ${fixed(run.providerInFlight)})\n`);
      }
    }

    const byCount = curveWorkers.map((workers) => ({ workers, runs: runs.filter((run) => run.workers === workers) }));
    const one = byCount.find((entry) => entry.workers === 1);
    const oneRate = one ? median(one.runs.map((run) => run.rate)) : NaN;
    const oneSteady = one ? median(one.runs.map((run) => run.steadyRate)) : NaN;
    const spread = (values: number[]) => `${fixed(median(values))} (${fixed(Math.min(...values))}–${fixed(Math.max(...values))})`;
    const curve = [
      `### Worker curve: ${curveEvents.toLocaleString('en')} PENDING events, provider answering in ${curveLatencyMs} ms, ${curveRounds} run(s) per count, counts taking turns`,
      '',
      'Rates are medians (lowest–highest) of the runs. "From start": from the first worker\'s start to none PENDING; "10–90%": while the',
      'tenth to the ninetieth percent were done, which leaves start-up out. CPU per event is in the 10–90% part: all workers together /',
      'MariaDB / Redis / this process (the loopback provider and the bench); "db on our connections": MariaDB\'s CPU on this bench\'s own',
      'connections only (the server may serve other programs too). Machine cores busy: all of the machine; "not ours": what processes other than',
      'the workers, MariaDB, Redis and this process used. Provider in flight: calls the provider held, all workers together. "s to 10% done" shows start-up.',
      '',
      '| workers | events/s from start | × one | events/s 10–90% | × one | CPU ms/event worker / db / redis / provider | db on our connections ms/event | machine cores busy (not ours) | provider calls in flight | s to 10% done |',
      '|---:|---:|---:|---:|---:|---|---:|---|---:|---:|',
      ...byCount.filter((entry) => entry.runs.length).map(({ workers, runs: list }) => {
        const rate = median(list.map((run) => run.rate));
        const steady = median(list.map((run) => run.steadyRate));
        const cpu = (key: keyof WorkerRun['cpuPerEventMs']) => fixed(median(list.map((run) => run.cpuPerEventMs[key])), 2);
        return `| ${workers} | ${spread(list.map((run) => run.rate))} | ${fixed(rate / oneRate, 2)} | ${spread(list.map((run) => run.steadyRate))} | ${fixed(steady / oneSteady, 2)} `
          + `| ${cpu('workers')} / ${cpu('database')} / ${cpu('redis')} / ${cpu('bench')} | ${fixed(median(list.map((run) => run.databaseOwnMs)), 2)} `
          + `| ${fixed(median(list.map((run) => run.machineCores.busy)), 2)} (${fixed(median(list.map((run) => run.machineCores.others)), 2)}) | ${fixed(median(list.map((run) => run.providerInFlight)))} | ${fixed(median(list.map((run) => run.startupSeconds)), 1)} |`;
      }),
      '',
      '#### Each run',
      '',
      'Per worker (means over the 10–90% part, from a probe loaded into each worker): provider calls in flight / waiting for a socket,',
      'jobs running / job fetches outstanding (bee-queue), the 99th percentile of the event loop\'s delay, callers waiting for a pooled connection, the mean wait for one, how long one was held',
      'from taking to giving back (a transaction: all its round trips, and the waits of the event loop between them), and the share of the open connections\' time they were held.',
      'Shares: the events each worker claimed, in percent. Per event: InnoDB row-lock waits, InnoDB fsyncs, statements (Questions), Redis commands (all clients of the server).',
      'Provider: calls it turned away with 429 (it enforces the documented limits only under BENCH_DOCUMENTED_LIMITS=1) and the most it held at once, all workers together.',
      '',
      '| workers | events/s start / 10–90% | machine cores busy (not ours) | provider answer ms (bench loop p99 ms) | per worker: provider / socket wait / jobs / fetches / loop p99 ms / pool waiting / acquire ms / hold ms / pool held % | shares % | claims per statement | lock waits (max seen; per event; ms per event) | per event: fsyncs / statements / Redis calls | provider: 429s / most in flight | outcomes |',
      '|---:|---|---|---|---|---|---:|---|---|---:|---|',
      ...runs.map((run) => `| ${run.workers} | ${fixed(run.rate)} / ${fixed(run.steadyRate)} | ${fixed(run.machineCores.busy, 2)} (${fixed(run.machineCores.others, 2)}) | ${fixed(run.providerAnswerMs, 1)} (${fixed(run.benchLoopDelayP99Ms, 1)}) | ${run.perWorker.map((w) => `${fixed(w.provider)} / ${fixed(w.waitingForSocket)} / ${fixed(w.running)} / ${fixed(w.fetching)} / ${fixed(w.loopDelayP99Ms, 1)} / ${fixed(w.poolWaiting, 1)} / ${fixed(w.acquireMs, 2)} / ${fixed(w.holdMs, 2)} / ${fixed(w.poolHeldShare * 100)}`).join('; ')} `
        + `| ${run.shares.map((share) => fixed(share)).join(', ')} | ${fixed(run.claimsPerStatement, 1)} | ${run.lockWaitsSeen}; ${fixed(run.perEvent.rowLockWaits, 3)}; ${fixed(run.perEvent.rowLockMs, 2)} `
        + `| ${fixed(run.perEvent.logFsyncs, 2)} / ${fixed(run.perEvent.statements, 1)} / ${fixed(run.perEvent.redisCalls, 1)} (${run.redisTop}) | ${run.provider.turnedAway} / ${run.provider.mostInFlight} | ${run.outcomes} |`),
      '',
    ];
    sections.push(...curve);
    if (one) {
      rows.push({
        measure: `events processed / s (one worker, loopback provider answering in ${curveLatencyMs} ms)`,
        value: fixed(oneRate),
        detail: `median of ${one.runs.length} run(s) of ${curveEvents} events (from worker start); ${fixed(oneSteady)}/s from 10% to 90% done; target >= 500/s: ${oneRate >= 500 ? 'met' : 'not met'}`,
      });
    }
    for (const entry of byCount) {
      if (entry.workers === 1 || !entry.runs.length) continue;
      const rate = median(entry.runs.map((run) => run.rate));
      const steady = median(entry.runs.map((run) => run.steadyRate));
      rows.push({
        measure: `events processed / s (${entry.workers} workers, one database and Redis, provider answering in ${curveLatencyMs} ms)`,
        value: fixed(rate),
        detail: `${fixed(rate / oneRate, 2)} × one worker from start, ${fixed(steady / oneSteady, 2)} × from 10% to 90% done (${fixed(steady)}/s)`
          + (entry.workers === 2 ? `; target >= 1.6 × one: ${rate / oneRate >= 1.6 ? 'met' : 'not met'} from start, ${steady / oneSteady >= 1.6 ? 'met' : 'not met'} from 10% to 90%` : ''),
      });
    }
  } finally {
    api.kill('SIGTERM');
    await fake.stop();
    await db.end();
  }
  return { rows, sections };
}
