import os from 'node:os';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import type { RedisClient } from '../data-access/redis';
import type { Logger } from '../logger';

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

/** The label that tells API processes apart in GET /metrics. */
export const PROCESS_LABEL = 'api_process';

let created = 0;

/**
 * This process's name in the metrics: the host and PM2's instance number (stable across restarts, so a
 * restarted process continues its series as a counter reset) or, outside PM2, the process ID. A second
 * API in the same process (tests) gets a suffix.
 */
export function apiProcessName(): string {
  created += 1;
  const name = `${os.hostname()}/${process.env.NODE_APP_INSTANCE ?? process.pid}`;
  return created === 1 ? name : `${name}-${created}`;
}

/**
 * Under PM2 the API runs as one process per core and a scrape reaches any one of them, so each process
 * leaves a snapshot of its own metrics in Redis (every few seconds, and just before it answers a scrape),
 * and the one scraped answers with every live process's, each series labelled with its process: Prometheus
 * sums them (`sum by (route) (rate(...))`) and sees a restart as the counter reset it is. Without Redis the
 * answer holds this process's metrics only (`sidecar_metrics_processes` says how many were included).
 */
export class MetricsExchange {
  private readonly key: string;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisClient,
    namespace: string,
    readonly processName: string,
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly options = { intervalMs: 5000, staleAfterMs: 30_000 },
  ) {
    this.key = `${namespace}:metrics`;
  }

  start(): void {
    const publish = () => void this.snapshot().then((snapshot) => this.publish(snapshot)).catch(() => undefined);
    this.timer = setInterval(publish, this.options.intervalMs);
    this.timer.unref();
    publish();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    // Gone at once, rather than shown until it goes stale.
    if (this.redis.isReady) await this.redis.hDel(this.key, this.processName).catch(() => undefined);
  }

  /** This process's metrics, each value labelled with the process. */
  private async snapshot(): Promise<Snapshot> {
    const metrics = await this.registry.getMetricsAsJSON();
    return metrics.map((metric) => ({
      ...metric,
      values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, [PROCESS_LABEL]: this.processName } })),
    }));
  }

  private async publish(snapshot: Snapshot): Promise<void> {
    if (!this.redis.isReady) return;
    await this.redis.multi()
      .hSet(this.key, this.processName, JSON.stringify({ at: Date.now(), metrics: snapshot }))
      .pExpire(this.key, this.options.staleAfterMs)
      .exec();
  }

  /** The snapshots of every live API process, this one's fresh. */
  async gather(): Promise<Snapshot[]> {
    const own = await this.snapshot();
    if (!this.redis.isReady) return [own];
    try {
      await this.publish(own);
      const stored = await this.redis.hGetAll(this.key);
      const snapshots = [own];
      const stale: string[] = [];
      for (const [name, text] of Object.entries(stored)) {
        if (name === this.processName) continue;
        const entry = JSON.parse(text) as { at: number; metrics: Snapshot };
        if (Date.now() - entry.at > this.options.staleAfterMs) stale.push(name);
        else snapshots.push(entry.metrics);
      }
      if (stale.length) await this.redis.hDel(this.key, stale);
      return snapshots;
    } catch (error) {
      this.log.warn('metrics_exchange_failed', { error });
      return [own];
    }
  }
}

/**
 * One registry of the processes' snapshots. The series of different processes differ in their process
 * label, so summing (prom-client's cluster aggregation) only puts them side by side; every metric is
 * summed, so none is dropped or reduced to the first process's value.
 */
export function combineSnapshots(snapshots: Snapshot[]): Registry {
  return AggregatorRegistry.aggregate(snapshots.map((metrics) => metrics.map((metric) => ({ ...metric, aggregator: 'sum' as const }))));
}
