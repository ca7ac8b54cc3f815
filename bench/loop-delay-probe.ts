import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The event loop's delay in a program under load (`--require dist/bench/loop-delay-probe.js`, as the order status
 * bench starts each of its programs): a histogram of how late a timer due every RESOLUTION_MS ms fires, so a turn
 * that holds the loop (a request's own work, a timer's, a garbage collection) shows as that timer's delay. The
 * bench sends 'loop-delay:reset' after its warm-up and 'loop-delay:read' after the measured run; the answer is
 * `{ loopDelay: { samples, p50, p99, max } }` in ms, each less the resolution (a timer on time reads 0).
 */
const RESOLUTION_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();

const late = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);

process.on('message', (message) => {
  if (message === 'loop-delay:reset') histogram.reset();
  if (message === 'loop-delay:read') {
    process.send?.({
      loopDelay: { samples: histogram.count, p50: late(histogram.percentile(50)), p99: late(histogram.percentile(99)), max: late(histogram.max) },
    });
  }
});
// Listening must not keep the program alive after its own work is done (its SIGTERM shutdown waits for the loop to empty).
process.channel?.unref();
