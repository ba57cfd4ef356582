/**
 * servicenamespace (key: `clusterNs/name`): APIServiceNamespace → provider namespace
 * `<clusterNs>-<name>` (annotated), `status.namespace`; a finalizer deletes the namespace with it.
 */
import type { Logger } from 'pino';
import { conditionsEqual, setCondition, RequeueError, type ObjectCache, type Reconciler } from '../../core/index.js';
import { CLUSTER_BINDING_NAME, MANAGED_BY, MANAGED_BY_LABEL, R } from '../refs.js';
import { API_SERVICE_NAMESPACE_ANNOTATION, apiServiceNamespaceKind } from '../../../contract/index.js';
import { byAge, type ClusterBinding, type ReconcilerKube, type APIServiceNamespace } from './types.js';
import { splitKey } from '../../core/client.js';

export const SERVICE_NAMESPACE_FINALIZER = 'klutch.anynines.com/servicenamespace';
/** Condition on the app cluster's ClusterBinding: False while it has more APIServiceNamespaces than allowed. */
export const SERVICE_NAMESPACE_QUOTA_CONDITION = 'ServiceNamespacesWithinQuota';
const EVENTS = { group: '', version: 'v1', plural: 'events', namespaced: true, kind: 'Event' } as const;

export interface ServiceNamespaceReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly serviceNamespaces: ObjectCache<APIServiceNamespace>;
  readonly logger: Logger;
  /** Called when the provider namespaces of a cluster namespace changed (its RoleBindings follow). */
  rbacChanged(clusterNs: string): void;
  /**
   * Grants the consumer of `clusterNs` its role in provider namespace `target` (the RBAC reconciler's RoleBinding),
   * before `status.namespace` reports it: the konnector starts syncing into a namespace on that report, and a grant
   * that came after it was refused (403) and retried with backoff, about a second on a claim's first sync.
   */
  grantNamespace(clusterNs: string, target: string): Promise<void>;
  /**
   * APIServiceNamespaces (provider namespaces) one app cluster may have (`--max-service-namespaces-per-cluster`);
   * the oldest are served, the others get no namespace. 0 or unset: unlimited.
   */
  readonly maxPerCluster?: number;
  /** The ClusterBindings, for the quota condition the consumer reads. */
  readonly clusterBindings?: ObjectCache<ClusterBinding>;
  /** Reconcile this key again (a refused APIServiceNamespace, when another one is deleted). */
  requeue?(key: string): void;
}

export class ServiceNamespaceReconciler implements Reconciler {
  constructor(private readonly d: ServiceNamespaceReconcilerDeps) {}

