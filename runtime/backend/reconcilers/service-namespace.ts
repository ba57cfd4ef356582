/**
 * servicenamespace (key: `clusterNs/name`): APIServiceNamespace → provider namespace
 * `<clusterNs>-<name>` (annotated), `status.namespace`; a finalizer deletes the namespace with it.
 */
import type { Logger } from 'pino';
import { RequeueError, type Reconciler } from '../../core/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL, R, SERVICE_NAMESPACE_ANNOTATION } from '../refs.js';
import { splitKey, type Cache, type ReconcilerKube, type ServiceNamespace } from './types.js';

export const SERVICE_NAMESPACE_FINALIZER = 'klutch.anynines.com/servicenamespace';

export interface ServiceNamespaceReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly serviceNamespaces: Cache<ServiceNamespace>;
  readonly logger: Logger;
  /** Called when the provider namespaces of a cluster namespace changed (its RoleBindings follow). */
  rbacChanged(clusterNs: string): void;
}

export class ServiceNamespaceReconciler implements Reconciler {
  constructor(private readonly d: ServiceNamespaceReconcilerDeps) {}

  async reconcile(key: string): Promise<void> {
    const d = this.d;
    const sn = d.serviceNamespaces.get(key);
    if (!sn) return;
    const [clusterNs, name] = splitKey(key);
    const target = `${clusterNs}-${name}`;
    const annotation = `${clusterNs}/${name}`;
    if (sn.metadata.deletionTimestamp) {
      const ns = await d.kube.getOrNull(R.namespaces, undefined, target);
      if (ns && ns.metadata.annotations?.[SERVICE_NAMESPACE_ANNOTATION] === annotation && !ns.metadata.deletionTimestamp) {
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
      return;
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
        metadata: { name: target, annotations: { [SERVICE_NAMESPACE_ANNOTATION]: annotation }, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
      });
    } else if (existing.metadata.annotations?.[SERVICE_NAMESPACE_ANNOTATION] !== annotation) {
      throw new RequeueError(`namespace ${target} exists and does not belong to APIServiceNamespace ${annotation}; not taking it over`, 60_000);
    } else if (existing.metadata.deletionTimestamp) {
      throw new RequeueError(`namespace ${target} is still terminating`, 2_000);
    }
    if (sn.status?.namespace !== target) {
      await d.kube.updateStatus(R.serviceNamespaces, { ...sn, status: { ...sn.status, namespace: target } });
    }
    d.rbacChanged(clusterNs);
  }
}
