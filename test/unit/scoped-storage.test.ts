import test from 'ava';
import { ScopedStorage, STORE_RIDES_ON_HOOKS } from '../../src/shared/scoped-storage';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => process.nextTick(resolve));

test('When work runs in a scope, Then everything it starts sees its store across awaits, ticks and timers, and nothing outside does', async (t) => {
  const storage = new ScopedStorage<{ request: string }>();
  t.is(storage.get(), undefined);
  const seen = await storage.run({ request: 'r1' }, async () => {
    const inside = [storage.get()?.request];
    await Promise.resolve();
    inside.push(storage.get()?.request);
    await tick();
    inside.push(storage.get()?.request);
    await pause(2);
    inside.push(await new Promise<string | undefined>((resolve) => setImmediate(() => resolve(storage.get()?.request))));
    return inside;
  });
  t.deepEqual(seen, ['r1', 'r1', 'r1', 'r1']);
  t.is(storage.get(), undefined);
});

test('When scopes run at the same time, Then each one\'s work sees its own store, however their awaits interleave', async (t) => {
  const storage = new ScopedStorage<number>();
  const mixedUp: string[] = [];
  await Promise.all(Array.from({ length: 20 }, (_, i) => storage.run(i, async () => {
    for (let step = 0; step < 5; step += 1) {
      await (step % 2 ? pause(Math.random() * 3) : tick());
      if (storage.get() !== i) mixedUp.push(`scope ${i} saw ${storage.get()} at step ${step}`);
    }
  })));
  t.deepEqual(mixedUp, []);
  t.is(storage.get(), undefined);
});

test('When a scope\'s work throws at once or fails later, Then the failure is its outcome and the scope is closed', async (t) => {
  const storage = new ScopedStorage<string>();
  await t.throwsAsync(storage.run('at once', () => { throw new Error('refused'); }), { message: 'refused' });
  await t.throwsAsync(storage.run('later', async () => { await tick(); throw new Error('declined'); }), { message: 'declined' });
  t.throws(() => storage.open('sync', () => { throw new Error('thrown'); }), { message: 'thrown' });
  // Every scope above is closed. Work the next one leaves behind sees nothing once it is closed too where the store
  // rides on async_hooks (the store is switched off, so no hook runs for any promise while no scope is open), and
  // the store it started with where V8's context frame carries it (nothing to switch off).
  let later: string | undefined = 'not yet';
  const scope = storage.open('last', () => setTimeout(() => { later = storage.get(); }, 5));
  scope.close();
  await pause(20);
  t.is(later as string | undefined, STORE_RIDES_ON_HOOKS ? undefined : 'last');
});
