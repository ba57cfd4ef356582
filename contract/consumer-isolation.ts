/**
 * Isolation between consumers on a control plane with `--consumer-scope=Cluster`. There each consumer's
 * binder credential (`system:serviceaccount:<cluster namespace>:klutch-binder`) gets read/write on the
 * exported cluster-scoped resources cluster-wide, through a ClusterRole of its own: RBAC cannot restrict
 * a cluster-wide grant to objects created at run time (`resourceNames` must be known up front, and
 * `create` takes none). So without more, consumer A could update or delete consumer B's cluster-scoped
 * objects (`<B's cluster namespace>-<name>`), or squat their names.
 *
 * The backend's `ValidatingAdmissionPolicy` below (rendered by the BindBackend construct with
 * `consumerScope: 'Cluster'`) makes the API server enforce what the konnector's isolation
 * (runtime/konnector/export-isolation.ts, `Prefixed`, the backend's only cluster-scoped isolation) already
 * writes: every cluster-scoped object a binder credential creates, updates or deletes carries
 * `klutch.anynines.com/cluster-namespace: <its own cluster namespace>` (before and after the change) and
 * a name starting with `<its cluster namespace>-`. Reads are not admission requests: a consumer still
 * lists the other consumers' cluster-scoped objects of an exported resource (as in kube-bind).
 */
import { CLUSTER_NAMESPACE_ANNOTATION } from './api/constants.js';
import { BINDER_NAME } from './binder-rbac.js';

const cel = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Name of the policy and of its binding for the cluster namespaces `<prefix>-*`. */
export const consumerIsolationPolicyName = (prefix: string): string => `${BINDER_NAME}-${prefix}-cluster-scoped-isolation`;

/**
 * The spec of the policy for the binder credentials of the cluster namespaces `<prefix>-*`
 * (`--namespace-prefix`). Reviews (`authentication.k8s.io`, `authorization.k8s.io`) are not objects
 * and are left out.
 */
export function consumerIsolationPolicy(prefix: string): Record<string, unknown> {
  const ann = cel(CLUSTER_NAMESPACE_ANNOTATION);
  const owns = (o: string) => `has(${o}.metadata.annotations) && ${ann} in ${o}.metadata.annotations && ${o}.metadata.annotations[${ann}] == variables.ns`;
  return {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Cluster' }],
      excludeResourceRules: [{ apiGroups: ['authentication.k8s.io', 'authorization.k8s.io'], apiVersions: ['*'], resources: ['*'], operations: ['*'] }],
    },
    matchConditions: [
      {
        name: 'consumer-binder',
        expression: `request.userInfo.username.startsWith(${cel(`system:serviceaccount:${prefix}-`)}) && request.userInfo.username.endsWith(${cel(`:${BINDER_NAME}`)})`,
      },
    ],
    variables: [{ name: 'ns', expression: "request.userInfo.username.split(':')[2]" }],
    validations: [
      {
        expression: `request.operation == 'CREATE' || (${owns('oldObject')})`,
        reason: 'Forbidden',
        messageExpression: `'cluster-scoped ' + request.resource.resource + ' ' + request.name + ' belongs to another consumer: only objects annotated ${CLUSTER_NAMESPACE_ANNOTATION}=' + variables.ns + ' are yours'`,
      },
      {
        expression: `request.operation == 'DELETE' || (${owns('object')})`,
        reason: 'Forbidden',
        messageExpression: `'cluster-scoped ' + request.resource.resource + ' ' + request.name + ' must carry the annotation ${CLUSTER_NAMESPACE_ANNOTATION}=' + variables.ns + ' (your cluster namespace)'`,
      },
      {
        expression: `request.operation != 'CREATE' || object.metadata.name.startsWith(variables.ns + '-')`,
        reason: 'Forbidden',
        messageExpression: `'cluster-scoped ' + request.resource.resource + ' ' + object.metadata.name + ' must be named ' + variables.ns + '-<name> (Prefixed isolation): other names belong to other consumers'`,
      },
    ],
  };
}
