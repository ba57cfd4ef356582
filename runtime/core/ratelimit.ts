/**
 * Token bucket: `qps` tokens per second, at most `burst` saved up. `take()` resolves when a token
 * is available. Requests are served in arrival order. `qps <= 0` disables limiting.
 *
 * client-go's default is 5 QPS / 10 burst per clientset, which caps a konnector at ~5 writes/s per
 * side (see kube-bind notes §6); klutch-kit defaults are much higher and configurable.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly waiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
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

  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
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
