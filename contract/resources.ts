/**
 * The binding API's resources as API clients address them (group, version, plural, kind, scope),
 * derived from the kind definitions of contract/api: the one resource table the backend, the
 * konnector and kubectl-bind read. Structurally a runtime `ResourceRef` (runtime/core/client.ts),
 * without importing it (the contract depends on no runtime part).
 */
import type { KindDef } from './api/_kind.js';
import { apiServiceBindingKind } from './api/api-service-binding.js';
import { apiServiceExportRequestKind } from './api/api-service-export-request.js';
import { apiServiceExportTemplateKind } from './api/api-service-export-template.js';
import { apiServiceExportKind } from './api/api-service-export.js';
import { apiServiceNamespaceKind } from './api/api-service-namespace.js';
import { appClusterBindingKind } from './api/app-cluster-binding.js';
import { clusterBindingKind } from './api/cluster-binding.js';

/** How a client addresses one resource of the binding API. */
export interface BindingResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** The resource of a kind definition. */
export function resourceOfKind(
  k: Pick<KindDef<string, string, string, unknown, unknown, boolean>, 'group' | 'version' | 'plural' | 'kind' | 'scope'>,
): BindingResource {
  return Object.freeze({ group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: k.scope === 'Namespaced' });
}

/** Every resource of the binding API. */
export const BINDING_RESOURCES = Object.freeze({
  apiServiceBindings: resourceOfKind(apiServiceBindingKind),
  apiServiceExports: resourceOfKind(apiServiceExportKind),
  apiServiceExportRequests: resourceOfKind(apiServiceExportRequestKind),
  apiServiceExportTemplates: resourceOfKind(apiServiceExportTemplateKind),
  apiServiceNamespaces: resourceOfKind(apiServiceNamespaceKind),
  clusterBindings: resourceOfKind(clusterBindingKind),
  appClusterBindings: resourceOfKind(appClusterBindingKind),
});
