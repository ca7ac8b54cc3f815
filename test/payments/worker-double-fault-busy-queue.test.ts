import test from 'ava';
import {
  assertCaughtUp, assertQueueCarriesAndStop, countAnswers, deliverNew, processedThroughQueue, query, redeliverUntilStored, setUp, statusCounts, webhooks,
} from '../support/double-fault-stage';
import { eventually } from '../support/payment-hub-fixture';

// The issue's own sequence, smaller: deliveries arrive faster than the worker can process them (its queue
// holds a backlog, its places are full), Redis is lost with that backlog, MariaDB is killed and started
// again while Redis is still away, then Redis comes back. Meanwhile the sweep processes what it can from the
// table; every stored webhook must be processed, once, within 60 s of both being back.
// DOUBLE_FAULT_* variables change the sizes and timings (e.g. DOUBLE_FAULT_DELIVERIES=2000).

const DELIVERIES = Number(process.env.DOUBLE_FAULT_DELIVERIES ?? 1000);
/** A slow provider, so a backlog builds up in the queue. */
const PROVIDER_LATENCY_MS = Number(process.env.DOUBLE_FAULT_LATENCY_MS ?? 300);
/** From Redis lost to MariaDB killed: 0 kills it with the worker's places full. */
const KILL_AFTER_MS = Number(process.env.DOUBLE_FAULT_KILL_AFTER_MS ?? 0);
const MARIADB_DOWN_MS = Number(process.env.DOUBLE_FAULT_MARIADB_DOWN_MS ?? 3000);
/** Redis stays away this long after MariaDB is back (the sweep alone has to work meanwhile). */
const REDIS_BACK_AFTER_MS = Number(process.env.DOUBLE_FAULT_REDIS_BACK_AFTER_MS ?? 15_000);

test('A backlog in the queue, Redis lost with it, MariaDB killed and started again while Redis is away, then Redis back: every stored webhook is processed once within 60 s', async (t) => {
  const stage = await setUp(t, 'double_fault_busy', { orders: DELIVERIES + 10 });
  for (const delivery of await deliverNew(stage, 5)) t.deepEqual(delivery.answers, [200]);
  await processedThroughQueue(stage);

  stage.fake.latencyMs = PROVIDER_LATENCY_MS;
  const sending = deliverNew(stage, DELIVERIES, 20);
  // Redis goes while the worker is busy and the queue holds a backlog.
  await eventually(async () => {
    const rows = await query(stage, `SELECT SUM(status = 'PROCESSED') AS done, COUNT(*) AS n FROM ${webhooks(stage)}`);
    return rows !== null && Number(rows[0].done) >= 200 && Number(rows[0].n) >= Math.min(DELIVERIES, 600);
  }, 30_000, 'the worker to be busy with a backlog');
  t.log('when Redis goes:', JSON.stringify(await statusCounts(stage)));
  await stage.redis.stop();
  await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS));
  t.log('when MariaDB goes:', JSON.stringify(await statusCounts(stage)));
  await stage.mariadb.stop();
  await new Promise((resolve) => setTimeout(resolve, MARIADB_DOWN_MS));
  await stage.mariadb.start();
  await sending;
  t.log('answers:', JSON.stringify(countAnswers(stage.deliveries)));
  await redeliverUntilStored(stage);
  const mariadbBackAt = Date.now();
  while (Date.now() < mariadbBackAt + REDIS_BACK_AFTER_MS) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(5000, mariadbBackAt + REDIS_BACK_AFTER_MS - Date.now())));
    t.log(`MariaDB back ${((Date.now() - mariadbBackAt) / 1000).toFixed(0)} s, Redis still away:`, JSON.stringify(await statusCounts(stage)));
  }

  // Redis still away: the sweep alone has processed every stored webhook no claim holds (those claimed when
  // MariaDB went are held until their lease runs out).
  const neverClaimed = await query(stage, `SELECT COUNT(*) AS n FROM ${webhooks(stage)} WHERE status = 'PENDING' AND claim_token IS NULL`);
  t.is(Number(neverClaimed?.[0].n), 0, `the sweep processed the webhooks stored before and after the restart within ${REDIS_BACK_AFTER_MS / 1000} s, Redis being away`);

  await stage.redis.start();
  const recoveredAt = Date.now();
  stage.fake.latencyMs = 0;
  await assertCaughtUp(stage, recoveredAt);
  await assertQueueCarriesAndStop(stage);
});
