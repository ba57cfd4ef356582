/**
 * The konnector on an app cluster: namespace `klutch-bind`, ServiceAccount, RBAC limited to the
 * bound APIs, a 2-replica Deployment with Lease leader election and health probes, a
 * PodDisruptionBudget and a Service for /metrics. `konnectorManifests()` returns the same objects as plain JSON for
 * `kubectl-bind`, which installs the konnector from these manifests.
 *
 * RBAC, rule by rule (see {@link Konnector.rules}); compare Klutch, which binds `*` on `*`:
 * - CRDs: read all (it watches CRDs to notice deletions and foreign owners); create (RBAC cannot
 *   restrict create by name); update/patch/delete only the bound CRDs `<plural>.<group>` and the
 *   `apiservicebindings` CRD it installs at start-up.
 * - the bound resources and their `/status`: read/write (spec goes up, status comes down,
 *   provider-created objects are adopted downstream, finalizer `klutch.anynines.com/syncer`).
 * - claimed resources (Secrets/ConfigMaps by default): read/write only in the namespaces of
 *   `namespaces` (a ClusterRole `klutch-konnector-<ns>-claims` bound by a RoleBinding in each; by default
 *   `default`, or those added with {@link Konnector.addNamespace}) plus the konnector's own namespace
 *   (its kubeconfig Secrets, a Role); cluster-wide only with `KonnectorNamespaces.all()`, the weaker
 *   choice named as such.
 * - both capped by the resource policy of the contract (`contract/resource-policy.ts`): a bound API
 *   or claimed resource outside it is refused here unless named in `allowedResources` (and some,
 *   such as RBAC, never), so the rendered RBAC never covers workloads, RBAC or Kubernetes APIs the
 *   app cluster's admin did not allow; the same list goes to the konnector (`--allow-resource`),
 *   which refuses to serve anything else.
 * - a ValidatingAdmissionPolicy on the konnector's ServiceAccount ({@link konnectorWritePolicy}) takes
 *   out of the Secret/ConfigMap write what the konnector never needs, for whoever holds its token: no
 *   write in kube-system, kube-public, kube-node-lease, no Secret of a type outside
 *   `contract/secret-types.ts` (never `kubernetes.io/service-account-token`: no minting of tokens).
 * - APIServiceBindings (+ status): read and update conditions; it never creates bindings.
 * - namespaces: read (namespace deletion deletes the APIServiceNamespace upstream).
 * - events: create/patch.
 * - Lease `<leaseName>` in its own namespace: leader election (Role, not ClusterRole).
 */
