/**
 * The sweeper reconciler (key: a cluster namespace name) removes cluster namespaces nobody uses:
 *
 * - Incomplete: a bind that never finished (the backend was killed, the API server failed) leaves a
 *   cluster namespace without its `ClusterBinding cluster` or kubeconfig Secret. Once the namespace
 *   is older than `orphanGraceMs` (`--orphan-grace`), an `IncompleteBinding` event is recorded on it
 *   and it is deleted. A bind of the same app cluster in the meantime completes it instead.
 * - Abandoned (only with `staleAfterMs`, `--stale-cluster-timeout`): the konnector has not
 *   heartbeated (or never did) for that long. First the ClusterBinding gets the condition
 *   `Abandoned=True` and an event saying when it will be deleted; `noticeMs` (`--sweep-notice`)
 *   after that condition turned True the namespace is deleted. A heartbeat in between sets it False.
 *
 * With `dryRun` (`--sweep-dry-run`) conditions and events say what would be deleted and nothing is.
 * Deleting a cluster namespace removes everything of that app cluster: the namespace's objects, the
 * provider namespaces of its APIServiceNamespaces (their finalizer) and its ClusterRoles (owned by
 * the namespace).
 */
import type { Logger } from 'pino';
import { EVENTS, eventObject } from '../core/events.js';
import { getCondition, nowRfc3339, setCondition, type KubeClient, type KubeObject, type ObjectCache, type ReconcileResult } from '../core/index.js';
import type { ClusterBinding } from '../core/binding-objects.js';
import type { BackendMetrics } from './metrics.js';
import { heartbeatAge } from './reconcilers/cluster-binding.js';
import { CLUSTER_BINDING_NAME, IDENTITY_ANNOTATION, KUBECONFIG_SECRET, R, SUBJECT_HASH_LABEL } from './refs.js';

export const ABANDONED_CONDITION = 'Abandoned';

/** The informers' caches the sweeper reads (injected). */
export interface SweeperCaches {
  /** The cluster namespaces (the backend's, by its managed-by label). */
  readonly namespaces: ObjectCache;
  /** The ClusterBindings (`cluster` in each cluster namespace). */
  readonly clusterBindings: ObjectCache<ClusterBinding>;
  /** The kubeconfig Secrets of the cluster namespaces. */
  readonly kubeconfigSecrets: ObjectCache;
}

export interface SweeperOptions {
  kube: KubeClient;
  cache: SweeperCaches;
  logger: Logger;
  metrics: BackendMetrics;
  /** A cluster namespace without ClusterBinding or kubeconfig Secret is deleted once this old. */
  orphanGraceMs: number;
  /** 0: never delete for missing heartbeats. */
  staleAfterMs: number;
  /** Time between the Abandoned condition and the deletion. */
  noticeMs: number;
  dryRun: boolean;
  /** Component name in events. @default klutch-backend */
  component?: string;
  now?: () => number;
}

