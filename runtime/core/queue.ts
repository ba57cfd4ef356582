/**
 * Rate-limited work queue with the semantics of client-go's workqueue:
 * - a key is queued at most once (dedup while waiting);
 * - a key is processed by one worker at a time: adding a key that is being processed marks it dirty and
 *   it is re-queued when the worker calls `done(key)`;
 * - `addAfter(key, ms)` delays, `addRateLimited(key)` delays by the per-key backoff, `forget(key)` resets it;
 * - `shutdown()` wakes every waiting `get()` with `undefined`.
 */

/** The longest delay Node's timers keep: a longer one (or a non-number) fires after 1 ms, with a TimeoutOverflowWarning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay Node's `setTimeout` honours: negative → 0, longer than {@link MAX_TIMER_MS} (a requeue computed
 * from a time in the far future, `Infinity`) → MAX_TIMER_MS, `NaN` (a time that did not parse) →
 * MAX_TIMER_MS too, so a bad timestamp never turns into a 1 ms hot loop.
 */
export function clampDelayMs(ms: number): number {
  if (Number.isNaN(ms)) return MAX_TIMER_MS;
  if (ms <= 0) return 0;
  return Math.min(Math.ceil(ms), MAX_TIMER_MS);
}

export interface RateLimiter<K> {
  /** Delay before the key may be retried; increments its failure count. */
  when(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
}

/** Per-key exponential backoff: base * 2^failures, capped at max (client-go: 5 ms … 1000 s). */
export class ExponentialBackoff<K = string> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1000_000,
  ) {
    if (!(baseMs > 0)) throw new Error(`ExponentialBackoff.baseMs: ${baseMs} must be > 0`);
    if (!(maxMs >= baseMs)) throw new Error(`ExponentialBackoff.maxMs: ${maxMs} must be >= baseMs (${baseMs})`);
  }
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const d = this.baseMs * Math.pow(2, n);
    return Math.min(d, this.maxMs);
  }
  forget(key: K): void {
    this.failures.delete(key);
  }
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface WorkQueueOptions<K> {
  rateLimiter?: RateLimiter<K>;
  /** Called whenever the depth changes (for a gauge). */
  onDepth?: (depth: number) => void;
}

export class WorkQueue<K = string> {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiting = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  private readonly getters: Array<(k: K | undefined) => void> = [];
  private shuttingDown = false;
  readonly rateLimiter: RateLimiter<K>;
  private readonly onDepth?: (depth: number) => void;

  /** Keys waiting (not counting the ones being processed or delayed). */
  get depth(): number {
    return this.queue.length;
  }

  constructor(opts: WorkQueueOptions<K> = {}) {
    this.rateLimiter = opts.rateLimiter ?? new ExponentialBackoff<K>();
    this.onDepth = opts.onDepth;
  }

  /** Keys waiting to be processed (not counting delayed ones or those in flight). */
  get len(): number {
    return this.queue.length;
  }
  /** Keys scheduled by addAfter/addRateLimited that are not due yet. */
  get delayed(): number {
    return this.waiting.size;
  }
  get inFlight(): number {
    return this.processing.size;
  }
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: K): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  private push(key: K): void {
    const g = this.getters.shift();
    if (g) {
      this.dirty.delete(key);
      this.processing.add(key);
      g(key);
    } else {
      this.queue.push(key);
    }
    this.onDepth?.(this.queue.length);
  }

  /** Adds `key` after `delayMs`, clamped by {@link clampDelayMs} (so at most ~24.8 days, never a 1 ms overflow). */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    const delayMs = clampDelayMs(ms);
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.waiting.set(key, { at, timer });
  }

  addRateLimited(key: K): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Next key, or undefined once shut down. The caller must call `done(key)`. */
  get(): Promise<K | undefined> {
    if (this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      this.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.push(key);
    }
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    this.queue.length = 0;
    this.dirty.clear();
    this.onDepth?.(0);
  }
}
