/**
 * Per-identity limits of the bind backend. An identity is one OIDC subject (`iss` + `sub`); each of
 * its app clusters (`clusterID`) gets a cluster namespace on the provider.
 *
 * - `maxClusters` (`--max-clusters-per-identity`): a bind that would create one cluster namespace
 *   more is refused with 403. Re-binding an app cluster that is already bound is always allowed.
 * - `bindRatePerMinute`/`bindBurst` (`--bind-rate`, `--bind-burst`): a token bucket per identity,
 *   kept in a Lease and shared by all replicas ({@link LeaseBindRateLimiter}); a bind beyond it is
 *   refused with 429 and Retry-After.
 * - The count and the creation of a cluster namespace run under the identity's {@link IdentityLock},
 *   a Lease in the backend's namespace, so binds on any replicas neither exceed the limit nor refuse
 *   each other below it.
 */
import { createHash } from 'node:crypto';
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

/** A token bucket's state: tokens left at a time (ms since the epoch). */
export interface BucketState {
  readonly tokens: number;
  readonly at: number;
}

/**
 * The bucket at `now`: refilled at `ratePerMinute` up to `burst` since `state.at` (a new identity's
 * bucket is full). Pure, so the arithmetic is unit-tested apart from where the state is kept.
 */
export function refill(state: BucketState | undefined, now: number, ratePerMinute: number, burst: number): BucketState {
  if (!state || !Number.isFinite(state.tokens) || !Number.isFinite(state.at)) return { tokens: burst, at: now };
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(burst, state.tokens + (elapsed / 60_000) * ratePerMinute), at: now };
}

/** Label on the bind-rate Leases. */
export const BIND_RATE_LABEL = 'klutch.anynines.com/bind-rate';
/** Annotation with the tokens left at the Lease's `spec.renewTime`. */
export const BIND_TOKENS_ANNOTATION = 'klutch.anynines.com/bind-tokens';

export interface LeaseBindRateLimiterOptions {
  kube: KubeClient;
  /** The backend's namespace (where its other Leases are). */
  namespace: string;
  ratePerMinute: number;
  burst: number;
  /** @default Date.now */
  now?: () => number;
  /** Minimum time between two sweeps of full (idle) buckets. @default 60000 */
  sweepIntervalMs?: number;
}

/**
 * The per-identity bind rate (`--bind-rate`, `--bind-burst`) shared by every replica: each identity's
 * token bucket is a coordination.k8s.io/v1 Lease `klutch-bind-rate-<hash>` in the backend's namespace
 * (tokens in an annotation, as of `spec.renewTime`), taken with an optimistic update (resourceVersion),
 * so N replicas behind one Service still allow an identity the rate once, not N times. A Lease whose
 * bucket has refilled completely carries nothing a new one would not: such Leases are deleted at most
 * once a minute. Costs a GET and a write per bind.
 */
export class LeaseBindRateLimiter {
  private lastSweep = 0;
  private readonly now: () => number;

  constructor(private readonly o: LeaseBindRateLimiterOptions) {
    if (!Number.isFinite(o.ratePerMinute) || o.ratePerMinute < 0) throw new Error(`--bind-rate: ${o.ratePerMinute} must be a number >= 0`);
    if (o.ratePerMinute > 0 && (!Number.isInteger(o.burst) || o.burst < 1)) throw new Error(`--bind-burst: ${o.burst} must be an integer >= 1`);
    if (!o.namespace) throw new Error('LeaseBindRateLimiter.namespace: empty; pass --lease-namespace or set POD_NAMESPACE');
    this.now = o.now ?? Date.now;
  }

  /** Seconds an idle bucket takes to refill completely (how long its Lease is worth keeping). */
  private get fullSeconds(): number {
    return Math.ceil((this.o.burst / this.o.ratePerMinute) * 60);
  }

