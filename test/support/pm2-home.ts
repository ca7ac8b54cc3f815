import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommand, type CommandRun } from './cli-process';

const ROOT = path.resolve(__dirname, '../../..');
const PM2 = path.join(ROOT, 'node_modules/pm2/bin/pm2');

export interface Pm2App {
  name: string;
  pm_id: number;
  pid: number;
  pm2_env: { status: string; restart_time: number; exit_code?: number; pm_err_log_path: string; pm_out_log_path: string };
}

/**
 * A PM2 of one test's own: its PM2_HOME a temporary folder, so its daemon, logs and dump touch no other PM2
 * (the operator's, another test's). `kill()` at the end stops its daemon and the apps with it.
 */
export class Pm2Home {
  readonly home = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-pm2-'));

  /** The environment PM2 and the apps it starts see: the test's, PM2_HOME and the service's settings. */
  constructor(private readonly settings: Record<string, string>) {}

  private env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { ...process.env, PM2_HOME: this.home, ...this.settings, ...extra };
  }

  /** `npm start` in the repository's root, as the operator runs it. */
  npmStart(extra: Record<string, string> = {}): Promise<CommandRun> {
    return runCommand('npm', ['start'], { env: this.env(extra) });
  }

  /** `npm run <script>` in the repository's root (e.g. reload). */
  npmRun(script: string, extra: Record<string, string> = {}): Promise<CommandRun> {
    return runCommand('npm', ['run', script], { env: this.env(extra) });
  }

  /** `pm2 <args>` (what `npx pm2 <args>` runs), in the repository's root. */
  pm2(args: string[], extra: Record<string, string> = {}): Promise<CommandRun> {
    return runCommand(process.execPath, [PM2, ...args], { env: this.env(extra) });
  }

  /** Whether a PM2 daemon was ever started in this home (`pm2 jlist` would start one to answer). */
  daemonStarted(): boolean {
    return fs.existsSync(path.join(this.home, 'pm2.pid')) || fs.existsSync(path.join(this.home, 'pm2.log'));
  }

  async apps(): Promise<Pm2App[]> {
    const list = await this.pm2(['jlist']);
    return JSON.parse(list.stdout) as Pm2App[];
  }

  /** Everything in the log files PM2 keeps for this app (all its instances), and in the daemon's own pm2.log. */
  appLogs(name: string): string {
    const logs = path.join(this.home, 'logs');
    if (!fs.existsSync(logs)) return '';
    return fs.readdirSync(logs).filter((file) => file.startsWith(`${name}-`)).map((file) => fs.readFileSync(path.join(logs, file), 'utf8')).join('');
  }

  daemonLog(): string {
    const file = path.join(this.home, 'pm2.log');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  }

  /** `pm2 kill`, then the folder removed; the daemon's pid killed if `pm2 kill` could not. */
  async kill(): Promise<void> {
    if (this.daemonStarted()) {
      await this.pm2(['kill']);
      const pidFile = path.join(this.home, 'pm2.pid');
      if (fs.existsSync(pidFile)) {
        try {
          process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}
