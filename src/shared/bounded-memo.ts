/** Results of a pure function by key, kept until there are `limit` of them, then all forgotten at once. */
export class BoundedMemo<T, K = string> {
  private readonly values = new Map<K, T>();

  constructor(private readonly limit: number) {}

  get(key: K, compute: () => T): T {
    let value = this.values.get(key);
    if (value === undefined) {
      if (this.values.size >= this.limit) this.values.clear();
      value = compute();
      this.values.set(key, value);
    }
    return value;
  }
}
