/** `promise`, or a rejection (`timeout`) once `ms` have passed without its answer; the timer does not hold the process open. */
export const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
