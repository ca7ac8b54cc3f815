/** Results of a pure function by key, kept until there are `limit` of them, then all forgotten at once. */
export class BoundedMemo<T, K = string> {
  private readonly values = new Map<K, T>();

  constructor(private readonly limit: number) {}

  /** `compute` is given the key, so that a hot caller can pass one function made once rather than a closure per call. */
  get(key: K, compute: (key: K) => T): T {
    let value = this.values.get(key);
    if (value === undefined) {
      if (this.values.size >= this.limit) this.values.clear();
      value = compute(key);
      this.values.set(key, value);
    }
    return value;
  }
}
