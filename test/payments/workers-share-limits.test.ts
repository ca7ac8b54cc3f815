import test from 'ava';
import { eventually } from '../support/payment-hub-fixture';
import { SettlementBacklog } from '../support/settlement-backlog';

// Two real `npm run worker` processes on one database and Redis, facing a backlog of settlements from a
// gateway that enforces its documented request limits per account (10 calls in flight, bursts of 50
// calls a second): together they must stay within the account's limits, not each within them.

const BACKLOG = 200;

let backlog: SettlementBacklog;

test.before(async () => {
  backlog = await SettlementBacklog.open('workers_share_limits');
});

test.after.always(async () => {
  await backlog?.close();
});

test(`When two workers share a backlog of ${BACKLOG} settlements, Then both take part, every order is paid once, and the gateway never sees more than its limits from the two together`, async (t) => {
  const { fake, shop } = backlog;
  fake.latencyMs = 150;
  fake.enforceLimits(10, 50);

  // Both workers are listening before the first settlement arrives: on a loaded machine one worker can start
  // seconds after the other, and a backlog waiting for them would all go to the first.
  const workers = await backlog.startWorkers(2);
  const orderIds = await backlog.queue(t, BACKLOG);
  t.log(`${BACKLOG} settlements final ${(await backlog.allFinal(60_000)).toFixed(1)} s after the workers started`);
  await backlog.assertEachPaidOnce(t, orderIds);

  t.is(fake.rateLimited, 0, 'no call turned away by the gateway\'s limits');
  t.true(fake.maxInFlight <= 10, `at most 10 calls in flight from both workers (saw ${fake.maxInFlight})`);

  // Each worker reports the jobs it finished with its heartbeat (every 5 s).
  const shares = await eventually(async () => {
    const [rows] = await shop.db.query(`SELECT jobs_finished FROM ${shop.prefix}sidecar_workers`) as any[];
    const finished = rows.map((row: any) => Number(row.jobs_finished));
    return finished.length === 2 && finished.every((n: number) => n > 0) ? finished : null;
  }, 30_000, 'both workers to report finished jobs');
  t.log(`jobs finished per worker: ${shares.join(', ')}`);

  for (const worker of workers) worker.signal('SIGTERM');
  t.deepEqual(await Promise.all(workers.map((worker) => worker.exited)), [0, 0]);
});