export class ClusterSweeper {
  /** Dry-run deletions already reported (one event each per process). */
  private readonly reported = new Set<string>();
  private readonly now: () => number;
  private gaugesAt = -Infinity;
  private gaugeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: SweeperOptions) {
    for (const [k, v] of [
      ['orphanGraceMs', o.orphanGraceMs],
      ['staleAfterMs', o.staleAfterMs],
      ['noticeMs', o.noticeMs],
    ] as const) {
      if (!Number.isFinite(v) || v < 0) throw new Error(`SweeperOptions.${k}: ${v} must be a number >= 0`);
    }
    this.now = o.now ?? Date.now;
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const ns = this.o.cache.namespaces.getByName(undefined, name);
    this.updateGauges();
    if (!ns || ns.metadata.deletionTimestamp || !ns.metadata.annotations?.[IDENTITY_ANNOTATION]) return;
    const cb = this.clusterBinding(name);
    const secret = this.kubeconfigSecret(name);
    if (!cb || !secret) return this.incomplete(ns, !cb ? `ClusterBinding ${CLUSTER_BINDING_NAME}` : `Secret ${KUBECONFIG_SECRET}`);
    if (this.o.staleAfterMs > 0) return this.checkHeartbeat(ns, cb);
  }

  /** The ClusterBinding of cluster namespace `ns`, as cached. */
  private clusterBinding(ns: string): ClusterBinding | undefined {
    return this.o.cache.clusterBindings.getByName(ns, CLUSTER_BINDING_NAME);
  }

  /** The kubeconfig Secret of cluster namespace `ns`, as cached. */
  private kubeconfigSecret(ns: string): KubeObject | undefined {
    return this.o.cache.kubeconfigSecrets.getByName(ns, KUBECONFIG_SECRET);
  }

  private age(o: KubeObject): number {
    return this.now() - Date.parse(o.metadata.creationTimestamp ?? new Date(this.now()).toISOString());
  }

  private async incomplete(ns: KubeObject, missing: string): Promise<ReconcileResult | void> {
    const age = this.age(ns);
    if (age < this.o.orphanGraceMs) return { requeueAfterMs: this.o.orphanGraceMs - age + 1000 };
    const msg = `the bind of this app cluster never completed (${missing} missing ${Math.round(age / 1000)}s after the namespace was created, grace ${Math.round(this.o.orphanGraceMs / 1000)}s)`;
    await this.remove(ns, 'IncompleteBinding', msg, 'incomplete');
  }

  private async checkHeartbeat(ns: KubeObject, cb: ClusterBinding): Promise<ReconcileResult | void> {
    const st = cb.status ?? {};
    const last = st.lastHeartbeatTime ?? cb.metadata.creationTimestamp;
    // a heartbeat time in the future (or unparsable) counts as none since the ClusterBinding was created:
    // a consumer cannot keep its app cluster from being swept by writing 2099
    const since = heartbeatAge(last, this.now()) ?? this.now() - Date.parse(cb.metadata.creationTimestamp ?? new Date(this.now()).toISOString());
    const prev = getCondition(st.conditions, ABANDONED_CONDITION);
    if (since <= this.o.staleAfterMs) {
      if (prev?.status === 'True') {
        await this.setAbandoned(cb, {
          type: ABANDONED_CONDITION,
          status: 'False',
          reason: 'Heartbeating',
          message: 'the konnector heartbeats again; nothing will be deleted',
        });
        await this.event(ns, 'Normal', 'HeartbeatResumed', 'the konnector heartbeats again; the scheduled deletion of this cluster namespace is cancelled');
      }
      return { requeueAfterMs: this.o.staleAfterMs - since + 1000 };
    }
    const what = st.lastHeartbeatTime
      ? `last konnector heartbeat ${Math.round(since / 1000)}s ago`
      : `no konnector heartbeat since the bind ${Math.round(since / 1000)}s ago`;
    if (prev?.status !== 'True') {
      const at = nowRfc3339(new Date(this.now() + this.o.noticeMs));
      const message = `${what} (limit ${Math.round(this.o.staleAfterMs / 1000)}s); the cluster namespace ${this.o.dryRun ? 'would be' : 'will be'} deleted at ${at} unless the konnector heartbeats`;
      await this.setAbandoned(cb, { type: ABANDONED_CONDITION, status: 'True', severity: 'Warning', reason: 'KonnectorSilent', message });
      await this.event(ns, 'Warning', 'Abandoned', message);
      return { requeueAfterMs: this.o.noticeMs + 1000 };
    }
    const noticed = this.now() - Date.parse(prev.lastTransitionTime ?? new Date(this.now()).toISOString());
    if (noticed < this.o.noticeMs) return { requeueAfterMs: this.o.noticeMs - noticed + 1000 };
    await this.remove(ns, 'AbandonedCluster', `${what}, more than ${Math.round(this.o.staleAfterMs / 1000)}s`, 'abandoned');
  }

  private async remove(ns: KubeObject, reason: string, why: string, metricReason: string): Promise<void> {
    const name = ns.metadata.name!;
    if (this.o.dryRun) {
      if (this.reported.has(`${name}/${reason}`)) return;
      this.reported.add(`${name}/${reason}`);
      await this.event(ns, 'Warning', reason, `${why}; dry run (--sweep-dry-run): not deleted`);
      this.o.metrics.sweeps.inc({ reason: metricReason, mode: 'dry-run' });
      this.o.logger.warn({ namespace: name, reason, why }, 'would delete cluster namespace (dry run)');
      return;
    }
    await this.event(ns, 'Warning', reason, `${why}; deleting the cluster namespace`);
    await this.o.kube.delete(R.namespaces, undefined, name, { uid: ns.metadata.uid });
    this.o.metrics.sweeps.inc({ reason: metricReason, mode: 'delete' });
    this.o.logger.warn({ namespace: name, reason, why }, 'deleted cluster namespace');
  }

  private async setAbandoned(cb: ClusterBinding, c: Parameters<typeof setCondition>[1]): Promise<void> {
    const conds = setCondition(cb.status?.conditions, c, new Date(this.now()));
    await this.o.kube.updateStatus(R.clusterBindings, { ...cb, status: { ...cb.status, conditions: conds } });
  }

  private async event(ns: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const name = ns.metadata.name!;
    // a Namespace's event lives in that namespace (the API server wants the involved object's namespace to match)
    const target = { apiVersion: 'v1', kind: 'Namespace', name, namespace: name, uid: ns.metadata.uid };
    await this.o.kube.create(EVENTS, eventObject(target, { type, reason, message }, this.o.component ?? 'klutch-backend', new Date(this.now())));
  }

  /** Cluster namespaces by state and the most app clusters of one identity (gauges). */
  updateGauges(force = false): void {
    const since = this.now() - this.gaugesAt;
    if (!force && since < 1000) {
      // O(namespaces): at most once a second, and once more after the last change
      this.gaugeTimer ??= setTimeout(() => {
        this.gaugeTimer = undefined;
        this.updateGauges(true);
      }, 1000 - since).unref();
      return;
    }
    this.gaugesAt = this.now();
    const counts = { bound: 0, incomplete: 0, abandoned: 0 };
    const perSubject = new Map<string, number>();
    for (const ns of this.o.cache.namespaces.list()) {
      if (ns.metadata.deletionTimestamp || !ns.metadata.annotations?.[IDENTITY_ANNOTATION]) continue;
      const name = ns.metadata.name!;
      const cb = this.clusterBinding(name);
      if (!cb || !this.kubeconfigSecret(name)) counts.incomplete++;
      else if (getCondition(cb.status?.conditions, ABANDONED_CONDITION)?.status === 'True') counts.abandoned++;
      else counts.bound++;
      const subject = ns.metadata.labels?.[SUBJECT_HASH_LABEL];
      if (subject) perSubject.set(subject, (perSubject.get(subject) ?? 0) + 1);
    }
    for (const [state, n] of Object.entries(counts)) this.o.metrics.clusterNamespaces.set({ state }, n);
    this.o.metrics.maxClustersPerIdentity.set(Math.max(0, ...perSubject.values()));
  }
}
