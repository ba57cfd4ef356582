/**
 * The bind backend on the control plane: Namespace, ServiceAccount, least-privilege RBAC,
 * Deployment and Service; `exposeViaIngress()` / `exposeViaHttpRoute()` add an Ingress or a
 * Gateway API HTTPRoute (as cdk8s-plus `Deployment.exposeViaService()`). The OIDC client
 * secret and the cookie keys come from existing Secrets through `secretKeyRef` env vars and are
 * never written into the manifests.
 *
 * ## RBAC (instead of Klutch's cluster-admin)
 *
 * The backend's own ClusterRole is listed rule by rule, with reasons, in {@link BindBackend.rules}.
 * No `escalate`, no `bind`, no `impersonate`, no wildcard.
 *
 * **Escalation caveat.** The backend hands RBAC to consumers: the shared ClusterRole
 * `klutch-binder`, and per consumer a ClusterRole `klutch-binder-<clusterNs>` with read/write on the
 * exported resources and the claimed resources, bound by RoleBindings in that consumer's namespaces
 * (a ClusterRoleBinding with `--consumer-scope=Cluster`). Kubernetes only lets a subject create or
 * update a role with permissions it holds itself (or with `escalate`), and bind a role whose
 * permissions it holds (or with `bind` on that role). The per-consumer role names are dynamic, so
 * `bind`/`escalate` could not be scoped by `resourceNames` — they would amount to cluster-admin over
 * RBAC. Instead the backend **holds exactly what it hands out**: a ClusterRoleBinding to the
 * aggregated ClusterRole `klutch-binder-exports`, fed by one ClusterRole per exported API
 * (`api.grantBind(backend)`, done by ControlPlaneCluster for every export template) and one for the
 * claimed resources (Secrets, ConfigMaps and the granted exports' permission claims). An API exported at run time without its ClusterRole
 * is refused by the API server (forbidden), never silently granted.
 *
 * Residual privileges of the design, stated plainly: Secrets (kubeconfig Secrets in cluster
 * namespaces it creates at run time, claimed credentials it hands out) and namespace deletion are
 * cluster-wide; RBAC has no "namespaces I created" scope.
 */
import { ApiObject, Duration, Lazy } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { BIND_GROUP, EXAMPLE_BACKEND_GROUP } from '../../contract/api/constants.js';
import { BINDER_EXPORTS_CLUSTER_ROLE, BINDER_NAME, binderRules } from '../../contract/binder-rbac.js';
import { consumerIsolationPolicy, consumerIsolationPolicyName } from '../../contract/consumer-isolation.js';
import { fail } from '../_errors.js';
import { isDnsLabel } from '../_names.js';
import { BACKEND_NAMESPACE, BINDER_EXPORTS_AGGREGATION_LABEL, DEFAULT_IMAGES, PORTS, standardLabels } from './_defaults.js';
import {
  checkDnsLabel,
  checkDnsSubdomain,
  checkImage,
  checkInt,
  checkResources,
  checkSecretRef,
  checkUrl,
  hardenedContainerSecurityContext,
  hardenedPodSecurityContext,
  podIdentityEnv,
  ResourceSpec,
  resourceRequirements,
  SecretKeyRef,
  secretEnv,
  TMP_MOUNT,
  TMP_VOLUME,
} from './_pod.js';
import { DocumentedRule, READ, READ_WRITE, toPolicyRules } from './_rbac.js';
import { bindClusterRole, bindRole } from './_role-binding.js';
import { ClaimedResource } from './konnector.js';
import { checkGroup, checkResource } from './permission-claim.js';
import type { BindableApi, IApiExport, IBindGrantee } from './api-service-export-template.js';
import { BINDING_RESOURCES } from '../../contract/resources.js';

/** OIDC settings; the client secret is a Secret reference. */
export interface BackendOidcProps {
  /** Issuer URL (`--oidc-issuer-url`), e.g. `https://backend.example.com/dex`. */
  readonly issuerUrl: string;
  /** Client id (`--oidc-issuer-client-id`). */
  readonly clientId: string;
  /** Secret key holding the client secret (`--oidc-issuer-client-secret` via env `OIDC_CLIENT_SECRET`). */
  readonly clientSecret: SecretKeyRef;
  /**
   * Callback URL (`--oidc-callback-url`).
   * @default `https://<host>/callback` of the first exposeViaIngress() / exposeViaHttpRoute()
   */
  readonly callbackUrl?: string;
  /**
   * A ConfigMap key holding the PEM CA certificate(s) of an issuer whose certificate no public CA signs (a private
   * CA, or Dex serving its own TLS, `Dex.serveTls()`): mounted read-only at `/etc/klutch/issuer-ca` and trusted
   * in addition to the image's CAs (`NODE_EXTRA_CA_CERTS`). @default - only the image's CAs
   */
  readonly issuerCa?: { readonly configMap: string; readonly key: string };
}

