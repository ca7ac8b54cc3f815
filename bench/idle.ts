import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { FakeCardGateway } from '../test/support/fake-card-gateway';
import { benchShop, cpuSeconds, machineBusySeconds, startProcess, type MeasureRow } from './common';

/**
 * What the service costs the shop's database when nothing happens, and how that grows with the shop: for each
 * shop size (BENCH_SIZES) and storage (BENCH_IDLE_STORAGES, default `posts,hpos`), `npm run migrate` (the real
 * command), then the built API and worker as `npm run api` and `npm run worker` start them (the card gateway
 * configured against a loopback fake), and no traffic at all: after BENCH_IDLE_WARMUP seconds (120), a window of
 * BENCH_IDLE_WINDOW seconds (600) in which are measured, per minute:
 *
 * - MariaDB's CPU, from /proc/<mariadbd>/stat (the server's own counters have no CPU): the whole server, and the
 *   threads of the service's own connections alone (MariaDB runs a thread per connection; the process list names
 *   it), which other work on the same server does not disturb;
 * - the server's counters (SHOW GLOBAL STATUS): rows read by index and by scan, sorted rows, temporary tables on
 *   disk, statements; the bench's own statements (read back from its session's counters) taken out;
 * - rows read and changed per table of this shop (MariaDB's user statistics, INFORMATION_SCHEMA.TABLE_STATISTICS;
 *   `userstat` is switched on for the run when it is off, and back off after; BENCH_IDLE_USERSTAT=0 leaves it);
 * - the API's and the worker's own CPU (/proc), Redis's, and how busy the machine was with other work.
 *
 * The global counters and the whole server's CPU count everything on the server: on a machine where other
 * programs use the same MariaDB, read the per-connection CPU and the per-table rows.
 */

const prefix = 'wp_';
const WEBHOOK_SECRET = 'bench-idle-webhook-secret';
const HELPDESK_KEY = 'bench';
const HELPDESK_SECRET = 'bench-secret';
const root = path.resolve(__dirname, '../..');

export type Storage = 'posts' | 'hpos';

export interface IdleOptions {
  sizes: number[];
  storages: Storage[];
  warmupSeconds: number;
  windowSeconds: number;
}

/** The counters read from SHOW GLOBAL STATUS, in the table's order. */
const COUNTERS = [
  'Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_first', 'Handler_read_last', 'Handler_read_rnd', 'Handler_read_rnd_next',
  'Sort_rows', 'Created_tmp_tables', 'Created_tmp_disk_tables',
  'Com_select', 'Com_insert', 'Com_update', 'Com_delete', 'Com_commit', 'Questions', 'Innodb_data_fsyncs',
] as const;
type Counter = typeof COUNTERS[number];
type Counters = Record<Counter, number>;

interface TableCounts { rowsRead: number; rowsChanged: number }

/** One shop's idle window. */
export interface IdleRun {
  orders: number;
  storage: Storage;
  dbName: string;
  migrateSeconds: number;
  minutes: number;
  /** CPU milliseconds per minute. */
  cpu: { database: number; databaseOwn: number; api: number; worker: number; redis: number; otherCores: number };
  /** Per minute, the bench's own statements taken out. */
  counters: Counters;
  /** Per minute, per table of this shop; null without user statistics. */
  tables: Map<string, TableCounts> | null;
  /** The service's connections seen in the window. */
  connections: number;
}

