import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { checkApplicationPassword } from './passwords';

/** More checks than this waiting for a thread: the check is refused at once (the caller answers 503). */
export class PasswordChecksBusyError extends Error {
  constructor() {
    super('too many password checks are waiting');
  }
}

/** Hashes that take real work (phpass's 8,192 MD5 rounds, bcrypt); the rest are cheap and checked in place. */
const costly = (hash: string) => hash.startsWith('$P$') || hash.startsWith('$wp') || hash.startsWith('$2');

interface Job {
  id: number;
  password: string;
  hash: string;
  resolve(ok: boolean): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  job: Job | null;
}

/**
 * WordPress password checks (application passwords stored with phpass or bcrypt cost 100 to 300 ms
 * of CPU each) on worker threads, so they never hold up the event loop: at most `size` run at once,
 * the next `maxWaiting` wait their turn, and more are refused. A successful check is remembered for
 * `rememberMs`, keyed by an HMAC (under a key of this process) of the stored hash and the password, so
 * staff who keep sending the same credentials pay for the hash once; a changed or deleted password
 * has another hash, or none, and is never matched by a remembered check.
 */
export class PasswordCheckPool {
  private readonly threads: Thread[] = [];
  private readonly waiting: Job[] = [];
  private readonly remembered = new Map<string, number>();
  private readonly rememberKey = randomBytes(32);
  private nextId = 1;

  constructor(private readonly options: { size: number; maxWaiting: number; rememberMs: number; rememberMax: number }) {}

  async check(password: string, hash: string): Promise<boolean> {
    if (!costly(hash)) return checkApplicationPassword(password, hash);
    const key = createHmac('sha256', this.rememberKey).update(hash).update('\0').update(password).digest('base64');
    const until = this.remembered.get(key);
    if (until !== undefined && until > Date.now()) return true;
    const ok = await this.onThread(password, hash);
    if (ok) this.remember(key);
    return ok;
  }

  private remember(key: string): void {
    this.remembered.delete(key);
    if (this.remembered.size >= this.options.rememberMax) {
      // Oldest first (a Map keeps insertion order): drop the first expired one, else the oldest.
      const now = Date.now();
      const stale = [...this.remembered].find(([, until]) => until <= now)?.[0] ?? this.remembered.keys().next().value;
      if (stale !== undefined) this.remembered.delete(stale);
    }
    this.remembered.set(key, Date.now() + this.options.rememberMs);
  }

  private onThread(password: string, hash: string): Promise<boolean> {
    if (this.waiting.length >= this.options.maxWaiting) return Promise.reject(new PasswordChecksBusyError());
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, password, hash, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length) {
      let thread = this.threads.find((candidate) => candidate.job === null);
      if (!thread && this.threads.length < this.options.size) thread = this.spawn();
      if (!thread) return;
      const job = this.waiting.shift()!;
      thread.job = job;
      // A thread keeps the process alive while it has a check to answer, and only then.
      thread.worker.ref();
      thread.worker.postMessage({ id: job.id, password: job.password, hash: job.hash });
    }
  }

  private spawn(): Thread {
    const worker = new Worker(path.join(__dirname, 'password-worker.js'));
    const thread: Thread = { worker, job: null };
    worker.on('message', (message: { id: number; ok: boolean }) => {
      const job = thread.job;
      thread.job = null;
      worker.unref();
      if (job && job.id === message.id) job.resolve(message.ok);
      this.dispatch();
    });
    const lost = (error: Error) => {
      if (!this.threads.includes(thread)) return;
      this.threads.splice(this.threads.indexOf(thread), 1);
      thread.job?.reject(error);
      thread.job = null;
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`password check thread exited with ${code}`)));
    // Idle, a thread does not keep the process alive (unref after the listeners: adding one refs it again).
    worker.unref();
    this.threads.push(thread);
    return thread;
  }
}

/** The process's pool: two threads, and a success remembered for five minutes. */
export const passwordChecks = new PasswordCheckPool({ size: 2, maxWaiting: 200, rememberMs: 5 * 60_000, rememberMax: 1000 });
