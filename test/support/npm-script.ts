import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from './payment-hub-fixture';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The node command `npm run <script>` runs, without a build step before it (`npm run build && node …`): the
 * tests run from the build already made, and a second build would only cost a minute of both cores.
 */
export function npmScriptCommand(script: string): string[] {
  const command = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts[script] as string;
  const last = command.split('&&').map((part) => part.trim()).filter((part) => part !== 'npm run build').join(' && ');
  const [program, ...args] = last.split(' ');
  if (program !== 'node' || args.includes('&&')) throw new Error(`npm run ${script} is not one node command after its build: ${command}`);
  return args;
}

export interface ScriptProcess {
  child: ChildProcess;
  /** What it printed so far, stdout and stderr apart. */
  stdout(): string;
  stderr(): string;
  /** The exit code (or the signal's name) once it has ended and its output is read. */
  exited: Promise<number | string>;
  /** Waits until stdout or stderr matches; fails early when the process ends first. */
  printed(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** Its exit code, or `still running` (then it is killed) when it has not ended within `timeoutMs`. */
  ended(timeoutMs: number): Promise<number | string>;
  /** SIGTERM, then SIGKILL if it has not ended 5 s later (cleanup). */
  kill(): Promise<void>;
}

/** `npm run <script>` from the repository's root, its node started directly (a signal reaches it as Ctrl+C would). */
export function startNpmScript(script: string, env: Record<string, string>): ScriptProcess {
  const child = spawn(process.execPath, npmScriptCommand(script), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { err += chunk; });
  let done = false;
  const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => {
    done = true;
    resolve(code ?? signal ?? 'unknown');
  }));
  // SIGTERM first, so that a script with children of its own (the demo's API and worker) stops them too.
  const kill = async () => {
    if (done) return;
    child.kill('SIGTERM');
    const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000))]);
    if (!gone) child.kill('SIGKILL');
    await exited;
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    printed: (pattern, timeoutMs) => eventually(async () => {
      if (pattern.test(out) || pattern.test(err)) return true;
      if (done) throw new Error(`npm run ${script} ended before printing ${pattern}:\n${out}\n${err}`);
      return false;
    }, timeoutMs, `npm run ${script} to print ${pattern}`).then(() => undefined),
    async ended(timeoutMs) {
      const outcome = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), timeoutMs))]);
      if (outcome === 'still running') await kill();
      return outcome;
    },
    kill,
  };
}