import { ApiObject, App, Chart, Lazy } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { DEFAULT_IMAGES, PORTS, standardLabels } from './_defaults.js';
import {
  checkDnsLabel,
  checkImage,
  checkInt,
  checkResources,
  hardenedContainerSecurityContext,
  hardenedPodSecurityContext,
  podIdentityEnv,
  ResourceSpec,
  resourceRequirements,
  TMP_MOUNT,
  TMP_VOLUME,
} from './_pod.js';
import { DocumentedRule, READ, READ_WRITE, toPolicyRules } from './_rbac.js';
import { bindClusterRole, bindClusterRoleInNamespace, bindRole } from './_role-binding.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import { apiServiceBindingKind } from '../../contract/api/api-service-binding.js';
import { BIND_GROUP, KONNECTOR_LEASE_NAME, KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
import { KonnectorNamespaces } from './konnector-namespaces.js';
import { checkGroup, checkResource } from './permission-claim.js';
import { checkAllowedKeyPattern, type AllowedMetadataKeys } from '../../contract/metadata-keys.js';
import { SecretTypePolicy } from '../../contract/secret-types.js';
import { decideResource, parseAllowedResource, refusalMessage, resourceName, type AllowedResource, type ResourceUse } from '../../contract/resource-policy.js';

/** An API the konnector serves on this app cluster. */
export interface BoundApi {
  /** API group, e.g. `anynines.com`. */
  readonly group: string;
  /** Plural resources of that group, e.g. `["postgresqlinstances", "servicebindings"]`. */
  readonly resources: string[];
}

/** A resource claimed through permission claims (synced Secrets, ConfigMaps, …). */
export interface ClaimedResource {
  /** API group ('' for core). */
  readonly group: string;
  /** Plural resource. */
  readonly resource: string;
}

export interface KonnectorProps {
  /** Namespace for the konnector. @default "klutch-bind" */
  readonly namespace?: string;
  /** Whether to emit the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Container image. @default DEFAULT_IMAGES.konnector (ghcr.io/klutch-kit/konnector:<version>) */
  readonly image?: string;
  /** Replicas; one is the leader, the others stand by. @default 2 */
  readonly replicas?: number;
  /** Lease name for leader election (`--lease-name`). @default "klutch-bind" */
  readonly leaseName?: string;
  /** APIs bound on this cluster; the RBAC covers exactly these. @default [] */
  readonly boundApis?: BoundApi[];
  /** Resources that permission claims sync. @default core secrets and configmaps */
  readonly claimedResources?: ClaimedResource[];
  /**
   * Resources outside the default allow-list of `contract/resource-policy.ts` (the provider's own
   * APIs, claimed Secrets and ConfigMaps) that this app cluster lets providers export or claim,
   * as `<plural>.<group>` (`<plural>` for the core group), e.g. `["daemonsets.apps"]`. Passed to
   * the konnector as `--allow-resource`; `boundApis` and `claimedResources` outside the allow-list
   * are refused. Some resources (RBAC, admission, CRDs, service accounts, …) can never be allowed.
   * @default [] (the default allow-list only)
   */
  readonly allowedResources?: string[];
  /**
   * Label and annotation key patterns that cross between this app cluster and its providers besides
   * the documented defaults of `contract/metadata-keys.ts` (the descriptive `app.kubernetes.io`
   * labels, no annotation), e.g. `{ labels: ['example.com/team'], annotations: ['example.com/*'] }`
   * (`*` matches any run of characters). Passed to the konnector as `--allow-label-key` /
   * `--allow-annotation-key`. The konnector's own keys and the never-crossing list (Argo CD, Flux,
   * Helm, replicator, reflector, kubed, Grafana sidecar, Crossplane, cert-manager, Kubernetes' own)
   * never cross; a pattern entirely inside them is refused.
   * @default {} (the defaults only)
   */
  readonly allowedMetadataKeys?: AllowedMetadataKeys;
  /**
   * Secret types claimed Secrets may have besides the defaults of `contract/secret-types.ts` (Opaque,
   * Crossplane connection Secrets, `servicebinding.io/*`, basic-auth, ssh-auth, tls), exact names, e.g.
   * `["kubernetes.io/dockerconfigjson"]`. Passed to the konnector as `--allow-secret-type` and added to
   * the Secret admission policy (below). `kubernetes.io/service-account-token` and
   * `bootstrap.kubernetes.io/token` are refused.
   * @default [] (the defaults only)
   */
  readonly allowedSecretTypes?: string[];
  /**
   * The app-cluster namespaces bindings may use (the namespace allow-list). With
   * `KonnectorNamespaces.only(…)` the konnector's Secret and ConfigMap (claimed resources) rights exist
   * only in these namespaces — a RoleBinding `klutch-konnector-claims` in each, to the ClusterRole
   * `klutch-konnector-<namespace>-claims` — and in its own namespace (its kubeconfig Secrets: read and
   * update, a Role); it gets `--allow-namespace` for each and syncs nothing elsewhere (a binding with
   * objects elsewhere shows `NamespaceNotAllowed` naming the namespace). The namespaces must exist before
   * the RoleBindings are applied. Never a system namespace or the konnector's own.
   * `KonnectorNamespaces.all()` (`--all-namespaces`) grants Secret and ConfigMap read/write cluster-wide:
   * the weaker choice, for clusters where app developers bind namespaces no admin names up front.
   * @default KonnectorNamespaces.only('default'); once {@link Konnector.addNamespace} names a namespace
   *   (an `AppCluster` does for each namespace of its claims), only the namespaces added
   */
  readonly namespaces?: KonnectorNamespaces;
  /**
   * @deprecated use `namespaces: KonnectorNamespaces.only(…)`; the same list (`[]` is refused).
   * @default - see `namespaces`
   */
  readonly allowedNamespaces?: string[];
  /**
   * Most provider objects the konnector caches for one binding; past it the binding's informers freeze
   * (condition `CacheLimitReached`). Passed as `--max-cached-objects-per-binding`.
   * @default 20000 (the konnector's default)
   */
  readonly maxCachedObjectsPerBinding?: number;
  /** CPU/memory. @default 50m/500m CPU, 128Mi/512Mi memory */
  readonly resources?: ResourceSpec;
  /** Extra command-line flags. @default [] */
  readonly extraArgs?: string[];
}

const DEFAULT_RESOURCES: ResourceSpec = { cpuRequest: '50m', cpuLimit: '500m', memoryRequest: '128Mi', memoryLimit: '512Mi' };
const NAME = 'konnector';

export class Konnector extends Construct {
  public readonly namespace: string;
  public readonly deployment: k8s.KubeDeployment;
  public readonly serviceAccount: k8s.KubeServiceAccount;
  public readonly clusterRole: k8s.KubeClusterRole;
  public readonly namespaceObject?: k8s.KubeNamespace;
  private readonly checked: CheckedProps;
  public readonly leaseRules: readonly DocumentedRule[];
  /**
   * Unless the konnector is cluster-wide (`KonnectorNamespaces.all()`): the rules granted in its own
   * namespace (its kubeconfig Secrets); empty when cluster-wide (they are then in {@link rules}).
   */
  public readonly ownNamespaceRules: readonly DocumentedRule[];
  /** The ClusterRole of the claimed-resource rules bound in each allowed namespace; undefined when cluster-wide. */
  private claimsRole?: k8s.KubeClusterRole;
  /**
   * The ValidatingAdmissionPolicy that bounds the konnector's Secret and ConfigMap writes whatever its
   * RBAC (see {@link konnectorWritePolicy}); with its binding.
   */
  public readonly writePolicy: ApiObject;

  constructor(scope: Construct, id: string, props: KonnectorProps = {}) {
    super(scope, id);
    const o = Konnector.checkProps(props);
    this.checked = o;
    this.namespace = o.ns;
    const labels = standardLabels(NAME, 'konnector');
    const selector = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/instance': `${NAME}-${o.ns}` };

    if (props.createNamespace ?? true) {
      this.namespaceObject = new k8s.KubeNamespace(this, 'Namespace', {
        metadata: { name: o.ns, labels: { ...standardLabels(o.ns, 'konnector'), 'pod-security.kubernetes.io/enforce': 'restricted' } },
      });
    }
    this.serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name: NAME, namespace: o.ns, labels },
      automountServiceAccountToken: true,
    });
    this.ownNamespaceRules = o.namespaces !== undefined ? kubeconfigSecretRules() : [];
    this.leaseRules = leaseRules(o.leaseName);
    this.clusterRole = this.addRbac(o.ns, labels);
    if (o.namespaces) this.addNamespacedRbac(o.ns, labels);
    this.writePolicy = this.addWritePolicy(o, labels);
    this.deployment = this.addDeployment(o, labels, selector);
    this.addAvailability(o, labels, selector);
  }

  /** The cluster-wide RBAC the konnector gets, with reasons: the bound APIs and (only with `KonnectorNamespaces.all()`) the claimed resources so far. */
  public get rules(): readonly DocumentedRule[] {
    return konnectorRules(this.checked.bound, this.checked.namespaces !== undefined ? [] : this.checked.claimed);
  }

  /**
   * The rules granted in each allowed namespace (claimed resources); empty when cluster-wide
   * (`KonnectorNamespaces.all()`: they are then in {@link rules}).
   */
  public get namespacedRules(): readonly DocumentedRule[] {
    return this.checked.namespaces !== undefined ? claimRules(this.checked.claimed) : [];
  }

  /** The namespaces the konnector may bind, sorted; undefined when cluster-wide (`KonnectorNamespaces.all()`). */
  public get allowedNamespaces(): readonly string[] | undefined {
    return this.checked.namespaces ? [...this.checked.namespaces] : undefined;
  }

  /**
   * Lets the konnector bind one more namespace: a RoleBinding there and one more `--allow-namespace`.
   * The first call replaces the default `default` (the props named no `namespaces`); with
   * `KonnectorNamespaces.all()` it changes nothing. What an `AppCluster` calls for the namespace of a claim.
   */
  public addNamespace(namespace: string): void {
    const at = 'Konnector.addNamespace(namespace)';
    const n = checkAllowedNamespace(at, namespace);
    if (n === this.namespace) fail(at, namespace, "is the konnector's own namespace, where it never syncs claimed objects");
    const o = this.checked;
    if (o.namespaces === undefined) return;
    if (o.namespacesDefaulted) {
      o.namespacesDefaulted = false;
      for (const d of o.namespaces) this.node.tryRemoveChild(`ClaimsRoleBinding-${d}`);
      o.namespaces = [];
    }
    if (o.namespaces.includes(n)) return;
    o.namespaces = [...o.namespaces, n].sort();
    this.bindClaims(n);
  }

  /**
   * Binds one more API on this cluster (as `boundApis` does): the RBAC, rendered at synth, covers it.
   * What an `AppCluster` calls for an export added to its control plane after it.
   */
  public addBoundApi(api: BoundApi): void {
    const at = 'Konnector.addBoundApi(api)';
    if (!api || typeof api !== 'object') fail(at, api, 'must be { group, resources }');
    const b = checkBoundApi(at, api);
    b.resources.forEach((r, j) => capResource(`${at}.resources[${j}]`, { group: b.group, resource: r }, 'export', this.checked.allowed));
    const had = this.checked.bound.find((x) => x.group === b.group);
    if (had) had.resources = [...new Set([...had.resources, ...b.resources])].sort();
    else this.checked.bound.push(b);
  }

  /** Claims one more resource (as `claimedResources` does); one already claimed is a no-op. */
  public addClaimedResource(c: ClaimedResource): void {
    const at = 'Konnector.addClaimedResource(c)';
    if (!c || typeof c !== 'object') fail(at, c, 'must be { group, resource }');
    const r = { group: checkGroup(`${at}.group`, c.group), resource: checkResource(`${at}.resource`, c.resource) };
    capResource(at, r, 'claim', this.checked.allowed);
    if (!this.checked.claimed.some((x) => x.group === r.group && x.resource === r.resource)) this.checked.claimed.push(r);
  }

  /** Checks the props; the values the manifests are made of. */
  private static checkProps(props: KonnectorProps): CheckedProps {
    const ns = checkDnsLabel('KonnectorProps.namespace', props.namespace ?? KONNECTOR_NAMESPACE);
    const image = checkImage('KonnectorProps.image', props.image ?? DEFAULT_IMAGES.konnector);
    const replicas = checkInt('KonnectorProps.replicas', props.replicas ?? 2, 1, 10);
    const leaseName = checkDnsLabel('KonnectorProps.leaseName', props.leaseName ?? KONNECTOR_LEASE_NAME);
    const resources = checkResources('KonnectorProps.resources', props.resources ?? DEFAULT_RESOURCES);
    const bound = (props.boundApis ?? []).map((b, i) => checkBoundApi(`KonnectorProps.boundApis[${i}]`, b));
    const claimed = (
      props.claimedResources ?? [
        { group: '', resource: 'secrets' },
        { group: '', resource: 'configmaps' },
      ]
    ).map((c, i) => ({
      group: checkGroup(`KonnectorProps.claimedResources[${i}].group`, c.group),
      resource: checkResource(`KonnectorProps.claimedResources[${i}].resource`, c.resource),
    }));
    for (const [i, a] of (props.extraArgs ?? []).entries()) {
      if (typeof a !== 'string' || !a.startsWith('--')) fail(`KonnectorProps.extraArgs[${i}]`, a, 'must be a flag starting with "--"');
      if (a === '--allow-resource' || a.startsWith('--allow-resource=')) {
        fail(`KonnectorProps.extraArgs[${i}]`, a, 'sets the allow-list; use KonnectorProps.allowedResources, which also caps the RBAC');
      }
      if (a === '--allow-secret-type' || a.startsWith('--allow-secret-type=')) {
        fail(
          `KonnectorProps.extraArgs[${i}]`,
          a,
          'sets the Secret type allow-list; use KonnectorProps.allowedSecretTypes, which also extends the admission policy',
        );
      }
    }
    if (props.allowedResources !== undefined && !Array.isArray(props.allowedResources)) {
      fail('KonnectorProps.allowedResources', props.allowedResources, 'must be a list of "<plural>.<group>"');
    }
    const allowed = (props.allowedResources ?? []).map((a, i) => parseAllowedResource(`KonnectorProps.allowedResources[${i}]`, a));
    const reach = checkNamespaces(props, ns);
    if (props.maxCachedObjectsPerBinding !== undefined) checkInt('KonnectorProps.maxCachedObjectsPerBinding', props.maxCachedObjectsPerBinding, 1, 10_000_000);
    for (const [i, a] of (props.extraArgs ?? []).entries()) {
      if (a === '--allow-namespace' || a.startsWith('--allow-namespace=') || a === '--all-namespaces' || a.startsWith('--all-namespaces=')) {
        fail(`KonnectorProps.extraArgs[${i}]`, a, 'sets the namespace allow-list; use KonnectorProps.namespaces, which also narrows the RBAC');
      }
    }
    bound.forEach((b, i) =>
      b.resources.forEach((r, j) => capResource(`KonnectorProps.boundApis[${i}].resources[${j}]`, { group: b.group, resource: r }, 'export', allowed)),
    );
    claimed.forEach((c, i) => capResource(`KonnectorProps.claimedResources[${i}]`, c, 'claim', allowed));
    return {
      ns,
      image,
      replicas,
      leaseName,
      resources,
      bound,
      claimed,
      metadataKeys: checkMetadataKeys(props.allowedMetadataKeys),
      secretTypes: SecretTypePolicy.create(props.allowedSecretTypes ?? [], 'KonnectorProps.allowedSecretTypes'),
      addedSecretTypes: [...new Set(props.allowedSecretTypes ?? [])],
      allowed,
      namespaces: reach.namespaces,
      namespacesDefaulted: reach.defaulted,
      maxCachedObjectsPerBinding: props.maxCachedObjectsPerBinding,
      extraArgs: props.extraArgs ?? [],
    };
  }

  /** The konnector's write policy and its binding (cluster-scoped, named after the konnector's namespace). */
  private addWritePolicy(o: CheckedProps, labels: Record<string, string>): ApiObject {
    const name = `klutch-${NAME}-${o.ns}-writes`;
    const spec = konnectorWritePolicy(o.ns, o.secretTypes);
    const policy = new ApiObject(this, 'WritePolicy', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels },
      spec,
    });
    new ApiObject(this, 'WritePolicyBinding', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
    return policy;
  }

  /** The konnector's cluster-wide ClusterRole (+ binding) and its leader-election Role (+ binding). */
  private addRbac(ns: string, labels: Record<string, string>): k8s.KubeClusterRole {
    const roleName = `klutch-${NAME}-${ns}`;
    const clusterRole = new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name: roleName, labels },
      rules: Lazy.any({ produce: () => toPolicyRules('Konnector.rules', this.rules) }) as never,
    });
    const sa = { name: NAME, namespace: ns };
    bindClusterRole(this, 'ClusterRoleBinding', clusterRole, sa, { name: roleName, labels });
    const leaseRole = new k8s.KubeRole(this, 'LeaseRole', {
      metadata: { name: `${NAME}-leader-election`, namespace: ns, labels },
      rules: toPolicyRules('Konnector.leaseRules', this.leaseRules),
    });
    bindRole(this, 'LeaseRoleBinding', leaseRole, sa, { name: `${NAME}-leader-election`, namespace: ns, labels });
    return clusterRole;
  }

  /**
   * Unless cluster-wide: the claimed-resource rules as a ClusterRole bound in each allowed namespace
   * only, and the kubeconfig Secret rules as a Role in the konnector's own namespace.
   */
  private addNamespacedRbac(ns: string, labels: Record<string, string>): void {
    const sa = { name: NAME, namespace: ns };
    this.claimsRole = new k8s.KubeClusterRole(this, 'ClaimsClusterRole', {
      metadata: { name: `klutch-${NAME}-${ns}-claims`, labels },
      rules: Lazy.any({ produce: () => toPolicyRules('Konnector.namespacedRules', this.namespacedRules) }) as never,
    });
    for (const n of this.checked.namespaces ?? []) this.bindClaims(n);
    const own = new k8s.KubeRole(this, 'KubeconfigSecretsRole', {
      metadata: { name: `${NAME}-kubeconfig-secrets`, namespace: ns, labels },
      rules: toPolicyRules('Konnector.ownNamespaceRules', this.ownNamespaceRules),
    });
    bindRole(this, 'KubeconfigSecretsRoleBinding', own, sa, { name: `${NAME}-kubeconfig-secrets`, namespace: ns, labels });
  }

  /** The RoleBinding of the claimed-resource rules in allowed namespace `n`. */
  private bindClaims(n: string): void {
    const labels = standardLabels(NAME, 'konnector');
    bindClusterRoleInNamespace(
      this,
      `ClaimsRoleBinding-${n}`,
      this.claimsRole!,
      { name: NAME, namespace: this.namespace },
      { name: `klutch-${NAME}-claims`, namespace: n, labels },
    );
  }

  /** The Deployment: hardened pods spread over nodes, health and metrics on one port. */
  private addDeployment(o: CheckedProps, labels: Record<string, string>, selector: Record<string, string>): k8s.KubeDeployment {
    const { ns, replicas, image, leaseName, resources } = o;
    const podLabels = { ...labels, ...selector };
    return new k8s.KubeDeployment(this, 'Deployment', {
      metadata: { name: NAME, namespace: ns, labels },
      spec: {
        replicas,
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: k8s.IntOrString.fromNumber(0), maxSurge: k8s.IntOrString.fromNumber(1) } },
        template: {
          metadata: { labels: podLabels },
          spec: {
            serviceAccountName: NAME,
            automountServiceAccountToken: true,
            securityContext: hardenedPodSecurityContext(),
            terminationGracePeriodSeconds: 30,
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } },
                  },
                ],
              },
            },
            containers: [
              {
                name: NAME,
                image,
                imagePullPolicy: 'IfNotPresent',
                // The health address defaults to loopback in klutch-konnector; kubelet probes and
                // Prometheus need it on the pod IP. /healthz, /readyz and /metrics share this port.
                // the namespace flags at synth: addNamespace() may add one after this
                args: Lazy.any({
                  produce: () => [
                    `--lease-name=${leaseName}`,
                    '--lease-namespace=$(POD_NAMESPACE)',
                    `--health-address=0.0.0.0:${PORTS.konnectorHealth}`,
                    ...o.allowed.map((a) => `--allow-resource=${resourceName(a)}`),
                    ...metadataKeyArgs(o.metadataKeys),
                    ...o.addedSecretTypes.map((t) => `--allow-secret-type=${t}`),
                    ...(o.namespaces === undefined ? ['--all-namespaces'] : o.namespaces.map((n) => `--allow-namespace=${n}`)),
                    ...(o.maxCachedObjectsPerBinding !== undefined ? [`--max-cached-objects-per-binding=${o.maxCachedObjectsPerBinding}`] : []),
                    ...o.extraArgs,
                  ],
                }) as never,
                env: podIdentityEnv(),
                ports: [{ name: 'http', containerPort: PORTS.konnectorHealth, protocol: 'TCP' }],
                livenessProbe: {
                  httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('http') },
                  initialDelaySeconds: 10,
                  periodSeconds: 10,
                  failureThreshold: 3,
                },
                readinessProbe: { httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('http') }, periodSeconds: 5, failureThreshold: 3 },
                resources: resourceRequirements(resources),
                securityContext: hardenedContainerSecurityContext(),
                volumeMounts: [TMP_MOUNT],
              },
            ],
            volumes: [TMP_VOLUME],
          },
        },
      },
    });
  }

  /** A PodDisruptionBudget when there is more than one replica, and the metrics Service. */
  private addAvailability(o: CheckedProps, labels: Record<string, string>, selector: Record<string, string>): void {
    const { ns, replicas } = o;
    if (replicas > 1) {
      new k8s.KubePodDisruptionBudget(this, 'PodDisruptionBudget', {
        metadata: { name: NAME, namespace: ns, labels },
        spec: { minAvailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
      });
    }
    new k8s.KubeService(this, 'MetricsService', {
      metadata: { name: `${NAME}-metrics`, namespace: ns, labels },
      spec: {
        selector,
        ports: [{ name: 'metrics', port: PORTS.konnectorHealth, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
      },
    });
  }

  /** The Deployment's L1 object: a single ApiObject to depend on (never a whole construct). */
  public get deploymentObject(): ApiObject {
    return this.deployment;
  }
}

/** The validated props of a {@link Konnector}. */
interface CheckedProps {
  readonly ns: string;
  readonly image: string;
  readonly replicas: number;
  readonly leaseName: string;
  readonly resources: ResourceSpec;
  readonly bound: { group: string; resources: string[] }[];
  readonly claimed: ClaimedResource[];
  /** `allowedResources`, parsed. */
  readonly allowed: readonly AllowedResource[];
  /** `allowedMetadataKeys`, checked. */
  readonly metadataKeys: { labels: string[]; annotations: string[] };
  /** The Secret types the konnector copies (defaults + `allowedSecretTypes`, checked), and the additions. */
  readonly secretTypes: SecretTypePolicy;
  readonly addedSecretTypes: readonly string[];
  /** `namespaces` (or the deprecated `allowedNamespaces`), checked, sorted; undefined: every namespace (`KonnectorNamespaces.all()`). */
  namespaces?: readonly string[];
  /** Whether `namespaces` is the default (`default`), replaced by the first {@link Konnector.addNamespace}. */
  namespacesDefaulted: boolean;
  readonly maxCachedObjectsPerBinding?: number;
  readonly extraArgs: readonly string[];
}

/** `KonnectorProps.allowedMetadataKeys`, each pattern checked (contract/metadata-keys.ts). */
function checkMetadataKeys(v: AllowedMetadataKeys | undefined): CheckedProps['metadataKeys'] {
  const P = 'KonnectorProps.allowedMetadataKeys';
  if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) fail(P, v, 'must be { labels?: string[], annotations?: string[] }');
  const list = (kind: 'labels' | 'annotations') => {
    const l = v?.[kind];
    if (l !== undefined && !Array.isArray(l)) fail(`${P}.${kind}`, l, 'must be a list of key patterns such as "example.com/team"');
    return [...new Set((l ?? []).map((p, i) => checkAllowedKeyPattern(`${P}.${kind}[${i}]`, p)))];
  };
  return { labels: list('labels'), annotations: list('annotations') };
}

/**
 * `KonnectorProps.namespaces` (or the deprecated `allowedNamespaces`), checked: the sorted namespaces
 * (undefined for `KonnectorNamespaces.all()`), and whether they are the default.
 */
function checkNamespaces(props: KonnectorProps, ns: string): { namespaces?: readonly string[]; defaulted: boolean } {
  const legacy = props.allowedNamespaces;
  if (props.namespaces !== undefined && legacy !== undefined) {
    fail('KonnectorProps.allowedNamespaces', legacy, 'is the deprecated form of KonnectorProps.namespaces; give only namespaces');
  }
  if (props.namespaces !== undefined && !(props.namespaces instanceof KonnectorNamespaces)) {
    fail('KonnectorProps.namespaces', props.namespaces, "must be KonnectorNamespaces.only('team-a', …) or KonnectorNamespaces.all()");
  }
  if (legacy !== undefined && (!Array.isArray(legacy) || legacy.length === 0)) {
    fail('KonnectorProps.allowedNamespaces', legacy, 'must list at least one namespace (deprecated: use KonnectorProps.namespaces)');
  }
  const field = legacy !== undefined ? 'KonnectorProps.allowedNamespaces' : 'KonnectorProps.namespaces';
  const list = legacy?.map((n, i) => checkAllowedNamespace(`${field}[${i}]`, n)) ?? (props.namespaces ?? KonnectorNamespaces.only('default')).namespaces;
  if (list === undefined) return { namespaces: undefined, defaulted: false };
  list.forEach((n, i) => {
    if (n === ns) fail(`${field}[${i}]`, n, "is the konnector's own namespace, where it never syncs claimed objects: remove it");
  });
  return { namespaces: [...new Set(list)].sort(), defaulted: props.namespaces === undefined && legacy === undefined };
}

/** The konnector flags of the checked allow-list. */
const metadataKeyArgs = (m: CheckedProps['metadataKeys']): string[] => [
  ...m.labels.map((p) => `--allow-label-key=${p}`),
  ...m.annotations.map((p) => `--allow-annotation-key=${p}`),
];

/** One bound API, checked (`at` names it in errors): a named group and at least one resource, sorted. */
function checkBoundApi(at: string, b: BoundApi): { group: string; resources: string[] } {
  const group = checkGroup(`${at}.group`, b.group);
  if (group === '') throw new Error(`${at}.group: "" (core group) cannot be bound`);
  if (!Array.isArray(b.resources) || b.resources.length === 0) {
    fail(`${at}.resources`, b.resources, 'must list at least one plural resource');
  }
  b.resources.forEach((r, j) => checkResource(`${at}.resources[${j}]`, r));
  return { group, resources: [...new Set(b.resources)].sort() };
}

/** Fails when the allow-list (`KonnectorProps.allowedResources`) or the contract's resource policy refuses `r`. */
function capResource(prop: string, r: { group: string; resource: string }, use: ResourceUse, allowed: readonly AllowedResource[]): void {
  const d = decideResource(r, use, allowed);
  if (!d.allowed)
    fail(
      prop,
      resourceName(r),
      refusalMessage(d, (n) => `KonnectorProps.allowedResources: ["${n}"]`),
    );
}

/** The konnector's cluster-wide rules, with reasons: exactly the bound APIs and the claimed resources. */
function konnectorRules(bound: CheckedProps['bound'], claimed: ClaimedResource[]): DocumentedRule[] {
  const crdNames = [apiServiceBindingKind.crdName, ...bound.flatMap((b) => b.resources.map((r) => `${r}.${b.group}`))];
  return [
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: READ,
      why: 'watch CRDs to detect deleted or foreign-owned bound CRDs',
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['create'],
      why: 'create bound CRDs from APIServiceExports (create cannot be restricted by name)',
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['update', 'patch', 'delete'],
      resourceNames: crdNames,
      why: 'keep only the bound CRDs (and the apiservicebindings CRD) in sync with the provider',
    },
    {
      apiGroups: [BIND_GROUP],
      resources: [apiServiceBindingKind.plural],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
      why: 'read bindings, put finalizers on them',
    },
    {
      apiGroups: [BIND_GROUP],
      resources: [`${apiServiceBindingKind.plural}/status`],
      verbs: ['get', 'update', 'patch'],
      why: 'report SecretValid/Connected/Heartbeating/Ready',
    },
    ...bound.map((b): DocumentedRule => ({
      apiGroups: [b.group],
      resources: b.resources.flatMap((r) => [r, `${r}/status`]),
      verbs: READ_WRITE,
      why: `sync bound ${b.group} objects: spec up, status down, adopt provider-created objects, finalizers`,
    })),
    ...groupClaims(claimed).map((c): DocumentedRule => ({
      apiGroups: [c.group],
      resources: c.resources,
      verbs: READ_WRITE,
      why: 'copy claimed objects (service-binding credentials) between provider and consumer namespaces chosen by app developers (KonnectorNamespaces.all(): cluster-wide)',
    })),
    { apiGroups: [''], resources: ['namespaces'], verbs: READ, why: 'a deleted consumer namespace deletes its APIServiceNamespace upstream' },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'], why: 'record events on bindings and synced objects' },
  ];
}