/** Cookie keys, from Secrets. */
export interface BackendCookieProps {
  /** Base64 signing key, 32 or 64 bytes (`--cookie-signing-key`). */
  readonly signingKey: SecretKeyRef;
  /** Base64 encryption key, 16/24/32 bytes (`--cookie-encryption-key`). @default - no encryption key */
  readonly encryptionKey?: SecretKeyRef;
}

/** Options of {@link BindBackend.exposeViaIngress}. */
export interface BackendIngressProps {
  /** Host name, e.g. `bind.example.com`. */
  readonly host: string;
  /** IngressClass. @default - the cluster default */
  readonly className?: string;
  /** TLS Secret for the host. @default - no TLS section (terminate elsewhere) */
  readonly tlsSecretName?: string;
}

/** Options of {@link BindBackend.exposeViaHttpRoute}. */
export interface BackendHttpRouteProps {
  /** Host names. */
  readonly hostnames: string[];
  /** The Gateway(s) to attach to. */
  readonly parentRefs: { readonly name: string; readonly namespace?: string; readonly sectionName?: string }[];
}

/** An API exported by the control plane: the binder may read/write it in consumer namespaces. */
export interface ExportedApi {
  readonly group: string;
  readonly resource: string;
}

export interface BindBackendProps {
  /** Namespace. @default "klutch-system" */
  readonly namespace?: string;
  /** Whether to emit the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Name of the Deployment, Service and ServiceAccount. @default "klutch-backend" */
  readonly name?: string;
  /** Image. @default DEFAULT_IMAGES.backend (ghcr.io/klutch-kit/backend:<version>) */
  readonly image?: string;
  /**
   * Replicas. Every replica serves HTTP; one (elected by a Lease) runs the controllers; used login
   * states are kept in the API server, so a login may finish on any replica. @default 2
   */
  readonly replicas?: number;
  /**
   * With more than one replica: a PodDisruptionBudget (`maxUnavailable: 1`) so that node drains keep
   * one replica serving, and a spread of the replicas over nodes. @default true
   */
  readonly podDisruptionBudget?: boolean;
  /** OIDC settings. */
  readonly oidc: BackendOidcProps;
  /** Cookie keys. */
  readonly cookies: BackendCookieProps;
  /** `--namespace-prefix` for cluster namespaces. @default "cluster" */
  readonly namespacePrefix?: string;
  /** `--pretty-name`. @default "klutch-kit" */
  readonly prettyName?: string;
  /**
   * `--consumer-scope`. With `Cluster`, also a ValidatingAdmissionPolicy that keeps each consumer's writes
   * to its own cluster-scoped objects (contract/consumer-isolation.ts; Kubernetes 1.30+ on the control plane).
   * @default "Namespaced"
   */
  readonly consumerScope?: 'Namespaced' | 'Cluster';
  /** `--external-address`: API server URL written into consumers' kubeconfigs (https). @default - the backend's own API server address */
  readonly externalAddress?: string;
  /** Secret key with the CA of the external address, mounted and passed as `--external-ca-file`. @default - cluster CA */
  readonly externalCa?: SecretKeyRef;
  /** Secret of type kubernetes.io/tls to serve TLS (`--tls-cert-file`, `--tls-key-file`). @default - plain HTTP */
  readonly tlsSecretName?: string;
  /** Container port (`--listen-address=0.0.0.0:<port>`). @default 8080 */
  readonly port?: number;
  /** CPU/memory. @default 100m/1 CPU, 128Mi/512Mi */
  readonly resources?: ResourceSpec;
  /** APIs exported to consumers (one aggregated binder ClusterRole each). @default [] */
  readonly exportedApis?: ExportedApi[];
  /** Resources claimed by permission claims. @default core secrets and configmaps */
  readonly claimedResources?: ClaimedResource[];
  /**
   * `--credential-max-life`: how long one consumer credential (one bind) lives at most, however often
   * its token is rotated; then every token of it is revoked and the consumer binds again. Whole
   * seconds, at least 10 minutes and not shorter than the backend's `--token-ttl` (default 24 h).
   * @default Duration.days(30)
   */
  readonly credentialMaxLife?: Duration;
  /**
   * `--klutch-konnector-compat`: consumer credentials may read the Secrets of their cluster namespace,
   * which Klutch's Go konnector needs (it watches them and copies the kubeconfig Secret to rotate).
   * Off by default: with it, a leaked consumer token can follow its rotations until the credential's
   * maximum life or a revocation (docs/bind.md, threat model). @default false
   */
  readonly klutchKonnectorCompat?: boolean;
  /** Extra flags. @default [] */
  readonly extraArgs?: string[];
}

const DEFAULT_RESOURCES: ResourceSpec = { cpuRequest: '100m', cpuLimit: '1', memoryRequest: '128Mi', memoryLimit: '512Mi' };

