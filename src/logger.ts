import { currentRequestId } from './request-context';

/**
 * One JSON line per event on stderr; PM2 keeps it in the process's log. A line written while a request
 * is handled carries its `requestId`, the one in the answer's X-Request-Id.
 */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

function write(level: string, event: string, fields?: Record<string, unknown>): void {
  const error = fields?.error;
  const detail = error instanceof Error ? { error: error.message, stack: error.stack } : {};
  const requestId = currentRequestId();
  const context = requestId === undefined ? {} : { requestId };
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...context, ...fields, ...detail })}\n`);
}

export const logger: Logger = {
  info: (event, fields) => write('info', event, fields),
  warn: (event, fields) => write('warn', event, fields),
  error: (event, fields) => write('error', event, fields),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