/** Unless cluster-wide: the rules bound in each allowed namespace (claimed resources only). */
function claimRules(claimed: ClaimedResource[]): DocumentedRule[] {
  return groupClaims(claimed).map((c) => ({
    apiGroups: [c.group],
    resources: c.resources,
    verbs: READ_WRITE,
    why: 'copy claimed objects (service-binding credentials) between the provider and this allowed namespace (KonnectorProps.namespaces)',
  }));
}

/** Unless cluster-wide: the konnector's own namespace, where the provider kubeconfig Secrets of its bindings live. */
function kubeconfigSecretRules(): DocumentedRule[] {
  return [
    {
      apiGroups: [''],
      resources: ['secrets'],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
      why: "read the bindings' provider kubeconfig Secrets; write the rotated credential into them (heartbeat)",
    },
  ];
}

/** Namespaces the konnector never writes Secrets or ConfigMaps in (the app cluster's own; its bound namespaces never include them). */
export const KONNECTOR_NO_WRITE_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

const celString = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The spec of the ValidatingAdmissionPolicy that the API server applies to every Secret and ConfigMap
 * write (create, update, delete) of the konnector's ServiceAccount `system:serviceaccount:<ns>:konnector`,
 * so that it holds for whoever holds that account's token, not only for the konnector's code. The RBAC
 * grants Secret/ConfigMap write in the allowed namespaces (cluster-wide with `KonnectorNamespaces.all()`);
 * this policy takes out of it, in either case:
 * - any write in kube-system, kube-public and kube-node-lease (a Secret of type
 *   `bootstrap.kubernetes.io/token` there joins nodes; the konnector never binds these namespaces);
 * - a Secret of a type outside the konnector's Secret type allow-list (contract/secret-types.ts), above
 *   all `kubernetes.io/service-account-token`, with which the token controller would mint a token of any
 *   ServiceAccount of the namespace into a Secret the konnector's token can read.
 * Reads are not admission requests: only the RBAC bounds Secret read (docs/bind.md, threat model).
 */
