/**
 * rbac (key: cluster namespace): ClusterRole `klutch-binder-<clusterNs>` covering exactly the
 * exported and claimed resources (owned by the cluster Namespace, so it goes with it), bound by
 * RoleBindings only in that consumer's provider namespaces. With --consumer-scope=Cluster and
 * cluster-scoped exports, ClusterRole `klutch-binder-<clusterNs>-cluster` (those resources only)
 * bound by a per-consumer ClusterRoleBinding — never a shared binding whose subjects flip. That
 * role reaches every consumer's objects of those resources; the BindBackend construct's admission
 * policy (contract/consumer-isolation.ts) keeps each consumer's writes to its own.
 */
import { isNotFound, type ObjectCache, type Reconciler } from '../../core/index.js';
import { FIELD_MANAGER } from '../binder.js';
import { IDENTITY_ANNOTATION, MANAGED_BY, MANAGED_BY_LABEL, R } from '../refs.js';
import { BINDER_NAME, perConsumerRoleName } from '../../../contract/index.js';
import type { APIServiceExport, ReconcilerKube, APIServiceNamespace } from './types.js';
import { exportedResourceRules, type PolicyRule } from '../../../contract/binder-rbac.js';

export { exportedResourceRules, type PolicyRule };

export interface RbacReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly exports: ObjectCache<APIServiceExport>;
  readonly serviceNamespaces: ObjectCache<APIServiceNamespace>;
  readonly consumerScope: 'Namespaced' | 'Cluster';
}

export class RbacReconciler implements Reconciler {
  constructor(private readonly d: RbacReconcilerDeps) {}

  /** The rules of `klutch-binder-<clusterNs>` (or of its `-cluster` role). */
  rulesFor(clusterNs: string, onlyClusterScoped = false): PolicyRule[] {
    return exportedResourceRules(this.d.exports.list(clusterNs), onlyClusterScoped);
  }

  /**
   * Binds the consumer's role (`klutch-binder-<clusterNs>`) in one of its provider namespaces: RoleBinding
   * `klutch-binder` for the consumer's ServiceAccount. The servicenamespace controller calls it before it reports the
   * namespace, so a konnector that starts syncing into it on that report is never refused; `reconcile` keeps every one.
   */
  async bindNamespace(clusterNs: string, target: string): Promise<void> {
    await this.d.kube.apply(
      R.roleBindings,
      {
        metadata: { name: BINDER_NAME, namespace: target, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: perConsumerRoleName(clusterNs) },
        subjects: [{ kind: 'ServiceAccount', name: BINDER_NAME, namespace: clusterNs }],
      },
      FIELD_MANAGER,
      { force: true },
    );
  }

  async reconcile(clusterNs: string): Promise<void> {
    const d = this.d;
    const ns = await d.kube.getOrNull(R.namespaces, undefined, clusterNs);
    if (!ns || ns.metadata.deletionTimestamp || !ns.metadata.annotations?.[IDENTITY_ANNOTATION]) return;
    const roleName = perConsumerRoleName(clusterNs);
    const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
    await d.kube.apply(
      R.clusterRoles,
      {
        metadata: {
          name: roleName,
          labels,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: clusterNs, uid: ns.metadata.uid!, blockOwnerDeletion: false }],
        },
        rules: this.rulesFor(clusterNs),
      },
      FIELD_MANAGER,
      { force: true },
    );
    const subject = { kind: 'ServiceAccount', name: BINDER_NAME, namespace: clusterNs };
    for (const sn of d.serviceNamespaces.list(clusterNs)) {
      const target = sn.status?.namespace;
      if (!target || sn.metadata.deletionTimestamp) continue;
      try {
        await this.bindNamespace(clusterNs, target);
      } catch (e) {
        if (!isNotFound(e)) throw e; // namespace not there (yet/anymore): the servicenamespace controller re-enqueues
      }
    }
    // Cluster scope: cluster-scoped exported resources need a cluster-wide grant. It goes to a role
    // of their own (never the claims, never the namespaced exports, which stay namespace-bound),
    // bound by a ClusterRoleBinding per consumer — nothing shared between consumers.
    const clusterRules = d.consumerScope === 'Cluster' ? this.rulesFor(clusterNs, true) : [];
    const clusterRole = `${roleName}-cluster`;
    if (clusterRules.length) {
      const owner = [{ apiVersion: 'v1', kind: 'Namespace', name: clusterNs, uid: ns.metadata.uid!, blockOwnerDeletion: false }];
      await d.kube.apply(R.clusterRoles, { metadata: { name: clusterRole, labels, ownerReferences: owner }, rules: clusterRules }, FIELD_MANAGER, {
        force: true,
      });
      await d.kube.apply(
        R.clusterRoleBindings,
        {
          metadata: { name: roleName, labels, ownerReferences: owner },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
          subjects: [subject],
        },
        FIELD_MANAGER,
        { force: true },
      );
    } else {
      await d.kube.delete(R.clusterRoleBindings, undefined, roleName);
      await d.kube.delete(R.clusterRoles, undefined, clusterRole);
    }
  }
}
