import mysql from 'mysql2';

/** How long the server is asked to end a dropped connection's session before it is left to the server's own timeouts. */
export const ABANDONED_SESSION_KILL_FOR_MS = 10 * 60_000;
/** The pause between tries while the server cannot be reached. */
const RETRY_MS = 2000;
/** ER_NO_SUCH_THREAD: the session has ended already. */
const NO_SUCH_THREAD = 1094;

/**
 * Sessions of connections the service dropped because they stopped answering. The server does not know
 * they are gone (no FIN or RST came through): a session dropped inside a transaction keeps its row locks
 * until the server's `wait_timeout` (hours), and every later write to those rows waits on it and fails. So
 * each is ended with KILL from a connection of its own, as soon as the server can be reached again (a
 * user may end its own sessions without further privileges).
 */
export class AbandonedSessions {
  private readonly waiting = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly connectionOptions: mysql.ConnectionOptions, private readonly boundMs: number) {}

  /** The server's session `threadId`, to be ended. */
  add(threadId: number | null | undefined): void {
    if (!threadId || this.waiting.has(threadId)) return;
    this.waiting.set(threadId, Date.now() + ABANDONED_SESSION_KILL_FOR_MS);
    this.soon(0);
  }

  private soon(ms: number): void {
    if (this.timer || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.endThem();
    }, ms).unref();
  }

  private async endThem(): Promise<void> {
    this.running = true;
    const connection = mysql.createConnection({ ...this.connectionOptions, connectTimeout: this.boundMs });
    // Its failures are the outage itself; the tries go on until the server answers or the time is up.
    connection.on('error', () => undefined);
    const kill = (threadId: number) => new Promise<void>((resolve, reject) => {
      connection.query({ sql: 'KILL ?', values: [threadId], timeout: this.boundMs }, (error) => {
        if (!error || (error as { errno?: number }).errno === NO_SUCH_THREAD) resolve();
        else reject(error);
      });
    });
    try {
      for (const threadId of [...this.waiting.keys()]) {
        await kill(threadId);
        this.waiting.delete(threadId);
      }
    } catch {
      for (const [threadId, until] of this.waiting) if (until < Date.now()) this.waiting.delete(threadId);
    } finally {
      connection.destroy();
      this.running = false;
      if (this.waiting.size) this.soon(RETRY_MS);
    }
  }
}