async function serverPid(db: mysql.Connection): Promise<number | undefined> {
  try {
    const [[row]] = await db.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS file');
    return Number(readFileSync(String(row.file), 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

function redisPid(): number | undefined {
  try {
    return Number(/^process_id:(\d+)/m.exec(execFileSync('redis-cli', ['info', 'server'], { encoding: 'utf8' }))?.[1]) || undefined;
  } catch {
    return undefined;
  }
}

async function status(db: mysql.Connection, scope: 'GLOBAL' | 'SESSION'): Promise<Counters> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(`SHOW ${scope} STATUS WHERE Variable_name IN (?)`, [COUNTERS]);
  const values = Object.fromEntries(rows.map((row) => [String(row.Variable_name), Number(row.Value)]));
  return Object.fromEntries(COUNTERS.map((name) => [name, values[name] ?? 0])) as Counters;
}

async function tableStatistics(db: mysql.Connection, dbName: string): Promise<Map<string, TableCounts>> {
  const [rows] = await db.query<mysql.RowDataPacket[]>(
    'SELECT TABLE_NAME AS name, ROWS_READ AS rowsRead, ROWS_CHANGED AS rowsChanged FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = ?', [dbName]);
  return new Map(rows.map((row) => [String(row.name), { rowsRead: Number(row.rowsRead), rowsChanged: Number(row.rowsChanged) }]));
}

/** The threads serving this shop's connections (the service's; the bench's own connection names no database). */
async function serviceThreads(db: mysql.Connection, dbName: string): Promise<number[]> {
  const [rows] = await db.query<mysql.RowDataPacket[]>('SELECT TID AS tid FROM information_schema.PROCESSLIST WHERE DB = ? AND TID IS NOT NULL', [dbName]);
  return rows.map((row) => Number(row.tid));
}

/** `npm run migrate` for this shop, as the operator runs it; its output shown as it comes. Returns the seconds it took. */
function migrate(dbName: string): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'migrate'], {
      cwd: root, env: { ...process.env, DB_NAME: dbName, DB_TABLE_PREFIX: prefix }, stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve((Date.now() - started) / 1000) : reject(new Error(`npm run migrate exited with ${code}`))));
  });
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits `seconds`, saying every minute how much is left. */
async function wait(what: string, seconds: number, tick?: () => Promise<void>): Promise<void> {
  const end = Date.now() + seconds * 1000;
  let told = Date.now();
  while (Date.now() < end) {
    await sleep(Math.min(15_000, end - Date.now()));
    await tick?.();
    if (Date.now() - told >= 60_000 && Date.now() < end) {
      told = Date.now();
      process.stdout.write(`bench: idle: ${what}, ${Math.round((end - Date.now()) / 1000)} s left\n`);
    }
  }
}

