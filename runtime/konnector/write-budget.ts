/**
 * A write budget per object: when the two sides keep rewriting one object (a status fight — something
 * in the app cluster rewrites the status the provider owns, or a provider keeps rewriting what the
 * konnector copies down), every rewrite makes the konnector write it back, for ever, against both API
 * servers' budgets and the control plane's fair share of every other consumer. So the konnector spends
 * at most `writes` writes on one object (per binding and direction) in any `windowMs` (a sliding
 * window); past it it backs off: the write waits until the window lets the next one through, and the
 * binding shows `WriteBudgetExhausted` naming the object, with a `Warning` Event and the metric
 * `klutch_konnector_limited_total{limit="WriteBudgetExhausted"}` (binding-limits.ts). The condition goes
 * once a reconcile of that object finds nothing to write (the fight ended). Ordinary objects are far
 * below the default: each status change of a provider object is one write.
 */

export interface WriteBudgetOptions {
  /** Writes of one object allowed per window. */
  readonly writes: number;
  /** The window, ms. */
  readonly windowMs: number;
}

/** @default of `--write-budget` (writes) and `--write-budget-window` (windowMs): 20 writes of one object per minute. */
export const DEFAULT_WRITE_BUDGET: WriteBudgetOptions = { writes: 20, windowMs: 60_000 };

/** Keys tracked before a sweep drops those whose writes all left the window. */
const SWEEP_AT = 10_000;

export class WriteBudget {
  /** key → times of the writes in the window, oldest first. */
  private readonly writes = new Map<string, number[]>();

  constructor(
    readonly opts: WriteBudgetOptions = DEFAULT_WRITE_BUDGET,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(opts.writes) || opts.writes < 1) throw new Error(`WriteBudget: writes ${opts.writes} must be an integer >= 1`);
    if (!Number.isFinite(opts.windowMs) || opts.windowMs < 1) throw new Error(`WriteBudget: windowMs ${opts.windowMs} must be >= 1`);
  }

  /**
   * Takes one write of `key`: undefined when it may be written now (and counts it), else the ms until the
   * window lets the next write through.
   */
  take(key: string): number | undefined {
    const t = this.now();
    if (this.writes.size >= SWEEP_AT) this.sweep(t);
    const w = this.recent(key, t);
    if (w.length >= this.opts.writes) return Math.max(1, Math.ceil(w[0] + this.opts.windowMs - t));
    w.push(t);
    this.writes.set(key, w);
    return undefined;
  }

  /** The object is gone: its writes no longer count. */
  forget(key: string): void {
    this.writes.delete(key);
  }

  private recent(key: string, t: number): number[] {
    const w = this.writes.get(key) ?? [];
    while (w.length > 0 && t - w[0] >= this.opts.windowMs) w.shift();
    return w;
  }

  private sweep(t: number): void {
    for (const k of [...this.writes.keys()]) if (this.recent(k, t).length === 0) this.writes.delete(k);
  }
}

/** `20 writes per 1m`, for messages. */
export function describeBudget(o: WriteBudgetOptions): string {
  const s = o.windowMs % 60_000 === 0 ? `${o.windowMs / 60_000}m` : o.windowMs % 1000 === 0 ? `${o.windowMs / 1000}s` : `${o.windowMs}ms`;
  return `${o.writes} writes per ${s}`;
}
