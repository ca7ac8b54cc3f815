import fs from 'node:fs';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { configureShop, createDatabase, createWooCommerceTables, dropDatabase } from '../src/demo/woocommerce-schema';
import { generateBulkOrders } from '../src/demo/bulk-orders';

/** One measured value with what it rests on: a line of the webhook and hardening tables. */
export interface MeasureRow {
  measure: string;
  value: string;
  detail: string;
}

/** One measured scenario: a line of the printed tables. */
export interface Row {
  orders: number; target: string; scenario: string; node?: string; connections?: number; round?: number; rps: number; p50: number; p99: number; mean?: number;
  rssMiB?: number; cpuUsPerRequest?: number;
  /** The program's event loop delay over the measured run, ms (bench/loop-delay-probe.ts): p99 and the worst. */
  loopDelayP99?: number; loopDelayMax?: number;
  /** Answers per young-generation collection (scavenge) over the measured run, and a scavenge's median pause in ms. */
  answersPerScavenge?: number; scavengeMs?: number;
  non2xxOrErrors: string;
}

const root = path.resolve(__dirname, '../..');

/**
 * Starts a built program (it says 'ready' over IPC when it listens), on `node` (this process's Node
 * unless given another's executable); `execArgv` adds Node options (a
 * `--require` of a bench probe). `stderr` shows the program's log lines,
 * except the API's one line per request (it is written, as in production, and dropped here);
 * BENCH_PROFILE=<dir> writes a CPU profile of it there.
 */
