import test from 'ava';
import { TurnBatch } from '../../src/data-access/turn-batch';

/** A batch runner that records each run's items and answers when told to. */
function runner() {
  const runs: { items: number[]; answer: () => void; fail: (error: Error) => void }[] = [];
  const run = (items: number[]) => new Promise<string[]>((resolve, reject) => {
    runs.push({ items, answer: () => resolve(items.map((item) => `order ${item}`)), fail: reject });
  });
  return { runs, run };
}

test('When calls come in one turn, Then they are read in one run and each gets its own answer', async (t) => {
  const { runs, run } = runner();
  const batch = new TurnBatch(100, run);
  const answers = [batch.add(1), batch.add(2), batch.add(3)];
  t.is(runs.length, 0, 'nothing runs before the turn ends');
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(runs.map((r) => r.items), [[1, 2, 3]]);
  runs[0].answer();
  t.deepEqual(await Promise.all(answers), ['order 1', 'order 2', 'order 3']);
});

test('When a call comes alone (startAlone) with nothing waiting or read, Then it runs at once; calls that come while it is read are batched, and after a batch of several the next call waits for the turn again', async (t) => {
  const { runs, run } = runner();
  const batch = new TurnBatch(100, run, { startAlone: true });
  const first = batch.add(1);
  t.deepEqual(runs.map((r) => r.items), [[1]], 'the lone call runs before add returns');
  const later = [batch.add(2), batch.add(3)];
  t.is(runs.length, 1, 'the later calls wait for the turn');
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(runs.map((r) => r.items), [[1], [2, 3]]);
  runs[1].answer();
  runs[0].answer();
  t.is(await first, 'order 1');
  t.deepEqual(await Promise.all(later), ['order 2', 'order 3']);
  // Nothing read any more, but the last batch held two: calls come together, so the next one waits for the turn.
  const next = batch.add(4);
  t.is(runs.length, 2, 'after a batch of several, a call waits for the turn again');
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(runs[2].items, [4]);
  runs[2].answer();
  t.is(await next, 'order 4');
  // That batch held one: one at a time again, so the next lone call runs at once.
  const alone = batch.add(5);
  t.deepEqual(runs[3].items, [5]);
  runs[3].answer();
  t.is(await alone, 'order 5');
});

test('When a run fails, or throws before it has a promise, Then each of its calls is refused with the error, and the next call starts alone again', async (t) => {
  const batch = new TurnBatch<number, string>(100, (items) => {
    if (items[0] === 1) throw new Error('no connection');
    return Promise.reject(new Error('the database went away'));
  }, { startAlone: true });
  await t.throwsAsync(batch.add(1), { message: 'no connection' });
  await t.throwsAsync(batch.add(2), { message: 'the database went away' });
});

test('When more calls come in one turn than the limit, Then a full batch runs at once and the rest at the turn\'s end', async (t) => {
  const { runs, run } = runner();
  const batch = new TurnBatch(2, run);
  const answers = [batch.add(1), batch.add(2), batch.add(3)];
  t.deepEqual(runs.map((r) => r.items), [[1, 2]]);
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(runs.map((r) => r.items), [[1, 2], [3]]);
  runs.forEach((r) => r.answer());
  t.deepEqual(await Promise.all(answers), ['order 1', 'order 2', 'order 3']);
});
