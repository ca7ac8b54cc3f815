import test from 'ava';
import { SettlementBacklog } from '../support/settlement-backlog';

// The real `npm run worker` facing a backlog many times larger than its database pool (10 connections),
// of the shop's most common event: a settlement whose invoice handle is `order-<id>` (the card gateway
// plugin's default), so the order is found by its number inside the payment's transaction. The gateway
// holds the worker to its documented request limits: 10 calls in flight, bursts of 50 calls a second.

const BACKLOG = 300;

let backlog: SettlementBacklog;

test.before(async () => {
  backlog = await SettlementBacklog.open('worker_backlog');
});

test.after.always(async () => {
  await backlog?.close();
});

test(`When ${BACKLOG} order-<id> settlements wait for a worker and the provider answers in 150 ms, Then the worker makes all of them final within 60 s under the gateway's request limits, each order paid once, and stops on SIGTERM`, async (t) => {
  const orderIds = await backlog.queue(t, BACKLOG);
  const { fake } = backlog;
  fake.latencyMs = 150;
  fake.enforceLimits(10, 50);

  const [worker] = await backlog.startWorkers(1);
  t.log(`${BACKLOG} settlements final ${(await backlog.allFinal(60_000)).toFixed(1)} s after the worker started`);
  await backlog.assertEachPaidOnce(t, orderIds);

  t.is(fake.rateLimited, 0, 'no call turned away by the gateway\'s limits');
  t.true(fake.maxInFlight <= 10, `at most 10 calls in flight (saw ${fake.maxInFlight})`);

  worker!.signal('SIGTERM');
  t.is(await worker!.exited, 0);
});
