/**
 * Well-known names of the Klutch binding protocol. Values are wire constants: they must stay
 * byte-identical to Klutch's (anynines/klutchio `bind/`), or mixed installations break.
 */

/** API group of the binding API. */
export const BIND_GROUP = 'klutch.anynines.com';
/** Version of the binding API. */
export const BIND_VERSION = 'v1alpha1';
/** `klutch.anynines.com/v1alpha1`. */
export const BIND_API_VERSION = `${BIND_GROUP}/${BIND_VERSION}` as const;

/** API group of the backend catalogue (APIServiceExportTemplate). */
export const EXAMPLE_BACKEND_GROUP = 'example-backend.klutch.anynines.com';
/** `example-backend.klutch.anynines.com/v1alpha1`. */
export const EXAMPLE_BACKEND_API_VERSION = `${EXAMPLE_BACKEND_GROUP}/${BIND_VERSION}` as const;

/**
 * Namespace, on an app cluster, of the konnector, of the APIServiceBindings kubectl-bind creates and of
 * their kubeconfig Secrets (Klutch ≥ 1.3's `klutch-bind`).
 */
export const KONNECTOR_NAMESPACE = 'klutch-bind';
/** Name of the konnector's leader-election Lease (Klutch's: the namespace's name). */
export const KONNECTOR_LEASE_NAME = KONNECTOR_NAMESPACE;

/** CRD category of every binding-API CRD (`kubectl get kube-bindings`). */
export const KUBE_BINDINGS_CATEGORY = 'kube-bindings';

/** Annotation `"true"` on objects the konnector synced (both sides). */
export const BOUND_ANNOTATION = 'klutch.anynines.com/bound';
/** Annotation on an APIServiceExport: hash of the CRD spec it was built from (sha224, base62). */
export const SOURCE_SPEC_HASH_ANNOTATION = 'klutch.anynines.com/source-spec-hash';
/** Annotation on claimed objects: `Provider` or `Consumer`. */
export const RESOURCE_OWNER_ANNOTATION = 'klutch.anynines.com/resource-owner';
/** Annotation on upstream copies of cluster-scoped objects: the consumer's cluster namespace. */
export const CLUSTER_NAMESPACE_ANNOTATION = 'klutch.anynines.com/cluster-namespace';
/** Annotation on provider namespaces created for an APIServiceNamespace: `<clusterNs>/<name>`. */
export const API_SERVICE_NAMESPACE_ANNOTATION = 'klutch.anynines.com/api-service-namespace';
/** Legacy label `"true"` on exported CRDs. */
export const EXPORTED_LABEL = 'klutch.anynines.com/exported';
/** Annotation on a cluster namespace: the OIDC identity (`<sub>#<clusterID>`) it belongs to. */
export const IDENTITY_ANNOTATION = 'example-backend.klutch.anynines.com/identity';
/** Labels linking control-plane-mode objects to their AppClusterBinding. */
export const APP_CLUSTER_BINDING_NAME_LABEL = 'klutch.anynines.com/appclusterbinding-name';
export const APP_CLUSTER_BINDING_NAMESPACE_LABEL = 'klutch.anynines.com/appclusterbinding-namespace';
/** Annotation: create the object once, never update it. */
export const CREATE_ONLY_ANNOTATION = 'bootstrap.klutch.anynines.com/create-only';

/** Field manager of the konnector's server-side applies (Klutch's value). */
export const KONNECTOR_FIELD_MANAGER = 'klutch.anynines.com';

/** Finalizer the konnector puts on downstream (consumer) objects it syncs upstream. */
export const SYNCER_FINALIZER = 'klutch.anynines.com/syncer';
/** Finalizer of AppClusterBinding cleanup. */
export const APP_CLUSTER_BINDING_FINALIZER = 'klutch.anynines.com/appclusterbinding-cleanup';

/** The only allowed name of a ClusterBinding. */
export const CLUSTER_BINDING_NAME = 'cluster';
/** The only allowed key of a kubeconfig Secret reference. */
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

/** Condition types, per kind. `Ready` is the summary condition on every kind. */
export const ConditionType = {
  Ready: 'Ready',
  // APIServiceExport
  Connected: 'Connected',
  ProviderInSync: 'ProviderInSync',
  ConsumerInSync: 'ConsumerInSync',
  Established: 'Established',
  NamesAccepted: 'NamesAccepted',
  // APIServiceExportRequest
  ExportsReady: 'ExportsReady',
  // APIServiceBinding (also Connected)
  SecretValid: 'SecretValid',
  InformersSynced: 'InformersSynced',
  Heartbeating: 'Heartbeating',
  SchemaInSync: 'SchemaInSync',
  /** klutch-kit: the binding's export and accepted claims are within the konnector's allow-list (contract/resource-policy.ts). */
  ResourcesAllowed: 'ResourcesAllowed',
  // ClusterBinding (also SecretValid)
  ValidVersion: 'ValidVersion',
  Healthy: 'Healthy',
  // AppClusterBinding (also SecretValid)
  KonnectorDeployed: 'KonnectorDeployed',
} as const;
export type ConditionTypeName = (typeof ConditionType)[keyof typeof ConditionType];

/** Phases of an APIServiceExportRequest. */
export const ExportRequestPhase = { Pending: 'Pending', Failed: 'Failed', Succeeded: 'Succeeded' } as const;

/** Authentication method advertised in BindingProvider. */
export const OAUTH2_CODE_GRANT = 'OAuth2CodeGrant';
