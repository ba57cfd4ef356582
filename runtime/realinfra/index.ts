// Real Kubernetes for tests: build etcd / kube-apiserver / kube-controller-manager from the Go wrapper
// modules in tools/, start throwaway clusters, and server-side apply manifests in dependency order.
export {
  COMPONENTS,
  type ComponentName,
  type ComponentPlan,
  type EnsureBinariesOptions,
  type RealInfraBinaries,
  RealInfraBuildError,
  defaultCacheRoot,
  defaultToolsDir,
  ensureBinaries,
  ensureComponent,
  isCached,
  planComponent,
} from './build.js';
export {
  ClusterStartError,
  type ClusterPorts,
  type ComponentArgs,
  DEFAULT_CONTROLLERS,
  type RealCluster,
  type StartClusterOptions,
  freePort,
  logTail,
  startCluster,
} from './cluster.js';
export {
  APPLY_ORDER,
  ApplyError,
  type ApplyFailure,
  type ApplyOptions,
  apiErrorDetails,
  applyManifests,
  objectRef,
  readManifests,
  sortForApply,
  waitForCrdsEstablished,
} from './apply.js';
export { type KilledLeftover, type KillLeftoversOptions, RUN_ID_ENV, killLeftovers, registryDir } from './registry.js';
export { KubeApiError, type RawRequest, ResourcePaths, kubeRequest } from './rest.js';
