import test, { type ExecutionContext } from 'ava';
import { startServiceProcess } from '../support/service-process';
import {
  assertCaughtUp, assertQueueCarriesAndStop, countAnswers, type Stage, deliverNew, processedThroughQueue, queuesAvailable, redeliverUntilStored, setUp, statusCounts, stored, sweepBusy,
} from '../support/double-fault-stage';

// Catch-up after a double fault: the real `npm run worker` and the API against a MariaDB and a Redis of
// this test's own, which the test kills and starts. Webhooks stored while Redis is away have no job; after
// MariaDB is restarted or the worker killed meanwhile, every one must still be processed, once, within
// 60 s of both being back.

/** Deliveries stored while Redis is away, before the second fault. */
const BEFORE_FAULT = 150;
/** Deliveries sent during and after the second fault (those MariaDB refuses are sent again, as the provider does). */
const AFTER_FAULT = 150;
/** Every delivery settles an order's invoice (`order-<id>`): 5 before Redis goes, the faults' and 5 after. */
const ORDERS = 5 + BEFORE_FAULT + AFTER_FAULT + 5;

/**
 * The first fault: the webhooks go through the queue, then Redis stops and BEFORE_FAULT more are stored while
 * a provider's latency keeps the sweep holding many claims when the second fault comes.
 */
async function redisAwayWithSweepBusy(t: ExecutionContext, name: string) {
  const stage = await setUp(t, name, { orders: ORDERS });
  for (const delivery of await deliverNew(stage, 5)) t.deepEqual(delivery.answers, [200]);
  await processedThroughQueue(stage);

  await stage.redis.stop();
  stage.fake.latencyMs = 150;
  const beforeFault = await deliverNew(stage, BEFORE_FAULT);
  t.true(beforeFault.every(stored), 'stored (and answered 200) while Redis is away');
  await sweepBusy(stage, beforeFault);
  t.log('before the kill:', JSON.stringify(await statusCounts(stage)));
  return stage;
}

/** Redis back: every stored webhook processed once within 60 s, and the queue carries new ones again. */
async function redisBackAndCaughtUp(t: ExecutionContext, stage: Stage) {
  const since = { api: stage.apiLog.entries.length, worker: stage.worker.logs.length };
  await stage.redis.start();
  const recoveredAt = Date.now();
  await queuesAvailable(stage, since).catch((error: Error) => t.log(`(${error.message})`));
  await assertCaughtUp(stage, recoveredAt);
  await assertQueueCarriesAndStop(stage);
}

test.serial('Redis stops, webhooks are stored meanwhile, MariaDB is killed and started again while the sweep processes them, then Redis comes back: every stored webhook is processed once within 60 s', async (t) => {
  const stage = await redisAwayWithSweepBusy(t, 'double_fault_db');

  // MariaDB crashes while the sweep has webhooks in hand; deliveries go on meanwhile (refused: 503).
  await stage.mariadb.stop();
  const duringOutage = deliverNew(stage, AFTER_FAULT / 2, 5);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await stage.mariadb.start();
  await duringOutage;
  t.log('answers while MariaDB was away:', JSON.stringify(countAnswers(stage.deliveries.slice(-AFTER_FAULT / 2))));
  await deliverNew(stage, AFTER_FAULT / 2);
  await redeliverUntilStored(stage);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  t.log('after MariaDB is back, Redis still away:', JSON.stringify(await statusCounts(stage)));

  await redisBackAndCaughtUp(t, stage);
});

test.serial('Redis stops, webhooks are stored meanwhile, the worker is killed while it processes them and started again, then Redis comes back: every stored webhook is processed once within 60 s', async (t) => {
  const stage = await redisAwayWithSweepBusy(t, 'double_fault_worker');

  // The worker dies holding claims; a new one starts while Redis is still away.
  const killed = stage.worker;
  stage.killedWorkers.push(killed);
  await killed.kill();
  t.is(await killed.exited, 'SIGKILL');
  const more = deliverNew(stage, AFTER_FAULT);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  stage.worker = startServiceProcess('worker', stage.workerEnv);
  await stage.worker.logged('worker_started');
  await more;
  t.true(stage.deliveries.every(stored), 'the API stored every delivery (MariaDB stayed up)');
  await new Promise((resolve) => setTimeout(resolve, 2000));
  t.log('after the new worker started, Redis still away:', JSON.stringify(await statusCounts(stage)));

  await redisBackAndCaughtUp(t, stage);
});