export function konnectorWritePolicy(ns: string, types: SecretTypePolicy): Record<string, unknown> {
  const exact = types.rules.filter((r) => !r.type.endsWith('*')).map((r) => celString(r.type));
  const prefixes = types.rules.filter((r) => r.type.endsWith('*')).map((r) => `object.type.startsWith(${celString(r.type.slice(0, -1))})`);
  const typeOk = [`!has(object.type)`, `object.type in [${exact.join(', ')}]`, ...prefixes].join(' || ');
  return {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['secrets', 'configmaps'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    },
    matchConditions: [{ name: 'konnector-service-account', expression: `request.userInfo.username == ${celString(`system:serviceaccount:${ns}:${NAME}`)}` }],
    validations: [
      {
        expression: `!(request.namespace in [${KONNECTOR_NO_WRITE_NAMESPACES.map(celString).join(', ')}])`,
        reason: 'Forbidden',
        message: `the konnector never writes Secrets or ConfigMaps in ${KONNECTOR_NO_WRITE_NAMESPACES.join(', ')} (policy of the Konnector construct)`,
      },
      {
        expression: `request.resource.resource != 'secrets' || request.operation == 'DELETE' || ${typeOk}`,
        reason: 'Forbidden',
        message: `the konnector writes only Secrets of the types ${types.rules.map((r) => r.type).join(', ')} (contract/secret-types.ts; more with KonnectorProps.allowedSecretTypes); never kubernetes.io/service-account-token or bootstrap.kubernetes.io/token`,
      },
    ],
  };
}

