/** Results of a pure function by key, kept until there are `limit` of them, then all forgotten at once. */
export class BoundedMemo<T> {
  private readonly values = new Map<string, T>();

  constructor(private readonly limit: number) {}

  get(key: string, compute: () => T): T {
    let value = this.values.get(key);
    if (value === undefined) {
      if (this.values.size >= this.limit) this.values.clear();
      value = compute();
      this.values.set(key, value);
    }
    return value;
  }
}
