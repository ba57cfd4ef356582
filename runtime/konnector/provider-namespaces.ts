/**
 * Namespace reconciler of a provider connection (key: consumer namespace name): when the app
 * cluster's Namespace is gone, deletes its APIServiceNamespace on the provider.
 */
import type { Logger } from 'pino';
import { isNotFound, type KubeClient } from '../core/client.js';
import type { Reconciler } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import { isDeleting } from './metadata.js';
import { type APIServiceNamespace } from './types.js';
import { BINDING_RESOURCES } from '../../contract/index.js';

export interface NamespaceReconcilerDeps {
  readonly provider: KubeClient;
  readonly clusterNamespace: string;
  readonly apiNamespaces: ObjectCache<APIServiceNamespace>;
  /** The app cluster's Namespaces. */
  readonly appNamespaces: ObjectCache & { hasSynced(): boolean };
  readonly log: Logger;
}

export class NamespaceReconciler implements Reconciler {
  constructor(private readonly deps: NamespaceReconcilerDeps) {}

  async reconcile(name: string): Promise<void> {
    const d = this.deps;
    if (!d.appNamespaces.hasSynced()) throw new Error('app-cluster Namespace informer not synced yet');
    const ans = d.apiNamespaces.getByName(d.clusterNamespace, name);
    if (!ans || isDeleting(ans)) return;
    if (d.appNamespaces.getByName(undefined, name)) return;
    try {
      await d.provider.delete(BINDING_RESOURCES.apiServiceNamespaces, d.clusterNamespace, name, { uid: ans.metadata.uid });
      d.log.info({ namespace: name }, 'app-cluster namespace is gone: deleted its APIServiceNamespace on the provider');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
