import pino, { type DestinationStream } from 'pino';
import { currentRequestId } from './shared/request-context';

/**
 * One JSON line per event on stderr (under PM2's cluster mode through its stream: see pm2ClusterStderr); PM2
 * keeps it in the process's own log. A line written while a request is handled carries its `requestId`, the
 * one in the answer's X-Request-Id.
 */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

/**
 * Whatever a caller puts in a line, these never reach the log: credentials and secrets by their usual names,
 * at the top and one level down (a request's headers, a config object).
 */
const SECRET_FIELDS = ['password', 'secret', 'apiKey', 'apiSecret', 'authorization', 'cookie', 'token', 'clientSecret', 'webhookSecret', 'loggedInSalt', 'nonceSalt', 'loggedInKey', 'nonceKey'];

const SECRETS = new Set(SECRET_FIELDS);
const CENSORED = '[redacted]';

/** An object with its secret fields censored: a copy when it has any, else the object itself. */
function censored(fields: Record<string, unknown>, oneLevelDown: boolean): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    let replacement = value;
    if (SECRETS.has(key)) replacement = CENSORED;
    else if (oneLevelDown && value !== null && typeof value === 'object' && !Array.isArray(value)) replacement = censored(value as Record<string, unknown>, false);
    if (replacement === value) continue;
    copy ??= { ...fields };
    copy[key] = replacement;
  }
  return copy ?? fields;
}

/** The fields as JSON: what JSON.stringify makes of them, or, where it cannot (a cycle, a BigInt), the same with those replaced. */
function fieldsJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(fields, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (value !== null && typeof value === 'object') {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  }
}

/**
 * One line: `{"level","time"` (ISO 8601, UTC), the request's `requestId` while one is handled, the fields with secrets
 * censored (by a look at the keys: path redaction cost a few percent of an order status request for lines that,
 * nearly always, hold none), then `"event"`. Written out here rather than by pino's formatting, which cost an
 * order status answer at one connection as much as its order's dates and delivery estimate together, for the
 * one access-log line each request writes (bench/results/order-status-one-connection-costs-2026-11-30.md).
 */
export function logLine(level: 'info' | 'warn' | 'error', event: string, fields: Record<string, unknown> | undefined): string {
  let line = `{"level":"${level}","time":"${new Date().toISOString()}"`;
  const requestId = currentRequestId();
  if (requestId !== undefined && fields?.requestId === undefined) line += `,"requestId":${JSON.stringify(requestId)}`;
  if (fields !== undefined) {
    const json = fieldsJson(censored(fields, true));
    if (json.length > 2) line += `,${json.slice(1, -1)}`;
  }
  return `${line},"event":${JSON.stringify(event)}}\n`;
}

/**
 * Lines go to `destination`: with the asynchronous one, written off the request's path; whatever is still held
 * is written when the process exits, however it exits.
 */
export function createLogger(destination: DestinationStream): Logger {
  const write = (level: 'info' | 'warn' | 'error') => (event: string, fields?: Record<string, unknown>) => {
    const error = fields?.error;
    destination.write(logLine(level, event, error instanceof Error ? { ...fields, error: error.message, stack: error.stack } : fields));
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

/** Where the lines go, and how the process ends once they are there. */
interface LogOutput {
  destination: DestinationStream;
  /** Resolves once every line handed to `destination` so far is written (or after `boundMs`, whatever holds it up). */
  written(boundMs: number): Promise<void>;
}

/**
 * Lines are held for at most LOG_HOLD_MS, or until HOLD_BYTES have come, and then written together. Written one at a
 * time (each access-log line of an unhurried API on its own), every line was a hand-over to libuv's thread pool,
 * a wake-up and one more turn of the event loop: a tenth of an order status answer's CPU at one connection
 * (bench/results/order-status-one-connection-2026-11-29.md). A twentieth of a second is nothing to a reader of
 * the log; what is held when the process exits is written then. HOLD_BYTES is what fifty access-log lines take, about
 * a twentieth of a second's at one connection, so that at one connection the time, not the size, sets the pace (at
 * 4 KiB a write every sixteen lines was still a share of the answer); it stays under sonic-boom's largest write (16 KiB).
 */
export const LOG_HOLD_MS = 50;
const HOLD_BYTES = 12 * 1024;

function fd2(): LogOutput {
  // Written off the thread, HOLD_BYTES at a time (sonic-boom's minLength), and what is held at most LOG_HOLD_MS
  // after its first line; what is still held at exit is written synchronously.
  const destination = pino.destination({ dest: 2, sync: false, minLength: HOLD_BYTES });
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    destination.flush();
  };
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // A write still in progress at exit: what it holds is on its way already.
    }
  });
  return {
    destination: {
      write(line: string) {
        destination.write(line);
        if (timer === undefined) timer = setTimeout(flush, LOG_HOLD_MS).unref();
      },
    },
    written: (boundMs) => new Promise((resolve) => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const bound = setTimeout(resolve, boundMs).unref();
      destination.flush(() => {
        clearTimeout(bound);
        resolve();
      });
    }),
  };
}

/**
 * Under PM2's cluster mode the process runs inside PM2's container, whose fd 1 and 2 are the daemon's own (its
 * pm2.log): PM2 puts in the app's log files, and in `pm2 logs`, only what goes through process.stdout.write and
 * process.stderr.write, which it replaces. So there the lines go through process.stderr, held and batched as above. PM2 writes them to the file asynchronously; `written` waits
 * for its callbacks, so a process that exits right after a line (it cannot start) does not lose it.
 */
function pm2ClusterStderr(): LogOutput {
  let held = '';
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const settle = () => {
    if (inFlight === 0 && held === '') for (const resolve of waiting.splice(0)) resolve();
  };
  const flush = () => {
    if (held === '') return;
    const chunk = held;
    held = '';
    inFlight++;
    process.stderr.write(chunk, () => {
      inFlight--;
      settle();
    });
  };
  // A process.exit elsewhere (PM2's own handler of an uncaught exception): hand PM2 what is still held.
  process.on('exit', flush);
  return {
    destination: {
      write(line: string) {
        if (held === '') setTimeout(flush, LOG_HOLD_MS).unref();
        held += line;
        if (held.length >= HOLD_BYTES) flush();
      },
    },
    written(boundMs) {
      flush();
      return new Promise((resolve) => {
        if (inFlight === 0) return resolve();
        waiting.push(resolve);
        setTimeout(resolve, boundMs).unref();
      });
    },
  };
}

/** PM2 sets exec_mode in the environment of the processes it starts: cluster_mode or fork_mode. */
const output: LogOutput = process.env.exec_mode === 'cluster_mode' ? pm2ClusterStderr() : fd2();

export const logger: Logger = createLogger(output.destination);

/** How long a process that is ending waits for its last lines at most: well within PM2's kill_timeout. */
const LAST_LINES_MS = 500;

/**
 * Ends the process with `code` once every line it logged is written; `lastWords`, a plain line, is written
 * last (what a process that cannot start says, e.g. `configuration error: …`).
 */
export async function exitAfterLogging(code: number, lastWords?: string): Promise<never> {
  if (lastWords !== undefined) output.destination.write(`${lastWords}\n`);
  await output.written(LAST_LINES_MS);
  process.exit(code);
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
