import crypto from 'node:crypto';
import test from 'ava';
import { closeRedis, connectRedis, type RedisClient } from '../../src/data-access/redis';
import { silentLogger } from '../../src/logger';
import { FailedAttemptThrottle, type AttemptHolder, type AttemptVerdict, type Reservation, type ThrottleLimits } from '../../src/security/failed-attempt-throttle';

// The throttle against a real Redis: places that are never decided must free themselves within seconds,
// whatever the failure window, and failures already at a (lowered) limit must block rather than refuse
// every attempt as busy. Each test has a namespace of its own; the throttles stand for API processes.

const WINDOW = { windowSeconds: 900, blockSeconds: 900 };
let redis: RedisClient;
const namespaces: string[] = [];
const throttles: FailedAttemptThrottle[] = [];

test.before(async () => {
  redis = await connectRedis('redis://127.0.0.1:6379', silentLogger);
});

test.after.always(async () => {
  await Promise.allSettled(throttles.map((throttle) => throttle.stop()));
  for (const namespace of namespaces) {
    for await (const keys of redis.scanIterator({ MATCH: `${namespace}:*`, COUNT: 1000 })) if (keys.length) await redis.del(keys);
  }
  await closeRedis(redis);
});

function newNamespace(): string {
  const namespace = `shop-sidecar-test:throttle:${crypto.randomUUID()}`;
  namespaces.push(namespace);
  return namespace;
}

async function throttle(namespace: string, limits: Partial<ThrottleLimits> & { maxFailures: number }, blocked?: () => void): Promise<FailedAttemptThrottle> {
  const started = new FailedAttemptThrottle(redis, namespace, { ...WINDOW, ...limits }, silentLogger, { blocked });
  throttles.push(started);
  await started.start();
  return started;
}

function allowed(verdict: AttemptVerdict): Reservation {
  if (verdict.kind !== 'allowed') throw new Error(`expected a place, got ${JSON.stringify(verdict)}`);
  return verdict.reservation;
}

