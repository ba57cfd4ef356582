/**
 * What the backend's reconcilers are given: the objects they read (through the core's ObjectCache:
 * the informers in production, an ObjectStore in unit tests) and the part of the API client they
 * write with.
 */
import type { Condition, KubeClient, KubeObject } from '../../core/index.js';
import type { ExportSpec } from '../export.js';
import type { PermissionClaim } from '../../../contract/wire.js';

export interface ExportRequest extends KubeObject {
  spec?: { resources?: Array<{ group?: string; resource: string; versions?: string[]; permissionClaims?: PermissionClaim[] }> };
  status?: { phase?: 'Pending' | 'Succeeded' | 'Failed'; terminalMessage?: string; conditions?: Condition[] };
}
export interface ExportObj extends KubeObject {
  spec: ExportSpec;
  status?: { conditions?: Condition[]; [k: string]: unknown };
}
export interface ServiceNamespace extends KubeObject {
  status?: { namespace?: string };
}
export interface ClusterBindingObj extends KubeObject {
  spec?: { kubeconfigSecretRef?: { name: string; key: string } };
  status?: { lastHeartbeatTime?: string; heartbeatInterval?: string; conditions?: Condition[]; [k: string]: unknown };
}

/** The API calls the reconcilers write with. */
export type ReconcilerKube = Pick<KubeClient, 'getOrNull' | 'create' | 'update' | 'updateStatus' | 'delete' | 'apply'>;

export const age = (o: KubeObject): number => Date.now() - Date.parse(o.metadata.creationTimestamp ?? new Date().toISOString());

/** Oldest first (creationTimestamp, then name): the order in which per-cluster quotas admit objects. */
export const byAge = (a: KubeObject, b: KubeObject): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
