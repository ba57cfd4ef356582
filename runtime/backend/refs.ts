/** Resources the backend reads and writes, and its well-known names. */
import type { ResourceRef } from '../core/client.js';
import { BINDER_NAME } from '../../contract/binder-rbac.js';
import { BIND_GROUP, BIND_VERSION } from '../../contract/wire.js';

export const TEMPLATE_GROUP = 'example-backend.klutch.anynines.com';
export const TEMPLATE_VERSION = 'v1alpha1';

const core = (plural: string, kind: string, namespaced = true): ResourceRef => ({ group: '', version: 'v1', plural, kind, namespaced });
const rbac = (plural: string, kind: string, namespaced: boolean): ResourceRef => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced,
});
const bind = (plural: string, kind: string): ResourceRef => ({ group: BIND_GROUP, version: BIND_VERSION, plural, kind, namespaced: true });

export const R = {
  namespaces: core('namespaces', 'Namespace', false),
  serviceAccounts: core('serviceaccounts', 'ServiceAccount'),
  secrets: core('secrets', 'Secret'),
  clusterRoles: rbac('clusterroles', 'ClusterRole', false),
  clusterRoleBindings: rbac('clusterrolebindings', 'ClusterRoleBinding', false),
  roleBindings: rbac('rolebindings', 'RoleBinding', true),
  crds: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  } as ResourceRef,
  clusterBindings: bind('clusterbindings', 'ClusterBinding'),
  exportRequests: bind('apiserviceexportrequests', 'APIServiceExportRequest'),
  exports: bind('apiserviceexports', 'APIServiceExport'),
  serviceNamespaces: bind('apiservicenamespaces', 'APIServiceNamespace'),
  templates: {
    group: TEMPLATE_GROUP,
    version: TEMPLATE_VERSION,
    plural: 'apiserviceexporttemplates',
    kind: 'APIServiceExportTemplate',
    namespaced: true,
  } as ResourceRef,
} as const;

/** Annotation on a cluster namespace: the consumer identity `<sub>#<clusterID>` (Klutch's format). */
export const IDENTITY_ANNOTATION = 'example-backend.klutch.anynines.com/identity';
/** Annotation on a cluster namespace: the OIDC issuer of the identity. */
export const ISSUER_ANNOTATION = 'example-backend.klutch.anynines.com/issuer';
/** Label on a cluster namespace: hash of issuer + identity, for a label-selector lookup. */
export const IDENTITY_HASH_LABEL = 'example-backend.klutch.anynines.com/identity-hash';
/** Label on a cluster namespace: hash of issuer + subject (all app clusters of one identity), for the per-identity limit. */
export const SUBJECT_HASH_LABEL = 'example-backend.klutch.anynines.com/subject-hash';
/** Annotation on provider namespaces created for an APIServiceNamespace: `<clusterNs>/<name>`. */
export const SERVICE_NAMESPACE_ANNOTATION = 'klutch.anynines.com/api-service-namespace';
/** Annotation on exports: hash of the CRD spec they were made from. */
export const SOURCE_SPEC_HASH_ANNOTATION = 'klutch.anynines.com/source-spec-hash';
/** Annotation on the kubeconfig Secret: when its token expires (RFC 3339). */
export const TOKEN_EXPIRY_ANNOTATION = 'klutch.anynines.com/token-expiration';
/** Annotation on the kubeconfig Secret: when its token was issued (RFC 3339). */
export const TOKEN_ISSUED_ANNOTATION = 'klutch.anynines.com/token-issued';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'klutch-backend';

export const BINDER_SA = BINDER_NAME;
export const BINDER_CLUSTER_ROLE = BINDER_NAME;
export const KUBECONFIG_SECRET = 'kubeconfig';
export const CLUSTER_BINDING_NAME = 'cluster';
export const perClusterRoleName = (clusterNs: string): string => `klutch-binder-${clusterNs}`;
