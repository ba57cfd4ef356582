/**
 * How a construct tells the cluster it is created in what it contributes, without the cluster
 * searching its tree: an `ApiServiceExportTemplate` registers an export, a
 * `CompositeResourceDefinition` a claim API and a `DataService` its backends' ProviderConfigs with
 * the nearest enclosing scope that is a registry (a `ControlPlaneCluster`), once, when they are
 * constructed. Outside such a scope (a plain `Chart`) nothing is registered.
 *
 * The registry is found by walking up the construct's scopes (as `Chart.of()` does), so the
 * constructs below never import the topology that implements it.
 */
import type { IConstruct } from 'constructs';
import type { CompositeResourceDefinition } from './crossplane/composite-resource-definition.js';
import type { IDataService } from './dataservice/data-service.js';
import type { ApiServiceExportTemplate } from './runtime/api-service-export-template.js';

const REGISTRY = Symbol.for('klutch-kit.ClusterRegistry');

/** What a cluster learns from the constructs created in it. */
export interface ClusterRegistry {
  /** An API app clusters can bind. */
  registerExport(template: ApiServiceExportTemplate): void;
  /** An XRD whose claims (or namespaced composite resources) app clusters create. */
  registerClaimApi(xrd: CompositeResourceDefinition): void;
  /** A data service: its backends' ProviderConfigs are the cluster's to emit or check. */
  registerDataService(ds: IDataService): void;
}

/** Makes `c` the registry of the constructs created below it. */
export function defineClusterRegistry(c: IConstruct, registry: ClusterRegistry): void {
  Object.defineProperty(c, REGISTRY, { value: registry });
}

/** The registry of the nearest enclosing scope of `c` (not `c` itself), or undefined. */
export function clusterRegistryOf(c: IConstruct): ClusterRegistry | undefined {
  const scopes = c.node.scopes;
  for (let i = scopes.length - 2; i >= 0; i--) {
    const r = (scopes[i] as unknown as Record<symbol, ClusterRegistry | undefined>)[REGISTRY];
    if (r) return r;
  }
  return undefined;
}
