/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go semantics: lease duration 15 s,
 * renew deadline 10 s, retry period 2 s; optimistic concurrency on resourceVersion; release on stop).
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
  /** Called when this process becomes leader; the signal aborts when leadership is lost or on stop. */
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
  private readonly o: Required<Omit<LeaderElectorOptions, 'onStoppedLeading' | 'onNewLeader' | 'logger'>> & LeaderElectorOptions;
  private readonly log: Logger;

  constructor(opts: LeaderElectorOptions) {
    const o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
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
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'lease acquire/renew failed');
      }
      if (ok) {
        this.lastRenew = Date.now();
        if (!this.leader) {
          this.leader = true;
          this.leaderAc = new AbortController();
          this.log.info('became leader');
          void Promise.resolve()
            .then(() => this.o.onStartedLeading(this.leaderAc!.signal))
            .catch((e) => this.log.error({ err: (e as Error).message }, 'onStartedLeading failed'));
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

  private async stepDown(): Promise<void> {
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
    if (holder !== this.observedHolder) this.observe(holder);
    const renew = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const expired = !holder || now.getTime() > Math.max(renew, this.observedAt) + (spec.leaseDurationSeconds ?? durS) * 1000;
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
