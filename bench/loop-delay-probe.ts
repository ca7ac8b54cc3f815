import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/**
 * The event loop's delay in a program under load (`--require dist/bench/loop-delay-probe.js`, as the order status
 * bench starts each of its programs): a histogram of how late a timer due every RESOLUTION_MS ms fires, so a turn
 * that holds the loop (a request's own work, a timer's, a garbage collection) shows as that timer's delay. Beside
 * it, the young generation's collections (scavenges) and how long each held the program: at one connection a
 * request that meets one waits for it, so when they come more often than one answer in a hundred, they are the p99
 * (bench/results/order-status-what-the-gap-is-made-of-2026-11-29.md). The bench sends 'loop-delay:reset' after its
 * warm-up and 'loop-delay:read' after the measured run; the answer is
 * `{ loopDelay: { samples, p50, p99, max, scavenges, scavengeP50 } }` in ms, the delays each less the resolution
 * (a timer on time reads 0).
 */
const RESOLUTION_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();

let scavengeMs: number[] = [];
const collections = new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavengeMs.push(entry.duration);
  }
});
collections.observe({ entryTypes: ['gc'] });

const late = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
const median = (values: number[]) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)] * 100) / 100;
};

process.on('message', (message) => {
  if (message === 'loop-delay:reset') {
    histogram.reset();
    scavengeMs = [];
  }
  if (message === 'loop-delay:read') {
    process.send?.({
      loopDelay: {
        samples: histogram.count, p50: late(histogram.percentile(50)), p99: late(histogram.percentile(99)), max: late(histogram.max),
        scavenges: scavengeMs.length, scavengeP50: median(scavengeMs),
      },
    });
  }
});
// Listening must not keep the program alive after its own work is done (its SIGTERM shutdown waits for the loop to empty).
process.channel?.unref();