/** BindBackendProps after validation and defaults. */
interface BackendSettings {
  readonly image: string;
  readonly replicas: number;
  readonly port: number;
  readonly resources: ResourceSpec;
  readonly consumerScope: 'Namespaced' | 'Cluster';
  readonly prefix: string;
  readonly prettyName: string;
  readonly oidc: BackendOidcProps;
  readonly cookies: BackendCookieProps;
  readonly claimed: ClaimedResource[];
}

const P = 'BindBackendProps';

export class BindBackend extends Construct implements IBindGrantee {
  public readonly namespace: string;
  public readonly name: string;
  public readonly deployment: k8s.KubeDeployment;
  public readonly service: k8s.KubeService;
  public readonly serviceAccount: k8s.KubeServiceAccount;
  public readonly clusterRole: k8s.KubeClusterRole;
  public readonly namespaceObject?: k8s.KubeNamespace;
  /** Keeps one replica serving through voluntary disruptions (replicas > 1). */
  public readonly podDisruptionBudget?: k8s.KubePodDisruptionBudget;
  /** The backend's cluster-wide rules, with reasons. */
  public readonly rules: readonly DocumentedRule[];
  /**
   * With `consumerScope: 'Cluster'`: the ValidatingAdmissionPolicy (and binding) that keeps each consumer's
   * writes to its own cluster-scoped objects (contract/consumer-isolation.ts).
   */
  public readonly consumerIsolation?: ApiObject;
  /** Rules of the shared `klutch-binder` ClusterRole (bound in each cluster namespace). */
  public readonly binderRules: readonly DocumentedRule[];
  private readonly props: BindBackendProps;
  private readonly settings: BackendSettings;
  private readonly labels: Record<string, string>;
  private readonly exported = new Map<string, ExportedApi>();
  /** The permission claims of the granted exports: the claims role holds them (with `claimedResources`' default). */
  private readonly grantedClaims: ClaimedResource[] = [];
  private _ingress?: k8s.KubeIngress;
  private _httpRoute?: ApiObject;
  /** Host of the first exposure: the default callback URL is `https://<host>/callback`. */
  private publicHost?: string;

