import { ScopedStorage, type StoreScope } from './scoped-storage';

/** What every log line written while handling one request should carry. */
export interface RequestContext {
  requestId: string;
}

const storage = new ScopedStorage<RequestContext>();

/**
 * Runs `handle` (and everything it starts, across awaits) as part of the request, until the returned scope is
 * closed (when the request's answer has ended).
 */
export function openRequest<T>(context: RequestContext, handle: () => T): StoreScope<T> {
  return storage.open(context, handle);
}

/** The ID of the request being handled here, if any. */
export function currentRequestId(): string | undefined {
  return storage.get()?.requestId;
}