  /** Takes one bind for `identity` (any string naming it) or throws LimitError(429) naming `who`. */
  async take(identity: string, who: string): Promise<void> {
    const { kube, namespace, ratePerMinute, burst } = this.o;
    if (ratePerMinute <= 0) return;
    const name = `klutch-bind-rate-${createHash('sha256').update(identity).digest('hex').slice(0, 40)}`;
    for (let attempt = 0; attempt < 8; attempt++) {
      const cur = await kube.getOrNull<Lease>(CoreResources.leases, namespace, name);
      const now = this.now();
      const prev = cur ? { tokens: Number(cur.metadata.annotations?.[BIND_TOKENS_ANNOTATION]), at: Date.parse(cur.spec?.renewTime ?? '') } : undefined;
      const b = refill(prev, now, ratePerMinute, burst);
      if (b.tokens < 1) {
        const retry = Math.max(1, Math.ceil(((1 - b.tokens) * 60) / ratePerMinute));
        throw new LimitError(
          429,
          'rate',
          'bind_rate',
          `${who} made more than ${burst} binds in a row; at most ${ratePerMinute} per minute are allowed (--bind-rate), try again in ${retry}s`,
          retry,
        );
      }
      const lease: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          ...(cur ? { resourceVersion: cur.metadata.resourceVersion, uid: cur.metadata.uid } : {}),
          name,
          namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [BIND_RATE_LABEL]: 'bucket' },
          annotations: { [BIND_TOKENS_ANNOTATION]: (b.tokens - 1).toFixed(4) },
        },
        spec: { leaseDurationSeconds: this.fullSeconds, renewTime: microTime(new Date(now)) },
      };
      try {
        if (cur) await kube.update(CoreResources.leases, lease);
        else await kube.create(CoreResources.leases, lease);
        await this.maybeSweep();
        return;
      } catch (e) {
        // another replica took from the same bucket in between: read it again
        if (!isConflict(e) && !isAlreadyExists(e) && !isNotFound(e)) throw e;
      }
    }
    throw new LimitError(429, 'concurrency', 'concurrent', `too many binds of ${who} at the same moment; try again in a second`, 1);
  }

  /** Deletes the Leases of buckets that have refilled completely, at most once per sweep interval. */
  private async maybeSweep(): Promise<void> {
    const now = this.now();
    if (now - this.lastSweep < (this.o.sweepIntervalMs ?? 60_000)) return;
    this.lastSweep = now;
    try {
      const list = await this.o.kube.list<Lease>(CoreResources.leases, this.o.namespace, { labelSelector: BIND_RATE_LABEL });
      for (const l of list.items) {
        const at = Date.parse(l.spec?.renewTime ?? '');
        if (Number.isNaN(at) || at + this.fullSeconds * 1000 < now) {
          await this.o.kube
            .delete(CoreResources.leases, this.o.namespace, l.metadata.name!, { uid: l.metadata.uid, resourceVersion: l.metadata.resourceVersion })
            .catch(() => undefined);
        }
      }
    } catch {
      // best effort: the next bind sweeps again
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
  /**
   * How often the holder renews its Lease while its bind runs, so that a slow bind (a loaded API server) is
   * never taken for a killed holder's and two binds never count at once. @default a third of `ttlSeconds`
   */
  renewEveryMs?: number;
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
    const renewal = this.keepRenewed(held, ttl);
    try {
      return await fn();
    } finally {
      await renewal.stop();
      await kube.delete(CoreResources.leases, namespace, name, { uid: held.metadata.uid }).catch(() => undefined);
      await this.maybeSweep(ttl);
    }
  }

  /**
   * Renews the held Lease's renewTime until stopped. A renewal that fails is retried at the next tick; one that
   * finds the Lease gone or changed (Conflict) ends the renewals: the lock was taken over.
   */
  private keepRenewed(held: Lease, ttl: number): { stop(): Promise<void> } {
    let lease = held;
    let done = false;
    let inFlight: Promise<void> = Promise.resolve();
    let busy = false;
    const tick = () => {
      // one renewal at a time: a second one sent with the same resourceVersion would conflict with the first
      // and end the renewals although the lock is still ours
      if (busy) return;
      busy = true;
      inFlight = (async () => {
        try {
          lease = await this.o.kube.update<Lease>(CoreResources.leases, { ...lease, spec: { ...lease.spec, renewTime: microTime(new Date()) } });
        } catch (e) {
          if (isConflict(e) || isNotFound(e)) done = true;
        } finally {
          busy = false;
        }
      })();
    };
    const timer = setInterval(
      () => {
        if (done) clearInterval(timer);
        else tick();
      },
      this.o.renewEveryMs ?? (ttl * 1000) / 3,
    );
    timer.unref();
    return {
      stop: async () => {
        done = true;
        clearInterval(timer);
        await inFlight;
      },
    };
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
