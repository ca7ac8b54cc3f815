import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';

/** One measured value with what it rests on: a line of the webhook and hardening tables. */
export interface MeasureRow {
  measure: string;
  value: string;
  detail: string;
}

/** One measured scenario: a line of the printed tables. */
export interface Row { orders: number; target: string; scenario: string; node?: string; connections?: number; round?: number; rps: number; p50: number; p99: number; mean?: number; rssMiB?: number; non2xxOrErrors: string }

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

/** autocannon with `connections` connections (10 unless said): a 3 s warm-up, then `duration` seconds measured. */
export async function measure(url: string, duration: number, requests: autocannon.RequestSpec[], connections = 10): Promise<autocannon.Result> {
  await autocannon({ url, connections, duration: 3, requests });
  return autocannon({ url, connections, duration, requests });
}

/** The table row of a run, printed as it completes; `expected` is how many answers had the expected status. */
export function resultRow(orders: number, target: string, scenario: string, result: autocannon.Result, expected: number): Row {
  process.stdout.write(`bench: ${orders} ${target} ${scenario}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms\n`);
  return {
    orders, target, scenario, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99,
    mean: result.latency.mean, non2xxOrErrors: `${result.requests.total - expected} unexpected, ${result.errors} errors`,
  };
}
