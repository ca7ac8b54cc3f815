import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MeasureRow } from './common';

const root = path.resolve(__dirname, '../..');

/**
 * The hand-over from a provider's webhook to what WooCommerce shows: runs test:woocommerce's end-to-end test
 * (real WordPress + WooCommerce + Subscriptions served over HTTP by PHP's built-in server, WP-Cron on, no page
 * requests; the real API and worker) for BENCH_HANDOVER_TRIALS settled renewals, and reports the time from the
 * webhook's 200 to the renewal showing processing in WooCommerce. Needs what test:woocommerce needs (PHP and
 * the release files; see docs/developers-guide.md).
 */
export async function benchHandOver(): Promise<MeasureRow[]> {
  const trials = Number(process.env.BENCH_HANDOVER_TRIALS ?? 20);
  const results = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-handover-')), 'results.json');
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [path.join(root, 'test/woocommerce/run.sh'), 'dist/test/woocommerce/handover-end-to-end.test.js'], {
      cwd: root, env: { ...process.env, HANDOVER_TRIALS: String(trials), HANDOVER_RESULTS_FILE: results }, stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0 || !fs.existsSync(results)) throw new Error(`the hand-over trials failed (exit ${code}); run npm run test:woocommerce for details`);
  const measured = JSON.parse(fs.readFileSync(results, 'utf8')) as { trials: number; p50_ms: number; p99_ms: number; max_ms: number; latencies_ms: number[] };
  return [{
    measure: 'webhook 200 to WooCommerce showing the renewal paid (served over HTTP, WP-Cron on, no page requests)',
    value: `p99 ${measured.p99_ms} ms`,
    detail: `${measured.trials} trials: p50 ${measured.p50_ms} ms, max ${measured.max_ms} ms; target p99 <= 5000 ms: ${measured.p99_ms <= 5000 ? 'met' : 'not met'}`,
  }];
}
