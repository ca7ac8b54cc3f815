/**
 * Loaded into a worker process by the payments bench (`node --require dist/bench/worker-probe.js`), never by
 * the service itself: every 250 ms it tells the bench over IPC what the worker is doing, read from the
 * libraries' own objects, without changing what they do:
 * - the event loop's delay (how late timers and socket callbacks run),
 * - provider calls in flight and calls waiting for one of the agent's sockets (node:http agents),
 * - the database pool: connections open, idle, callers waiting, how long getConnection took and how long
 *   each connection was held until given back (with the wait, what sets a pool's pace),
 * - bee-queue: jobs running, job fetches outstanding, jobs finished.
 * Nothing is sent until the worker has said 'ready' itself.
 */
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

interface AgentInternals { requests: Record<string, unknown[]>; sockets: Record<string, unknown[]> }
interface PoolInternals { _allConnections: { length: number }; _freeConnections: { length: number }; _connectionQueue: { length: number } }
interface QueueInternals { running?: number; queued?: number; activeJobs?: { size: number } }

const agents = new Set<AgentInternals>();
let providerInFlight = 0;
let providerStarted = 0;
type AddRequest = (this: AgentInternals, req: http.ClientRequest, ...rest: unknown[]) => unknown;
const agentPrototype = http.Agent.prototype as unknown as { addRequest: AddRequest };
const originalAddRequest = agentPrototype.addRequest;
agentPrototype.addRequest = function addRequest(this: AgentInternals, req: http.ClientRequest, ...rest: unknown[]) {
  agents.add(this);
  providerInFlight += 1;
  providerStarted += 1;
  req.once('close', () => { providerInFlight -= 1; });
  return originalAddRequest.call(this, req, ...rest);
};

const pools = new Set<PoolInternals>();
let acquisitions = 0;
let acquireMs = 0;
let acquireMaxMs = 0;
let holds = 0;
let holdMs = 0;
const heldSince = new WeakMap<object, number>();
try {
  // mysql2's callback pool, under both its own promise wrapper and TypeORM's.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  // By file: the package's exports do not name its pool module.
  const BasePool = require(path.join(path.dirname(require.resolve('mysql2')), 'lib/base/pool.js')) as {
    prototype: { getConnection: (cb: (...a: unknown[]) => void) => unknown; releaseConnection: (connection: object) => unknown };
  };
  const original = BasePool.prototype.getConnection;
  const release = BasePool.prototype.releaseConnection;
  BasePool.prototype.getConnection = function getConnection(this: PoolInternals, cb: (...a: unknown[]) => void) {
    pools.add(this);
    const asked = performance.now();
    return original.call(this, (...args: unknown[]) => {
      const waited = performance.now() - asked;
      acquisitions += 1;
      acquireMs += waited;
      acquireMaxMs = Math.max(acquireMaxMs, waited);
      if (args[1] && typeof args[1] === 'object') heldSince.set(args[1], performance.now());
      cb(...args);
    });
  };
  BasePool.prototype.releaseConnection = function releaseConnection(this: PoolInternals, connection: object) {
    const since = heldSince.get(connection);
    if (since !== undefined) {
      heldSince.delete(connection);
      holds += 1;
      holdMs += performance.now() - since;
    }
    return release.call(this, connection);
  };
} catch {
  // another mysql2 layout: no pool figures
}

const queues = new Set<QueueInternals>();
let jobsFinished = 0;
try {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Queue = require('bee-queue') as { prototype: { process: (...a: unknown[]) => unknown; _finishJob: (...a: unknown[]) => unknown } };
  const process_ = Queue.prototype.process;
  Queue.prototype.process = function process(this: QueueInternals, ...args: unknown[]) {
    queues.add(this);
    return process_.apply(this, args);
  };
  const finish = Queue.prototype._finishJob;
  Queue.prototype._finishJob = function finishJob(this: QueueInternals, ...args: unknown[]) {
    jobsFinished += 1;
    return finish.apply(this, args);
  };
} catch {
  // no bee-queue figures
}

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

/** One report: what the process did since the last one, and its state now. */
export interface ProbeSample {
  at: number;
  cpuMs: number;
  loopDelay: { meanMs: number; p99Ms: number; maxMs: number };
  provider: { inFlight: number; waitingForSocket: number; started: number };
  pool: { open: number; idle: number; waiting: number; acquisitions: number; acquireMs: number; acquireMaxMs: number; holds: number; holdMs: number };
  queue: { running: number; fetching: number; active: number; finished: number };
}

function sample(): ProbeSample {
  const sum = <T>(items: Iterable<T>, count: (item: T) => number) => [...items].reduce((total, item) => total + count(item), 0);
  const cpu = process.cpuUsage();
  const result: ProbeSample = {
    at: Date.now(),
    cpuMs: (cpu.user + cpu.system) / 1000,
    loopDelay: { meanMs: delay.mean / 1e6, p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 },
    provider: {
      inFlight: providerInFlight,
      waitingForSocket: sum(agents, (agent) => sum(Object.values(agent.requests), (list) => list.length)),
      started: providerStarted,
    },
    pool: {
      open: sum(pools, (pool) => pool._allConnections.length),
      idle: sum(pools, (pool) => pool._freeConnections.length),
      waiting: sum(pools, (pool) => pool._connectionQueue.length),
      acquisitions, acquireMs, acquireMaxMs, holds, holdMs,
    },
    queue: {
      running: sum(queues, (queue) => queue.running ?? 0),
      fetching: sum(queues, (queue) => queue.queued ?? 0),
      active: sum(queues, (queue) => queue.activeJobs?.size ?? 0),
      finished: jobsFinished,
    },
  };
  delay.reset();
  acquireMaxMs = 0;
  return result;
}

if (process.send) {
  const send = process.send.bind(process);
  let started = false;
  // Start once the worker itself has said it is ready, so the bench's wait for 'ready' sees that first.
  process.send = ((message: unknown, ...rest: unknown[]) => {
    const sent = (send as (...a: unknown[]) => boolean)(message, ...rest);
    if (message === 'ready' && !started) {
      started = true;
      setInterval(() => {
        if (process.connected) send({ probe: sample() });
      }, 250).unref();
    }
    return sent;
  }) as typeof process.send;
}