  async reconcile(key: string): Promise<void> {
    const d = this.d;
    const sn = d.serviceNamespaces.get(key);
    if (!sn) return;
    const { namespace: clusterNs = '', name } = splitKey(key);
    const target = `${clusterNs}-${name}`;
    const annotation = `${clusterNs}/${name}`;
    if (sn.metadata.deletionTimestamp) {
      const ns = await d.kube.getOrNull(R.namespaces, undefined, target);
      if (ns && ns.metadata.annotations?.[API_SERVICE_NAMESPACE_ANNOTATION] === annotation && !ns.metadata.deletionTimestamp) {
        await d.kube.delete(R.namespaces, undefined, target, { uid: ns.metadata.uid });
        d.logger.info({ namespace: target }, 'deleted provider namespace of removed APIServiceNamespace');
      }
      if (sn.metadata.finalizers?.includes(SERVICE_NAMESPACE_FINALIZER)) {
        await d.kube.update(R.serviceNamespaces, {
          ...sn,
          metadata: { ...sn.metadata, finalizers: sn.metadata.finalizers.filter((f) => f !== SERVICE_NAMESPACE_FINALIZER) },
        });
      }
      d.rbacChanged(clusterNs);
      // room for one that was refused by the quota
      if (d.maxPerCluster) for (const o of d.serviceNamespaces.list(clusterNs)) if (!o.status?.namespace) d.requeue?.(`${clusterNs}/${o.metadata.name}`);
      await this.quotaCondition(clusterNs);
      return;
    }
    if (d.maxPerCluster && sn.status?.namespace !== target) {
      const live = this.live(clusterNs);
      const rank = live.findIndex((o) => o.metadata.name === name);
      if (rank >= d.maxPerCluster) {
        const message = `APIServiceNamespace ${name} not served: this app cluster has ${live.length} APIServiceNamespaces, at most ${d.maxPerCluster} get a provider namespace (--max-service-namespaces-per-cluster); delete unused ones`;
        d.logger.warn({ apiServiceNamespace: key, count: live.length, limit: d.maxPerCluster }, 'APIServiceNamespace over the quota; no provider namespace');
        if (await this.quotaCondition(clusterNs, message)) await this.event(sn, message);
        return;
      }
    }
    if (target.length > 63) {
      d.logger.warn({ apiServiceNamespace: key, namespace: target }, 'provider namespace name would exceed 63 characters; not created');
      return;
    }
    if (!sn.metadata.finalizers?.includes(SERVICE_NAMESPACE_FINALIZER)) {
      await d.kube.update(R.serviceNamespaces, {
        ...sn,
        metadata: { ...sn.metadata, finalizers: [...(sn.metadata.finalizers ?? []), SERVICE_NAMESPACE_FINALIZER] },
      });
      return; // the update event continues
    }
    const existing = await d.kube.getOrNull(R.namespaces, undefined, target);
    if (!existing) {
      await d.kube.create(R.namespaces, {
        metadata: { name: target, annotations: { [API_SERVICE_NAMESPACE_ANNOTATION]: annotation }, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
      });
    } else if (existing.metadata.annotations?.[API_SERVICE_NAMESPACE_ANNOTATION] !== annotation) {
      throw new RequeueError(`namespace ${target} exists and does not belong to APIServiceNamespace ${annotation}; not taking it over`, 60_000);
    } else if (existing.metadata.deletionTimestamp) {
      throw new RequeueError(`namespace ${target} is still terminating`, 2_000);
    }
    if (sn.status?.namespace !== target) {
      await d.grantNamespace(clusterNs, target);
      await d.kube.updateStatus(R.serviceNamespaces, { ...sn, status: { ...sn.status, namespace: target } });
    }
    d.rbacChanged(clusterNs);
    if (d.maxPerCluster) await this.quotaCondition(clusterNs);
  }

  /** The cluster namespace's APIServiceNamespaces not being deleted, oldest first (the quota serves the first ones). */
  private live(clusterNs: string): APIServiceNamespace[] {
    return this.d.serviceNamespaces
      .list(clusterNs)
      .filter((o) => !o.metadata.deletionTimestamp)
      .sort(byAge);
  }

  /**
   * Writes `ServiceNamespacesWithinQuota` on the app cluster's ClusterBinding (readable with the
   * consumer's credential): False with `refused` as message, else True once it was False. Resolves
   * whether it changed.
   */
  private async quotaCondition(clusterNs: string, refused?: string): Promise<boolean> {
    const d = this.d;
    const cb = d.clusterBindings?.getByName(clusterNs, CLUSTER_BINDING_NAME);
    if (!cb || cb.metadata.deletionTimestamp || !d.maxPerCluster) return false;
    const prev = cb.status?.conditions?.find((c) => c.type === SERVICE_NAMESPACE_QUOTA_CONDITION);
    const count = this.live(clusterNs).length;
    if (!refused && !prev) return false;
    const cond: Parameters<typeof setCondition>[1] =
      refused || count > d.maxPerCluster
        ? { type: SERVICE_NAMESPACE_QUOTA_CONDITION, status: 'False', severity: 'Warning', reason: 'QuotaExceeded', message: refused ?? prev!.message }
        : {
            type: SERVICE_NAMESPACE_QUOTA_CONDITION,
            status: 'True',
            reason: 'WithinQuota',
            message: `${count} of at most ${d.maxPerCluster} APIServiceNamespaces`,
          };
    const conds = setCondition(cb.status?.conditions, cond);
    if (conditionsEqual(conds, cb.status?.conditions)) return false;
    await d.kube.updateStatus(R.clusterBindings, { ...cb, status: { ...cb.status, conditions: conds } });
    return true;
  }

  private async event(sn: APIServiceNamespace, message: string): Promise<void> {
    const now = new Date().toISOString();
    await this.d.kube
      .create(EVENTS, {
        metadata: { generateName: `${sn.metadata.name}.`, namespace: sn.metadata.namespace },
        involvedObject: {
          apiVersion: `${R.serviceNamespaces.group}/${R.serviceNamespaces.version}`,
          kind: apiServiceNamespaceKind.kind,
          namespace: sn.metadata.namespace,
          name: sn.metadata.name,
          uid: sn.metadata.uid,
        },
        reason: 'QuotaExceeded',
        message,
        type: 'Warning',
        source: { component: 'klutch-backend' },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      })
      .catch((e) => this.d.logger.warn({ err: (e as Error).message }, 'cannot record the quota event'));
  }
}
