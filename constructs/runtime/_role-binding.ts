/**
 * Role bindings built with cdk8s-plus from role references (`IRole`, `IClusterRole`): the roleRef is
 * derived from the role (cdk8s-plus resolves it with `Lazy`), never written by hand. The
 * ServiceAccount subject is written as the API server stores it: cdk8s-plus adds `apiGroup: ""`,
 * which the server drops (a diff on every GitOps sync, test/integration/topology/synthesized-topology.test.ts),
 * so it is removed.
 */
import { ApiObject, type ApiObjectMetadata, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';

/** A ServiceAccount by name and namespace (made by this app or elsewhere). */
export interface ServiceAccountRef {
  readonly name: string;
  readonly namespace: string;
}

/** Binds a ClusterRole (a cdk8s-plus role, or an L1 `KubeClusterRole` of this app) to a ServiceAccount cluster-wide. */
export function bindClusterRole(
  scope: Construct,
  id: string,
  role: kplus.IClusterRole | kplus.k8s.KubeClusterRole,
  serviceAccount: ServiceAccountRef,
  metadata: ApiObjectMetadata,
): kplus.ClusterRoleBinding {
  const ref = role instanceof kplus.k8s.KubeClusterRole ? kplus.ClusterRole.fromClusterRoleName(role, 'Ref', role.name) : role;
  const b = new kplus.ClusterRoleBinding(scope, id, { metadata, role: ref });
  b.addSubjects(subject(b, serviceAccount));
  ApiObject.of(b).addJsonPatch(JsonPatch.remove('/subjects/0/apiGroup'));
  return b;
}

/** Binds a Role (a cdk8s-plus role, or an L1 `KubeRole` of this app) to a ServiceAccount in the binding's namespace. */
export function bindRole(
  scope: Construct,
  id: string,
  role: kplus.IRole | kplus.k8s.KubeRole,
  serviceAccount: ServiceAccountRef,
  metadata: ApiObjectMetadata,
): kplus.RoleBinding {
  const ref = role instanceof kplus.k8s.KubeRole ? kplus.Role.fromRoleName(role, 'Ref', role.name) : role;
  const b = new kplus.RoleBinding(scope, id, { metadata, role: ref });
  b.addSubjects(subject(b, serviceAccount));
  ApiObject.of(b).addJsonPatch(JsonPatch.remove('/subjects/0/apiGroup'));
  return b;
}

function subject(scope: Construct, sa: ServiceAccountRef): kplus.IServiceAccount {
  return kplus.ServiceAccount.fromServiceAccountName(scope, 'Subject', sa.name, { namespaceName: sa.namespace });
}

/**
 * Binds a ClusterRole (an L1 `KubeClusterRole` of this app) to a ServiceAccount in one namespace only: the
 * rules apply there and nowhere else. L1, because cdk8s-plus-28's imported ClusterRole is no `IRole`; the
 * subject is written as the API server stores it (no `apiGroup`).
 */
export function bindClusterRoleInNamespace(
  scope: Construct,
  id: string,
  role: kplus.k8s.KubeClusterRole,
  serviceAccount: ServiceAccountRef,
  metadata: ApiObjectMetadata & { namespace: string },
): kplus.k8s.KubeRoleBinding {
  return new kplus.k8s.KubeRoleBinding(scope, id, {
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.name },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: serviceAccount.namespace }],
  });
}
