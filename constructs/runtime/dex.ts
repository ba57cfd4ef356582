/**
 * Dex, the OIDC provider in front of the bind backend: a ConfigMap with the Dex config (static
 * clients and connectors, no secret values), a Deployment, a Service, a ServiceAccount and — with
 * `storage: "kubernetes"` — the RBAC Dex's Kubernetes storage needs.
 *
 * Secrets never enter the config: static clients use Dex's `secretEnv`, connector configs refer to
 * environment variables (`$GITHUB_CLIENT_SECRET`, expanded by Dex at start-up) that are filled from
 * Secrets via `secretKeyRef`. A literal value under a secret-looking key (`clientSecret`,
 * `bindPW`, `password`, …) is refused.
 */
import { JsonPatch } from 'cdk8s';
import { k8s, ServiceAccount } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { stringify } from 'yaml';
import { fail } from '../_errors.js';
import { BACKEND_NAMESPACE, DEFAULT_IMAGES, PORTS, standardLabels } from './_defaults.js';
import {
  checkDnsLabel,
  checkDnsSubdomain,
  checkEnvName,
  checkImage,
  checkInt,
  checkResources,
  checkSecretRef,
  checkUrl,
  hardenedContainerSecurityContext,
  hardenedPodSecurityContext,
  ResourceSpec,
  resourceRequirements,
  SecretKeyRef,
  secretEnv,
  TMP_MOUNT,
  TMP_VOLUME,
} from './_pod.js';
import { DocumentedRule, READ_WRITE, toPolicyRules } from './_rbac.js';
import { bindClusterRole } from './_role-binding.js';

/** A Dex static client (e.g. the bind backend). */
export interface DexStaticClient {
  /** Client id. */
  readonly id: string;
  /** Display name. @default the id */
  readonly name?: string;
  /** Allowed redirect URIs. */
  readonly redirectUris: string[];
  /** Secret key holding the client secret (rendered as Dex `secretEnv`). */
  readonly secret: SecretKeyRef;
}

/** A Dex connector (upstream identity provider). */
export interface DexConnector {
  /** Connector type, e.g. `github`, `oidc`, `ldap`. */
  readonly type: string;
  /** Connector id. */
  readonly id: string;
  /** Display name. */
  readonly name: string;
  /** Connector config; secret values must be `$ENV_VAR` references filled by `secretEnv`. */
  readonly config: Record<string, unknown>;
  /** Env vars filled from Secrets, referenced in `config` as `$NAME`. @default {} */
  readonly secretEnv?: Record<string, SecretKeyRef>;
}

export interface DexProps {
  /** Issuer URL (https), e.g. `https://bind.example.com/dex`. */
  readonly issuer: string;
  /** Static clients. At least one. */
  readonly staticClients: DexStaticClient[];
  /** Connectors. At least one. */
  readonly connectors: DexConnector[];
  /** Namespace. @default "klutch-system" */
  readonly namespace?: string;
  /** Name of Deployment/Service/ConfigMap prefix. @default "dex" */
  readonly name?: string;
  /** Image. @default DEFAULT_IMAGES.dex */
  readonly image?: string;
  /** Storage: in-memory (1 replica) or Kubernetes CRDs (HA possible). @default "memory" */
  readonly storage?: 'memory' | 'kubernetes';
  /** Replicas; more than one requires kubernetes storage. @default 1 */
  readonly replicas?: number;
  /** CPU/memory. @default 50m/500m CPU, 64Mi/256Mi */
  readonly resources?: ResourceSpec;
}

const SECRET_KEYS = /^(clientsecret|secret|password|bindpw|privatekey|token|apitoken|apikey)$/i;
const DEFAULT_RESOURCES: ResourceSpec = { cpuRequest: '50m', cpuLimit: '500m', memoryRequest: '64Mi', memoryLimit: '256Mi' };

/** The validated props of a {@link Dex} (clients and connectors aside). */
interface CheckedDexProps {
  readonly issuer: string;
  readonly ns: string;
  readonly name: string;
  readonly image: string;
  readonly storage: 'memory' | 'kubernetes';
  readonly replicas: number;
  readonly resources: ResourceSpec;
}