/** Places whose lease has not ended (by Redis' clock, as the throttle reckons them). */
async function placesHeld(namespace: string): Promise<number> {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  let held = 0;
  for await (const keys of redis.scanIterator({ MATCH: `${namespace}:places:*`, COUNT: 1000 })) for (const key of keys) held += await redis.zCount(key, now + 1, '+inf');
  return held;
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

/** Asks for a place until one is given (each ask waits up to a second while the places are busy). */
async function placeWithin(throttle: FailedAttemptThrottle, subject: string, ms: number): Promise<{ reservation: Reservation; after: number }> {
  const started = performance.now();
  for (;;) {
    const verdict = await throttle.reserve([subject]);
    if (verdict.kind === 'allowed') return { reservation: verdict.reservation, after: performance.now() - started };
    if (performance.now() - started > ms) throw new Error(`no place within ${ms} ms: ${JSON.stringify(verdict)}`);
  }
}

test('When the process holding a place dies before deciding it, Then the place is free again within seconds (its lease), not after the failure window', async (t) => {
  const namespace = newNamespace();
  const [dying, other] = [await throttle(namespace, { maxFailures: 1 }), await throttle(namespace, { maxFailures: 1 })];
  allowed(await dying.reserve(['key:helpdesk']));
  // A stopped throttle renews nothing, as a killed process would; its reservation is never decided.
  await dying.stop();

  const busy = await other.reserve(['key:helpdesk']);
  t.deepEqual(busy, { kind: 'blocked', retryAfterSeconds: 1 }, 'the place is still held at first');
  const { reservation, after } = await placeWithin(other, 'key:helpdesk', 10_000);
  t.true(after < 8000, `free after ${after.toFixed(0)} ms`);
  reservation.released();
});

test('When a place is held past its lease, Then it is kept while its holder is there, and lapses once its holder is gone', async (t) => {
  const namespace = newNamespace();
  const [holding, asking] = [await throttle(namespace, { maxFailures: 2 }), await throttle(namespace, { maxFailures: 2 })];
  const present: AttemptHolder = { destroyed: false };
  const leaving = { destroyed: false };
  const kept = allowed(await holding.reserve(['key:slow'], [], present));
  allowed(await holding.reserve(['key:slow'], [], leaving));
  leaving.destroyed = true;

  // Past the lease (5 s) and its renewals: the slow attempt whose client is still there keeps its place.
  await new Promise((resolve) => setTimeout(resolve, 7000));
  t.is(await placesHeld(namespace), 1);
  const freed = allowed(await asking.reserve(['key:slow']));
  t.deepEqual(await asking.reserve(['key:slow']), { kind: 'blocked', retryAfterSeconds: 1 }, 'the live holder still has its place');
  kept.released();
  freed.released();
});

test('When failures already at a limit that has since been lowered meet an attempt, Then the subject is blocked at once, recorded and announced, not refused as busy', async (t) => {
  const namespace = newNamespace();
  const before = await throttle(namespace, { maxFailures: 5 });
  for (let i = 0; i < 4; i++) await allowed(await before.reserve(['key:lowered'])).failed();

  let blocks = 0;
  const lowered = await throttle(namespace, { maxFailures: 2 }, () => { blocks += 1; });
  const { value: verdict, ms } = await timed(lowered.reserve(['key:lowered']));
  t.deepEqual(verdict, { kind: 'blocked', retryAfterSeconds: 900 });
  t.true(ms < 500, `refused after ${ms.toFixed(0)} ms`);
  t.is(blocks, 1, 'the block is counted');
  t.is(lowered.state('key:lowered').kind, 'blocked');
  let blockKeys = 0;
  for await (const keys of redis.scanIterator({ MATCH: `${namespace}:blocked:*`, COUNT: 1000 })) blockKeys += keys.length;
  t.is(blockKeys, 1, 'the block is kept in Redis');
  // Announced: the instance that still has the old limit hears of it too.
  for (let i = 0; i < 40 && before.state('key:lowered').kind !== 'blocked'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.is(before.state('key:lowered').kind, 'blocked');
});

test('When an attempt waiting for a busy place is given up, Then it stops waiting and takes no place', async (t) => {
  const namespace = newNamespace();
  const one = await throttle(namespace, { maxFailures: 1 });
  const holder = allowed(await one.reserve(['key:waiting']));
  const waiter = { destroyed: false };
  setTimeout(() => { waiter.destroyed = true; }, 100);
  const { value: verdict, ms } = await timed(one.reserve(['key:waiting'], [], waiter));
  t.deepEqual(verdict, { kind: 'abandoned' });
  t.true(ms < 500, `stopped waiting after ${ms.toFixed(0)} ms`);
  holder.released();
  for (let i = 0; i < 40 && (await placesHeld(namespace)) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.is(await placesHeld(namespace), 0);
  t.is((await one.reserve(['key:waiting'])).kind, 'allowed');
});

test('When an attempt fails, Then its place becomes a failure for the window; when one succeeds, nothing is left', async (t) => {
  const namespace = newNamespace();
  const one = await throttle(namespace, { maxFailures: 3 });
  await allowed(await one.reserve(['key:counted'])).failed();
  allowed(await one.reserve(['key:counted'])).released();
  for (let i = 0; i < 40 && (await placesHeld(namespace)) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.is(await placesHeld(namespace), 0);
  const failures: string[] = [];
  for await (const keys of redis.scanIterator({ MATCH: `${namespace}:failed:*`, COUNT: 1000 })) failures.push(...keys);
  t.is(failures.length, 1);
  t.is(await redis.get(failures[0]), '1');
  const ttl = await redis.ttl(failures[0]);
  t.true(ttl > 890 && ttl <= 900, `window ${ttl} s`);
});

/** The tokens of the places held in Redis for one subject's key pattern. */
async function placeTokens(namespace: string): Promise<string[]> {
  const tokens: string[] = [];
  for await (const keys of redis.scanIterator({ MATCH: `${namespace}:places:*`, COUNT: 1000 })) for (const key of keys) tokens.push(...await redis.zRange(key, 0, -1));
  return tokens.sort();
}

test('When an attempt that did not fail gives its place back, Then the next attempt of the same subjects takes that place again, and it is given back in Redis once nobody takes it', async (t) => {
  const namespace = newNamespace();
  const one = await throttle(namespace, { maxFailures: 3 });
  allowed(await one.reserve(['key:again'])).released();
  const first = await placeTokens(namespace);
  t.is(first.length, 1, 'kept spare, still counted in Redis');
  allowed(await one.reserve(['key:again'])).released();
  t.deepEqual(await placeTokens(namespace), first, 'the same place, not a new one');
  // Another subject gets a place of its own.
  allowed(await one.reserve(['key:other'])).released();
  t.is((await placeTokens(namespace)).length, 2);
  for (let i = 0; i < 40 && (await placeTokens(namespace)).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.deepEqual(await placeTokens(namespace), [], 'given back after a moment unused');
});

test('When spare places fill a subject\'s limit and failing attempts arrive at once, Then no more are evaluated than the limit', async (t) => {
  const namespace = newNamespace();
  const one = await throttle(namespace, { maxFailures: 3 });
  const held = await Promise.all([1, 2, 3].map(() => one.reserve(['key:spare-limit'])));
  held.forEach((verdict) => allowed(verdict).released());
  t.is((await placeTokens(namespace)).length, 3, 'three spare places');
  const verdicts = await Promise.all(Array.from({ length: 30 }, async () => {
    const verdict = await one.reserve(['key:spare-limit']);
    if (verdict.kind === 'allowed') await verdict.reservation.failed();
    return verdict.kind;
  }));
  t.is(verdicts.filter((kind) => kind === 'allowed').length, 3, JSON.stringify(verdicts));
  t.is(one.state('key:spare-limit').kind, 'blocked');
});

test('When another instance finds a subject busy with places kept spare here, Then they are given back at once and it gets one', async (t) => {
  const namespace = newNamespace();
  const [keeping, asking] = [await throttle(namespace, { maxFailures: 1 }), await throttle(namespace, { maxFailures: 1 })];
  allowed(await keeping.reserve(['key:wanted'])).released();
  const { value: verdict, ms } = await timed(asking.reserve(['key:wanted']));
  allowed(verdict).released();
  // Well before the spare place would have been given back unasked (100 ms), let alone its lease (5 s).
  t.true(ms < 90, `a place after ${ms.toFixed(0)} ms`);
  // And the other way round: the place the asking instance now keeps spare comes back as soon as it is wanted here.
  const back = await timed(keeping.reserve(['key:wanted']));
  allowed(back.value).released();
  t.true(back.ms < 90, `a place back after ${back.ms.toFixed(0)} ms`);
});
