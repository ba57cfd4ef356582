/**
 * The one place where klutch-kit's runtime defaults live: image references, ports, names.
 *
 * Every construct in `constructs/runtime` (and the topology charts, the Pulumi stacks and
 * `kubectl-bind`, which install the same manifests) reads its defaults from here, so that a
 * release bumps one constant. `test/runtime-constructs/defaults.test.ts` checks that
 * {@link KLUTCH_KIT_VERSION} equals the `version` in package.json.
 */
import { BINDER_NAME } from '../../contract/binder-rbac.js';
import { BIND_API_VERSION, BIND_GROUP, EXAMPLE_BACKEND_API_VERSION, EXAMPLE_BACKEND_GROUP } from '../../contract/api/constants.js';

/** The klutch-kit package version; runtime images are tagged with it. */
export const KLUTCH_KIT_VERSION = '0.1.0';

/** The registry and organisation that klutch-kit's own runtime images are published under. */
export const IMAGE_REPOSITORY = 'ghcr.io/klutch-kit';

/** Default images, all pinned (no `latest`). */
export const DEFAULT_IMAGES = {
  /** The konnector (`runtime/konnector`, binary `klutch-konnector`). */
  konnector: `${IMAGE_REPOSITORY}/konnector:${KLUTCH_KIT_VERSION}`,
  /** The bind backend (`runtime/backend`, binary `klutch-backend`). */
  backend: `${IMAGE_REPOSITORY}/backend:${KLUTCH_KIT_VERSION}`,
  /** Dex, the OIDC provider used in front of the backend (distroless, non-root). */
  dex: 'ghcr.io/dexidp/dex:v2.45.1-distroless',
} as const;

/** Namespace the konnector and the APIServiceBindings live in on an app cluster (Klutch ≥ 1.3): the contract's. */
export { KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
/** Default namespace of the bind backend and Dex on the control plane (Klutch's `bind`). */
export const BACKEND_NAMESPACE = 'klutch-system';
/** Aggregated ClusterRole for the exported and claimed resources, bound in each provider namespace. */
export { BINDER_EXPORTS_CLUSTER_ROLE } from '../../contract/binder-rbac.js';
/** Label that aggregates a per-export ClusterRole into {@link BINDER_EXPORTS_CLUSTER_ROLE}. */
export const BINDER_EXPORTS_AGGREGATION_LABEL = 'klutch.anynines.com/aggregate-to-binder-exports';

/**
 * Name of the ServiceAccount the backend creates in every cluster namespace.
 * @deprecated Use the contract's name, `BINDER_NAME` of `klutch-kit/contract`.
 */
export const BINDER_SERVICE_ACCOUNT = BINDER_NAME;
/**
 * Shared ClusterRole bound (by RoleBinding) in each consumer's cluster namespace.
 * @deprecated Use the contract's name, `BINDER_NAME` of `klutch-kit/contract`.
 */
export const BINDER_CLUSTER_ROLE = BINDER_NAME;
/**
 * The binding API group.
 * @deprecated Use the contract's name, `BIND_GROUP` of `klutch-kit/contract`.
 */
export const BINDING_GROUP = BIND_GROUP;
/**
 * The binding API version (`klutch.anynines.com/v1alpha1`).
 * @deprecated Use the contract's name, `BIND_API_VERSION` of `klutch-kit/contract`.
 */
export const BINDING_API_VERSION = BIND_API_VERSION;
/**
 * The backend's catalogue API group (APIServiceExportTemplate).
 * @deprecated Use the contract's name, `EXAMPLE_BACKEND_GROUP` of `klutch-kit/contract`.
 */
export const TEMPLATE_GROUP = EXAMPLE_BACKEND_GROUP;
/**
 * The backend's catalogue API version.
 * @deprecated Use the contract's name, `EXAMPLE_BACKEND_API_VERSION` of `klutch-kit/contract`.
 */
export const TEMPLATE_API_VERSION = EXAMPLE_BACKEND_API_VERSION;

/** Ports. */
export const PORTS = {
  /** Backend HTTP (`--listen-address`): UI, bind flow, /healthz, /readyz, /metrics. */
  backendHttp: 8080,
  /** Konnector `--health-address`: /healthz, /readyz and /metrics. */
  konnectorHealth: 8080,
  dexHttp: 5556,
  dexTelemetry: 5558,
} as const;

/** Labels every runtime object carries (app.kubernetes.io recommended labels). */
export function standardLabels(name: string, component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'klutch',
    'app.kubernetes.io/managed-by': 'klutch-kit',
    'app.kubernetes.io/version': KLUTCH_KIT_VERSION,
  };
}
