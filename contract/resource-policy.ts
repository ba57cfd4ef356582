/**
 * What a provider may make the konnector touch in an app cluster, written once as documented data
 * (each entry says why) for both sides that enforce it: `kubectl-bind` refuses a request before it
 * writes anything, and the konnector refuses to serve a binding's export or claim outside it.
 *
 * A provider names two kinds of resources:
 * - **exports**: the resources of an APIServiceExport; the konnector creates their CRD and gets
 *   read/write on every object of the resource, cluster-wide;
 * - **claims**: permission claims; the konnector copies objects of the claimed resource between
 *   the provider and the bound namespaces of the app cluster (and gets read/write on it).
 *
 * The default (no allowance): exports of the provider's own API (a group that is no Kubernetes or
 * binding API group), and claims on Secrets and ConfigMaps. Everything else needs the app cluster
 * admin's explicit allowance by name (`kubectl bind --allow-resource <plural>.<group>`, the
 * konnector's `--allow-resource`, `KonnectorProps.allowedResources`); a few resources can never be
 * allowed, because write access to them is control of the whole cluster.
 *
 * The first entry of {@link RESOURCE_POLICY} that matches a resource and its use decides.
 */
import { BIND_GROUP, EXAMPLE_BACKEND_GROUP } from './api/constants.js';
import { RESOURCE_PATTERN } from './api/common.js';

/** How a provider names a resource: as an export or as a permission claim. */
export type ResourceUse = 'export' | 'claim';

