/** Resources the backend reads and writes, and its well-known names. */
import type { ResourceRef } from '../core/client.js';
import { BINDING_RESOURCES } from '../../contract/resources.js';

const core = (plural: string, kind: string, namespaced = true): ResourceRef => ({ group: '', version: 'v1', plural, kind, namespaced });
const rbac = (plural: string, kind: string, namespaced: boolean): ResourceRef => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

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
  // the binding API: the contract's table (contract/resources.ts), under the backend's short names
  clusterBindings: BINDING_RESOURCES.clusterBindings as ResourceRef,
  exportRequests: BINDING_RESOURCES.apiServiceExportRequests as ResourceRef,
  exports: BINDING_RESOURCES.apiServiceExports as ResourceRef,
  serviceNamespaces: BINDING_RESOURCES.apiServiceNamespaces as ResourceRef,
  templates: BINDING_RESOURCES.apiServiceExportTemplates as ResourceRef,
} as const;

/** Annotation on a cluster namespace: the consumer identity `<sub>#<clusterID>` (Klutch's format). */
export { IDENTITY_ANNOTATION } from '../../contract/api/constants.js';
/** Annotation on a cluster namespace: the OIDC issuer of the identity. */
export const ISSUER_ANNOTATION = 'example-backend.klutch.anynines.com/issuer';
/** Label on a cluster namespace: hash of issuer + identity, for a label-selector lookup. */
export const IDENTITY_HASH_LABEL = 'example-backend.klutch.anynines.com/identity-hash';
/** Label on a cluster namespace: hash of issuer + subject (all app clusters of one identity), for the per-identity limit. */
export const SUBJECT_HASH_LABEL = 'example-backend.klutch.anynines.com/subject-hash';
export { SOURCE_SPEC_HASH_ANNOTATION } from '../../contract/api/constants.js';
/** Annotation on the kubeconfig Secret: when its token expires (RFC 3339). */
export const TOKEN_EXPIRY_ANNOTATION = 'klutch.anynines.com/token-expiration';
/** Annotation on the kubeconfig Secret: when its token was issued (RFC 3339). */
export const TOKEN_ISSUED_ANNOTATION = 'klutch.anynines.com/token-issued';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'klutch-backend';

export const KUBECONFIG_SECRET = 'kubeconfig';
export { CLUSTER_BINDING_NAME } from '../../contract/api/constants.js';
