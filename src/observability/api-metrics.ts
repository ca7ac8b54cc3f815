import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolState } from '../data-access/data-source';

/** What the API process reads about its own connections when it is scraped. */
export interface ConnectionProbes {
  dbPool(): PoolState | null;
  redisReady(): boolean;
  throttleListening(): boolean;
}

/** Latency buckets in seconds; 15 ms is the order status route's floor for a failed lookup. */
const DURATION_BUCKETS = [0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Answers observed and not yet counted in the registry, at most (see ApiMetrics.observeRequest). */
const PENDING_ANSWERS_MAX = 512;

/** The answers of one method, route and status not yet counted in the registry. */
interface PendingAnswers {
  labels: { method: string; route: string; status: string };
  seconds: number[];
}

/**
 * The metrics one API process keeps itself: requests by route and status with their latency, throttle
 * blocks, its database pool and Redis connections, and Node's process metrics. Each process has its own
 * registry; GET /metrics shows every live process's (see MetricsExchange).
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly durations: Histogram<'method' | 'route' | 'status'>;
  private readonly throttleBlocks: Counter;
  private readonly pending = new Map<string, PendingAnswers>();
  private pendingCount = 0;

  constructor(probes: ConnectionProbes) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // Whoever reads either (a scrape, the exchange between processes) reads every answer observed until then.
    const countPending = () => this.countPending();
    this.requests = new Counter({
      name: 'sidecar_http_requests_total', help: 'HTTP requests answered, by method, route (the registered path) and status.',
      labelNames: ['method', 'route', 'status'], registers, collect: countPending,
    });
    this.durations = new Histogram({
      name: 'sidecar_http_request_duration_seconds', help: 'Time from a request\'s arrival to the end of its answer.',
      labelNames: ['method', 'route', 'status'], buckets: DURATION_BUCKETS, registers, collect: countPending,
    });
    this.throttleBlocks = new Counter({
      name: 'sidecar_throttle_blocks_total', help: 'Subjects (API keys or client addresses) blocked by the order status route\'s failed-attempt throttle.', registers,
    });
    new Gauge({
      name: 'sidecar_db_pool_connections', help: 'Database pool connections of this process, busy or idle.', labelNames: ['state'], registers,
      collect() {
        this.reset();
        const pool = probes.dbPool();
        if (!pool) return;
        this.set({ state: 'busy' }, pool.open - pool.idle);
        this.set({ state: 'idle' }, pool.idle);
      },
    });
    new Gauge({
      name: 'sidecar_db_pool_max_connections', help: 'The most connections this process\'s database pool opens.', registers,
      collect() {
        const pool = probes.dbPool();
        if (pool) this.set(pool.limit);
      },
    });
    new Gauge({
      name: 'sidecar_db_pool_waiting_requests', help: 'Queries of this process waiting for a free database connection.', registers,
      collect() {
        const pool = probes.dbPool();
        if (pool) this.set(pool.waiting);
      },
    });
    new Gauge({
      name: 'sidecar_redis_connected', help: '1 while this process\'s Redis connection is ready: commands (queue and throttle counts) or throttle (block announcements).',
      labelNames: ['connection'], registers,
      collect() {
        this.set({ connection: 'commands' }, probes.redisReady() ? 1 : 0);
        this.set({ connection: 'throttle' }, probes.throttleListening() ? 1 : 0);
      },
    });
  }

  /**
   * An answer, counted in the registry with the others of its method, route and status when the metrics are read
   * or PENDING_ANSWERS_MAX have come: prom-client hashes the labels of each call, which cost an order status
   * answer at one connection about 8 µs; counted together, the same work takes a fraction of that.
   */
  observeRequest(method: string, route: string, status: string, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    const series = this.pending.get(key);
    if (series) series.seconds.push(seconds);
    else this.pending.set(key, { labels: { method, route, status }, seconds: [seconds] });
    if (++this.pendingCount >= PENDING_ANSWERS_MAX) this.countPending();
  }

  private countPending(): void {
    if (!this.pendingCount) return;
    for (const { labels, seconds } of this.pending.values()) {
      this.requests.inc(labels, seconds.length);
      for (const value of seconds) this.durations.observe(labels, value);
    }
    this.pending.clear();
    this.pendingCount = 0;
  }

  throttleBlocked(): void {
    this.throttleBlocks.inc();
  }
}
