/** `within` gave up waiting. */
export class DeadlinePassedError extends Error {
  constructor() {
    super('timeout');
  }
}

/**
 * `promise`'s outcome, or, once `ms` have passed without it, a rejection (DeadlinePassedError). Given `late`, the
 * outcome is `late` instead, both when the time passes and when `promise` itself fails with DeadlinePassedError (a
 * bound inside it that passed). The timer does not hold the process open, and goes with the answer. One promise
 * settled by the timer or the answer, whichever comes first: a race with a rejecting timer, then a `finally` (and a
 * `catch` for `late`), took five promises a call, and the order status route awaits two such bounds an answer.
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T>;
export function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L>;
export function within<T, L>(promise: Promise<T>, ms: number, ...late: [L] | []): Promise<T | L> {
  const answersLate = late.length === 1;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (answersLate ? resolve(late[0] as L) : reject(new DeadlinePassedError())), ms).unref();
    promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, (error: unknown) => {
      clearTimeout(timer);
      if (answersLate && error instanceof DeadlinePassedError) resolve(late[0] as L); else reject(error);
    });
  });
}
