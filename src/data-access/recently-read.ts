/** A value read again at most once per `maxAgeMs`; callers arriving during a read share it. */
export class RecentlyRead<T> {
  private cached?: { value: T; readAt: number };
  private inFlight?: Promise<T>;

  constructor(private readonly read: () => Promise<T>, private readonly maxAgeMs: number) {}

  get(): Promise<T> {
    if (this.cached && Date.now() - this.cached.readAt < this.maxAgeMs) return Promise.resolve(this.cached.value);
    this.inFlight ??= this.read()
      .then((value) => {
        this.cached = { value, readAt: Date.now() };
        return value;
      })
      .finally(() => { this.inFlight = undefined; });
    return this.inFlight;
  }

  /** The next `get` reads again (after a write that changed the value). */
  forget(): void {
    this.cached = undefined;
  }
}