export function startProcess(script: string, env: NodeJS.ProcessEnv, stderr: 'inherit' | 'ignore' = 'inherit', execArgv: string[] = [], node = process.execPath): Promise<ChildProcess> {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  return new Promise((resolve, reject) => {
    const child = fork(path.resolve(root, script), [], { execPath: node, env: { ...process.env, ...env }, execArgv: [...profile, ...execArgv], stdio: ['ignore', 'ignore', stderr === 'inherit' ? 'pipe' : 'ignore', 'ipc'] });
    if (child.stderr) {
      readline.createInterface({ input: child.stderr }).on('line', (line) => {
        if (!line.includes('"event":"http_request"')) process.stderr.write(`${line}\n`);
      });
    }
    // Other messages (a probe's reports) may follow 'ready'; only 'ready' starts the caller.
    const ready = (message: unknown) => {
      if (message !== 'ready') return;
      child.off('message', ready);
      resolve(child);
    };
    child.on('message', ready);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * Seconds of load before each measured run (BENCH_WARMUP, 3 unless set). Each program starts fresh in every round, and
 * V8 is still compiling a program's code for several seconds after its first requests.
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);

/**
 * Seconds of load a freshly started program gets before its first measured run (BENCH_START_WARMUP, 30 unless set;
 * never less than WARMUP_SECONDS). Under one connection's load on two vCPUs, the API answered at its steady pace only
 * after 10 to 30 s, while V8 optimised its code (and re-optimised what a rare path deoptimised); the bare programs,
 * with far less code, after about 5 s. Measured after 3 s, the API's figures were its compiler's warm-up more than
 * its route (bench/results/order-status-warm-up-2026-11-30.md).
 */
export const START_WARMUP_SECONDS = Math.max(Number(process.env.BENCH_START_WARMUP ?? 30), WARMUP_SECONDS);

/**
 * autocannon with `connections` connections (10 unless said): a warm-up (`warmupSeconds`, WARMUP_SECONDS unless said), then
 * `duration` seconds measured. `child`, when the program was started with bench/loop-delay-probe.js, also gives its event
 * loop delay over the measured run.
 */
export async function measure(
  url: string, duration: number, requests: autocannon.RequestSpec[], connections = 10, pid?: number, child?: ChildProcess, warmupSeconds = WARMUP_SECONDS,
): Promise<autocannon.Result & { cpuUsPerRequest?: number; loopDelay?: LoopDelay }> {
  await autocannon({ url, connections, duration: warmupSeconds, requests });
  child?.send('loop-delay:reset');
  const before = cpuSeconds(pid);
  const result = await autocannon({ url, connections, duration, requests });
  const after = cpuSeconds(pid);
  const loopDelay = child ? await readLoopDelay(child) : undefined;
  // The program's own CPU time per answered request: on a shared machine it varies far less than requests per second do.
  const cpuUsPerRequest = before === null || after === null || !result.requests.total ? undefined : Math.round(((after - before) * 1e6) / result.requests.total);
  return { ...result, cpuUsPerRequest, loopDelay };
}

/** The event loop's delay over a measured run, in ms, and the young generation's collections in it with their median pause (bench/loop-delay-probe.ts). */
export interface LoopDelay { samples: number; p50: number; p99: number; max: number; scavenges: number; scavengeP50: number }

/** Where the order status bench's programs load the event loop probe from. */
export const LOOP_DELAY_PROBE = path.resolve(root, 'dist/bench/loop-delay-probe.js');

/** Asks a program started with the loop delay probe for its histogram; undefined when it does not answer within 2 s. */
function readLoopDelay(child: ChildProcess): Promise<LoopDelay | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { child.off('message', answer); resolve(undefined); }, 2000);
    const answer = (message: unknown) => {
      const delay = (message as { loopDelay?: LoopDelay } | null)?.loopDelay;
      if (!delay) return;
      clearTimeout(timer);
      child.off('message', answer);
      resolve(delay);
    };
    child.on('message', answer);
    child.send('loop-delay:read');
  });
}

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds a process (or one of its threads) has used so far (user and system), from /proc; null where unreadable. */
export function cpuSeconds(pid: number | undefined, ofProcess?: number): number | null {
  if (!pid) return null;
  try {
    const stat = fs.readFileSync(ofProcess === undefined ? `/proc/${pid}/stat` : `/proc/${ofProcess}/task/${pid}/stat`, 'utf8');
    // utime and stime are fields 14 and 15, counted after the command name (which may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** CPU seconds the whole machine has been busy so far (every core, every process: /proc/stat); null where unreadable. */
export function machineBusySeconds(): number | null {
  try {
    const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: all but idle and iowait are work.
    return ticks.slice(0, 8).reduce((total, value, index) => (index === 3 || index === 4 ? total : total + value), 0) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** The table row of a run, printed as it completes; `expected` is how many answers had the expected status. */
export function resultRow(orders: number, target: string, scenario: string, result: autocannon.Result, expected: number): Row {
  process.stdout.write(`bench: ${orders} ${target} ${scenario}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms\n`);
  return {
    orders, target, scenario, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99,
    mean: result.latency.mean, non2xxOrErrors: `${result.requests.total - expected} unexpected, ${result.errors} errors`,
  };
}

/**
 * The bench's generated shop of `size` orders in its own database, made once and reused by later runs
 * (BENCH_REGENERATE=1 makes it again): `shop_sidecar_bench_<size>` in posts storage, `shop_sidecar_bench_hpos_<size>`
 * in HPOS storage (without compatibility sync), tables prefixed `wp_`. A marker option says it is complete, so a
 * generation cut short is made again. The service's own tables are not made here (`npm run migrate` does that).
 */
export async function benchShop(size: number, storage: 'posts' | 'hpos' = 'posts'): Promise<string> {
  const prefix = 'wp_';
  const admin = { host: '127.0.0.1', user: 'root' };
  const dbName = storage === 'hpos' ? `shop_sidecar_bench_hpos_${size}` : `shop_sidecar_bench_${size}`;
  const conn = await mysql.createConnection(admin);
  try {
    const [existing] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ? AND table_name = ?', [dbName, `${prefix}options`]);
    if (existing[0].n > 0 && process.env.BENCH_REGENERATE !== '1') {
      const [marker] = await conn.query<mysql.RowDataPacket[]>(`SELECT option_value FROM \`${dbName}\`.${prefix}options WHERE option_name = 'shop_sidecar_bench_orders'`);
      if (marker.length > 0 && Number(marker[0].option_value) === size) return dbName;
    }
    process.stdout.write(`bench: generating ${size.toLocaleString('en')} orders (${storage} storage) in ${dbName}...\n`);
    await dropDatabase(conn, dbName);
    await createDatabase(conn, dbName);
  } finally {
    await conn.end();
  }
  const shop = mysql.createPool({ ...admin, database: dbName, connectionLimit: 2 });
  try {
    const hpos = storage === 'hpos';
    await createWooCommerceTables(shop, prefix);
    await configureShop(shop, prefix, { hpos, sync: false, defaultCountry: 'DK', timezone: 'Europe/Copenhagen', sequentialPlugin: 'none' });
    const started = Date.now();
    let last = 0;
    await generateBulkOrders(shop, prefix, size, {
      hpos,
      onProgress: (done) => {
        if (done - last >= size / 10) { last = done; process.stdout.write(`bench:   ${done.toLocaleString('en')} orders\n`); }
      },
    });
    const tables = hpos
      ? ['posts', 'postmeta', 'wc_orders', 'wc_order_addresses', 'wc_order_operational_data', 'wc_orders_meta', 'woocommerce_order_items', 'woocommerce_order_itemmeta']
      : ['posts', 'postmeta', 'woocommerce_order_items', 'woocommerce_order_itemmeta'];
    await shop.query(`ANALYZE TABLE ${tables.map((table) => `${prefix}${table}`).join(', ')}`);
    await shop.query(`INSERT INTO ${prefix}options (option_name, option_value, autoload) VALUES ('shop_sidecar_bench_orders', ?, 'no')`, [String(size)]);
    process.stdout.write(`bench: generated in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  } finally {
    await shop.end();
  }
  return dbName;
}
