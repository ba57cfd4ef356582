/**
 * Token bucket: `qps` tokens per second, at most `burst` saved up. `take()` resolves when a token
 * is available. Requests are served in arrival order. `qps <= 0` disables limiting.
 *
 * client-go's default is 5 QPS / 10 burst per clientset, which caps a konnector at ~5 writes/s per
 * side (see kube-bind notes §6); klutch-kit defaults are much higher and configurable.
 */
/**
 * A request found the bucket empty and its wait queue full (`maxWaiting`): it is refused at once
 * instead of waiting behind everyone else. Callers answer it as overload (HTTP 503 with Retry-After).
 */
export class RateLimitQueueFull extends Error {
  constructor(
    readonly waiting: number,
    /** Seconds until the queue has drained at the bucket's rate. */
    readonly retryAfterSeconds: number,
  ) {
    super(`${waiting} requests are already waiting for the API rate limit; try again in ${retryAfterSeconds}s`);
    this.name = 'RateLimitQueueFull';
  }
}

export interface TokenBucketOptions {
  /**
   * Requests that may wait for a token at once; one more is refused with {@link RateLimitQueueFull}.
   * @default Infinity (every request waits its turn)
   */
  maxWaiting?: number;
}

export class TokenBucket {
  /** See {@link TokenBucketOptions.maxWaiting}; may be changed at any time (new waiters only). */
  maxWaiting: number;
  private tokens: number;
  private last: number;
  private readonly waiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
    opts: TokenBucketOptions = {},
  ) {
    this.maxWaiting = opts.maxWaiting ?? Infinity;
    if (!(this.maxWaiting >= 0)) throw new Error(`TokenBucket.maxWaiting: ${opts.maxWaiting} must be a number >= 0`);
    if (!Number.isFinite(qps)) throw new Error(`TokenBucket.qps: ${qps} is not a finite number`);
    if (qps > 0 && (!Number.isInteger(burst) || burst < 1)) {
      throw new Error(`TokenBucket.burst: ${burst} must be an integer >= 1 when qps > 0`);
    }
    this.tokens = burst;
    this.last = this.now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
  }

  /** Takes a token without waiting; false when none is available. */
  tryTake(): boolean {
    if (this.qps <= 0) return true;
    this.refill();
    if (this.waiters.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Resolves when a token is taken; rejects with {@link RateLimitQueueFull} when `maxWaiting` requests already wait. */
  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    if (this.waiters.length >= this.maxWaiting) {
      return Promise.reject(new RateLimitQueueFull(this.waiters.length, Math.max(1, Math.ceil((this.waiters.length + 1) / this.qps))));
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer || this.waiters.length === 0) return;
    this.refill();
    const waitMs = this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.qps) * 1000;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.waiters.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiters.shift()!();
      }
      this.schedule();
    }, Math.ceil(waitMs));
    this.timer.unref?.();
  }

  /** Pending waiters (for metrics/tests). */
  get waiting(): number {
    return this.waiters.length;
  }
}
