/**
 * GitOps layout of one cluster: which phase folder an object goes to, its sync wave, and a file
 * name that is unique for its identity (group, kind, namespace, name).
 *
 * Phases (folder = `<NN>-<phase>`, Argo CD `argocd.argoproj.io/sync-wave` = NN):
 *
 * | NN | folder | what |
 * |---|---|---|
 * | 00 | crds | CustomResourceDefinitions |
 * | 10 | namespaces | Namespaces |
 * | 20 | rbac | ServiceAccounts, (Cluster)Roles, (Cluster)RoleBindings |
 * | 30 | config | ConfigMaps, Secrets |
 * | 40 | platform | the Crossplane install (Helm release / Argo CD Application / rendered chart) and other installs |
 * | 50 | packages | Crossplane Providers, Functions, Configurations, DeploymentRuntimeConfigs |
 * | 60 | apis | XRDs, Compositions, ProviderConfigs |
 * | 70 | workloads | Deployments, Services, Ingresses, HTTPRoutes, PodDisruptionBudgets |
 * | 80 | bindings | APIServiceExportTemplates, APIServiceBindings and other binding API objects |
 * | 90 | resources | everything else: claims and other custom resources |
 */
import { BIND_GROUP, EXAMPLE_BACKEND_GROUP } from '../../contract/api/constants.js';

export interface Phase {
  readonly order: number;
  readonly folder: string;
}

export const PHASES = {
  crds: { order: 0, folder: '00-crds' },
  namespaces: { order: 10, folder: '10-namespaces' },
  rbac: { order: 20, folder: '20-rbac' },
  config: { order: 30, folder: '30-config' },
  platform: { order: 40, folder: '40-platform' },
  packages: { order: 50, folder: '50-packages' },
  apis: { order: 60, folder: '60-apis' },
  workloads: { order: 70, folder: '70-workloads' },
  bindings: { order: 80, folder: '80-bindings' },
  resources: { order: 90, folder: '90-resources' },
} as const satisfies Record<string, Phase>;

/** Groups served by every Kubernetes API server (no CRD needed). */
export const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'node.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'certificates.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'resource.k8s.io',
]);

/** Namespaces that exist in every cluster. */
export const BUILTIN_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);

/** Kinds of built-in groups that are cluster-scoped. */
const CLUSTER_SCOPED_BUILTIN = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'StorageClass',
  'PriorityClass',
  'IngressClass',
  'RuntimeClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'CertificateSigningRequest',
]);

export function groupOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** The phase of an object. */
export function phaseOf(apiVersion: string, kind: string): Phase {
  const group = groupOf(apiVersion);
  switch (kind) {
    case 'CustomResourceDefinition':
      return PHASES.crds;
    case 'Namespace':
      return PHASES.namespaces;
    case 'ServiceAccount':
    case 'Role':
    case 'ClusterRole':
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return group === '' || group === 'rbac.authorization.k8s.io' ? PHASES.rbac : PHASES.resources;
    case 'ConfigMap':
    case 'Secret':
      return group === '' ? PHASES.config : PHASES.resources;
    default:
      break;
  }
  if (group === 'helm.toolkit.fluxcd.io' || group === 'source.toolkit.fluxcd.io' || group === 'argoproj.io') return PHASES.platform;
  if (group === 'pkg.crossplane.io') return PHASES.packages;
  if (group === 'apiextensions.crossplane.io') return PHASES.apis;
  if (kind === 'ProviderConfig' || kind === 'ClusterProviderConfig') return PHASES.apis;
  if (group === BIND_GROUP || group === EXAMPLE_BACKEND_GROUP) return PHASES.bindings;
  if (BUILTIN_GROUPS.has(group)) return PHASES.workloads;
  // Gateway routes and Prometheus Operator objects (ServiceMonitor, PodMonitor, PrometheusRule) go with the workloads they serve.
  if (group === 'gateway.networking.k8s.io' || group === 'monitoring.coreos.com') return PHASES.workloads;
  return PHASES.resources;
}

/** True when objects of this kind are cluster-scoped (for built-ins; custom kinds: has no namespace). */
export function isClusterScopedBuiltin(kind: string): boolean {
  return CLUSTER_SCOPED_BUILTIN.has(kind);
}

const SAFE = /^[a-z0-9][a-z0-9.-]*$/;

/** FNV-1a 32-bit, hex — a short, stable disambiguator. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

function part(s: string): string {
  if (SAFE.test(s) && s.length <= 120) return s;
  const cleaned = s
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100);
  return `${cleaned || 'x'}-${shortHash(s)}`;
}

/**
 * File name of an object inside its phase folder:
 * `<kind>[.<group>]_<namespace | _cluster>_<name>.yaml`, all lower case. `_` never occurs in
 * kinds, groups, namespaces or DNS names, so different identities give different names; names that
 * need cleaning get a hash of the original appended.
 */
export function fileNameOf(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  const group = groupOf(apiVersion);
  const k = part(kind.toLowerCase() + (group ? `.${group}` : ''));
  return `${k}_${namespace ? part(namespace) : '_cluster'}_${part(name)}.yaml`;
}
