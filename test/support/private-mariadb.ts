import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { freePort } from './free-port';

/** The first of these found on the PATH (or in /usr/sbin, /usr/bin) names the program. */
function program(...names: string[]): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/sbin'];
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  throw new Error(`none of ${names.join(', ')} is installed`);
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const live = new Set<ChildProcess>();
// A test run that ends abruptly leaves no server behind.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * A MariaDB server of one test file's own, so the test can kill it (as a crash would) and start it again
 * on the same port and data directory while the service runs. It is set up as the shared one is
 * (utf8mb4, skip-name-resolve, root without a password over TCP, the same defaults otherwise: grant
 * tables, InnoDB with durable commits, lock wait timeout, sql_mode), only smaller: a 32 MB buffer pool
 * and a 16 MB redo log, in a temporary directory that `cleanup()` removes. No option file is read
 * (`--no-defaults`), so the machine's my.cnf (its datadir, socket, user) does not leak in.
 */
export class PrivateMariaDb {
  private child: ChildProcess | null = null;
  readonly host = '127.0.0.1';
  readonly user = 'root';

  private constructor(readonly port: number, readonly dir: string, private readonly tls?: { certFile: string; keyFile: string }) {}

  /**
   * Installs a fresh data directory (about a second) and starts the server on a free port; with `tls`, the
   * server also takes TLS connections with that certificate and key.
   */
  static async start(options: { tls?: { certFile: string; keyFile: string } } = {}): Promise<PrivateMariaDb> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-mariadb-'));
    const server = new PrivateMariaDb(await freePort(), dir, options.tls);
    try {
      await server.install();
      await server.start();
    } catch (error) {
      await server.cleanup();
      throw error;
    }
    return server;
  }

  /** The server's Unix socket. */
  get socketPath(): string {
    return path.join(this.dir, 'mysqld.sock');
  }

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  get errorLogFile(): string {
    return path.join(this.dir, 'error.log');
  }

  /** The server's own log (start, crash recovery, aborted connections). */
  errorLog(): string {
    try {
      return fs.readFileSync(this.errorLogFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** Whether the server process is running (it may still be starting). */
  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The options both the install and the server take. */
  private commonOptions(): string[] {
    return [
      `--datadir=${this.dataDir}`,
      // Its own temporary files: installs running side by side in /tmp removed each other's (ENOENT, then "Unknown table").
      `--tmpdir=${this.dir}`,
      '--skip-name-resolve',
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_general_ci',
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=16M',
      ...(asRoot ? ['--user=root'] : []),
    ];
  }

  private async install(): Promise<void> {
    const installer = program('mariadb-install-db', 'mysql_install_db');
    const args = [
      '--no-defaults', ...this.commonOptions(),
      // root@localhost, root@127.0.0.1 and root@::1 without a password, as on the shared server.
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      // Where the installer finds the server's share files (its own directory's parent: /usr for /usr/bin).
      `--basedir=${path.dirname(path.dirname(installer))}`,
    ];
    await new Promise<void>((resolve, reject) => {
      execFile(installer, args, { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${installer} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve();
      });
    });
  }

  /** Starts the server (a no-op while it runs) and waits until root can run a query over TCP. */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    const args = [
      '--no-defaults', ...this.commonOptions(),
      `--port=${this.port}`,
      '--bind-address=127.0.0.1',
      `--socket=${this.socketPath}`,
      ...(this.tls ? [`--ssl-cert=${this.tls.certFile}`, `--ssl-key=${this.tls.keyFile}`] : []),
      `--pid-file=${path.join(this.dir, 'mysqld.pid')}`,
      `--log-error=${this.errorLogFile}`,
      // After a kill the port is free again at once; wait a little anyway rather than fail at start.
      '--port-open-timeout=10',
    ];
    const child = spawn(program('mariadbd', 'mysqld'), args, { stdio: 'ignore' });
    this.child = child;
    live.add(child);
    child.once('exit', () => live.delete(child));
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        this.child = null;
        throw new Error(`mariadbd exited while starting (${child.exitCode ?? child.signalCode}):\n${this.errorLog().slice(-3000)}`);
      }
      if (await this.answers()) return;
      if (Date.now() > until) throw new Error(`mariadbd did not answer within ${timeoutMs} ms:\n${this.errorLog().slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private async answers(): Promise<boolean> {
    try {
      const connection = await mysql.createConnection({ host: this.host, port: this.port, user: this.user, connectTimeout: 1000 });
      try {
        await connection.query('SELECT 1');
        return true;
      } finally {
        await connection.end().catch(() => connection.destroy());
      }
    } catch {
      return false;
    }
  }

  /** Kills the server at once (SIGKILL), as a crash or an outage would; InnoDB recovers on the next start. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** A crash and a start on the same port and data: clients' connections all break. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** A connection as root (no database selected). */
  connect(options: mysql.ConnectionOptions = {}): Promise<mysql.Connection> {
    return mysql.createConnection({ host: this.host, port: this.port, user: this.user, ...options });
  }

  /** `SHOW FULL PROCESSLIST` (without this query's own row): what every session is doing. */
  async processList(): Promise<Record<string, unknown>[]> {
    const connection = await this.connect();
    try {
      const [rows] = await connection.query('SHOW FULL PROCESSLIST') as unknown as [Record<string, unknown>[]];
      const [[own]] = await connection.query('SELECT CONNECTION_ID() AS id') as unknown as [[{ id: number }]];
      return rows.filter((row) => Number(row.Id) !== Number(own.id));
    } finally {
      await connection.end().catch(() => connection.destroy());
    }
  }

  /** Kills the server and removes its directory. */
  async cleanup(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
