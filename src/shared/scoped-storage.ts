import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether this Node's AsyncLocalStorage is carried by async_hooks (Node 20; Node 24 and 26 only with
 * `--no-async-context-frame`) rather than by V8's context frame. While such a store is enabled, every promise,
 * tick and timer created anywhere in the process runs hooks: on Node 20, 3.5% of the instructions of an order status
 * answer (bench/results/order-status-warm-up-2026-11-30.md). The hook-carried class is the one with `_enable`
 * (Node's lib/internal/async_local_storage/async_hooks.js).
 */
export const STORE_RIDES_ON_HOOKS = typeof (AsyncLocalStorage.prototype as { _enable?: unknown })._enable === 'function';

/** An open scope: `result` is what the scope's work returned; `close` ends the scope (once; later calls do nothing). */
export interface StoreScope<R> {
  result: R;
  close(): void;
}

/**
 * An AsyncLocalStorage that is switched on only while a scope is open. Where the store is carried by async_hooks,
 * it is disabled when its last open scope closes, so that work outside every scope (an order status lookup beside
 * no staff request or transaction) pays nothing for it. Work a scope left behind still sees the store while any
 * scope is open, and nothing once none is: a store says what is being done now, never what was.
 */
export class ScopedStorage<T> {
  private readonly storage = new AsyncLocalStorage<T>();
  private openScopes = 0;

  /** Runs `work` with `value` as the store of everything it starts, until the returned scope is closed. */
  open<R>(value: T, work: () => R): StoreScope<R> {
    this.openScopes += 1;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.openScopes -= 1;
      if (this.openScopes === 0 && STORE_RIDES_ON_HOOKS) this.storage.disable();
    };
    try {
      return { result: this.storage.run(value, work), close };
    } catch (error) {
      close();
      throw error;
    }
  }

  /** Runs `work` with `value` as the store until the promise it returns settles. */
  run<R>(value: T, work: () => Promise<R>): Promise<R> {
    let scope: StoreScope<Promise<R>>;
    try {
      scope = this.open(value, work);
    } catch (error) {
      return Promise.reject(error);
    }
    return scope.result.finally(scope.close);
  }

  /** The store of the open scope this code runs in, if any. */
  get(): T | undefined {
    return this.storage.getStore();
  }
}
