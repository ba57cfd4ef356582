// Real Kubernetes for tests: build etcd / kube-apiserver / kube-controller-manager (and a real node's
// kubelet, kube-proxy, kube-scheduler) from the Go wrapper modules in tools/, start throwaway clusters
// (optionally with that node), and server-side apply manifests in dependency order.
export {
  ALL_COMPONENTS,
  CLIENT_COMPONENTS,
  type A9sComponentName,
  type ClientComponentName,
  COMPONENTS,
  CROSSPLANE_COMPONENTS,
  CROSSPLANE_VERSIONS,
  type ComponentName,
  type CrossplaneBinaries,
  type CrossplaneComponentName,
  type CrossplaneVersion,
  type DexComponentName,
  type KubeComponentName,
  type UpstreamSource,
  ensureCrossplaneBinaries,
  ensureKubectl,
  ensureNodeBinaries,
  ensurePodsBinaries,
  PODS_COMPONENTS,
  type PodsBinaries,
  type PodsComponentName,
  NODE_COMPONENTS,
  type NodeBinaries,
  type NodeComponentName,
  upstreamSource,
  type ComponentPlan,
  type EnsureBinariesOptions,
  type RealInfraBinaries,
  RealInfraBuildError,
  defaultCacheRoot,
  defaultToolsDir,
  ensureBinaries,
  ensureComponent,
  isCached,
  kubeRelease,
  pathKubectl,
  type PathToolOptions,
  planComponent,
  resolveKubectl,
} from './build.js';
// A compatible kubectl (resolveKubectl) or Pulumi CLI on PATH instead of a build; KLUTCH_KIT_USE_PATH_TOOLS=0 turns it off.
export { type PathTool, type ToolLookup, USE_PATH_TOOLS_ENV, pathToolsEnabled, systemToolLookup } from './path-tools.js';
export {
  ClusterStartError,
  type ClusterPorts,
  type ComponentArgs,
  DEFAULT_API_SERVER_ENV,
  DEFAULT_CONTROLLERS,
  type RealCluster,
  type StartClusterOptions,
  freePort,
  logTail,
  startCluster,
} from './cluster.js';
export {
  CROSSPLANE_NAMESPACE,
  type CrossplaneComponent,
  type CrossplaneHarness,
  type CrossplaneOptions,
  type CrossplaneRuntime,
  CrossplaneStartError,
  type PackageKind,
  type PackageSource,
  REWRITTEN_PREFIXES,
  type XpCondition,
  type XpObject,
} from './crossplane-harness.js';
export { defaultPackageObjects } from './crossplane.js';
export { startCrossplane } from './crossplane-start.js';
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
export { type KilledLeftover, type KillLeftoversOptions, type RegisteredProcess, RUN_ID_ENV, killLeftovers, registryDir } from './registry.js';
export { NODE_CONTROLLERS, NODE_NETWORK, type NodeComponent, type NodeOptions, NodeStartError, type RealNode, type ServiceAddress } from './node.js';
export { type HostRecord, NODE_HOST_PATHS, NODE_SYSCTLS, NodeLockError, nodeLockFile, restoreAbandonedNode, restoreHost } from './host.js';
export { type CrossplanePodsFigures, type CrossplanePodsHarness, PROVIDER_KUBERNETES_RUNTIME, podsPackageObjects } from './crossplane-pods.js';
export { CLUSTER_DNS, clusterDnsKubeletConfig, clusterDnsObjects, startClusterDns } from './cluster-dns.js';
export { clientOf } from './client.js';
export { type ProbeResult, probe } from './probe.js';
// provider-anynines on a harness cluster with Crossplane, built from the klutchio sources (fetched at the pinned commit, or the
// mirror of `KLUTCH_KIT_KLUTCHIO_SRC`; the namespaced flavour of Klutch's Crossplane v2 branch: `KLUTCH_KIT_KLUTCHIO_V2_SRC`):
// for users who prove their own a9s-backed Compositions against the real provider, as test/integration/a9s/ does.
export {
  type ProviderAnyninesHarness,
  type ProviderAnyninesOptions,
  PROVIDER_ANYNINES_PREFIX,
  providerAnyninesBuild,
  providerAnyninesObject,
  providerAnyninesPackageYaml,
  startProviderAnynines,
} from './anynines.js';
export { PROVIDER_ANYNINES_SOURCE, PROVIDER_ANYNINES_V2_SOURCE, klutchioSourceDir } from './build.js';
export { KLUTCHIO_SOURCE_ENV, KLUTCHIO_V2_SOURCE_ENV, type KlutchioPin, type KlutchioSourceOptions, ensureKlutchioSource } from './klutchio.js';
// The process supervisor the harness uses for its components (start, log file, exit, stop), for
// scripts that start further processes from the same binaries (scripts/_scale-apps.ts).
export { HarnessProcess, type HarnessProcessOptions } from './_process.js';
