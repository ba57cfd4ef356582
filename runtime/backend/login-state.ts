/**
 * Single use of OIDC login states across replicas and restarts: each used state id is recorded as a
 * coordination.k8s.io/v1 Lease `klutch-login-state-<sha256 of the id>` in the backend's namespace,
 * whose `renewTime + leaseDurationSeconds` is the state's expiry. Creating it is the atomic "first
 * use" (AlreadyExists: replay), so two replicas behind one Service agree without talking to each
 * other, and a restarted replica still refuses a replay. Expired records are deleted by whichever
 * replica records a state next (at most once a minute); a state past its expiry is refused by the
 * sealer anyway, so a record is only needed until then.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { CoreResources, isAlreadyExists, isConflict, type KubeClient, type KubeObject } from '../core/client.js';
import { silentLogger } from '../core/logger.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from './refs.js';

/** Label on the Lease records of used login states. */
export const LOGIN_STATE_LABEL = 'klutch.anynines.com/login-state';

/** Records one-time ids (the login state's `jti`) until their expiry. */
export interface ReplayStore {
  /** Resolves false if `id` was used before; otherwise records it until `expSeconds` (epoch seconds). */
  use(id: string, expSeconds: number): boolean | Promise<boolean>;
}

/** The login-state store could not be reached: the login cannot be verified as a first use. */
export class ReplayStoreUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayStoreUnavailable';
  }
}

export interface ApiServerReplayStoreOptions {
  kube: KubeClient;
  /** Namespace of the Lease records (the backend's own, as its leader-election Lease). */
  namespace: string;
  /** Who recorded a state (`holderIdentity`), for debugging. */
  identity: string;
  logger?: Logger;
  /** Minimum time between two sweeps of expired records. @default 60000 */
  sweepIntervalMs?: number;
}

type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string } };

const microTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** Name of the Lease recording the use of state id `id`. */
export const loginStateLeaseName = (id: string): string => `klutch-login-state-${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;

export class ApiServerReplayStore implements ReplayStore {
  private lastSweep = 0;
  private sweeping: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly o: ApiServerReplayStoreOptions) {
    if (!o.namespace) throw new Error('ApiServerReplayStore.namespace: empty; pass --lease-namespace or set POD_NAMESPACE');
    this.log = o.logger ?? silentLogger;
  }

  async use(id: string, expSeconds: number): Promise<boolean> {
    const now = new Date();
    const duration = Math.max(1, Math.ceil(expSeconds - now.getTime() / 1000));
    try {
      await this.o.kube.create(CoreResources.leases, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: loginStateLeaseName(id),
          namespace: this.o.namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [LOGIN_STATE_LABEL]: 'used' },
        },
        spec: { holderIdentity: this.o.identity, leaseDurationSeconds: duration, acquireTime: microTime(now), renewTime: microTime(now) },
      });
    } catch (e) {
      if (isAlreadyExists(e)) return false;
      throw new ReplayStoreUnavailable(`cannot record the login state in namespace ${this.o.namespace}: ${(e as Error).message}`);
    }
    this.maybeSweep();
    return true;
  }

  private maybeSweep(): void {
    if (this.sweeping || Date.now() - this.lastSweep < (this.o.sweepIntervalMs ?? 60_000)) return;
    this.lastSweep = Date.now();
    this.sweeping = this.sweep()
      .then((n) => {
        if (n) this.log.debug({ deleted: n }, 'deleted expired login-state records');
      })
      .catch((e) => this.log.warn({ err: (e as Error).message }, 'sweeping expired login-state records failed'))
      .finally(() => (this.sweeping = undefined));
  }

  /** Deletes the records whose state has expired; resolves with how many. */
  async sweep(now = Date.now()): Promise<number> {
    const list = await this.o.kube.list<Lease>(CoreResources.leases, this.o.namespace, { labelSelector: `${LOGIN_STATE_LABEL}=used` });
    let n = 0;
    for (const l of list.items) {
      const renew = Date.parse(l.spec?.renewTime ?? '');
      const expires = renew + (l.spec?.leaseDurationSeconds ?? 0) * 1000;
      if (Number.isNaN(renew) || expires < now) {
        try {
          await this.o.kube.delete(CoreResources.leases, this.o.namespace, l.metadata.name!, { uid: l.metadata.uid });
          n++;
        } catch (e) {
          if (!isConflict(e)) throw e; // another replica deleted it and the name was used again
        }
      }
    }
    return n;
  }

  /** Waits for a sweep in progress (tests, shutdown). */
  async idle(): Promise<void> {
    await this.sweeping;
  }
}
