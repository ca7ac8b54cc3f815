import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

/**
 * A worker in a process of its own (test/support/paced-worker-child.ts), its passes asked for and its clock set by
 * the test: the same worker as `npm run worker` runs, minus its own timers' pace. `kill()` ends the process with
 * SIGKILL at whatever point it has reached: its database connections close uncommitted and its requests on their way
 * to a provider are cut, as when the operating system or PM2 kills a worker.
 */
export interface PacedWorkerProcess {
  /** One pass (the worker's `tick()`); rejects if the process dies before it ends. */
  tick(): Promise<void>;
  /** The time the worker's use cases see from now on. */
  setClock(now: Date): void;
  /** SIGKILL, now; resolves once the process has ended. */
  kill(): Promise<void>;
  /** A graceful stop: the worker leaves, then the process ends. */
  stop(): Promise<void>;
}

const CHILD = path.join(__dirname, 'paced-worker-child.js');

export async function startPacedWorkerProcess(environment: Record<string, string>, now: Date): Promise<PacedWorkerProcess> {
  // The child's output goes nowhere unless asked for (MONEY_TRACE=1 shows its log lines).
  // Node's compile cache (Node 22 and later; earlier lines ignore it) spares each new process most of its start.
  const env = { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), 'shop-sidecar-test-compile-cache') };
  const child: ChildProcess = fork(CHILD, [], { env, stdio: ['ignore', 'ignore', process.env.MONEY_TRACE === '1' ? 'inherit' : 'ignore', 'ipc'], serialization: 'json' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  const pending = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let next = 0;
  void exited.then(() => {
    gone = true;
    for (const waiting of pending.values()) waiting.reject(new Error('the worker process ended during its pass'));
    pending.clear();
  });
  const started = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { type: string; id?: number; error?: string }) => {
      if (message.type === 'started') resolve();
      else if (message.type === 'failed') reject(new Error(`the worker process did not start: ${message.error}`));
      else if (message.type === 'ticked' || message.type === 'tick_failed') {
        const waiting = pending.get(message.id!);
        pending.delete(message.id!);
        if (message.type === 'ticked') waiting?.resolve();
        else waiting?.reject(new Error(`the worker's pass failed: ${message.error}`));
      }
    });
    void exited.then(() => reject(new Error('the worker process ended before it started')));
  });
  child.send({ type: 'start', environment, now: now.toISOString() });
  await started;
  return {
    tick() {
      if (gone) return Promise.reject(new Error('the worker process has ended'));
      next += 1;
      const id = next;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ type: 'tick', id });
      });
    },
    setClock(to: Date) {
      if (!gone && child.connected) child.send({ type: 'clock', now: to.toISOString() });
    },
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone && child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
