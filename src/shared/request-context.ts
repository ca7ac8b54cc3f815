import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line written while handling one request should carry. */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `handle` (and everything it starts, across awaits) as part of the request. */
export function runInRequest<T>(context: RequestContext, handle: () => T): T {
  return storage.run(context, handle);
}

/** The ID of the request being handled here, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