async function measureShop(db: mysql.Connection, orders: number, storage: Storage, options: IdleOptions, pids: { database?: number; redis?: number }): Promise<IdleRun> {
  const dbName = await benchShop(orders, storage);
  process.stdout.write(`bench: idle: ${orders.toLocaleString('en')} orders, ${storage} storage: npm run migrate\n`);
  const migrateSeconds = await migrate(dbName);
  const gateway = new FakeCardGateway({ webhookSecret: WEBHOOK_SECRET });
  await gateway.start();
  const env = {
    NODE_ENV: 'production', DB_NAME: dbName, DB_TABLE_PREFIX: prefix, HOST: '127.0.0.1', PORT: String(20_000 + Math.floor(Math.random() * 1000)),
    HELPDESK_API_KEY: HELPDESK_KEY, HELPDESK_API_SECRET: HELPDESK_SECRET, TLS_CERT_FILE: '', TLS_KEY_FILE: '',
    CARD_GATEWAY_API_URL: gateway.url, CARD_GATEWAY_API_KEY: gateway.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: WEBHOOK_SECRET,
  };
  let api: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  try {
    api = await startProcess('dist/src/entry-points/http/main.js', env);
    worker = await startProcess('dist/src/entry-points/worker/main.js', env);
    process.stdout.write(`bench: idle: API and worker up, no traffic; warm-up ${options.warmupSeconds} s, then a ${options.windowSeconds} s window\n`);
    await wait('warm-up', options.warmupSeconds);

    const threadCpu = new Map<number, { first: number; last: number }>();
    const sampleThreads = async () => {
      for (const tid of await serviceThreads(db, dbName)) {
        const used = cpuSeconds(tid, pids.database);
        if (used === null) continue;
        threadCpu.set(tid, { first: threadCpu.get(tid)?.first ?? used, last: used });
      }
    };
    const cpuNow = () => ({
      database: cpuSeconds(pids.database) ?? NaN, api: cpuSeconds(api?.pid) ?? NaN, worker: cpuSeconds(worker?.pid) ?? NaN,
      redis: cpuSeconds(pids.redis) ?? NaN, bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6, machine: machineBusySeconds() ?? NaN,
    });
    const useTables = (await db.query<mysql.RowDataPacket[]>('SELECT @@userstat AS on_'))[0][0].on_ ? true : false;
    const started = Date.now();
    const globalBefore = await status(db, 'GLOBAL');
    const sessionBefore = await status(db, 'SESSION');
    const tablesBefore = useTables ? await tableStatistics(db, dbName) : null;
    await sampleThreads();
    const cpuBefore = cpuNow();
    await wait('window', options.windowSeconds, sampleThreads);
    await sampleThreads();
    const cpuAfter = cpuNow();
    const tablesAfter = useTables ? await tableStatistics(db, dbName) : null;
    const sessionAfter = await status(db, 'SESSION');
    const globalAfter = await status(db, 'GLOBAL');
    const minutes = (Date.now() - started) / 60_000;

    const perMinute = (value: number) => value / minutes;
    // InnoDB's counters are the server's alone (a session reads the global value): nothing of the bench's to take out.
    const bench = (name: Counter) => (name.startsWith('Innodb_') ? 0 : sessionAfter[name] - sessionBefore[name]);
    const counters = Object.fromEntries(COUNTERS.map((name) => [name,
      perMinute(Math.max(0, globalAfter[name] - globalBefore[name] - bench(name)))])) as Counters;
    const used = (key: keyof ReturnType<typeof cpuNow>) => cpuAfter[key] - cpuBefore[key];
    const ours = used('database') + used('api') + used('worker') + used('redis') + used('bench');
    const tables = tablesBefore && tablesAfter ? new Map([...tablesAfter].map(([name, after]) => {
      const before = tablesBefore.get(name) ?? { rowsRead: 0, rowsChanged: 0 };
      return [name, { rowsRead: perMinute(after.rowsRead - before.rowsRead), rowsChanged: perMinute(after.rowsChanged - before.rowsChanged) }];
    })) : null;
    const run: IdleRun = {
      orders, storage, dbName, migrateSeconds, minutes, counters, tables, connections: threadCpu.size,
      cpu: {
        database: perMinute(used('database') * 1000),
        databaseOwn: perMinute([...threadCpu.values()].reduce((total, t) => total + t.last - t.first, 0) * 1000),
        api: perMinute(used('api') * 1000),
        worker: perMinute(used('worker') * 1000),
        redis: perMinute(used('redis') * 1000),
        otherCores: Math.max(0, used('machine') - ours) / (minutes * 60),
      },
    };
    process.stdout.write(`bench: idle: ${orders.toLocaleString('en')} orders, ${storage}: MariaDB ${fmt(run.cpu.database)} ms CPU/min (service's connections ${fmt(run.cpu.databaseOwn)}), `
      + `rows read in the shop's tables ${tables ? fmt([...tables.values()].reduce((total, t) => total + t.rowsRead, 0)) : 'n/a'}/min (whole server ${fmt(rowsRead(run.counters))}/min), `
      + `API ${fmt(run.cpu.api)} ms/min, worker ${fmt(run.cpu.worker)} ms/min\n`);
    return run;
  } finally {
    await Promise.all([stop(api), stop(worker)]);
    await gateway.stop();
  }
}

/** Rows read through the handler interface: by key, along an index, and by scans. */
function rowsRead(c: Counters): number {
  return c.Handler_read_key + c.Handler_read_next + c.Handler_read_prev + c.Handler_read_first + c.Handler_read_last + c.Handler_read_rnd + c.Handler_read_rnd_next;
}

