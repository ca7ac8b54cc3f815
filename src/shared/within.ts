/** `within` gave up waiting. */
export class DeadlinePassedError extends Error {
  constructor() {
    super('timeout');
  }
}

/** `promise`, or a rejection (DeadlinePassedError) once `ms` have passed without its answer; the timer does not hold the process open, and goes with the answer. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlinePassedError()), ms).unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
