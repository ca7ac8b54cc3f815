import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { benchPayments } from './payments';
import { benchHardening } from './hardening';
import { benchCustomerLookup, cardTargets } from './customer-lookup';
import { benchStaffLogins } from './staff-logins';
import { benchHandOver } from './handover';
import { benchIdle, type Storage } from './idle';
import { benchShop, LOOP_DELAY_PROBE, measure, resultRow, START_WARMUP_SECONDS, startProcess, WARMUP_SECONDS, type MeasureRow, type Row } from './common';
import { loadConfig } from '../src/config';
import { createShopDataSource } from '../src/data-access/data-source';
import { migrateShop } from '../src/entry-points/cli/migrate-shop';
import { silentLogger } from '../src/logger';

/**
 * `npm run bench`: the order status route of the built API at 20,000 and 1,000,000 orders, for a
 * match, a mismatch and a not-found among recent orders and a match among all orders, next to the
 * bare programs: restify + mysql2 (the floor issue 52's targets are measured against) and node:http + mysql2 (the
 * stack's ceiling). Shops are generated once
 * into their own databases and reused by later runs (BENCH_REGENERATE=1 to rebuild them).
 * BENCH_SIZES=20000 and BENCH_DURATION=10 shorten a run; BENCH_WARMUP sets the seconds of load before each measured run (3); BENCH_PARTS=order-status,customer-lookup,staff-logins,payments,handover,hardening,idle
 * picks parts (the customer lookup runs at the largest size only, the staff logins at the smallest);
 * BENCH_PARTS=payments runs the webhook part alone, with its worker curve (1, 2 and 4 workers at a provider
 * answering in 150 ms; see bench/payments.ts for BENCH_WORKERS, BENCH_CURVE_EVENTS and BENCH_CURVE_ROUNDS).
 * BENCH_PARTS=handover times the hand-over to a real WooCommerce (BENCH_HANDOVER_TRIALS, default 20; see bench/handover.ts).
 * BENCH_PARTS=idle measures what the service costs the database with no traffic, at each size in posts and HPOS storage
 * (BENCH_IDLE_STORAGES), after BENCH_IDLE_WARMUP seconds (120) over BENCH_IDLE_WINDOW seconds (600); see bench/idle.ts.
 */
const root = path.resolve(__dirname, '../..');
const sizes = (process.env.BENCH_SIZES ?? '20000,1000000').split(',').map(Number);
const duration = Number(process.env.BENCH_DURATION ?? 15);
const parts = new Set((process.env.BENCH_PARTS ?? 'order-status,customer-lookup,staff-logins,payments,handover,hardening,idle').split(','));
/** Connections of the order status runs; each program is measured at each. */
const connectionCounts = (process.env.BENCH_CONNECTIONS ?? '10,1').split(',').map(Number);
/** Rounds of the order status programs, interleaved (API, bare program, baseline; then bare, baseline, API...), so drift of the machine hits all alike. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const scenarioNames = process.env.BENCH_SCENARIOS?.split(',');
/** Another checkout of this project, built: its API runs in the same rounds, to compare a change with the code before it. */
const baseline = process.env.BENCH_BASELINE;
/**
 * Node executables to run the order status programs on, each in the same rounds (default: this one), so
 * one run compares the supported Node lines too; `npx -p node@24 which node` prints one.
 */
const nodes = process.env.BENCH_NODES?.split(',').filter(Boolean) ?? [process.execPath];
const prefix = 'wp_';
const KEY = 'bench';
const SECRET = 'bench-secret';
/** The helpdesk card's Bearer token (bench/customer-lookup.ts asks for the card beside the lookup). */
export const CARD_TOKEN = 'bench-helpdesk-card-token';
const admin = { host: '127.0.0.1', user: 'root' };

interface Sample { id: number; email: string }
/**
 * Which orders the helpdesk asks about. `recent`: the newest 20,000 orders, the same number at every shop
 * size (all of the 20,000-order shop, the last weeks of the 1,000,000-order one): customers ask where their
 * order is while it is on its way, so the comparison between sizes is one of table size, not of how many
 * orders are asked about. `any`: orders drawn from the whole history, the worst case for the database's cache.
 */
