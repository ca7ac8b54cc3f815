import net from 'node:net';
import type http from 'node:http';

/**
 * How long a stop waits for requests in progress before it cuts them. PM2's kill_timeout for the API
 * (ecosystem.config.js, 10 s) must stay above it, with room for letting go of the database and Redis.
 */
export const SHUTDOWN_DEADLINE_MS = 7000;
/** Keep-alive sockets with no request in progress are closed this long into a stop, and again every as often. */
const IDLE_SWEEP_MS = 250;

/**
 * A stop that keep-alive clients cannot hold open: the listener closes at once; every answer from then
 * on (and every answer in progress that has not started) says `Connection: close`, so a busy client's
 * connection ends with its next answer; sockets idle between requests are closed; and whatever is
 * still running at the deadline is cut, so the process ends well inside PM2's kill_timeout.
 */
export class GracefulShutdown {
  private draining = false;
  private readonly inFlight = new Set<http.ServerResponse>();

  constructor(private readonly server: http.Server) {
    // Before restify's own listener, so even an answer restify writes at once carries the header.
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      if (this.draining) return void res.setHeader('Connection', 'close');
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
    });
  }

  async stop(deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<void> {
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    // net.Server's close stops listening only. http.Server's would also destroy idle keep-alive sockets
    // right now, racing a client that is just sending its next request on one; the sweep below closes
    // them a moment later, when every busy client has had its `Connection: close` answer.
    const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(this.server, () => resolve()));
    const idle = setInterval(() => this.server.closeIdleConnections(), IDLE_SWEEP_MS);
    const deadline = setTimeout(() => this.server.closeAllConnections(), deadlineMs);
    try {
      await closed;
    } finally {
      clearInterval(idle);
      clearTimeout(deadline);
    }
  }
}