/** The commit the built code came from, and whether the checkout had changes besides it. */
function codeMeasured(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim();
    return changed ? `${commit} with uncommitted changes in the checkout` : commit;
  } catch {
    return 'not a git checkout';
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');

export async function benchIdle(options: IdleOptions): Promise<{ rows: MeasureRow[]; sections: string[]; runs: IdleRun[] }> {
  const db = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
  const runs: IdleRun[] = [];
  let userstatWas: number | undefined;
  try {
    const pids = { database: await serverPid(db), redis: redisPid() };
    if (process.env.BENCH_IDLE_USERSTAT !== '0') {
      userstatWas = Number((await db.query<mysql.RowDataPacket[]>('SELECT @@userstat AS v'))[0][0].v);
      if (!userstatWas) await db.query('SET GLOBAL userstat = 1');
    }
    for (const size of options.sizes) {
      for (const storage of options.storages) runs.push(await measureShop(db, size, storage, options, pids));
    }
  } finally {
    if (userstatWas === 0) await db.query('SET GLOBAL userstat = 0').catch(() => undefined);
    await db.end();
  }
  return { rows: summaryRows(runs), sections: sections(runs, options), runs };
}

function summaryRows(runs: IdleRun[]): MeasureRow[] {
  return runs.map((run) => ({
    measure: `idle, ${run.orders.toLocaleString('en')} orders, ${run.storage}`,
    value: `MariaDB ${fmt(run.cpu.database)} ms CPU/min`,
    detail: `service's connections ${fmt(run.cpu.databaseOwn)} ms/min; rows read in the shop's tables ${run.tables ? fmt([...run.tables.values()].reduce((total, t) => total + t.rowsRead, 0)) : 'n/a'}/min, by the whole server ${fmt(rowsRead(run.counters))}/min; API ${fmt(run.cpu.api)}, worker ${fmt(run.cpu.worker)} ms CPU/min`,
  }));
}

function sections(runs: IdleRun[], options: IdleOptions): string[] {
  if (!runs.length) return [];
  const head = (label: string) => `| ${label} | ${runs.map((run) => `${run.orders.toLocaleString('en')}, ${run.storage}`).join(' | ')} |`;
  const rule = `|---|${runs.map(() => '---:').join('|')}|`;
  const line = (label: string, value: (run: IdleRun) => string) => `| ${label} | ${runs.map(value).join(' | ')} |`;
  const lines = [
    `Code: ${codeMeasured()}.`,
    '',
    `\`npm run migrate\`, then the API (one process) and the worker with no traffic: ${options.warmupSeconds} s warm-up, then a `
      + `${options.windowSeconds} s window. Per minute of the window. CPU from /proc; counters from SHOW GLOBAL STATUS with the bench's `
      + 'own statements taken out; rows per table from MariaDB\'s user statistics. The whole server\'s CPU and its counters include any other '
      + 'work on the same MariaDB ("other work" shows how busy the machine was besides the service, the database, Redis and the bench).',
    '',
    head('orders, storage'),
    rule,
    line('`npm run migrate` (s)', (run) => fmt(run.migrateSeconds, 1)),
    line('window (min)', (run) => fmt(run.minutes, 1)),
    line('MariaDB CPU, whole server (ms/min)', (run) => fmt(run.cpu.database)),
    line('MariaDB CPU, the service\'s connections (ms/min)', (run) => fmt(run.cpu.databaseOwn)),
    line('API CPU (ms/min)', (run) => fmt(run.cpu.api)),
    line('worker CPU (ms/min)', (run) => fmt(run.cpu.worker)),
    line('Redis CPU (ms/min)', (run) => fmt(run.cpu.redis)),
    line('other work on the machine (cores)', (run) => fmt(run.cpu.otherCores, 2)),
    line('rows read, all Handler_read_* (/min)', (run) => fmt(rowsRead(run.counters))),
    ...COUNTERS.map((name) => line(`${name} (/min)`, (run) => fmt(run.counters[name], run.counters[name] < 10 ? 1 : 0))),
    line('service connections seen', (run) => String(run.connections)),
    '',
  ];
  const tableNames = [...new Set(runs.flatMap((run) => [...(run.tables?.keys() ?? [])]))];
  if (tableNames.length) {
    const total = (name: string) => runs.reduce((sum, run) => sum + (run.tables?.get(name)?.rowsRead ?? 0) + (run.tables?.get(name)?.rowsChanged ?? 0), 0);
    const shown = tableNames.filter((name) => total(name) > 0).sort((a, b) => total(b) - total(a));
    const sum = (run: IdleRun, field: keyof TableCounts) => [...(run.tables?.values() ?? [])].reduce((total, counts) => total + counts[field], 0);
    lines.push('Rows read / changed per minute, per table of the shop (INFORMATION_SCHEMA.TABLE_STATISTICS):', '', head('table'), rule,
      line('**all of the shop\'s tables**', (run) => (run.tables ? `${fmt(sum(run, 'rowsRead'))} / ${fmt(sum(run, 'rowsChanged'))}` : '')),
      ...shown.map((name) => line(`\`${name}\``, (run) => {
        const counts = run.tables?.get(name);
        return counts ? `${fmt(counts.rowsRead)} / ${fmt(counts.rowsChanged)}` : '';
      })), '');
  }
  return lines;
}