interface Samples { recent: Sample[]; any: Sample[] }
const RECENT_ORDERS = 20_000;

async function prepareShop(size: number): Promise<{ dbName: string; samples: Samples }> {
  const dbName = await benchShop(size);
  const db = mysql.createPool({ ...admin, database: undefined, connectionLimit: 2 });
  // The service's own tables, as `npm run migrate` makes them (the order status route reads the hand-over's), on a reused shop too.
  const dataSource = createShopDataSource(loadConfig({ DB_NAME: dbName, DB_TABLE_PREFIX: prefix }).db, 1);
  await dataSource.initialize();
  try {
    await migrateShop(dataSource, silentLogger, (line) => process.stdout.write(`bench: ${dbName}: ${line}\n`));
  } finally {
    await dataSource.destroy();
  }
  const sample = async (order: string, limit: number): Promise<Sample[]> => {
    const [rows] = await db.query<mysql.RowDataPacket[]>(
      `SELECT p.ID AS id, m.meta_value AS email FROM \`${dbName}\`.${prefix}posts p JOIN \`${dbName}\`.${prefix}postmeta m ON m.post_id = p.ID AND m.meta_key = '_billing_email'
       WHERE p.post_type = 'shop_order' ORDER BY ${order} LIMIT ${limit}`);
    return rows.map((row) => ({ id: Number(row.id), email: String(row.email) }));
  };
  const samples = { recent: await sample('p.ID DESC', RECENT_ORDERS), any: await sample('RAND()', 2000) };
  await db.end();
  return { dbName, samples };
}

/** The order status route with the bench's key, one body per request. */
function orderStatusRequests(bodies: () => string): autocannon.RequestSpec[] {
  return [{
    method: 'POST', path: '/helpdesk/v1/order-status',
    headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', authorization: `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}` },
    setupRequest: (req: autocannon.RequestSpec) => ({ ...req, body: bodies() }),
  }];
}

/** Peak resident memory of a process so far, in MiB (Linux). */
function peakRssMiB(pid: number | undefined): number | undefined {
  try {
    const kib = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Math.round(Number(kib) / 1024);
  } catch {
    return undefined;
  }
}

