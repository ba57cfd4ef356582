/**
 * The RBAC a consumer's credentials get on the provider, written once: the rules of the shared
 * `klutch-binder` ClusterRole (bound in each cluster namespace, applied by klutch-backend at
 * start-up and rendered by the `BindBackend` construct for GitOps, so both write the same object)
 * and the rules of the per-consumer `klutch-binder-<clusterNs>` role over what was exported to and
 * claimed by that consumer. Plain data: no cdk8s, no API client.
 */
import { BIND_GROUP } from './api/constants.js';

/** One RBAC PolicyRule plus the reason it is granted. */
export interface BinderRule {
  /** API groups ('' is the core group). */
  readonly apiGroups: string[];
  /** Resources, including subresources such as `clusterbindings/status`. */
  readonly resources: string[];
  /** Verbs; never `*`. */
  readonly verbs: string[];
  /** Restricts the rule to these object names. */
  readonly resourceNames?: string[];
  /** Why the consumer needs this rule. */
  readonly why: string;
}

/** A PolicyRule as the API server takes it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Name of the shared binder ClusterRole and of the consumer's ServiceAccount. */
export const BINDER_NAME = 'klutch-binder';
/** The aggregated ClusterRole over every exported and claimed resource, bound in each provider namespace. */
export const BINDER_EXPORTS_CLUSTER_ROLE = `${BINDER_NAME}-exports`;
/** The per-credential Secret in a cluster namespace every consumer token is bound to (contract/credential.ts). */
export const CREDENTIAL_SECRET = 'credential';
/** Name of the per-consumer ClusterRole over what was exported to and claimed by that consumer. */
export const perConsumerRoleName = (clusterNs: string): string => `${BINDER_NAME}-${clusterNs}`;

const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** Rules of the shared `klutch-binder` ClusterRole, in the order klutch-backend applies them. */
export const BINDER_RULES: readonly BinderRule[] = [
  { apiGroups: [BIND_GROUP], resources: ['apiserviceexportrequests'], verbs: ALL_VERBS, why: 'kubectl-bind creates export requests' },
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get'], why: 'the konnector reads its cluster namespace' },
  // No read of Secrets: the kubeconfig Secret holds the current token, and a leaked token that could
  // read it would follow every rotation. The konnector receives rotated kubeconfigs sealed in the
  // ClusterBinding instead (contract/credential.ts).
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['delete'],
    resourceNames: [CREDENTIAL_SECRET],
    why: 'kubectl-bind revoke deletes the credential object, which invalidates every token of this credential at once',
  },
  { apiGroups: [BIND_GROUP], resources: ['clusterbindings'], verbs: ['get', 'list', 'watch'], why: 'heartbeat target' },
  { apiGroups: [BIND_GROUP], resources: ['clusterbindings/status'], verbs: ['get', 'patch', 'update'], why: 'heartbeat' },
  { apiGroups: [BIND_GROUP], resources: ['apiserviceexports'], verbs: ['get', 'list', 'watch'], why: 'exports of this consumer' },
  { apiGroups: [BIND_GROUP], resources: ['apiserviceexports/status'], verbs: ['get', 'patch', 'update'], why: 'export conditions' },
  { apiGroups: [BIND_GROUP], resources: ['apiservicenamespaces'], verbs: ALL_VERBS, why: 'the konnector announces consumer namespaces' },
];

/**
 * Only with `klutch-backend --klutch-konnector-compat` (BindBackendProps.klutchKonnectorCompat): Klutch's
 * Go konnector watches the Secrets of the cluster namespace and copies the kubeconfig Secret itself to
 * rotate credentials. Granting it gives back what the default takes away: a leaked token can then read
 * every rotated successor until the credential's maximum life or a revocation.
 */
export const KLUTCH_KONNECTOR_SECRETS_RULE: BinderRule = {
  apiGroups: [''],
  resources: ['secrets'],
  verbs: ['get', 'list', 'watch'],
  why: "Klutch's Go konnector watches the cluster namespace's Secrets and copies the kubeconfig Secret (its credential rotation); only with --klutch-konnector-compat",
};

/** The rules of the shared `klutch-binder` ClusterRole: {@link BINDER_RULES}, plus the Secret read Klutch's konnector needs when asked. */
export function binderRules(opts: { klutchKonnectorCompat?: boolean } = {}): readonly BinderRule[] {
  return opts.klutchKonnectorCompat ? [...BINDER_RULES, KLUTCH_KONNECTOR_SECRETS_RULE] : BINDER_RULES;
}

/** {@link binderRules} as PolicyRules (without the reasons). */
export function binderPolicyRules(opts: { klutchKonnectorCompat?: boolean } = {}): PolicyRule[] {
  return binderRules(opts).map(({ why: _why, ...r }) => ({
    ...r,
    apiGroups: [...r.apiGroups],
    resources: [...r.resources],
    verbs: [...r.verbs],
    ...(r.resourceNames ? { resourceNames: [...r.resourceNames] } : {}),
  }));
}

/** What {@link exportedResourceRules} reads of an APIServiceExport. */
export interface ExportedResource {
  readonly metadata: { readonly deletionTimestamp?: string };
  readonly spec: {
    readonly group?: string;
    readonly scope?: string;
    readonly names: { readonly plural: string };
    readonly permissionClaims?: ReadonlyArray<{ readonly group?: string; readonly resource: string }>;
  };
}

/**
 * Rules of the per-consumer `klutch-binder-<clusterNs>` role: each exported resource (+ `/status`)
 * and each claimed resource, all verbs, one rule per API group (sorted). `onlyClusterScoped`: the
 * rules of its `-cluster` role, the cluster-scoped exports only and no claims.
 */
export function exportedResourceRules(exports: readonly ExportedResource[], onlyClusterScoped = false): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  const add = (g: string, r: string) => {
    if (!byGroup.has(g)) byGroup.set(g, new Set());
    byGroup.get(g)!.add(r);
  };
  for (const e of exports) {
    if (e.metadata.deletionTimestamp) continue;
    if (onlyClusterScoped && e.spec.scope !== 'Cluster') continue;
    add(e.spec.group ?? '', e.spec.names.plural);
    add(e.spec.group ?? '', `${e.spec.names.plural}/status`);
    if (!onlyClusterScoped) for (const c of e.spec.permissionClaims ?? []) add(c.group ?? '', c.resource);
  }
  return [...byGroup.keys()].sort().map((g) => ({ apiGroups: [g], resources: [...byGroup.get(g)!].sort(), verbs: ALL_VERBS }));
}