  constructor(scope: Construct, id: string, props: BindBackendProps) {
    super(scope, id);
    this.settings = BindBackend.validate(props);
    this.props = props;
    this.namespace = checkDnsLabel(`${P}.namespace`, props.namespace ?? BACKEND_NAMESPACE);
    this.name = checkDnsLabel(`${P}.name`, props.name ?? 'klutch-backend');
    this.labels = standardLabels(this.name, 'bind-backend');

    if (props.createNamespace ?? true) {
      this.namespaceObject = new k8s.KubeNamespace(this, 'Namespace', {
        metadata: { name: this.namespace, labels: { ...standardLabels(this.namespace, 'bind-backend'), 'pod-security.kubernetes.io/enforce': 'restricted' } },
      });
    }
    this.serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
      automountServiceAccountToken: true,
    });
    this.rules = backendRules(this.settings.consumerScope);
    this.binderRules = binderRules({ klutchKonnectorCompat: props.klutchKonnectorCompat });
    this.clusterRole = this.createRbac();
    if (this.settings.consumerScope === 'Cluster') this.consumerIsolation = this.createConsumerIsolation();
    this.deployment = this.createDeployment();
    if (this.settings.replicas > 1 && props.podDisruptionBudget !== false) {
      this.podDisruptionBudget = new k8s.KubePodDisruptionBudget(this, 'PodDisruptionBudget', {
        metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
        spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: this.selector } },
      });
    }
    this.service = new k8s.KubeService(this, 'Service', {
      metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
      spec: {
        type: 'ClusterIP',
        selector: this.selector,
        ports: [{ name: 'http', port: this.servicePort, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
      },
    });
    for (const [i, api] of (props.exportedApis ?? []).entries()) this.exportApi(api, `${P}.exportedApis[${i}]`);
  }

  /** The Ingress of exposeViaIngress(), if called. */
  public get ingress(): k8s.KubeIngress | undefined {
    return this._ingress;
  }

  /** The HTTPRoute of exposeViaHttpRoute(), if called. */
  public get httpRoute(): ApiObject | undefined {
    return this._httpRoute;
  }

  /**
   * The container args (for inspection). The callback URL defaults to the host of the first
   * exposure; without `oidc.callbackUrl` and without an exposure this throws.
   */
  public get args(): readonly string[] {
    const { port, prefix, prettyName, consumerScope, oidc, cookies } = this.settings;
    const props = this.props;
    return [
      `--listen-address=0.0.0.0:${port}`,
      `--namespace-prefix=${prefix}`,
      `--pretty-name=${prettyName}`,
      `--consumer-scope=${consumerScope}`,
      `--oidc-issuer-url=${oidc.issuerUrl}`,
      `--oidc-issuer-client-id=${oidc.clientId}`,
      '--oidc-issuer-client-secret=$(OIDC_CLIENT_SECRET)',
      `--oidc-callback-url=${this.callbackUrl()}`,
      '--cookie-signing-key=$(COOKIE_SIGNING_KEY)',
      ...(cookies.encryptionKey ? ['--cookie-encryption-key=$(COOKIE_ENCRYPTION_KEY)'] : []),
      ...(props.externalAddress ? [`--external-address=${props.externalAddress}`] : []),
      ...(props.externalCa ? [`--external-ca-file=/etc/klutch/external-ca/${props.externalCa.key}`] : []),
      ...(props.tlsSecretName ? ['--tls-cert-file=/etc/klutch/tls/tls.crt', '--tls-key-file=/etc/klutch/tls/tls.key'] : []),
      ...(props.credentialMaxLife ? [`--credential-max-life=${props.credentialMaxLife.toSeconds()}s`] : []),
      ...(props.klutchKonnectorCompat ? ['--klutch-konnector-compat'] : []),
      ...(props.extraArgs ?? []),
    ];
  }

  /**
   * Exposes the backend through an Ingress for `options.host` (path `/`, the Service's `http`
   * port). May be combined with exposeViaHttpRoute(); each may be called once.
   */
  public exposeViaIngress(options: BackendIngressProps): k8s.KubeIngress {
    const O = 'BackendIngressProps';
    if (this._ingress)
      fail(
        'BindBackend.exposeViaIngress',
        options?.host,
        `cannot be added: ${this.node.path} already has the Ingress "${this._ingress.name}" (one Ingress per backend)`,
      );
    if (!options || typeof options !== 'object') fail(O, options, 'must give the host');
    const host = checkDnsSubdomain(`${O}.host`, options.host);
    if (options.tlsSecretName !== undefined) checkDnsSubdomain(`${O}.tlsSecretName`, options.tlsSecretName);
    this._ingress = new k8s.KubeIngress(this, 'Ingress', {
      metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
      spec: {
        ...(options.className ? { ingressClassName: options.className } : {}),
        ...(options.tlsSecretName ? { tls: [{ hosts: [host], secretName: options.tlsSecretName }] } : {}),
        rules: [
          {
            host,
            http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: this.name, port: { name: 'http' } } } }] },
          },
        ],
      },
    });
    this.publicHost ??= host;
    return this._ingress;
  }

  /**
   * Exposes the backend through a Gateway API HTTPRoute (`gateway.networking.k8s.io/v1`, path
   * prefix `/`) attached to `options.parentRefs`. May be combined with exposeViaIngress(); each
   * may be called once.
   */
  public exposeViaHttpRoute(options: BackendHttpRouteProps): ApiObject {
    const O = 'BackendHttpRouteProps';
    if (this._httpRoute)
      fail(
        'BindBackend.exposeViaHttpRoute',
        options?.hostnames,
        `cannot be added: ${this.node.path} already has the HTTPRoute "${this._httpRoute.name}" (one HTTPRoute per backend)`,
      );
    if (!options || typeof options !== 'object') fail(O, options, 'must give hostnames and parentRefs');
    if (!Array.isArray(options.hostnames) || options.hostnames.length === 0) {
      fail(`${O}.hostnames`, options.hostnames, 'must list at least one host');
    }
    options.hostnames.forEach((h, i) => checkDnsSubdomain(`${O}.hostnames[${i}]`, h));
    if (!Array.isArray(options.parentRefs) || options.parentRefs.length === 0) {
      fail(`${O}.parentRefs`, options.parentRefs, 'must name at least one Gateway');
    }
    options.parentRefs.forEach((r, i) => checkDnsSubdomain(`${O}.parentRefs[${i}].name`, r?.name));
    this._httpRoute = new ApiObject(this, 'HTTPRoute', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: this.name, namespace: this.namespace, labels: this.labels },
      spec: {
        parentRefs: options.parentRefs.map((r) => ({
          group: 'gateway.networking.k8s.io',
          kind: 'Gateway',
          name: r.name,
          ...(r.namespace ? { namespace: r.namespace } : {}),
          ...(r.sectionName ? { sectionName: r.sectionName } : {}),
        })),
        hostnames: [...options.hostnames],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: this.name, port: this.servicePort }] }],
      },
    });
    this.publicHost ??= options.hostnames[0];
    return this._httpRoute;
  }

  /**
   * Lets this backend hand `api` out to consumers (what {@link IApiExport.grantBind} calls): a
   * ClusterRole aggregated into `klutch-binder-exports` with read/write on `<resource>` and
   * `<resource>/status` of `<group>`, which the backend binds in consumer namespaces; the API's
   * permission claims join the claims role (unless `claimedResources` is given). Granting the same
   * API twice is a no-op.
   */
  public addBindableApi(api: BindableApi, by = 'BindBackend.addBindableApi(api)'): void {
    if (!api || typeof api !== 'object') fail(by, api, 'must be { group, resource, permissionClaims }');
    this.exportApi(api, by);
    for (const c of api.permissionClaims ?? []) this.grantedClaims.push({ group: c.group ?? '', resource: c.resource });
  }

  /**
   * Grants this backend an export.
   * @deprecated the export grants: `api.grantBind(backend)`.
   */
  public grantExport(api: IApiExport): void {
    api.grantBind(this);
  }

  /**
   * Adds an exported API by group and resource, without permission claims.
   * @deprecated import the export and grant it: `ApiServiceExportTemplate.fromBindableApi(scope, id, api).grantBind(backend)`.
   */
  public addExportedApi(api: ExportedApi): void {
    this.exportApi(api, 'BindBackend.addExportedApi');
  }

  /** The exported APIs so far. */
  public get exportedApis(): ExportedApi[] {
    return [...this.exported.values()];
  }

  /** addExportedApi(), with `prop` naming the input in error messages. */
  private exportApi(api: ExportedApi, prop: string): void {
    const group = checkGroup(`${prop}.group`, api?.group);
    if (group === '') fail(`${prop}.group`, group, '(core group) cannot be exported');
    const resource = checkResource(`${prop}.resource`, api.resource);
    const key = `${resource}.${group}`;
    if (this.exported.has(key)) return;
    this.exported.set(key, { group, resource });
    const roleName = checkDnsSubdomain(`${prop} (ClusterRole name)`, `${BINDER_EXPORTS_CLUSTER_ROLE}-${key}`);
    new k8s.KubeClusterRole(this, `Export-${key}`, {
      metadata: { name: roleName, labels: { ...standardLabels(BINDER_EXPORTS_CLUSTER_ROLE, 'bind-backend'), [BINDER_EXPORTS_AGGREGATION_LABEL]: 'true' } },
      rules: toPolicyRules(prop, [
        {
          apiGroups: [group],
          resources: [resource, `${resource}/status`],
          verbs: READ_WRITE,
          why: `consumers read/write their ${key} claims in their own provider namespaces`,
        },
      ]),
    });
  }

  private get selector(): Record<string, string> {
    return { 'app.kubernetes.io/name': this.name, 'app.kubernetes.io/instance': `${this.name}-${this.namespace}` };
  }

  private get servicePort(): number {
    return this.props.tlsSecretName ? 443 : 80;
  }

  private callbackUrl(): string {
    const given = this.settings.oidc.callbackUrl;
    if (given !== undefined) return given;
    if (!this.publicHost) {
      fail(
        `${P}.oidc.callbackUrl`,
        given,
        'and no exposure; give a callback URL, or call exposeViaIngress() / exposeViaHttpRoute() to derive https://<host>/callback from',
      );
    }
    return checkUrl(`${P}.oidc.callbackUrl`, `https://${this.publicHost}/callback`);
  }

  /** Checks every prop (naming the prop and the value) and applies the defaults. */
  private static validate(props: BindBackendProps): BackendSettings {
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object with oidc and cookies');
    const image = checkImage(`${P}.image`, props.image ?? DEFAULT_IMAGES.backend);
    const replicas = checkInt(`${P}.replicas`, props.replicas ?? 2, 1, 10);
    if (props.podDisruptionBudget !== undefined && typeof props.podDisruptionBudget !== 'boolean') {
      fail(`${P}.podDisruptionBudget`, props.podDisruptionBudget, 'must be true or false');
    }
    if (props.klutchKonnectorCompat !== undefined && typeof props.klutchKonnectorCompat !== 'boolean') {
      fail(`${P}.klutchKonnectorCompat`, props.klutchKonnectorCompat, 'must be true or false');
    }
    const port = checkInt(`${P}.port`, props.port ?? PORTS.backendHttp, 1024, 65535);
    const resources = checkResources(`${P}.resources`, props.resources ?? DEFAULT_RESOURCES);
    const consumerScope = props.consumerScope ?? 'Namespaced';
    if (consumerScope !== 'Namespaced' && consumerScope !== 'Cluster') {
      fail(`${P}.consumerScope`, consumerScope, 'must be "Namespaced" or "Cluster"');
    }
    const prefix = props.namespacePrefix ?? 'cluster';
    if (!isDnsLabel(prefix, 40)) {
      fail(`${P}.namespacePrefix`, prefix, 'must be a DNS label of at most 40 characters (namespaces are "<prefix>-<id>")');
    }
    if (prefix === 'exports') {
      fail(
        `${P}.namespacePrefix`,
        prefix,
        `would make per-consumer roles klutch-binder-exports-* collide with the aggregated ${BINDER_EXPORTS_CLUSTER_ROLE} roles; pick another prefix`,
      );
    }
    const prettyName = props.prettyName ?? 'klutch-kit';
    if (typeof prettyName !== 'string' || prettyName.trim().length === 0) {
      fail(`${P}.prettyName`, prettyName, 'must be a non-empty string');
    }
    const oidc = props.oidc;
    if (!oidc || typeof oidc !== 'object') fail(`${P}.oidc`, oidc, 'must give issuerUrl, clientId and clientSecret');
    checkUrl(`${P}.oidc.issuerUrl`, oidc.issuerUrl);
    if (typeof oidc.clientId !== 'string' || oidc.clientId.length === 0) {
      fail(`${P}.oidc.clientId`, oidc.clientId, 'must be a non-empty string');
    }
    checkSecretRef(`${P}.oidc.clientSecret`, oidc.clientSecret);
    if (oidc.callbackUrl !== undefined) checkUrl(`${P}.oidc.callbackUrl`, oidc.callbackUrl);
    if (oidc.issuerCa !== undefined) {
      if (!oidc.issuerCa || typeof oidc.issuerCa !== 'object')
        fail(`${P}.oidc.issuerCa`, oidc.issuerCa, 'must be a reference { configMap, key } to a ConfigMap key');
      checkDnsSubdomain(`${P}.oidc.issuerCa.configMap`, oidc.issuerCa.configMap);
      if (typeof oidc.issuerCa.key !== 'string' || !/^[-._a-zA-Z0-9]{1,253}$/.test(oidc.issuerCa.key)) {
        fail(`${P}.oidc.issuerCa.key`, oidc.issuerCa.key, 'is not a valid ConfigMap key');
      }
    }
    const cookies = props.cookies;
    if (!cookies || typeof cookies !== 'object') fail(`${P}.cookies`, cookies, 'must reference the cookie signing key Secret');
    checkSecretRef(`${P}.cookies.signingKey`, cookies.signingKey);
    if (cookies.encryptionKey) checkSecretRef(`${P}.cookies.encryptionKey`, cookies.encryptionKey);
    if (props.externalAddress !== undefined) checkUrl(`${P}.externalAddress`, props.externalAddress, true);
    if (props.externalCa) checkSecretRef(`${P}.externalCa`, props.externalCa);
    if (props.tlsSecretName !== undefined) checkDnsSubdomain(`${P}.tlsSecretName`, props.tlsSecretName);
    for (const [i, a] of (props.extraArgs ?? []).entries()) {
      if (typeof a !== 'string' || !a.startsWith('--')) fail(`${P}.extraArgs[${i}]`, a, 'must be a flag starting with "--"');
      if (props.credentialMaxLife !== undefined && a.startsWith('--credential-max-life')) {
        fail(`${P}.extraArgs[${i}]`, a, `sets --credential-max-life, which ${P}.credentialMaxLife sets too; use one of them`);
      }
    }
    if (props.credentialMaxLife !== undefined) {
      if (!(props.credentialMaxLife instanceof Duration))
        fail(`${P}.credentialMaxLife`, props.credentialMaxLife, 'must be a cdk8s Duration, e.g. Duration.days(30)');
      const s = props.credentialMaxLife.toSeconds({ integral: false });
      if (!Number.isInteger(s) || s < 600) {
        fail(`${P}.credentialMaxLife`, `${s}s`, 'must be whole seconds, at least 10 minutes (the shortest token Kubernetes issues)');
      }
      if (s < 86400 && !(props.extraArgs ?? []).some((a) => a.startsWith('--token-ttl'))) {
        fail(
          `${P}.credentialMaxLife`,
          `${s}s`,
          "is shorter than the backend's default --token-ttl (24h); raise it, or pass a shorter --token-ttl in extraArgs",
        );
      }
    }
    const claimed = (
      props.claimedResources ?? [
        { group: '', resource: 'secrets' },
        { group: '', resource: 'configmaps' },
      ]
    ).map((c, i) => ({
      group: checkGroup(`${P}.claimedResources[${i}].group`, c.group),
      resource: checkResource(`${P}.claimedResources[${i}].resource`, c.resource),
    }));
    return { image, replicas, port, resources, consumerScope, prefix, prettyName, oidc, cookies, claimed };
  }

  /**
   * The backend's ClusterRole and Lease Role with their bindings, the shared binder roles handed to
   * consumers, and the aggregated exports role the backend holds (see the class doc).
   */
  private createConsumerIsolation(): ApiObject {
    const name = consumerIsolationPolicyName(this.settings.prefix);
    const policy = new ApiObject(this, 'ConsumerIsolationPolicy', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels: this.labels },
      spec: consumerIsolationPolicy(this.settings.prefix),
    });
    new ApiObject(this, 'ConsumerIsolationPolicyBinding', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels: this.labels },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
    return policy;
  }

  private createRbac(): k8s.KubeClusterRole {
    const { name, namespace: ns, labels } = this;
    const clusterRole = new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name, labels },
      rules: toPolicyRules('BindBackend.rules', this.rules),
    });
    const sa = { name, namespace: ns };
    bindClusterRole(this, 'ClusterRoleBinding', clusterRole, sa, { name, labels });
    const leaseRole = new k8s.KubeRole(this, 'LeaseRole', {
      metadata: { name: `${name}-leader-election`, namespace: ns, labels },
      rules: toPolicyRules('BindBackend.leaseRules', LEASE_RULES),
    });
    bindRole(this, 'LeaseRoleBinding', leaseRole, sa, { name: `${name}-leader-election`, namespace: ns, labels });

    // The binder roles handed to consumers (bound by the backend with RoleBindings only).
    new k8s.KubeClusterRole(this, 'BinderClusterRole', {
      metadata: { name: BINDER_NAME, labels: standardLabels(BINDER_NAME, 'bind-backend') },
      rules: toPolicyRules('BindBackend.binderRules', this.binderRules),
    });
    const exportsRole = new k8s.KubeClusterRole(this, 'BinderExportsClusterRole', {
      metadata: { name: BINDER_EXPORTS_CLUSTER_ROLE, labels: standardLabels(BINDER_EXPORTS_CLUSTER_ROLE, 'bind-backend') },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [BINDER_EXPORTS_AGGREGATION_LABEL]: 'true' } }] },
    });
    // The backend holds what it hands out (see the class doc): exported + claimed resources.
    bindClusterRole(this, 'ExportsClusterRoleBinding', exportsRole, sa, { name: `${name}-exports`, labels });
    // Derived at synth: the exports granted after this constructor add their permission claims.
    const claimRules = (): DocumentedRule[] =>
      groupByApiGroup([...this.settings.claimed, ...(this.props.claimedResources ? [] : this.grantedClaims)]).map((c) => ({
        apiGroups: [c.group],
        resources: c.resources,
        verbs: READ_WRITE,
        why: "claimed objects (service-binding credentials) in the consumer's provider namespaces",
      }));
    new k8s.KubeClusterRole(this, 'BinderClaimsClusterRole', {
      metadata: {
        name: `${BINDER_EXPORTS_CLUSTER_ROLE}-claims`,
        labels: { ...standardLabels(BINDER_EXPORTS_CLUSTER_ROLE, 'bind-backend'), [BINDER_EXPORTS_AGGREGATION_LABEL]: 'true' },
      },
      rules: Lazy.any({ produce: () => toPolicyRules('BindBackend.claimedResources', claimRules()) }) as never,
    });
    return clusterRole;
  }

  /** The Deployment: hardened pod, Secrets only by reference, args resolved at synth (callback URL). */
  private createDeployment(): k8s.KubeDeployment {
    const { name, namespace: ns, labels, selector, props } = this;
    const { image, replicas, port, resources, oidc, cookies } = this.settings;
    const env: k8s.EnvVar[] = [
      ...podIdentityEnv(),
      secretEnv('OIDC_CLIENT_SECRET', oidc.clientSecret),
      secretEnv('COOKIE_SIGNING_KEY', cookies.signingKey),
      ...(cookies.encryptionKey ? [secretEnv('COOKIE_ENCRYPTION_KEY', cookies.encryptionKey)] : []),
    ];
    const volumes: k8s.Volume[] = [TMP_VOLUME];
    const mounts: k8s.VolumeMount[] = [TMP_MOUNT];
    if (props.externalCa) {
      volumes.push({ name: 'external-ca', secret: { secretName: props.externalCa.name, items: [{ key: props.externalCa.key, path: props.externalCa.key }] } });
      mounts.push({ name: 'external-ca', mountPath: '/etc/klutch/external-ca', readOnly: true });
    }
    if (oidc.issuerCa) {
      const { configMap, key } = oidc.issuerCa;
      volumes.push({ name: 'issuer-ca', configMap: { name: configMap, items: [{ key, path: key }] } });
      mounts.push({ name: 'issuer-ca', mountPath: '/etc/klutch/issuer-ca', readOnly: true });
      env.push({ name: 'NODE_EXTRA_CA_CERTS', value: `/etc/klutch/issuer-ca/${key}` });
    }
    if (props.tlsSecretName) {
      volumes.push({ name: 'tls', secret: { secretName: props.tlsSecretName } });
      mounts.push({ name: 'tls', mountPath: '/etc/klutch/tls', readOnly: true });
    }
    const scheme = props.tlsSecretName ? 'HTTPS' : 'HTTP';
    return new k8s.KubeDeployment(this, 'Deployment', {
      metadata: { name, namespace: ns, labels },
      spec: {
        replicas,
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: { ...labels, ...selector } },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: true,
            securityContext: hardenedPodSecurityContext(),
            ...(replicas > 1
              ? {
                  topologySpreadConstraints: [
                    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
                  ],
                }
              : {}),
            containers: [
              {
                name: 'backend',
                image,
                imagePullPolicy: 'IfNotPresent',
                // Resolved at synth: the callback URL may come from a later exposeVia*() call.
                args: Lazy.any({ produce: () => [...this.args] }),
                env,
                ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
                livenessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('http'), scheme }, initialDelaySeconds: 10, periodSeconds: 10 },
                readinessProbe: { httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('http'), scheme }, periodSeconds: 5 },
                resources: resourceRequirements(resources),
                securityContext: hardenedContainerSecurityContext(),
                volumeMounts: mounts,
              },
            ],
            volumes,
          },
        },
      },
    });
  }
}

