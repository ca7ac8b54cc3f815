import { refuseInsideTransaction } from './connection-pool';

/**
 * Calls made in the same turn of the event loop, run together: under load many arrive together, and one
 * round trip for several costs this process and the database far less than one each. Alone, a call waits
 * for nothing but the end of the current turn. `run` answers each item, in the order given.
 */
export class TurnBatch<T, R> {
  private waiting: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];

  /** `limit`: items run together at most; a busier turn starts another batch. */
  constructor(private readonly limit: number, private readonly run: (items: T[]) => Promise<R[]>) {}

  add(item: T): Promise<R> {
    // Every batch runs on a pooled connection of its own, which work holding one may not wait for.
    refuseInsideTransaction('a batched read');
    return new Promise((resolve, reject) => {
      if (!this.waiting.length) setImmediate(() => this.flush());
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.limit) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting;
    if (!batch.length) return;
    this.waiting = [];
    Promise.resolve()
      .then(() => this.run(batch.map((waiter) => waiter.item)))
      .then(
        (results) => batch.forEach((waiter, index) => waiter.resolve(results[index])),
        (error: unknown) => batch.forEach((waiter) => waiter.reject(error)),
      );
  }
}
