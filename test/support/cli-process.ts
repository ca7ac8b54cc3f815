import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
/** The operator CLI as installed: the built bin script. */
export const PAYMENT_HUB = path.join(ROOT, 'bin/payment-hub');

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end with no stdin and collects what it printed. Asynchronous on purpose: the fake
 * providers and WordPress a test starts answer from the test's own process while the command runs.
 */
export function runCommand(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `payment-hub <args>` configured by `env` alone (with PATH), in `cwd` (a folder without a .env by default: the repository's root has none in CI). */
export function paymentHub(args: string[], env: Record<string, string>, cwd?: string): Promise<CommandRun> {
  return runCommand(process.execPath, [PAYMENT_HUB, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd });
}
