import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from './payment-hub-fixture';
import { LOG_HOLD_MS } from '../../src/logger';

const ROOT = path.resolve(__dirname, '../../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** Every log line the process wrote so far (stderr), parsed. */
  logs: Record<string, unknown>[];
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** Whether the process has ended. */
  hasExited(): boolean;
  /**
   * How many log lines the process has written up to now, once the lines of what already happened have arrived:
   * the service holds its lines up to LOG_HOLD_MS before writing them (src/logger.ts), so a line may come after
   * the database shows what it tells of. The mark to count later lines from.
   */
  linesSoFar(): Promise<number>;
  /** Waits for a log line with this event. */
  logged(event: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  signal(name: NodeJS.Signals): void;
  /** SIGKILL, unless it ended already (cleanup). */
  kill(): Promise<void>;
}

/**
 * `npm run api` or `npm run worker`: the command of that package.json script, run from the repository's
 * root and configured only through the environment. Node is started directly (not through npm), so a
 * signal reaches the service as PM2 sends it.
 */
export function startServiceProcess(script: 'api' | 'worker', env: Record<string, string>): ServiceProcess {
  const command = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts[script] as string;
  const [program, ...args] = command.split(' ');
  if (program !== 'node') throw new Error(`npm run ${script} is not a node command: ${command}`);
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let buffered = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = undefined;
      }
      logs.push(parsed !== null && typeof parsed === 'object' ? parsed as Record<string, unknown> : { event: 'unparsed', line });
    }
  });
  let ended = false;
  // 'close', not 'exit': it comes once the log pipe is drained, so what the process logged last is in `logs`.
  const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => {
    ended = true;
    resolve(code ?? signal ?? 'unknown');
  }));
  return {
    child,
    logs,
    exited,
    hasExited: () => ended,
    linesSoFar: async () => {
      await new Promise((resolve) => setTimeout(resolve, LOG_HOLD_MS + 100));
      return logs.length;
    },
    logged: (event, timeoutMs = 20_000) => eventually(async () => {
      const line = logs.find((logged) => logged.event === event);
      if (!line && ended) throw new Error(`${script} exited before logging ${event}: ${JSON.stringify(logs.slice(-5))}`);
      return line;
    }, timeoutMs, `${script} to log ${event}`) as Promise<Record<string, unknown>>,
    signal(name) {
      if (!ended) child.kill(name);
    },
    async kill() {
      if (ended) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