/** Starts one of the programs on a free port, runs `work` against it, stops it. */
async function withProgram(script: string, dbName: string, work: (url: string, pid: number | undefined, child: ChildProcess) => Promise<Row[]>, node = process.execPath, execArgv: string[] = []): Promise<Row[]> {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const child = await startProcess(script, {
    DB_NAME: dbName, DB_TABLE_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1',
    HELPDESK_API_KEY: KEY, HELPDESK_API_SECRET: SECRET, HELPDESK_THROTTLE_MAX_FAILURES: '1000000', TLS_CERT_FILE: '', TLS_KEY_FILE: '',
    HELPDESK_CARD_TOKEN: CARD_TOKEN,
  }, 'inherit', execArgv, node);
  try {
    return await work(`http://127.0.0.1:${port}`, child.pid, child);
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * A match, a mismatch and a not-found among recent orders, and a match among all orders; a random order
 * per request.
 */
function orderStatusScenarios(label: string, size: number, samples: Samples, round?: number) {
  return async (url: string, pid: number | undefined, child: ChildProcess): Promise<Row[]> => {
    const from = (list: Sample[]) => () => list[Math.floor(Math.random() * list.length)];
    const recent = from(samples.recent);
    const any = from(samples.any);
    const scenarios: [string, () => string][] = [
      ['match', () => { const s = recent(); return JSON.stringify({ order_number: String(s.id), email: s.email }); }],
      ['mismatch', () => JSON.stringify({ order_number: String(recent().id), email: 'someone.else@example.dk' })],
      ['not found', () => JSON.stringify({ order_number: String(5_000_000_000 + Math.floor(Math.random() * 1e6)), email: recent().email })],
      ['match, any order', () => { const s = any(); return JSON.stringify({ order_number: String(s.id), email: s.email }); }],
    ];
    const rows: Row[] = [];
    // The program was started for these runs: its first one waits until V8 has optimised its code (START_WARMUP_SECONDS).
    let warmupSeconds = START_WARMUP_SECONDS;
    for (const [scenario, bodies] of scenarios.filter(([name]) => !scenarioNames || scenarioNames.includes(name))) {
      for (const connections of connectionCounts) {
        const result = await measure(url, duration, orderStatusRequests(bodies), connections, pid, child, warmupSeconds);
        warmupSeconds = WARMUP_SECONDS;
        const row = resultRow(size, `${label}, ${connections} conn.`, scenario, result, scenario.startsWith('match') ? result['2xx'] : result['4xx']);
        const scavenges = result.loopDelay?.scavenges;
        const answersPerScavenge = scavenges ? Math.round(result.requests.total / scavenges) : undefined;
        process.stdout.write(`bench:   CPU ${result.cpuUsPerRequest ?? '?'} µs / answer, event loop delay p99 ${result.loopDelay?.p99 ?? '?'} ms (max ${result.loopDelay?.max ?? '?'} ms), a scavenge every ${answersPerScavenge ?? '?'} answers (${result.loopDelay?.scavengeP50 ?? '?'} ms)\n`);
        rows.push({
          ...row, target: label, connections, round, rssMiB: peakRssMiB(pid), cpuUsPerRequest: result.cpuUsPerRequest,
          loopDelayP99: result.loopDelay?.p99, loopDelayMax: result.loopDelay?.max, answersPerScavenge, scavengeMs: result.loopDelay?.scavengeP50,
        });
      }
    }
    return rows;
  };
}

function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};

/** A measure the probes may not have given (a program started without them). */
type OptionalMeasure = 'cpuUsPerRequest' | 'loopDelayP99' | 'answersPerScavenge' | 'scavengeMs';

/** The median of a measure over the rounds that have it; undefined when none has. */
function measuredMedian(measured: Row[], field: OptionalMeasure): number | undefined {
  const values = measured.map((r) => r[field]).filter((v): v is number => v !== undefined);
  return values.length ? median(values) : undefined;
}

/**
 * The order status programs side by side: per shop size, request and connections, the median over the
 * rounds of each program, and the API's ratios to the bare program (and to the baseline, when run).
 */
function comparisonTable(rows: Row[]): string {
  const lines = [
    '| Node | orders | request | conn. | program | req/s | p50 ms | p99 ms | peak RSS MiB | CPU µs / request | loop delay p99 ms | answers / scavenge | scavenge ms | API / this | API p99 / this | API CPU / this |',
    '|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const keyOf = (r: Row) => `${r.node}|${r.orders}|${r.scenario}|${r.connections}`;
  for (const key of [...new Set(rows.map(keyOf))]) {
    const [node, orders, scenario, connections] = key.split('|');
    const of = (target: string) => rows.filter((r) => keyOf(r) === key && r.target === target);
    const programs = [...new Set(rows.map((r) => r.target))];
    const api = median(of('shop-sidecar API').map((r) => r.rps));
    const apiCpu = measuredMedian(of('shop-sidecar API'), 'cpuUsPerRequest');
    const apiP99 = median(of('shop-sidecar API').map((r) => r.p99));
    for (const program of programs) {
      const measured = of(program);
      if (!measured.length) continue;
      const rps = median(measured.map((r) => r.rps));
      const rss = measured.map((r) => r.rssMiB).filter((v): v is number => v !== undefined);
      const ratio = program === 'shop-sidecar API' ? '' : `${(api / rps).toFixed(2)}`;
      const cpu = measuredMedian(measured, 'cpuUsPerRequest');
      const cpuRatio = program === 'shop-sidecar API' || cpu === undefined || apiCpu === undefined ? '' : `${(apiCpu / cpu).toFixed(2)}`;
      const p99 = median(measured.map((r) => r.p99));
      const p99Ratio = program === 'shop-sidecar API' || !p99 ? '' : `${(apiP99 / p99).toFixed(2)}`;
      const shown = (field: OptionalMeasure) => String(measuredMedian(measured, field) ?? '');
      lines.push(`| ${node} | ${Number(orders).toLocaleString('en')} | ${scenario} | ${connections} | ${program} | ${Math.round(rps).toLocaleString('en')} | ${median(measured.map((r) => r.p50))} | ${p99} | ${rss.length ? Math.max(...rss) : ''} | ${cpu ?? ''} | ${shown('loopDelayP99')} | ${shown('answersPerScavenge')} | ${shown('scavengeMs')} | ${ratio} | ${p99Ratio} | ${cpuRatio} |`);
    }
  }
  return lines.join('\n');
}

function table(rows: Row[]): string {
  const header = '| orders | program | request | req/s | p50 ms | p99 ms | mean ms | CPU µs / answer | loop delay p99 ms | answers / scavenge | scavenge ms | unexpected answers |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|';
  return [header, ...rows.map((r) => `| ${r.orders.toLocaleString('en')} | ${r.target} | ${r.scenario} | ${r.rps.toLocaleString('en')} | ${r.p50} | ${r.p99} | ${r.mean?.toFixed(2) ?? ''} | ${r.cpuUsPerRequest ?? ''} | ${r.loopDelayP99 ?? ''} | ${r.answersPerScavenge ?? ''} | ${r.scavengeMs ?? ''} | ${r.non2xxOrErrors} |`)].join('\n');
}

/** The order status route's targets, checked against this run's rows (a match among recent orders). */
function orderStatusTargets(rows: Row[]): string[] {
  const match = (orders: number, target: string): Row | undefined => {
    const measured = rows.filter((r) => r.orders === orders && r.target === target && r.scenario === 'match');
    if (!measured.length) return undefined;
    const of = (field: 'rps' | 'p50' | 'p99' | 'mean') => median(measured.map((r) => r[field] ?? 0));
    return { ...measured[0], rps: of('rps'), p50: of('p50'), p99: of('p99'), mean: of('mean') };
  };
  const api = (orders: number) => match(orders, 'shop-sidecar API');
  const lines: string[] = [];
  const check = (what: string, measured: string, met: boolean) => lines.push(`| ${what} | ${measured} | ${met ? 'met' : 'not met'} |`);
  const small = api(20_000);
  const large = api(1_000_000);
  if (small) {
    check('>= 3,600 req/s for a match at 20,000 orders', small.rps.toLocaleString('en'), small.rps >= 3600);
    check('p99 <= 10 ms for a match at 20,000 orders', `${small.p99} ms`, small.p99 <= 10);
  }
  if (small && large) {
    check('p50 at 1,000,000 orders <= 1.5 x p50 at 20,000', `${large.p50} / ${small.p50} ms (means ${large.mean?.toFixed(2)} / ${small.mean?.toFixed(2)} ms)`, large.p50 <= 1.5 * small.p50);
  }
  for (const orders of [20_000, 1_000_000]) {
    const ours = api(orders);
    const bare = match(orders, 'bare node:http + mysql2');
    if (ours && bare) check(`>= 50% of the bare program at ${orders.toLocaleString('en')} orders`, `${Math.round((100 * ours.rps) / bare.rps)}%`, ours.rps >= bare.rps / 2);
  }
  return lines.length ? ['| target | measured | |', '|---|---:|---|', ...lines, ''] : [];
}

/** The floor issue 52 measures the API against (bench/ceiling-restify.ts). */
const BARE_RESTIFY = 'bare restify + mysql2';

/**
 * Issue 52's targets for the API against the bare restify program (the floor: the same framework and reads, nothing
 * of the service's own), from the rounds of this run (a match among recent
 * orders), for each Node line the run measured (BENCH_NODES): at one connection at least 0.83 of its requests per second and at most 1.5 times its p99;
 * at ten connections at least 0.9. Each ratio is the median of the rounds' own ratios (API over the bare program
 * measured next to it), which a shared machine's drift disturbs less than a ratio of medians.
 */
/** The Node versions the rows were measured on, in the order first met. */
const nodeLinesOf = (rows: Row[]) => [...new Set(rows.map((r) => r.node))];

function bareRatioTargets(rows: Row[]): string[] {
  const lines: string[] = [];
  const nodeLines = nodeLinesOf(rows);
  for (const node of nodeLines) for (const orders of [...new Set(rows.map((r) => r.orders))]) {
    for (const connections of [...new Set(rows.map((r) => r.connections ?? 10))]) {
      const of = (target: string) => rows.filter((r) => r.orders === orders && r.connections === connections && r.target === target && r.scenario === 'match' && r.node === node);
      const api = of('shop-sidecar API');
      const bare = of(BARE_RESTIFY);
      const pairs = api.map((r) => [r, bare.find((b) => b.round === r.round)] as const).filter((pair): pair is readonly [Row, Row] => pair[1] !== undefined);
      if (!pairs.length) continue;
      const rps = median(pairs.map(([a, b]) => a.rps / b.rps));
      const p99 = median(pairs.map(([a, b]) => a.p99 / Math.max(b.p99, 1)));
      // Each Node line the run measured has its own lines; the Node is named only when there are several.
      const where = `${orders.toLocaleString('en')} orders, ${connections} conn.${nodeLines.length > 1 ? `, Node ${node}` : ''}`;
      const shown = (measured: Row[], field: OptionalMeasure) => measuredMedian(measured, field) ?? '?';
      const spread = `rounds ${pairs.map(([a, b]) => (a.rps / b.rps).toFixed(2)).join(', ')}; API CPU ${shown(api, 'cpuUsPerRequest')} µs / answer, event loop p99 ${shown(api, 'loopDelayP99')} ms, a scavenge every ${shown(api, 'answersPerScavenge')} answers (bare program: a scavenge every ${shown(bare, 'answersPerScavenge')} answers)`;
      if (connections === 1) {
        lines.push(`| >= 0.83 x the bare program's req/s, ${where} | ${rps.toFixed(2)} (${spread}) | ${rps >= 0.83 ? 'met' : 'not met'} |`);
        lines.push(`| p99 <= 1.5 x the bare program's, ${where} | ${p99.toFixed(2)} | ${p99 <= 1.5 ? 'met' : 'not met'} |`);
      } else {
        lines.push(`| >= 0.9 x the bare program's req/s, ${where} | ${rps.toFixed(2)} (${spread}) | ${rps >= 0.9 ? 'met' : 'not met'} |`);
      }
    }
  }
  return lines.length ? ['| target (API / bare restify program, median of the rounds) | measured | |', '|---|---:|---|', ...lines, ''] : [];
}

function measureTable(rows: MeasureRow[]): string {
  return ['| measure | value | detail |\n|---|---:|---|', ...rows.map((r) => `| ${r.measure} | ${r.value} | ${r.detail} |`)].join('\n');
}

async function main(): Promise<void> {
  const sections: string[] = [];
  const rows: Row[] = [];
  const customerRows: Row[] = [];
  const staffRows: Row[] = [];
  const staffTarget: string[] = [];
  const api = 'dist/src/entry-points/http/main.js';
  for (const size of sizes) {
    const customerLookupHere = parts.has('customer-lookup') && size === Math.max(...sizes);
    const staffLoginsHere = parts.has('staff-logins') && size === Math.min(...sizes);
    if (!parts.has('order-status') && !customerLookupHere && !staffLoginsHere) continue;
    const { dbName, samples } = await prepareShop(size);
    if (parts.has('order-status')) {
      const programs: [string, string][] = [['shop-sidecar API', api], [BARE_RESTIFY, 'dist/bench/ceiling-restify.js'], ['bare node:http + mysql2', 'dist/bench/ceiling.js']];
      if (baseline) programs.push([`baseline API (${path.basename(path.resolve(baseline))})`, path.resolve(baseline, api)]);
      const versions = new Map(nodes.map((node) => [node, nodeVersion(node)]));
      for (let round = 1; round <= rounds; round++) {
        for (const node of nodes) {
          // Each round starts with the next program, so none always runs first (on the coldest caches) or last.
          const order = programs.map((_, i) => programs[(i + round - 1) % programs.length]);
          for (const [label, script] of order) {
            const measured = await withProgram(script, dbName, orderStatusScenarios(label, size, samples, round), node, ['--require', LOOP_DELAY_PROBE]);
            rows.push(...measured.map((row) => ({ ...row, node: versions.get(node) })));
          }
        }
      }
    }
    if (customerLookupHere) {
      customerRows.push(...await withProgram(api, dbName, (url) => benchCustomerLookup({ dbName, prefix, size, url, duration, cardToken: CARD_TOKEN })));
    }
    if (staffLoginsHere) {
      const match = () => { const s = samples.recent[Math.floor(Math.random() * samples.recent.length)]; return JSON.stringify({ order_number: String(s.id), email: s.email }); };
      staffRows.push(...await withProgram(api, dbName, async (url) => {
        const result = await benchStaffLogins({ dbName, prefix, size, url, duration, orderStatus: orderStatusRequests(match) });
        staffTarget.push(...result.target);
        return result.rows;
      }));
    }
  }
  if (rows.length) {
    sections.push('## Order status route', '', `Medians of ${rounds} interleaved round(s); "API / this": the API's requests per second over this program's; "CPU µs / request": the program process's own CPU time per answer, which a shared machine disturbs far less than requests per second; "API CPU / this": the API's over this program's.`, '', comparisonTable(rows), '');
    sections.push(...bareRatioTargets(rows));
    sections.push('### Every round', '', table(rows.map((r) => ({ ...r, scenario: `${r.scenario}, ${r.connections} conn., Node ${r.node}, round ${r.round}` }))), '');
    // The older targets, at ten connections, for each Node line the run measured.
    const nodeLines = nodeLinesOf(rows);
    for (const node of nodeLines) {
      if (nodeLines.length > 1) sections.push(`Node ${node}:`, '');
      sections.push(...orderStatusTargets(rows.filter((r) => r.connections === 10 && r.node === node)));
    }
  }
  if (customerRows.length) sections.push('## Customer lookup and the helpdesk card', '', table(customerRows), '', ...cardTargets(customerRows), '');
  if (staffRows.length) sections.push('## Order status under failing staff logins', '', table(staffRows), '', ...staffTarget);
  if (parts.has('payments')) {
    const payments = await benchPayments(duration);
    for (const row of payments.rows) process.stdout.write(`bench: ${row.measure}: ${row.value} (${row.detail})\n`);
    sections.push('## Card-gateway webhooks', '', measureTable(payments.rows), '', ...payments.sections);
  }
  if (parts.has('handover')) {
    const handOverRows = await benchHandOver();
    for (const row of handOverRows) process.stdout.write(`bench: ${row.measure}: ${row.value} (${row.detail})\n`);
    sections.push('## Hand-over to WooCommerce', '', measureTable(handOverRows), '');
  }
  if (parts.has('hardening')) {
    const hardeningRows = await benchHardening();
    for (const row of hardeningRows) process.stdout.write(`bench: ${row.measure}: ${row.value} (${row.detail})\n`);
    sections.push('## Limits under attack, and stopping', '', measureTable(hardeningRows), '');
  }
  if (parts.has('idle')) {
    const idle = await benchIdle({
      sizes,
      storages: (process.env.BENCH_IDLE_STORAGES ?? 'posts,hpos').split(',').filter((s): s is Storage => s === 'posts' || s === 'hpos'),
      warmupSeconds: Number(process.env.BENCH_IDLE_WARMUP ?? 120),
      windowSeconds: Number(process.env.BENCH_IDLE_WINDOW ?? 600),
    });
    for (const row of idle.rows) process.stdout.write(`bench: ${row.measure}: ${row.value} (${row.detail})\n`);
    sections.push('## Idle: what the service costs the database when nothing happens', '', measureTable(idle.rows), '', ...idle.sections);
  }
  const summary = [
    `# shop-sidecar benchmarks, ${new Date().toISOString()}`,
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.`,
    `autocannon, 10 connections, ${duration} s (after a ${WARMUP_SECONDS} s warm-up for the order status route, ${START_WARMUP_SECONDS} s for a program's first run); load generator, database and server share the machine.`,
    '',
    ...sections,
  ].join('\n');
  process.stdout.write(`\n${summary}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results', `bench-${stamp}.md`), summary);
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