/** Dex's config.yaml. */
function dexConfig(o: CheckedDexProps, staticClients: unknown[], connectors: unknown[]): Record<string, unknown> {
  const { issuer, storage } = o;
  return {
    issuer,
    storage: storage === 'memory' ? { type: 'memory' } : { type: 'kubernetes', config: { inCluster: true } },
    web: { http: `0.0.0.0:${PORTS.dexHttp}` },
    telemetry: { http: `0.0.0.0:${PORTS.dexTelemetry}` },
    oauth2: { skipApprovalScreen: true, responseTypes: ['code'] },
    enablePasswordDB: false,
    staticClients,
    connectors,
  };
}

export class Dex extends Construct {
  public readonly namespace: string;
  public readonly name: string;
  public readonly issuer: string;
  public readonly configMap: k8s.KubeConfigMap;
  public readonly deployment: k8s.KubeDeployment;
  public readonly service: k8s.KubeService;
  /** The Dex config as an object (what the ConfigMap holds). */
  public readonly config: Record<string, unknown>;
  /** In-cluster URL of the Dex web port (https after {@link serveTls}). */
  public get serviceUrl(): string {
    return `${this.tlsSecret ? 'https' : 'http'}://${this.name}.${this.namespace}.svc:${PORTS.dexHttp}${this.issuerPath}`;
  }
  private readonly issuerPath: string;
  private tlsSecret?: string;

  constructor(scope: Construct, id: string, props: DexProps) {
    super(scope, id);
    const o = Dex.checkProps(props);
    const { ns, name, storage } = o;
    this.issuer = o.issuer;
    this.namespace = ns;
    this.name = name;
    const { env, staticClients, connectors } = Dex.clientsAndConnectors(props);
    this.config = dexConfig(o, staticClients, connectors);
    const labels = standardLabels(name, 'oidc');
    const selector = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': `${name}-${ns}` };
    this.configMap = new k8s.KubeConfigMap(this, 'Config', {
      metadata: { name: `${name}-config`, namespace: ns, labels },
      data: { 'config.yaml': stringify(this.config) },
    });
    // cdk8s-plus renders the same object as the L1 (it writes automountServiceAccountToken always).
    new ServiceAccount(this, 'ServiceAccount', { metadata: { name, namespace: ns, labels }, automountToken: storage === 'kubernetes' });
    if (storage === 'kubernetes') this.addStorageRbac(ns, name, labels);
    this.deployment = this.addDeployment(o, env, labels, selector);
    this.service = this.addService(ns, name, labels, selector);
    checkDnsSubdomain('DexProps.name (Service host)', `${name}.${ns}.svc`);
    this.issuerPath = new URL(this.issuer).pathname.replace(/\/$/, '');
  }

  /** Checks the props but the clients and connectors; the values the manifests are made of. */
  private static checkProps(props: DexProps): CheckedDexProps {
    const P = 'DexProps';
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object');
    const issuer = checkUrl(`${P}.issuer`, props.issuer, true);
    const ns = checkDnsLabel(`${P}.namespace`, props.namespace ?? BACKEND_NAMESPACE);
    const name = checkDnsLabel(`${P}.name`, props.name ?? 'dex');
    const image = checkImage(`${P}.image`, props.image ?? DEFAULT_IMAGES.dex);
    const storage = props.storage ?? 'memory';
    if (storage !== 'memory' && storage !== 'kubernetes') fail(`${P}.storage`, storage, 'must be "memory" or "kubernetes"');
    const replicas = checkInt(`${P}.replicas`, props.replicas ?? 1, 1, 10);
    if (replicas > 1 && storage === 'memory') {
      throw new Error(`${P}.replicas: ${replicas} replicas need storage "kubernetes" (in-memory state is not shared between pods)`);
    }
    const resources = checkResources(`${P}.resources`, props.resources ?? DEFAULT_RESOURCES);
    if (!Array.isArray(props.staticClients) || props.staticClients.length === 0) {
      fail(`${P}.staticClients`, props.staticClients, 'must list at least one client (the bind backend)');
    }
    if (!Array.isArray(props.connectors) || props.connectors.length === 0) {
      fail(`${P}.connectors`, props.connectors, 'must list at least one connector');
    }
    return { issuer, ns, name, image, storage, replicas, resources };
  }

