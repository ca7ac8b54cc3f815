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

/**
 * pino writes the lines: formatted without a template and, with the asynchronous destination, written off
 * the request's path; whatever is still held is written when the process exits, however it exits.
 */
export function createLogger(destination: DestinationStream): Logger {
  const lines = pino({
    base: null,
    messageKey: 'event',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { requestId };
    },
    redact: { paths: SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]), censor: '[redacted]' },
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