const K = BIND_GROUP;
const R = BINDING_RESOURCES;

/** The backend's own cluster-wide rules, with reasons. */
function backendRules(consumerScope: 'Namespaced' | 'Cluster'): DocumentedRule[] {
  return [
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: READ,
      why: 'read the CRDs matched by templates to build APIServiceExports (snapshot of served versions, schema, columns)',
    },
    {
      apiGroups: [EXAMPLE_BACKEND_GROUP],
      resources: [R.apiServiceExportTemplates.plural],
      verbs: READ,
      why: 'the catalogue of bindable APIs, in all namespaces',
    },
    {
      apiGroups: [K],
      resources: [R.apiServiceExportRequests.plural],
      verbs: READ_WRITE,
      why: 'turn requests into exports, delete old ones; create is held because klutch-binder grants it',
    },
    { apiGroups: [K], resources: [R.apiServiceExports.plural], verbs: READ_WRITE, why: 'create exports and keep them in sync with their CRD' },
    { apiGroups: [K], resources: [R.apiServiceNamespaces.plural], verbs: READ_WRITE, why: 'map consumer namespaces to provider namespaces' },
    { apiGroups: [K], resources: [R.clusterBindings.plural], verbs: READ_WRITE, why: 'create ClusterBinding "cluster" per consumer, judge heartbeats' },
    {
      apiGroups: [K],
      resources: [R.apiServiceExportRequests, R.apiServiceExports, R.apiServiceNamespaces, R.clusterBindings].map((r) => `${r.plural}/status`),
      verbs: ['get', 'update', 'patch'],
      why: 'phases and conditions',
    },
    {
      apiGroups: [''],
      resources: ['namespaces'],
      verbs: READ_WRITE,
      why: 'create and delete cluster namespaces and provider namespaces <clusterNs>-<consumerNs> (RBAC cannot limit delete to namespaces it created)',
    },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: READ_WRITE, why: `the ServiceAccount "${BINDER_NAME}" in each cluster namespace` },
    {
      apiGroups: [''],
      resources: ['serviceaccounts/token'],
      verbs: ['create'],
      resourceNames: [BINDER_NAME],
      why: 'TokenRequest for the binder ServiceAccount only (no legacy token Secrets)',
    },
    {
      apiGroups: [''],
      resources: ['secrets'],
      verbs: READ_WRITE,
      why: 'write and watch (by label) the kubeconfig Secret, create and delete the credential Secret (its deletion revokes the tokens) of each cluster namespace; klutch-binder grants delete of the credential Secret (and get/list/watch with klutchKonnectorCompat), which it must hold',
    },
    {
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['clusterroles'],
      verbs: READ_WRITE,
      why: 'apply klutch-binder and klutch-binder-<clusterNs>; escalation prevention limits them to rights the backend holds',
    },
    {
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['rolebindings'],
      verbs: READ_WRITE,
      why: "bind the binder roles in each consumer's provider namespaces",
    },
    {
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['clusterrolebindings'],
      verbs: consumerScope === 'Cluster' ? READ_WRITE : ['get', 'delete'],
      why:
        consumerScope === 'Cluster'
          ? 'per-consumer ClusterRoleBinding (consumer scope Cluster)'
          : 'remove a per-consumer ClusterRoleBinding left from consumer scope Cluster',
    },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'], why: 'record events' },
  ];
}

const LEASE_RULES: readonly DocumentedRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    why: 'leader election between backend replicas, and one Lease per used login state (single use across replicas; deleted after expiry), in its own namespace only',
  },
];

function groupByApiGroup(claimed: ClaimedResource[]): { group: string; resources: string[] }[] {
  const byGroup = new Map<string, Set<string>>();
  for (const c of claimed) {
    if (!byGroup.has(c.group)) byGroup.set(c.group, new Set());
    byGroup.get(c.group)!.add(c.resource);
  }
  return [...byGroup.entries()].map(([group, rs]) => ({ group, resources: [...rs].sort() }));
}