  /**
   * Checks the static clients and connectors: their Dex config entries, and the env vars (from
   * Secrets) their `$NAME` references read.
   */
  private static clientsAndConnectors(props: DexProps): { env: k8s.EnvVar[]; staticClients: unknown[]; connectors: unknown[] } {
    const P = 'DexProps';
    const env: k8s.EnvVar[] = [];
    const envNames = new Set<string>();
    const addEnv = (prop: string, envName: string, ref: SecretKeyRef) => {
      checkEnvName(prop, envName);
      if (envNames.has(envName)) fail(prop, envName, 'is used twice');
      envNames.add(envName);
      checkSecretRef(`${prop} (secret)`, ref);
      env.push(secretEnv(envName, ref));
    };
    const clientIds = new Set<string>();
    const staticClients = props.staticClients.map((c, i) => {
      const cp = `${P}.staticClients[${i}]`;
      if (typeof c.id !== 'string' || c.id.length === 0) fail(`${cp}.id`, c.id, 'must be a non-empty string');
      if (clientIds.has(c.id)) fail(`${cp}.id`, c.id, 'is used by two static clients');
      clientIds.add(c.id);
      if (!Array.isArray(c.redirectUris) || c.redirectUris.length === 0) fail(`${cp}.redirectUris`, c.redirectUris, 'must list at least one URI');
      c.redirectUris.forEach((u, j) => checkUrl(`${cp}.redirectUris[${j}]`, u));
      const envName = `DEX_CLIENT_SECRET_${i}`;
      addEnv(`${cp}.secret`, envName, c.secret);
      return { id: c.id, name: c.name ?? c.id, redirectURIs: [...c.redirectUris], secretEnv: envName };
    });
    const connectorIds = new Set<string>();
    const connectors = props.connectors.map((c, i) => {
      const cp = `${P}.connectors[${i}]`;
      for (const k of ['type', 'id', 'name'] as const) {
        if (typeof c[k] !== 'string' || c[k].length === 0) fail(`${cp}.${k}`, c[k], 'must be a non-empty string');
      }
      if (connectorIds.has(c.id)) fail(`${cp}.id`, c.id, 'is used by two connectors');
      connectorIds.add(c.id);
      const declared = new Set(Object.keys(c.secretEnv ?? {}));
      for (const [envName, ref] of Object.entries(c.secretEnv ?? {})) addEnv(`${cp}.secretEnv.${envName}`, envName, ref);
      checkNoInlineSecrets(`${cp}.config`, c.config, declared);
      return { type: c.type, id: c.id, name: c.name, config: c.config };
    });
    return { env, staticClients, connectors };
  }

