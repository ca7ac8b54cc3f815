import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { eventually } from './payment-hub-fixture';
import { freePort } from './free-port';

/**
 * A redis-server of one test file's own, without persistence, so the test can stop it and start it
 * again (on the same port) while the service runs.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await eventually(() => new Promise<boolean>((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    }), 10_000, 'redis to start');
  }

  /** Kills the server at once, as a crash or an outage would. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
