/** One JSON line per event on stderr; PM2 keeps it in the process's log. */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

function write(level: string, event: string, fields?: Record<string, unknown>): void {
  const error = fields?.error;
  const detail = error instanceof Error ? { error: error.message, stack: error.stack } : {};
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields, ...detail })}\n`);
}

export const logger: Logger = {
  info: (event, fields) => write('info', event, fields),
  warn: (event, fields) => write('warn', event, fields),
  error: (event, fields) => write('error', event, fields),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
