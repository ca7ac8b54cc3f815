import test from 'ava';
import { DeadlinePassedError, within } from '../../src/shared/within';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const failingAfter = (ms: number, error: Error) => new Promise<never>((_, reject) => setTimeout(() => reject(error), ms));

test('When the answer comes in time, Then it is the outcome, a value or a failure', async (t) => {
  t.is(await within(after(5, 'paid'), 1000), 'paid');
  await t.throwsAsync(within(failingAfter(5, new Error('declined')), 1000), { message: 'declined' });
  t.is(await within(after(5, 'paid'), 1000, 'late'), 'paid');
  await t.throwsAsync(within(failingAfter(5, new Error('declined')), 1000, 'late'), { message: 'declined' });
});

test('When the time passes first, Then it is DeadlinePassedError, or `late` when given (even an undefined one)', async (t) => {
  await t.throwsAsync(within(after(200, 'paid'), 10), { instanceOf: DeadlinePassedError });
  t.is(await within(after(200, 'paid'), 10, 'late'), 'late');
  t.is(await within(after(200, 'paid'), 10, undefined), undefined);
});

test('When the work fails with a bound of its own that passed, Then `late` is the outcome; without `late`, that failure', async (t) => {
  t.is(await within(failingAfter(5, new DeadlinePassedError()), 1000, 'late'), 'late');
  await t.throwsAsync(within(failingAfter(5, new DeadlinePassedError()), 1000), { instanceOf: DeadlinePassedError });
});

test('When the work fails after the deadline, Then nothing is left unhandled and the outcome stays the deadline\'s', async (t) => {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    t.is(await within(failingAfter(30, new Error('too late to matter')), 5, 'late'), 'late');
    await t.throwsAsync(within(failingAfter(30, new Error('too late to matter')), 5), { instanceOf: DeadlinePassedError });
    await after(60, null);
    t.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', listener);
  }
});
