/**
 * The binding API's objects as the runtime reads and writes them: the shapes of contract/api (one
 * source of truth) over the runtime's loose {@link KubeObject}, shared by the backend, the konnector
 * and kubectl-bind. Types only: nothing of the contract is loaded at run time.
 */
import type {
  APIServiceBindingSpec,
  APIServiceBindingStatus,
  APIServiceExportRequestSpec,
  APIServiceExportRequestStatus,
  APIServiceExportSpec,
  APIServiceExportStatus,
  APIServiceNamespaceStatus,
  AppClusterBindingSpec,
  AppClusterBindingStatus,
  ClusterBindingSpec,
  ClusterBindingStatus,
} from '../../contract/index.js';
import type { KubeObject } from './client.js';

export type APIServiceBinding = KubeObject & { spec: APIServiceBindingSpec; status?: APIServiceBindingStatus };
export type APIServiceExport = KubeObject & { spec: APIServiceExportSpec; status?: APIServiceExportStatus };
export type APIServiceExportRequest = KubeObject & { spec: APIServiceExportRequestSpec; status?: APIServiceExportRequestStatus };
export type APIServiceNamespace = KubeObject & { spec?: Record<string, never>; status?: APIServiceNamespaceStatus };
export type ClusterBinding = KubeObject & { spec: ClusterBindingSpec; status?: ClusterBindingStatus };
export type AppClusterBinding = KubeObject & { spec: AppClusterBindingSpec; status?: AppClusterBindingStatus };
