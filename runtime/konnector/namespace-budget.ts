/**
 * A hard cap on the objects a provider can make the konnector create in one app-cluster namespace
 * (copies of claimed objects, adopted objects). The informer cache alone cannot enforce it: several
 * workers create at once and each sees the cache before the others' creates arrive, so creates in flight
 * are counted until the cache shows them (or, if it never does, for `inflightTtlMs`).
 */
export class NamespaceBudget {
  /** namespace → name → when its create was allowed. */
  private readonly inflight = new Map<string, Map<string, number>>();

  constructor(
    readonly max: number,
    private readonly now: () => number = Date.now,
    private readonly inflightTtlMs = 60_000,
  ) {}

  /**
   * Whether `name` may be created in `namespace`, given the names of the counted objects the cache
   * holds there. An allowed create counts until the cache holds it; `release` it when it failed.
   */
  tryTake(namespace: string, name: string, cached: Iterable<string>): boolean {
    const have = new Set(cached);
    const t = this.now();
    const mine = this.inflight.get(namespace) ?? new Map<string, number>();
    for (const [n, at] of mine) if (have.has(n) || t - at > this.inflightTtlMs) mine.delete(n);
    if (have.has(name) || mine.has(name)) return true;
    if (have.size + mine.size >= this.max) {
      if (mine.size === 0) this.inflight.delete(namespace);
      return false;
    }
    mine.set(name, t);
    this.inflight.set(namespace, mine);
    return true;
  }

  release(namespace: string, name: string): void {
    const mine = this.inflight.get(namespace);
    mine?.delete(name);
    if (mine?.size === 0) this.inflight.delete(namespace);
  }
}