/** The rules of the leader-election Role. */
function leaseRules(leaseName: string): DocumentedRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'], why: 'create the leader-election Lease' },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'watch', 'update', 'patch'],
      resourceNames: [leaseName],
      why: 'renew and observe the leader-election Lease',
    },
  ];
}

function groupClaims(claimed: ClaimedResource[]): { group: string; resources: string[] }[] {
  const byGroup = new Map<string, Set<string>>();
  for (const c of claimed) {
    if (!byGroup.has(c.group)) byGroup.set(c.group, new Set());
    byGroup.get(c.group)!.add(c.resource);
  }
  return [...byGroup.entries()].map(([group, rs]) => ({ group, resources: [...rs].sort() }));
}

/**
 * The konnector manifests as plain objects, in apply order (Namespace, ServiceAccount, RBAC,
 * Deployment, …), for programs that install the konnector directly (`kubectl-bind`).
 * Same objects as the {@link Konnector} construct, same validation.
 */
export function konnectorManifests(options: KonnectorProps = {}): Record<string, any>[] {
  const app = new App({ outdir: '/nonexistent-never-written' });
  const chart = new Chart(app, 'konnector');
  new Konnector(chart, 'Konnector', options);
  const order = [
    'Namespace',
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'Role',
    'RoleBinding',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'Service',
    'Deployment',
    'PodDisruptionBudget',
  ];
  return chart.toJson().sort((a: any, b: any) => order.indexOf(a.kind) - order.indexOf(b.kind));
}
