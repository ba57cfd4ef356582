/**
 * What the backend's reconcilers are given: the objects they read (through the core's ObjectCache:
 * the informers in production, an ObjectStore in unit tests) and the part of the API client they
 * write with.
 */
import type { KubeClient, KubeObject } from '../../core/index.js';

export type { APIServiceExport, APIServiceExportRequest, APIServiceNamespace, ClusterBinding } from '../../core/binding-objects.js';

/** The API calls the reconcilers write with. */
export type ReconcilerKube = Pick<KubeClient, 'getOrNull' | 'create' | 'update' | 'updateStatus' | 'delete' | 'apply'>;

export const age = (o: KubeObject): number => Date.now() - Date.parse(o.metadata.creationTimestamp ?? new Date().toISOString());

/** Oldest first (creationTimestamp, then name): the order in which per-cluster quotas admit objects. */
export const byAge = (a: KubeObject, b: KubeObject): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
