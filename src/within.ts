/** `promise`, or a rejection (`timeout`) once `ms` have passed without its answer; the timer does not hold the process open, and goes with the answer. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms).unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
