/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go semantics: lease duration 15 s,
 * renew deadline 10 s, retry period 2 s; optimistic concurrency on resourceVersion; release on stop).
 *
 * - Give the elector a KubeClient of its own (its own QPS budget): on a client shared with request
 *   handling, a flood of requests delays the renewal past the lease.
 * - Each acquire/renew attempt has a deadline (`attemptTimeoutMs`); a hung request counts as a failed
 *   attempt instead of blocking the loop.
 * - A lease held by another is judged expired by the local clock only (as client-go): the time this
 *   process last saw the record change plus the lease duration, never the holder's `renewTime`, so a
 *   skewed clock (or a renewTime written in the future) cannot keep a dead leader's lease alive.
 * - When `onStartedLeading` rejects (e.g. the controllers did not sync in time), the elector gives the
 *   lease up (releases it) and campaigns again only after a backoff (`failureBackoffMs`, doubled per
 *   consecutive failure up to `failureBackoffMaxMs`), so another replica can take over.
 */
import type { Logger } from 'pino';
import { CoreResources, isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from './client.js';
import { silentLogger } from './logger.js';

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** @default 15000 */
  leaseDurationMs?: number;
  /** @default 10000 */
  renewDeadlineMs?: number;
  /** @default 2000 */
  retryPeriodMs?: number;
  /** Deadline of one acquire/renew attempt. @default renewDeadlineMs / 2 */
  attemptTimeoutMs?: number;
  /** Wait after a failed leadership term (onStartedLeading rejected) before campaigning again. @default 5000 */
  failureBackoffMs?: number;
  /** Upper bound of that wait (doubled per consecutive failure). @default 300000 */
  failureBackoffMaxMs?: number;
  /**
   * Called when this process becomes leader; the signal aborts when leadership is lost or on stop.
   * Rejecting gives the lease up and retries after a backoff.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called when leadership is lost or released. */
  onStoppedLeading?: () => void | Promise<void>;
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
type Lease = KubeObject & { spec?: LeaseSpec };

/** metav1.MicroTime format. */
const microTime = (d = new Date()) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private leader = false;
  private stopped = false;
  private observedHolder = '';
  private observedAt = 0;
  private lastRenew = 0;
  private leaderAc: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private observedRecord = '';
  private failed: Error | undefined;
  private failures = 0;
  private readonly o: Required<Omit<LeaderElectorOptions, 'onStoppedLeading' | 'onNewLeader' | 'logger'>> & LeaderElectorOptions;
  private readonly log: Logger;

  constructor(opts: LeaderElectorOptions) {
    const o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, failureBackoffMs: 5_000, failureBackoffMaxMs: 300_000, ...opts };
    o.attemptTimeoutMs ??= Math.max(1, Math.floor(o.renewDeadlineMs / 2));
    if (!(o.leaseDurationMs > o.renewDeadlineMs)) {
      throw new Error(`LeaderElector: leaseDurationMs (${o.leaseDurationMs}) must be greater than renewDeadlineMs (${o.renewDeadlineMs})`);
    }
    if (!(o.renewDeadlineMs > o.retryPeriodMs)) {
      throw new Error(`LeaderElector: renewDeadlineMs (${o.renewDeadlineMs}) must be greater than retryPeriodMs (${o.retryPeriodMs})`);
    }
    if (!o.identity) throw new Error('LeaderElector.identity: empty; set POD_NAME or pass an identity');
    this.o = o as typeof this.o;
    this.log = (opts.logger ?? silentLogger).child({ lease: `${o.namespace}/${o.name}`, identity: o.identity });
  }

  get isLeader(): boolean {
    return this.leader;
  }
  get currentLeader(): string {
    return this.observedHolder;
  }
  /** Consecutive failed leadership terms (reset by a term that ends otherwise). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Healthy unless we are leader and have not renewed for longer than lease duration + 20 s. */
  healthy(): boolean {
    return !this.leader || Date.now() - this.lastRenew < this.o.leaseDurationMs + 20_000;
  }

  start(): this {
    if (!this.loop) this.loop = this.run();
    return this;
  }

  /** Stops campaigning; if leader, aborts the leader work and releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(), ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.failed && this.leader) {
        await this.giveUp(this.failed);
        if (this.stopped) break;
        continue;
      }
      let ok = false;
      try {
        ok = await this.withDeadline(this.tryAcquireOrRenew());
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'lease acquire/renew failed');
      }
      if (this.stopped && !this.leader) break;
      if (ok) {
        this.lastRenew = Date.now();
        if (!this.leader) {
          this.leader = true;
          this.failed = undefined;
          const ac = (this.leaderAc = new AbortController());
          this.log.info('became leader');
          void Promise.resolve()
            .then(() => this.o.onStartedLeading(ac.signal))
            .catch((e: unknown) => {
              const err = e instanceof Error ? e : new Error(String(e));
              if (ac.signal.aborted) {
                this.log.warn({ err: err.message }, 'leader work ended with an error after leadership ended');
                return;
              }
              this.log.error({ err: err.message }, 'onStartedLeading failed; giving up the lease');
              this.failed = err;
              this.wake?.();
            });
        }
      } else if (this.leader && Date.now() - this.lastRenew > this.o.renewDeadlineMs) {
        this.log.error('failed to renew the lease within the renew deadline; stepping down');
        await this.stepDown();
      }
      if (this.stopped) break;
      await this.sleep(this.o.retryPeriodMs);
    }
    if (this.leader) {
      await this.stepDown();
      await this.release().catch((e) => this.log.warn({ err: (e as Error).message }, 'lease release failed'));
    }
  }

  /** A leadership term failed: step down, release the lease, wait out the backoff. */
  private async giveUp(err: Error): Promise<void> {
    this.failed = undefined;
    this.failures++;
    await this.stepDown(true);
    await this.withDeadline(this.release()).catch((e) => this.log.warn({ err: (e as Error).message }, 'lease release failed'));
    const backoff = Math.min(this.o.failureBackoffMaxMs, this.o.failureBackoffMs * 2 ** (this.failures - 1));
    this.log.warn({ err: err.message, failures: this.failures, backoffMs: backoff }, 'gave up the lease; campaigning again after the backoff');
    await this.sleep(backoff);
  }

  private withDeadline<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`lease request took longer than ${this.o.attemptTimeoutMs} ms`)), this.o.attemptTimeoutMs);
    });
    return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
  }

  private async stepDown(failed = false): Promise<void> {
    if (!failed) this.failures = 0;
    this.leader = false;
    this.leaderAc?.abort();
    try {
      await this.o.onStoppedLeading?.();
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'onStoppedLeading failed');
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const c = this.o.client;
    const now = new Date();
    const durS = Math.ceil(this.o.leaseDurationMs / 1000);
    const lease = await c.getOrNull<Lease>(CoreResources.leases, this.o.namespace, this.o.name);
    if (!lease) {
      try {
        await c.create(CoreResources.leases, {
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durS, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        });
        this.observe(this.o.identity);
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // the record's identity as client-go compares it: a change restarts the local expiry clock
    const record = `${holder}\n${spec.renewTime ?? ''}\n${spec.leaseTransitions ?? 0}`;
    if (holder !== this.observedHolder || record !== this.observedRecord) {
      this.observe(holder);
      this.observedRecord = record;
    }
    const durMs = Math.min(Math.max(spec.leaseDurationSeconds ?? durS, 1), 3600) * 1000;
    const expired = !holder || now.getTime() > this.observedAt + durMs;
    if (holder !== this.o.identity && !expired) return false;
    const next: LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: durS,
      renewTime: microTime(now),
      acquireTime: holder === this.o.identity ? spec.acquireTime : microTime(now),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.o.identity ? 0 : 1),
    };
    try {
      await c.update(CoreResources.leases, { ...lease, spec: next });
      this.observe(this.o.identity);
      return true;
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return false;
      throw e;
    }
  }

  private observe(holder: string): void {
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      this.o.onNewLeader?.(holder);
    }
    this.observedAt = Date.now();
  }

  private async release(): Promise<void> {
    const c = this.o.client;
    const lease = await c.getOrNull<Lease>(CoreResources.leases, this.o.namespace, this.o.name);
    if (!lease || lease.spec?.holderIdentity !== this.o.identity) return;
    await c.update(CoreResources.leases, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() },
    });
    this.log.info('released the lease');
  }
}