/** What the policy says about a resource. */
export class ResourceVerdict {
  /** Allowed without asking (the provider's own API; claimed Secrets and ConfigMaps). */
  static readonly ALLOWED = new ResourceVerdict('Allowed');
  /** Refused unless the app cluster's admin allows this resource by name. */
  static readonly REFUSED = new ResourceVerdict('Refused');
  /** Refused even when allowed by name: write access to it is control of the whole cluster. */
  static readonly NEVER = new ResourceVerdict('Never');
  static readonly all: readonly ResourceVerdict[] = [ResourceVerdict.ALLOWED, ResourceVerdict.REFUSED, ResourceVerdict.NEVER];
  private constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** One entry of the policy. */
export interface ResourcePolicyEntry {
  /** API group: exact (`''` is core), or `*.<suffix>` for every group ending in `.<suffix>`. */
  readonly group: string;
  /** Plural resources, or `'*'` for every resource of the group. */
  readonly resources: readonly string[] | '*';
  /** The uses the entry applies to. @default both */
  readonly uses?: readonly ResourceUse[];
  readonly verdict: ResourceVerdict;
  /** Why: shown in every refusal and on the consent screen. */
  readonly why: string;
}

const WORKLOADS_WHY =
  "workloads run code of the provider's choosing in your cluster, with the service accounts, Secrets and host access of the namespace they land in";

/** The policy, first match wins; resources no entry matches: exports allowed, claims refused. */
export const RESOURCE_POLICY: readonly ResourcePolicyEntry[] = [
  // never, whatever the admin allows
  {
    group: BIND_GROUP,
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: 'the binding API itself: writing bindings or ClusterBindings in your cluster steers the konnector (which kubeconfig it loads, which claims it accepts)',
  },
  {
    group: EXAMPLE_BACKEND_GROUP,
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: "the bind backend's own API: it belongs to the provider's control plane",
  },
  {
    group: 'rbac.authorization.k8s.io',
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: 'RBAC: whoever writes Roles and bindings grants any right in the cluster, to anyone',
  },
  {
    group: 'admissionregistration.k8s.io',
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: 'admission webhooks and policies see and change every object written to the cluster',
  },
  {
    group: 'apiextensions.k8s.io',
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: "CRDs define the cluster's APIs; the konnector creates the bound CRDs itself and may touch no other",
  },
  {
    group: 'apiregistration.k8s.io',
    resources: '*',
    verdict: ResourceVerdict.NEVER,
    why: 'an APIService routes a whole API group of the cluster to a service of its author',
  },
  { group: 'certificates.k8s.io', resources: '*', verdict: ResourceVerdict.NEVER, why: 'certificate signing requests mint client certificates for any user' },
  { group: 'authentication.k8s.io', resources: '*', verdict: ResourceVerdict.NEVER, why: 'token requests and reviews act on the identities of the cluster' },
  { group: 'authorization.k8s.io', resources: '*', verdict: ResourceVerdict.NEVER, why: 'access reviews are not data; a provider has nothing to sync there' },
  {
    group: '',
    resources: ['serviceaccounts'],
    verdict: ResourceVerdict.NEVER,
    why: 'service accounts are identities: with Secrets of type service-account-token they become tokens of the cluster',
  },
  {
    group: '',
    resources: ['nodes', 'namespaces', 'persistentvolumes'],
    verdict: ResourceVerdict.NEVER,
    why: 'cluster-scoped core objects: nodes run every pod, deleting a namespace deletes everything in it, persistent volumes hold every tenant’s data',
  },
  // allowed by default: the claims Klutch's data services make
  {
    group: '',
    resources: ['secrets', 'configmaps'],
    uses: ['claim'],
    verdict: ResourceVerdict.ALLOWED,
    why: "service-binding credentials and settings: copied only into the namespaces you bind, under the claim's selector",
  },
  // refused unless allowed by name
  { group: '', resources: ['pods', 'replicationcontrollers', 'podtemplates'], verdict: ResourceVerdict.REFUSED, why: WORKLOADS_WHY },
  { group: 'apps', resources: '*', verdict: ResourceVerdict.REFUSED, why: WORKLOADS_WHY },
  { group: 'batch', resources: '*', verdict: ResourceVerdict.REFUSED, why: WORKLOADS_WHY },
  {
    group: '',
    resources: '*',
    verdict: ResourceVerdict.REFUSED,
    why: "core Kubernetes objects (services, endpoints, volume claims, …) are not the provider's API",
  },
  ...['autoscaling', 'policy', 'extensions'].map((group): ResourcePolicyEntry => ({
    group,
    resources: '*',
    verdict: ResourceVerdict.REFUSED,
    why: "a built-in Kubernetes API group, not the provider's API",
  })),
  ...['k8s.io', 'kubernetes.io', 'x-k8s.io'].map((suffix): ResourcePolicyEntry => ({
    group: `*.${suffix}`,
    resources: '*',
    verdict: ResourceVerdict.REFUSED,
    why: `APIs of Kubernetes and its SIG projects (*.${suffix}: networking, storage, scheduling, Cluster API, Gateway API, …), not the provider's API`,
  })),
  {
    group: '*.crossplane.io',
    resources: '*',
    verdict: ResourceVerdict.REFUSED,
    why: "Crossplane's APIs: packages and providers run code, compositions create infrastructure with the app cluster's credentials",
  },
];

/** What applies to a resource no entry matches, per use. */
export const POLICY_DEFAULTS: Readonly<Record<ResourceUse, { verdict: ResourceVerdict; why: string }>> = {
  export: { verdict: ResourceVerdict.ALLOWED, why: "the provider's own API: the konnector creates its CRD from the export" },
  claim: {
    verdict: ResourceVerdict.REFUSED,
    why: 'claims on other resources than Secrets and ConfigMaps write objects of that kind into your namespaces',
  },
};

/** A resource allowed by the app cluster's admin: `<plural>.<group>`, or `<plural>` for the core group. */
export interface AllowedResource {
  readonly group: string;
  readonly resource: string;
}

/** `<plural>.<group>`, or `<plural>` for the core group: the spelling `--allow-resource` takes. */
export const resourceName = (r: { group?: string; resource: string }): string => (r.group ? `${r.resource}.${r.group}` : r.resource);

/** The decision on one resource in one use. */
export interface ResourceDecision {
  readonly group: string;
  readonly resource: string;
  /** {@link resourceName}. */
  readonly name: string;
  readonly use: ResourceUse;
  readonly allowed: boolean;
  /** What the policy says before any allowance. */
  readonly verdict: ResourceVerdict;
  /** True when the policy refuses it and the admin's allowance lifted that. */
  readonly allowedByName: boolean;
  readonly why: string;
}

function matches(e: ResourcePolicyEntry, group: string, resource: string, use: ResourceUse): boolean {
  if (e.uses && !e.uses.includes(use)) return false;
  const g = e.group.startsWith('*.') ? group.endsWith(e.group.slice(1)) : group === e.group;
  return g && (e.resources === '*' || e.resources.includes(resource));
}

/** The policy's verdict on a resource before any allowance, with its reason. */
export function policyFor(r: { group?: string; resource: string }, use: ResourceUse): { verdict: ResourceVerdict; why: string } {
  const group = r.group ?? '';
  const e = RESOURCE_POLICY.find((x) => matches(x, group, r.resource, use));
  return e ? { verdict: e.verdict, why: e.why } : POLICY_DEFAULTS[use];
}

/** Decides whether the konnector may serve `r` in `use`, given the admin's allowances. */
export function decideResource(r: { group?: string; resource: string }, use: ResourceUse, allowed: readonly AllowedResource[] = []): ResourceDecision {
  const group = r.group ?? '';
  const { verdict, why } = policyFor(r, use);
  const named = allowed.some((a) => a.group === group && a.resource === r.resource);
  const allowedByName = verdict === ResourceVerdict.REFUSED && named;
  return {
    group,
    resource: r.resource,
    name: resourceName(r),
    use,
    allowed: verdict === ResourceVerdict.ALLOWED || allowedByName,
    verdict,
    allowedByName,
    why,
  };
}

/**
 * Why a decision refuses, and what to do: `how` names the switch of the caller that allows a
 * resource (e.g. `kubectl bind --allow-resource daemonsets.apps`).
 */
export function refusalMessage(d: ResourceDecision, how: (name: string) => string): string {
  const what = d.use === 'export' ? `the export of ${d.name}` : `the permission claim on ${d.name}`;
  if (d.verdict === ResourceVerdict.NEVER) return `${what} is never allowed: ${d.why}; ask the provider to drop it`;
  return `${what} is outside the allow-list: ${d.why}; if you trust the provider with it, allow it with ${how(d.name)}`;
}

/**
 * Parses an allowance (`<plural>.<group>` or `<plural>`) given as `what` (a flag or prop name),
 * refusing what can never be allowed.
 */
export function parseAllowedResource(what: string, value: unknown): AllowedResource {
  const m = typeof value === 'string' ? /^([^.]+)(?:\.(.+))?$/.exec(value) : null;
  const group = m?.[2] ?? '';
  if (!m || !new RegExp(RESOURCE_PATTERN).test(m[1]) || (group !== '' && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(group))) {
    throw new Error(`${what}: ${JSON.stringify(value)} is not <plural>.<group> (e.g. daemonsets.apps) or <plural> for the core group (e.g. services)`);
  }
  const r = { group, resource: m[1] };
  for (const use of ['export', 'claim'] as const) {
    const p = policyFor(r, use);
    if (p.verdict === ResourceVerdict.NEVER) throw new Error(`${what}: ${JSON.stringify(value)} can never be allowed: ${p.why}`);
  }
  return r;
}
