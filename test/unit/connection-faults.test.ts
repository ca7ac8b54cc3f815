import test from 'ava';
import sinon from 'sinon';
import { databaseUnavailable, databaseUnreachable, lockWaitSeconds, LOCK_WAIT_SECONDS, StatementTimeoutError, ConnectionWaitTimeoutError } from '../../src/data-access/connection-pool';
import { WorkerLoops } from '../../src/entry-points/worker/worker-loops';

test('A statement\'s bound, a lost, refused or timed-out connection count as the database unreachable; a refused statement or a busy pool do not', (t) => {
  t.true(databaseUnreachable(new StatementTimeoutError(4000)));
  t.true(databaseUnreachable(Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true })));
  t.true(databaseUnreachable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
  t.true(databaseUnreachable(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' })));
  t.false(databaseUnreachable(Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY', errno: 1062 })));
  t.false(databaseUnreachable(Object.assign(new Error('Lock wait timeout exceeded'), { code: 'ER_LOCK_WAIT_TIMEOUT' })));
  t.false(databaseUnreachable(new ConnectionWaitTimeoutError(5000, 10)));
  t.false(databaseUnreachable(new Error('Pool is closed.')));
  t.false(databaseUnreachable('text'));
  t.false(databaseUnreachable(null));
  t.true(databaseUnreachable(Object.assign(new Error('Query failed'), { driverError: new StatementTimeoutError(4000) })), 'TypeORM\'s wrapping counts as the error it wraps');
  t.true(databaseUnavailable(new ConnectionWaitTimeoutError(5000, 10)), 'a request is told to come back when no connection became free');
  t.false(databaseUnavailable(Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' })));
});

test('A session waits for locks two seconds less than its statements may take, at most LOCK_WAIT_SECONDS and at least one', (t) => {
  t.is(lockWaitSeconds(12_000), LOCK_WAIT_SECONDS);
  t.is(lockWaitSeconds(600_000), LOCK_WAIT_SECONDS);
  t.is(lockWaitSeconds(4000), 2);
  t.is(lockWaitSeconds(1000), 1);
});

test('A loop runs one pass at a time; a pass is stalled once it has made no progress for the bound, and progress or its end clears it', async (t) => {
  const clock = sinon.useFakeTimers({ now: 1_000_000 });
  t.teardown(() => clock.restore());
  const loops = new WorkerLoops();
  let report: () => void = () => undefined;
  let finish: () => void = () => undefined;
  const pass = loops.run('sweep', (progress) => {
    report = progress;
    return new Promise<void>((resolve) => { finish = resolve; });
  });
  t.truthy(pass);
  t.false(loops.run('sweep', async () => undefined), 'a second pass waits for the first');
  t.deepEqual(loops.running(), ['sweep']);

  clock.tick(9_000);
  t.deepEqual(loops.stalled(10_000), []);
  clock.tick(1_000);
  t.deepEqual(loops.stalled(10_000), [{ loop: 'sweep', stuckSeconds: 10 }]);
  report();
  t.deepEqual(loops.stalled(10_000), [], 'progress starts the bound afresh');
  clock.tick(12_000);
  t.deepEqual(loops.stalled(10_000), [{ loop: 'sweep', stuckSeconds: 12 }]);

  finish();
  await pass;
  t.deepEqual(loops.stalled(10_000), [], 'an ended pass is not stalled');
  t.deepEqual(loops.running(), []);
  t.truthy(loops.run('sweep', async () => undefined), 'the next pass may start');
});
