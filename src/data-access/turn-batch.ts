import { refuseInsideTransaction } from './connection-pool';

export interface TurnBatchOptions {
  /**
   * While calls come one at a time (the last batch held one), a call made with no batch waiting or being read
   * starts at once, alone, instead of waiting for the end of the turn. For reads whose caller waits on them (an
   * order status answer): at one request at a time there is never anything to batch with, and the wait for the
   * turn's end cost a scheduled callback, a promise and a loop phase on every request. Once calls come together
   * they are batched by the turn again: starting the first of a busy turn alone split the batches, and at ten
   * connections cost more round trips than the waits it saved.
   */
  startAlone?: boolean;
}

/**
 * Calls made in the same turn of the event loop, run together: under load many arrive together, and one
 * round trip for several costs this process and the database far less than one each. Alone, a call waits
 * for nothing but the end of the current turn (with `startAlone`, while calls come one at a time, for nothing).
 * `run` answers each item, in the order given.
 */
export class TurnBatch<T, R> {
  private waiting: Waiter<T, R>[] = [];
  /** Batches started and not yet answered. */
  private batchesReading = 0;
  private lastBatchSize = 0;

  /** `limit`: items run together at most; a busier turn starts another batch. */
  constructor(private readonly limit: number, private readonly run: (items: T[]) => Promise<R[]>, private readonly options: TurnBatchOptions = {}) {}

  add(item: T): Promise<R> {
    // Every batch runs on a pooled connection of its own, which work holding one may not wait for.
    refuseInsideTransaction('a batched read');
    return new Promise((resolve, reject) => {
      const waiter = { item, resolve, reject };
      if (this.options.startAlone && this.lastBatchSize <= 1 && this.batchesReading === 0 && !this.waiting.length) return this.start([waiter]);
      if (!this.waiting.length) setImmediate(() => this.flush());
      this.waiting.push(waiter);
      if (this.waiting.length >= this.limit) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting;
    if (!batch.length) return;
    this.waiting = [];
    this.start(batch);
  }

  private start(batch: Waiter<T, R>[]): void {
    this.batchesReading += 1;
    this.lastBatchSize = batch.length;
    let answers: Promise<R[]>;
    try {
      answers = this.run(batch.map((waiter) => waiter.item));
    } catch (error) {
      answers = Promise.reject(error);
    }
    answers.then(
      (results) => {
        this.batchesReading -= 1;
        batch.forEach((waiter, index) => waiter.resolve(results[index]));
      },
      (error: unknown) => {
        this.batchesReading -= 1;
        batch.forEach((waiter) => waiter.reject(error));
      },
    );
  }
}

interface Waiter<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}
