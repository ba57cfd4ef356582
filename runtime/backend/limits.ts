/**
 * Per-identity limits of the bind backend. An identity is one OIDC subject (`iss` + `sub`); each of
 * its app clusters (`clusterID`) gets a cluster namespace on the provider.
 *
 * - `maxClusters` (`--max-clusters-per-identity`): a bind that would create one cluster namespace
 *   more is refused with 403. Re-binding an app cluster that is already bound is always allowed.
 * - `bindRatePerMinute`/`bindBurst` (`--bind-rate`, `--bind-burst`): a token bucket per identity in
 *   each replica; a bind beyond it is refused with 429 and Retry-After. With N replicas behind one
 *   Service an identity gets at most N times the rate.
 * - The count and the creation of a cluster namespace run under the identity's {@link IdentityLock},
 *   a Lease in the backend's namespace, so binds on any replicas neither exceed the limit nor refuse
 *   each other below it.
 */
import { TokenBucket } from '../core/ratelimit.js';
import { CoreResources, isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from '../core/client.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from './refs.js';

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
    readonly field: 'clusterID' | 'rate' | 'concurrency',
    readonly limit: 'clusters' | 'bind_rate' | 'concurrent',
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

/** Runs `fn` while holding a lock named after `key` (one holder on any replica at a time). */
export interface IdentityLock {
  withLock<T>(key: string, who: string, fn: () => Promise<T>): Promise<T>;
}

type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string } };
const microTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export interface LeaseIdentityLockOptions {
  kube: KubeClient;
  /** The backend's namespace (where its other Leases are). */
  namespace: string;
  /** This replica, as `holderIdentity`. */
  holder: string;
  /** A lock left by a killed replica is taken over after this long. @default 15 */
  ttlSeconds?: number;
  /** Minimum time between two sweeps of locks left by killed replicas. @default 60000 */
  sweepIntervalMs?: number;
  /** How long a bind waits for the lock before a 429; longer than the TTL, so a bind outlasts a killed holder. @default 20000 */
  waitMs?: number;
}

/**
 * {@link IdentityLock} on coordination.k8s.io/v1 Leases `klutch-bind-lock-<key>`: creating the Lease
 * takes the lock (AlreadyExists: wait), deleting it (with a uid precondition) releases it; a Lease
 * older than `ttlSeconds` (its holder was killed) is deleted and taken.
 */
/** Label on the bind-lock Leases. */
export const BIND_LOCK_LABEL = 'klutch.anynines.com/bind-lock';

export class LeaseIdentityLock implements IdentityLock {
  private lastSweep = 0;

  constructor(private readonly o: LeaseIdentityLockOptions) {
    if (!o.namespace) throw new Error('LeaseIdentityLock.namespace: empty; pass --lease-namespace or set POD_NAMESPACE');
  }

  async withLock<T>(key: string, who: string, fn: () => Promise<T>): Promise<T> {
    const { kube, namespace } = this.o;
    const name = `klutch-bind-lock-${key.slice(0, 40)}`;
    const ttl = this.o.ttlSeconds ?? 15;
    const deadline = Date.now() + (this.o.waitMs ?? 20_000);
    let held: Lease | undefined;
    for (let attempt = 0; !held; attempt++) {
      const now = new Date();
      try {
        held = await kube.create<Lease>(CoreResources.leases, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [BIND_LOCK_LABEL]: 'held' } },
          spec: { holderIdentity: this.o.holder, leaseDurationSeconds: ttl, acquireTime: microTime(now), renewTime: microTime(now) },
        });
        break;
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      const cur = await kube.getOrNull<Lease>(CoreResources.leases, namespace, name);
      if (cur && this.expired(cur, ttl)) {
        await this.remove(cur);
        continue;
      }
      if (Date.now() > deadline) {
        throw new LimitError(429, 'concurrency', 'concurrent', `another bind of ${who} is still in progress; try again in a few seconds`, 2);
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30 * Math.min(attempt + 1, 8)));
    }
    try {
      return await fn();
    } finally {
      await kube.delete(CoreResources.leases, namespace, name, { uid: held.metadata.uid }).catch(() => undefined);
      await this.maybeSweep(ttl);
    }
  }

  private expired(l: Lease, ttl: number): boolean {
    const renewed = Date.parse(l.spec?.renewTime ?? '');
    return Number.isNaN(renewed) || renewed + (l.spec?.leaseDurationSeconds ?? ttl) * 1000 < Date.now();
  }

  private async remove(l: Lease): Promise<void> {
    await this.o.kube.delete(CoreResources.leases, this.o.namespace, l.metadata.name!, { uid: l.metadata.uid }).catch((e) => {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    });
  }

  /** Locks left by killed replicas of identities that never bind again: deleted at most once a minute. */
  private async maybeSweep(ttl: number): Promise<void> {
    if (Date.now() - this.lastSweep < (this.o.sweepIntervalMs ?? 60_000)) return;
    this.lastSweep = Date.now();
    try {
      const list = await this.o.kube.list<Lease>(CoreResources.leases, this.o.namespace, { labelSelector: BIND_LOCK_LABEL });
      for (const l of list.items) if (this.expired(l, ttl)) await this.remove(l);
    } catch {
      // best effort: the next bind sweeps again
    }
  }
}
