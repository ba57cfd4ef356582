/**
 * Per-identity limits of the bind backend. An identity is one OIDC subject (`iss` + `sub`); each of
 * its app clusters (`clusterID`) gets a cluster namespace on the provider.
 *
 * - `maxClusters` (`--max-clusters-per-identity`): a bind that would create one cluster namespace
 *   more is refused with 403. Re-binding an app cluster that is already bound is always allowed.
 * - `bindRatePerMinute`/`bindBurst` (`--bind-rate`, `--bind-burst`): a token bucket per identity in
 *   each replica; a bind beyond it is refused with 429 and Retry-After. With N replicas behind one
 *   Service an identity gets at most N times the rate.
 */
import { TokenBucket } from '../core/ratelimit.js';

export interface IdentityLimits {
  /** App clusters (cluster namespaces) per identity; 0: unlimited. */
  maxClusters: number;
  /** Binds per minute per identity; 0: unlimited. */
  bindRatePerMinute: number;
  /** Binds an identity may make at once before the rate applies. */
  bindBurst: number;
}

/** A bind refused by a per-identity limit; the server answers `status` with this message. */
export class LimitError extends Error {
  constructor(
    readonly status: 403 | 429,
    readonly field: 'clusterID' | 'rate',
    readonly limit: 'clusters' | 'bind_rate',
    message: string,
    /** For 429: seconds until the next bind is allowed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${field}: ${message}`);
    this.name = 'LimitError';
  }
}

/** Token buckets by identity key; idle full buckets are dropped so the map stays bounded. */
export class BindRateLimiter {
  private readonly buckets = new Map<string, { bucket: TokenBucket; used: number }>();

  constructor(
    readonly ratePerMinute: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isFinite(ratePerMinute) || ratePerMinute < 0) throw new Error(`--bind-rate: ${ratePerMinute} must be a number >= 0`);
    if (ratePerMinute > 0 && (!Number.isInteger(burst) || burst < 1)) throw new Error(`--bind-burst: ${burst} must be an integer >= 1`);
  }

  /** Takes one bind for `identity` or throws LimitError(429). */
  take(identity: string, who: string): void {
    if (this.ratePerMinute <= 0) return;
    const t = this.now();
    if (this.buckets.size > 10_000) {
      // a bucket unused for longer than it takes to refill completely is the same as a new one
      const full = (this.burst / this.ratePerMinute) * 60_000;
      for (const [k, v] of this.buckets) if (t - v.used > full) this.buckets.delete(k);
    }
    let e = this.buckets.get(identity);
    if (!e) {
      e = { bucket: new TokenBucket(this.ratePerMinute / 60, this.burst, this.now), used: t };
      this.buckets.set(identity, e);
    }
    e.used = t;
    if (!e.bucket.tryTake()) {
      const retry = Math.max(1, Math.ceil(60 / this.ratePerMinute));
      throw new LimitError(
        429,
        'rate',
        'bind_rate',
        `${who} made more than ${this.burst} binds in a row; at most ${this.ratePerMinute} per minute are allowed (--bind-rate), try again in ${retry}s`,
        retry,
      );
    }
  }
}
