import pino, { type DestinationStream } from 'pino';
import { currentRequestId } from './shared/request-context';

/**
 * One JSON line per event on stderr; PM2 keeps it in the process's log. A line written while a request
 * is handled carries its `requestId`, the one in the answer's X-Request-Id.
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

/**
 * pino writes the lines: formatted without a template and, with the asynchronous destination, written off
 * the request's path; whatever is still held is written when the process exits, however it exits. Secrets
 * are censored by a look at the line's keys (pino's path redaction cost a few percent of an order status
 * request for lines that, nearly always, hold none).
 */
export function createLogger(destination: DestinationStream): Logger {
  const lines = pino({
    base: null,
    messageKey: 'event',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: (fields) => censored(fields, true) },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { requestId };
    },
  }, destination);
  const write = (level: 'info' | 'warn' | 'error') => (event: string, fields?: Record<string, unknown>) => {
    const error = fields?.error;
    lines[level](error instanceof Error ? { ...fields, error: error.message, stack: error.stack } : fields ?? {}, event);
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

function stderr(): DestinationStream {
  // Written off the thread: a line goes out at once when no write is in progress, and the lines that come
  // meanwhile go together in the next write, so a busy process writes in batches and a quiet one without
  // delay. What is still held at exit is written synchronously.
  const destination = pino.destination({ dest: 2, sync: false });
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // A write still in progress at exit: what it holds is on its way already.
    }
  });
  return destination;
}

export const logger: Logger = createLogger(stderr());

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
