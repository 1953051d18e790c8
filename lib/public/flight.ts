// A small in-process cache with single-flight loading for the public endpoints: however many requests ask for
// the same website at once, one load runs and every caller shares its answer until it is `ttlMs` old. A load
// that fails is not kept, so the next caller tries again.

export class FlightCache<T> {
  private readonly entries = new Map<string, { at: number; value: T }>();
  private readonly loading = new Map<string, Promise<T>>();

  constructor(
    private readonly ttlMs: number,
    /** Entries kept at most; past it the cache starts over (a flood of made-up keys must not grow memory). */
    private readonly maxEntries = 50_000,
  ) {}

  get(key: string, load: () => Promise<T>, now = Date.now()): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return Promise.resolve(hit.value);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const started = load().then(
      (value) => {
        this.loading.delete(key);
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(key, { at: now, value });
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, started);
    return started;
  }
}