  /** Dex Kubernetes storage: a ClusterRole (+ binding) over its state CRDs. */
  private addStorageRbac(ns: string, name: string, labels: Record<string, string>): void {
    const rules: DocumentedRule[] = [
      {
        apiGroups: ['dex.coreos.com'],
        resources: [
          'authcodes',
          'authrequests',
          'connectors',
          'devicerequests',
          'devicetokens',
          'oauth2clients',
          'offlinesessionses',
          'passwords',
          'refreshtokens',
          'signingkeies',
        ],
        verbs: READ_WRITE,
        why: 'Dex Kubernetes storage keeps its state in these CRDs',
      },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        verbs: ['get', 'list', 'create'],
        why: 'Dex creates its storage CRDs at start-up',
      },
    ];
    const role = new k8s.KubeClusterRole(this, 'ClusterRole', { metadata: { name: `${name}-${ns}`, labels }, rules: toPolicyRules('Dex.rules', rules) });
    bindClusterRole(this, 'ClusterRoleBinding', role, { name, namespace: ns }, { name: `${name}-${ns}`, labels });
  }

  /** The Deployment: hardened pods, the config mounted read-only, secrets from env. */
  private addDeployment(o: CheckedDexProps, env: k8s.EnvVar[], labels: Record<string, string>, selector: Record<string, string>): k8s.KubeDeployment {
    const { ns, name, image, storage, replicas, resources } = o;
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
            automountServiceAccountToken: storage === 'kubernetes',
            securityContext: hardenedPodSecurityContext(),
            containers: [
              {
                name: 'dex',
                image,
                imagePullPolicy: 'IfNotPresent',
                command: ['/usr/local/bin/dex', 'serve', '/etc/dex/config.yaml'],
                env,
                ports: [
                  { name: 'http', containerPort: PORTS.dexHttp, protocol: 'TCP' },
                  { name: 'telemetry', containerPort: PORTS.dexTelemetry, protocol: 'TCP' },
                ],
                livenessProbe: { httpGet: { path: '/healthz/live', port: k8s.IntOrString.fromString('telemetry') }, periodSeconds: 10 },
                readinessProbe: { httpGet: { path: '/healthz/ready', port: k8s.IntOrString.fromString('telemetry') }, periodSeconds: 5 },
                resources: resourceRequirements(resources),
                securityContext: hardenedContainerSecurityContext(),
                volumeMounts: [TMP_MOUNT, { name: 'config', mountPath: '/etc/dex', readOnly: true }],
              },
            ],
            volumes: [TMP_VOLUME, { name: 'config', configMap: { name: `${name}-config` } }],
          },
        },
      },
    });
  }

  /** The Service: the web port (issuer) and the telemetry port (health, metrics). */
  private addService(ns: string, name: string, labels: Record<string, string>, selector: Record<string, string>): k8s.KubeService {
    return new k8s.KubeService(this, 'Service', {
      metadata: { name, namespace: ns, labels },
      spec: {
        selector,
        ports: [
          { name: 'http', port: PORTS.dexHttp, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' },
          { name: 'telemetry', port: PORTS.dexTelemetry, targetPort: k8s.IntOrString.fromString('telemetry'), protocol: 'TCP' },
        ],
      },
    });
  }

  /**
   * Dex serves its web port (issuer, discovery, keys, login) over TLS itself, with the certificate and key of the
   * `kubernetes.io/tls` Secret `secretName` (keys `tls.crt`, `tls.key`, mounted read-only at `/etc/dex/tls`): for
   * an issuer that no TLS-terminating Ingress fronts. The health and metrics port stays plain HTTP for the probes.
   */
  public serveTls(secretName: string): this {
    checkDnsSubdomain('Dex.serveTls(secretName)', secretName);
    if (this.tlsSecret !== undefined) fail('Dex.serveTls(secretName)', secretName, `is a second call; TLS is already served from Secret "${this.tlsSecret}"`);
    this.tlsSecret = secretName;
    (this.config as { web: unknown }).web = { https: `0.0.0.0:${PORTS.dexHttp}`, tlsCert: '/etc/dex/tls/tls.crt', tlsKey: '/etc/dex/tls/tls.key' };
    this.configMap.addJsonPatch(JsonPatch.replace('/data/config.yaml', stringify(this.config)));
    const c = '/spec/template/spec/containers/0';
    this.deployment.addJsonPatch(
      JsonPatch.add(`${c}/volumeMounts/-`, { name: 'tls', mountPath: '/etc/dex/tls', readOnly: true }),
      JsonPatch.add('/spec/template/spec/volumes/-', { name: 'tls', secret: { secretName } }),
    );
    return this;
  }
}

/** Refuses literal values under secret-looking keys; `$VAR` must be declared in secretEnv. */
function checkNoInlineSecrets(prop: string, value: unknown, declared: Set<string>): void {
  if (value === null || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = `${prop}.${k}`;
    if (typeof v === 'string' && SECRET_KEYS.test(k)) {
      const m = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(v);
      if (!m) throw new Error(`${p}: a literal secret value is not allowed; put it in a Secret, add it to secretEnv and write "$ENV_NAME" here`);
      if (!declared.has(m[1])) fail(p, v, `refers to $${m[1]}, which is not declared in secretEnv`);
    } else if (typeof v === 'object') {
      checkNoInlineSecrets(p, v, declared);
    }
  }
}
