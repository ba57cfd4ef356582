/**
 * Typed, validated stack configuration of the klutch-kit Pulumi project.
 *
 * Everything is read from the `klutch-kit:` config namespace of the stack (`Pulumi.<stack>.yaml`).
 * Plain settings are structured config objects; secrets are separate secret keys (so that they are
 * stored as `secure:` ciphertext and every output derived from them stays secret):
 *
 * | key | type | what |
 * |---|---|---|
 * | `controlPlane` | {@link ClusterConfig} | the control-plane cluster |
 * | `appClusters` | {@link AppClusterConfig}[] | the app clusters (at least one) |
 * | `oidc` | {@link OidcConfig} | OIDC issuer for the bind backend; omit to deploy Dex on the control plane |
 * | `dex` | {@link DexConfig} | the deployed Dex's issuer URL and TLS (without `oidc`) |
 * | `backend` | {@link BackendConfig} | bind backend URL, name and replica count |
 * | `images` | {@link ImagesConfig} | runtime image references, or a registry to build and push them to |
 * | `skipAwait` | boolean | skip readiness awaits of workloads (clusters that cannot run pods, e.g. the sandbox) |
 * | `manifests` | `topology` \| `runtime` | what to deploy: the whole Klutch topology (Crossplane, packages, catalogue, backend, Dex, konnectors) or only the binding runtime |
 * | `anynines` | {@link AnynineConfig} | a9s endpoints (the catalogue's a9s backends need them) |
 * | `catalogue` | {@link CatalogueConfig} | install the catalogue as a Configuration package (`{ "install": "ConfigurationPackage", "package": "<ref>" }`) |
 * | `monitoring` | {@link MonitoringConfig} | ServiceMonitor/PodMonitor, PrometheusRule and Grafana dashboard for the backend and the konnectors (needs the Prometheus Operator's CRDs) |
 * | `kubeconfig-<cluster>` | secret string | kubeconfig contents of a cluster with `access.kind: kubeconfig` |
 * | `oidcClientSecret` | secret string | the backend's OIDC client secret |
 * | `cookieSigningKey` | secret string | base64, 32 or 64 bytes |
 * | `cookieEncryptionKey` | secret string (optional) | base64, 16, 24 or 32 bytes |
 *
 * Secrets are never generated inside the program: a value generated on every run would change on every
 * `pulumi up`. `generateStackSecrets()` (stacks/secrets.ts) makes them once; set them with
 * `pulumi config set --secret`.
 */
import { parsePackageRef } from '../constructs/crossplane/_package.js';
import { show } from '../constructs/_errors.js';
import { isDnsLabel } from '../constructs/_names.js';

/** The config namespace (the project name in Pulumi.yaml). */
export const CONFIG_NAMESPACE = 'klutch-kit';

/** How to reach (or create) a cluster. */
export type ClusterAccess =
  /** kubeconfig contents from the secret config key `kubeconfig-<cluster>` (or `secretKey`), or a file. */
  | { readonly kind: 'kubeconfig'; readonly secretKey?: string; readonly path?: string; readonly context?: string }
  /** A context of the kubeconfig file `path` (default: $KUBECONFIG, else ~/.kube/config). */
  | { readonly kind: 'context'; readonly context: string; readonly path?: string }
  /** A kind cluster created by the stack (needs Docker and the kind CLI); `name` defaults to the cluster name. */
  | { readonly kind: 'kind'; readonly name?: string; readonly nodeImage?: string; readonly configPath?: string }
  /** An EKS cluster created by the stack (needs @pulumi/eks and AWS credentials). */
  | { readonly kind: 'eks'; readonly region: string; readonly instanceType?: string; readonly desiredCapacity?: number };

export type ClusterAccessKind = ClusterAccess['kind'];
export const CLUSTER_ACCESS_KINDS: readonly ClusterAccessKind[] = ['kubeconfig', 'context', 'kind', 'eks'];

export interface ClusterConfig {
  /** Cluster name: a DNS label; part of every resource name of the cluster. */
  readonly name: string;
  /** @default { kind: 'kubeconfig' } */
  readonly access: ClusterAccess;
}

/** How an app cluster is bound to the control plane. */
export type BindingMode = 'cli' | 'controlPlane';

export interface AppClusterConfig extends ClusterConfig {
  /**
   * `cli`: the konnector is installed and the user runs the printed `kubectl bind` command (Klutch's flow).
   * `controlPlane`: an AppClusterBinding on the control plane drives the binding.
   * @default 'cli'
   */
  readonly binding: BindingMode;
}

export interface OidcConfig {
  /** Issuer URL (https, or http on loopback). */
  readonly issuerUrl: string;
  /** Client id. @default "klutch-backend" */
  readonly clientId: string;
}

export interface BackendConfig {
  /** URL users (browsers and `kubectl bind`) reach the backend at, e.g. `https://bind.example.com`. Required. */
  readonly url: string;
  /** Name of the backend (`--pretty-name`). @default "klutch-kit" */
  readonly prettyName: string;
  /**
   * Backend replicas (1–10). Two or more serve through a node drain (PodDisruptionBudget) and a
   * replica's crash; the controllers are leader-elected, the login state is shared. @default 2
   */
  readonly replicas: number;
}

export interface ImagesConfig {
  /** @default DEFAULT_IMAGES.backend */
  readonly backend?: string;
  /** @default DEFAULT_IMAGES.konnector */
  readonly konnector?: string;
  /** @default DEFAULT_IMAGES.dex */
  readonly dex?: string;
  /** Build the backend and konnector images (`klutch-kit image build`, no Docker) and push them here, e.g. `ghcr.io/my-org`. */
  readonly registry?: string;
  /** Base of the built images: `local` or `<registry>/<repository>@sha256:<hex>`. @default a distroless Node.js 22, by digest */
  readonly base?: string;
  /**
   * Platforms of the built images, e.g. `["linux/amd64"]` for a local cluster of the host's platform (half the build
   * and push); only with `registry`. @default both, `linux/amd64` and `linux/arm64`, in one index
   */
  readonly platforms?: readonly ImagePlatform[];
}

/** A platform the stack builds images for (`images.platforms`). */
export type ImagePlatform = 'linux/amd64' | 'linux/arm64';
/** Every {@link ImagePlatform}. */
export const IMAGE_PLATFORMS: readonly ImagePlatform[] = ['linux/amd64', 'linux/arm64'];

/** The validated, non-secret part of the stack config. */
export interface StackConfig {
  readonly controlPlane: ClusterConfig;
  readonly appClusters: readonly AppClusterConfig[];
  /** `undefined`: deploy Dex on the control plane as the issuer. */
  readonly oidc?: OidcConfig;
  /** The deployed Dex's issuer and TLS (only without `oidc`). */
  readonly dex?: DexConfig;
  readonly backend: BackendConfig;
  readonly images: ImagesConfig;
  readonly skipAwait: boolean;
  /** Dex connectors, used when `oidc` is not set (Dex is deployed). */
  readonly dexConnectors: readonly DexConnectorConfig[];
  /**
   * `topology`: the ControlPlaneCluster / AppCluster charts of constructs/topology (Crossplane via Helm, its packages,
   * the catalogue, backend, Dex, konnectors and bindings). `runtime`: only the binding API CRDs, the backend, Dex
   * and the konnectors (clusters without Crossplane, e.g. the sandbox). @default 'topology'
   */
  readonly manifests: 'topology' | 'runtime';
  /** a9s endpoints for the catalogue's a9s backends. */
  readonly anynines?: AnynineConfig;
  /**
   * `runtime` mode only: the catalogue as a Crossplane Configuration package pushed to `package`; the control plane
   * also gets the Configuration, the Function, provider-kubernetes and its ProviderConfig (stacks/catalogue.ts;
   * Crossplane must already run). @default none (no catalogue)
   */
  readonly catalogue?: CatalogueConfig;
  /** Monitoring objects (constructs/monitoring) next to the backend and each konnector; none when unset. */
  readonly monitoring?: MonitoringConfig;
}

/** `klutch-kit:monitoring`: the options of constructs/monitoring's KlutchMonitoring. */
export interface MonitoringConfig {
  /** `ServiceMonitor` or `PodMonitor`. @default "ServiceMonitor" */
  readonly scrapeKind?: 'ServiceMonitor' | 'PodMonitor';
  /** Scrape interval. @default "30s" */
  readonly interval?: string;
  /** Namespace of the PrometheusRule and the dashboard ConfigMap. @default "monitoring" */
  readonly namespace?: string;
  /** Labels for the Prometheus resource's selectors, e.g. { release: "kube-prometheus-stack" }. */
  readonly labels?: Record<string, string>;
  /** @default true */
  readonly alerts?: boolean;
  /** @default true */
  readonly dashboard?: boolean;
}

/** `klutch-kit:catalogue`. */
export interface CatalogueConfig {
  /** How the catalogue is installed; only `ConfigurationPackage`. */
  readonly install: 'ConfigurationPackage';
  /** The pushed package, e.g. `registry.example.com/klutch/catalogue:v0.1.0`. */
  readonly package: string;
  /**
   * The API style the package was built with: `namespaced` (ApiStyle.NAMESPACED_XR) also installs provider-kubernetes'
   * `ClusterProviderConfig` its Compositions use. @default 'claims'
   */
  readonly apiStyle?: 'claims' | 'namespaced';
}

export interface AnynineConfig {
  readonly baseDomain: string;
  readonly credentialsNamespace?: string;
  readonly urls?: Record<string, string>;
}

/**
 * `klutch-kit:dex`, for the Dex the stack deploys (no `oidc`): where its issuer is and whether Dex serves TLS itself.
 * Without it the issuer is `<backend.url>/dex`, served through the backend's Ingress or HTTPRoute.
 */
export interface DexConfig {
  /** The issuer URL (https) when Dex is reached at its own address, e.g. a load balancer of the Dex Service. @default `<backend.url>/dex` */
  readonly issuerUrl?: string;
  /** A `kubernetes.io/tls` Secret in the backend namespace: Dex serves its web port over TLS with it (Dex.serveTls). */
  readonly tlsSecretName?: string;
  /** A ConfigMap in the backend namespace whose key `ca.crt` holds the CA of Dex's certificate; the backend trusts it. */
  readonly caConfigMap?: string;
}

/** A Dex connector (https://dexidp.io/docs/connectors/); secret values belong in Secrets, referenced as `$ENV`. */
export interface DexConnectorConfig {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly config: Record<string, unknown>;
}

/** Secret config keys (besides `kubeconfig-<cluster>`). */
export const SECRET_KEYS = {
  oidcClientSecret: 'oidcClientSecret',
  cookieSigningKey: 'cookieSigningKey',
  cookieEncryptionKey: 'cookieEncryptionKey',
} as const;

/** Config key of a cluster's kubeconfig secret. */
export function kubeconfigKey(cluster: ClusterConfig): string {
  return cluster.access.kind === 'kubeconfig' && cluster.access.secretKey ? cluster.access.secretKey : `kubeconfig-${cluster.name}`;
}

/** Thrown for invalid stack config; the message names the key and the value received. */
export class StackConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackConfigError';
  }
}

/** Config values in messages are cut at this many characters. */
const SHOWN = 120;

function fail(key: string, v: unknown, expected: string): never {
  throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}: expected ${expected}, got ${show(v, SHOWN)}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(key: string, v: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) {
      throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}.${k}: unknown setting (value ${show(v[k], SHOWN)}); allowed: ${allowed.join(', ')}`);
    }
  }
}

function optString(key: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.trim() === '') fail(key, v, 'a non-empty string');
  return v;
}

/** `images.platforms`: a non-empty list of distinct {@link IMAGE_PLATFORMS}, only beside `images.registry`. */
function imagePlatforms(v: unknown, registry: string | undefined): ImagePlatform[] | undefined {
  if (v === undefined || v === null) return undefined;
  const expected = `a non-empty list of distinct platforms out of ${IMAGE_PLATFORMS.map((p) => JSON.stringify(p)).join(', ')}`;
  if (!Array.isArray(v) || v.length === 0 || new Set(v).size !== v.length) fail('images.platforms', v, expected);
  for (const [i, p] of v.entries()) if (!IMAGE_PLATFORMS.includes(p as ImagePlatform)) fail(`images.platforms[${i}]`, p, expected);
  if (!registry) fail('images.platforms', v, 'images.registry beside it (images.platforms are those of the images the stack builds)');
  return v as ImagePlatform[];
}

function checkUrl(key: string, v: unknown): string {
  const s = optString(key, v);
  if (s === undefined) fail(key, v, 'a URL');
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    fail(key, v, 'an absolute http(s) URL');
  }
  const loopback = u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]';
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) {
    fail(key, v, 'an https URL (http is accepted only on loopback)');
  }
  return s.replace(/\/+$/, '');
}

function parseAccess(key: string, v: unknown): ClusterAccess {
  if (v === undefined || v === null) return { kind: 'kubeconfig' };
  if (!isObject(v)) fail(key, v, `an object with kind one of ${CLUSTER_ACCESS_KINDS.join(', ')}`);
  const kind = v['kind'];
  switch (kind) {
    case 'kubeconfig':
      checkKeys(key, v, ['kind', 'secretKey', 'path', 'context']);
      if (v['secretKey'] !== undefined && v['path'] !== undefined) {
        throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}: set either secretKey or path, not both (got ${show(v, SHOWN)})`);
      }
      return {
        kind,
        ...(v['secretKey'] !== undefined ? { secretKey: optString(`${key}.secretKey`, v['secretKey'])! } : {}),
        ...(v['path'] !== undefined ? { path: optString(`${key}.path`, v['path'])! } : {}),
        ...(v['context'] !== undefined ? { context: optString(`${key}.context`, v['context'])! } : {}),
      };
    case 'context': {
      checkKeys(key, v, ['kind', 'context', 'path']);
      const context = optString(`${key}.context`, v['context']);
      if (!context) fail(`${key}.context`, v['context'], 'the name of a kubeconfig context');
      return { kind, context, ...(v['path'] !== undefined ? { path: optString(`${key}.path`, v['path'])! } : {}) };
    }
    case 'kind':
      checkKeys(key, v, ['kind', 'name', 'nodeImage', 'configPath']);
      return {
        kind,
        ...(v['name'] !== undefined ? { name: optString(`${key}.name`, v['name'])! } : {}),
        ...(v['nodeImage'] !== undefined ? { nodeImage: optString(`${key}.nodeImage`, v['nodeImage'])! } : {}),
        ...(v['configPath'] !== undefined ? { configPath: optString(`${key}.configPath`, v['configPath'])! } : {}),
      };
    case 'eks': {
      checkKeys(key, v, ['kind', 'region', 'instanceType', 'desiredCapacity']);
      const region = optString(`${key}.region`, v['region']);
      if (!region) fail(`${key}.region`, v['region'], 'an AWS region such as "eu-central-1"');
      const dc = v['desiredCapacity'];
      if (dc !== undefined && (typeof dc !== 'number' || !Number.isInteger(dc) || dc < 1 || dc > 100)) {
        fail(`${key}.desiredCapacity`, dc, 'an integer from 1 to 100');
      }
      return {
        kind,
        region,
        ...(v['instanceType'] !== undefined ? { instanceType: optString(`${key}.instanceType`, v['instanceType'])! } : {}),
        ...(dc !== undefined ? { desiredCapacity: dc as number } : {}),
      };
    }
    default:
      fail(`${key}.kind`, kind, `one of ${CLUSTER_ACCESS_KINDS.join(', ')}`);
  }
}

function parseClusterName(key: string, v: unknown): string {
  if (!isDnsLabel(v, 40)) {
    fail(key, v, 'a cluster name: a DNS label of at most 40 characters (lower-case letters, digits, "-")');
  }
  return v;
}

function parseCluster(key: string, v: unknown): ClusterConfig {
  if (!isObject(v)) fail(key, v, 'an object { name, access }');
  return { name: parseClusterName(`${key}.name`, v['name']), access: parseAccess(`${key}.access`, v['access']) };
}

/** The raw config values, as read from `new pulumi.Config('klutch-kit').getObject(...)`. */
export interface RawStackConfig {
  readonly controlPlane?: unknown;
  readonly appClusters?: unknown;
  readonly oidc?: unknown;
  readonly dex?: unknown;
  readonly backend?: unknown;
  readonly images?: unknown;
  readonly skipAwait?: unknown;
  readonly dexConnectors?: unknown;
  readonly manifests?: unknown;
  readonly anynines?: unknown;
  readonly monitoring?: unknown;
  readonly catalogue?: unknown;
}

/** Validates the non-secret stack config. Throws {@link StackConfigError} naming the key and the value received. */
export function parseStackConfig(raw: RawStackConfig): StackConfig {
  if (raw.controlPlane === undefined) {
    throw new StackConfigError(`${CONFIG_NAMESPACE}:controlPlane is not set; set it, e.g. ` + `pulumi config set --path 'controlPlane.name' control-plane`);
  }
  if (isObject(raw.controlPlane)) checkKeys('controlPlane', raw.controlPlane, ['name', 'access']);
  const controlPlane = parseCluster('controlPlane', raw.controlPlane);

  if (!Array.isArray(raw.appClusters) || raw.appClusters.length === 0) {
    fail('appClusters', raw.appClusters, 'a non-empty list of app clusters [{ name, access, binding }]');
  }
  const seen = new Set([controlPlane.name]);
  const appClusters = raw.appClusters.map((a, i): AppClusterConfig => {
    const key = `appClusters[${i}]`;
    if (isObject(a)) checkKeys(key, a, ['name', 'access', 'binding']);
    const c = parseCluster(key, a);
    if (seen.has(c.name)) {
      throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}.name: "${c.name}" is already used by another cluster; cluster names must be unique`);
    }
    seen.add(c.name);
    const binding = (a as Record<string, unknown>)['binding'] ?? 'cli';
    if (binding !== 'cli' && binding !== 'controlPlane') fail(`${key}.binding`, binding, '"cli" or "controlPlane"');
    return { ...c, binding };
  });

  let oidc: OidcConfig | undefined;
  if (raw.oidc !== undefined && raw.oidc !== null) {
    if (!isObject(raw.oidc)) fail('oidc', raw.oidc, 'an object { issuerUrl, clientId }');
    checkKeys('oidc', raw.oidc, ['issuerUrl', 'clientId']);
    oidc = { issuerUrl: checkUrl('oidc.issuerUrl', raw.oidc['issuerUrl']), clientId: optString('oidc.clientId', raw.oidc['clientId']) ?? 'klutch-backend' };
  }

  let dex: DexConfig | undefined;
  if (raw.dex !== undefined && raw.dex !== null) {
    if (!isObject(raw.dex)) fail('dex', raw.dex, 'an object { issuerUrl, tlsSecretName, caConfigMap }');
    checkKeys('dex', raw.dex, ['issuerUrl', 'tlsSecretName', 'caConfigMap']);
    if (oidc) fail('dex', raw.dex, `nothing beside ${CONFIG_NAMESPACE}:oidc (with an external issuer the stack deploys no Dex)`);
    const issuerUrl = raw.dex['issuerUrl'] === undefined ? undefined : checkUrl('dex.issuerUrl', raw.dex['issuerUrl']);
    const name = (k: string) => {
      const v = optString(`dex.${k}`, (raw.dex as Record<string, unknown>)[k]);
      if (v !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v)) fail(`dex.${k}`, v, 'a Kubernetes object name (DNS-1123 subdomain)');
      return v;
    };
    const tlsSecretName = name('tlsSecretName');
    const caConfigMap = name('caConfigMap');
    if (issuerUrl !== undefined && tlsSecretName !== undefined && !issuerUrl.startsWith('https://')) {
      fail('dex.issuerUrl', issuerUrl, 'an https URL (Dex serves TLS with dex.tlsSecretName)');
    }
    dex = { ...(issuerUrl ? { issuerUrl } : {}), ...(tlsSecretName ? { tlsSecretName } : {}), ...(caConfigMap ? { caConfigMap } : {}) };
  }

  if (!isObject(raw.backend)) {
    fail('backend', raw.backend, 'an object { url, prettyName, replicas }; set at least: pulumi config set --path backend.url https://bind.example.com');
  }
  checkKeys('backend', raw.backend, ['url', 'prettyName', 'replicas']);
  const replicas = raw.backend['replicas'] ?? 2;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > 10) {
    fail('backend.replicas', replicas, 'an integer from 1 to 10 (set it with pulumi config set --path backend.replicas 3 so it is a number)');
  }
  const backend: BackendConfig = {
    url: checkUrl('backend.url', raw.backend['url']),
    prettyName: optString('backend.prettyName', raw.backend['prettyName']) ?? 'klutch-kit',
    replicas,
  };

  let images: ImagesConfig = {};
  if (raw.images !== undefined && raw.images !== null) {
    if (!isObject(raw.images)) fail('images', raw.images, 'an object { backend, konnector, dex, registry, base, platforms }');
    checkKeys('images', raw.images, ['backend', 'konnector', 'dex', 'registry', 'base', 'platforms']);
    const ref = (k: string) => {
      const s = optString(`images.${k}`, raw.images && (raw.images as Record<string, unknown>)[k]);
      if (s !== undefined && (/\s/.test(s) || s.endsWith(':latest'))) fail(`images.${k}`, s, 'a pinned image reference (no whitespace, not :latest)');
      return s;
    };
    const backendImage = ref('backend');
    const konnector = ref('konnector');
    const dex = ref('dex');
    const registry = optString('images.registry', raw.images['registry']);
    const base = optString('images.base', raw.images['base']);
    if (base !== undefined && base !== 'local' && !/@sha256:[0-9a-f]{64}$/.test(base)) {
      fail('images.base', base, '"local" or a base image pinned by digest, "<registry>/<repository>@sha256:<64 hex>"');
    }
    if (base !== undefined && !registry) fail('images.base', base, 'images.registry beside it (images.base is the base of the images the stack builds)');
    const platforms = imagePlatforms(raw.images['platforms'], registry);
    images = {
      ...(backendImage ? { backend: backendImage } : {}),
      ...(konnector ? { konnector } : {}),
      ...(dex ? { dex } : {}),
      ...(registry ? { registry } : {}),
      ...(base ? { base } : {}),
      ...(platforms ? { platforms } : {}),
    };
  }

  let skipAwait = false;
  if (raw.skipAwait !== undefined && raw.skipAwait !== null) {
    if (raw.skipAwait === true || raw.skipAwait === 'true') skipAwait = true;
    else if (raw.skipAwait === false || raw.skipAwait === 'false') skipAwait = false;
    else fail('skipAwait', raw.skipAwait, 'true or false');
  }

  let dexConnectors: DexConnectorConfig[] = [];
  if (raw.dexConnectors !== undefined && raw.dexConnectors !== null) {
    if (!Array.isArray(raw.dexConnectors)) fail('dexConnectors', raw.dexConnectors, 'a list of Dex connectors [{ type, id, name, config }]');
    dexConnectors = raw.dexConnectors.map((c, i) => {
      const key = `dexConnectors[${i}]`;
      if (!isObject(c)) fail(key, c, 'an object { type, id, name, config }');
      checkKeys(key, c, ['type', 'id', 'name', 'config']);
      const type = optString(`${key}.type`, c['type']);
      const id = optString(`${key}.id`, c['id']);
      const name = optString(`${key}.name`, c['name']);
      if (!type) fail(`${key}.type`, c['type'], 'a Dex connector type such as "github" or "oidc"');
      if (!id) fail(`${key}.id`, c['id'], 'a connector id');
      if (!name) fail(`${key}.name`, c['name'], 'a display name');
      const config = c['config'] ?? {};
      if (!isObject(config)) fail(`${key}.config`, c['config'], 'an object');
      return { type, id, name, config };
    });
  }
  if (!oidc && dexConnectors.length === 0) {
    throw new StackConfigError(
      `${CONFIG_NAMESPACE}:dexConnectors: without ${CONFIG_NAMESPACE}:oidc the stack deploys Dex, which needs at least one connector; got ${show(raw.dexConnectors, SHOWN)}. ` +
        `Set oidc.issuerUrl to use an existing issuer, or e.g. pulumi config set --path 'dexConnectors[0]' ... ({"type":"github","id":"github","name":"GitHub","config":{...}})`,
    );
  }

  const manifests = raw.manifests ?? 'topology';
  if (manifests !== 'topology' && manifests !== 'runtime') fail('manifests', raw.manifests, '"topology" or "runtime"');
  if (dex && manifests !== 'runtime') {
    fail(
      'dex',
      raw.dex,
      `nothing with manifests "${manifests}": dex (issuer URL, TLS) is for manifests "runtime"; the topology mode's Dex is served under backend.url`,
    );
  }

  let anynines: AnynineConfig | undefined;
  if (raw.anynines !== undefined && raw.anynines !== null) {
    if (!isObject(raw.anynines)) fail('anynines', raw.anynines, 'an object { baseDomain, credentialsNamespace, urls }');
    checkKeys('anynines', raw.anynines, ['baseDomain', 'credentialsNamespace', 'urls']);
    const baseDomain = optString('anynines.baseDomain', raw.anynines['baseDomain']);
    if (!baseDomain) fail('anynines.baseDomain', raw.anynines['baseDomain'], 'a DNS domain such as "a9s.example.com"');
    const cn = optString('anynines.credentialsNamespace', raw.anynines['credentialsNamespace']);
    const urls = raw.anynines['urls'];
    if (urls !== undefined && (!isObject(urls) || Object.values(urls).some((u) => typeof u !== 'string')))
      fail('anynines.urls', urls, 'an object of service name → URL');
    anynines = { baseDomain, ...(cn ? { credentialsNamespace: cn } : {}), ...(urls ? { urls: urls as Record<string, string> } : {}) };
  }

  let catalogue: CatalogueConfig | undefined;
  if (raw.catalogue !== undefined && raw.catalogue !== null) {
    const c = raw.catalogue;
    if (!isObject(c)) fail('catalogue', c, 'an object { install: "ConfigurationPackage", package }');
    checkKeys('catalogue', c, ['install', 'package', 'apiStyle']);
    if (c['install'] !== 'ConfigurationPackage') fail('catalogue.install', c['install'], '"ConfigurationPackage"');
    const pkg = c['package'];
    try {
      parsePackageRef('catalogue.package', pkg);
    } catch (e) {
      throw new StackConfigError(`${CONFIG_NAMESPACE}:${(e as Error).message}`);
    }
    if (manifests !== 'runtime')
      fail(
        'catalogue',
        c,
        `nothing with manifests "${manifests}": the catalogue package install is for manifests "runtime" (the topology mode installs the catalogue as objects)`,
      );
    const style = c['apiStyle'];
    if (style !== undefined && style !== 'claims' && style !== 'namespaced') fail('catalogue.apiStyle', style, '"claims" or "namespaced"');
    catalogue = { install: 'ConfigurationPackage', package: pkg as string, ...(style ? { apiStyle: style } : {}) };
  }

  let monitoring: MonitoringConfig | undefined;
  if (raw.monitoring !== undefined && raw.monitoring !== null) {
    const m = raw.monitoring;
    if (!isObject(m)) fail('monitoring', m, 'an object { scrapeKind, interval, namespace, labels, alerts, dashboard } ({} for the defaults)');
    checkKeys('monitoring', m, ['scrapeKind', 'interval', 'namespace', 'labels', 'alerts', 'dashboard']);
    const kind = m['scrapeKind'];
    if (kind !== undefined && kind !== 'ServiceMonitor' && kind !== 'PodMonitor') fail('monitoring.scrapeKind', kind, '"ServiceMonitor" or "PodMonitor"');
    const interval = optString('monitoring.interval', m['interval']);
    if (interval !== undefined && !/^(\d+(ms|s|m|h))+$/.test(interval)) fail('monitoring.interval', interval, 'a Prometheus duration such as "30s"');
    const namespace = optString('monitoring.namespace', m['namespace']);
    if (namespace !== undefined && !isDnsLabel(namespace)) fail('monitoring.namespace', namespace, 'a DNS-1123 label');
    const labels = m['labels'];
    if (labels !== undefined && (!isObject(labels) || Object.values(labels).some((v) => typeof v !== 'string')))
      fail('monitoring.labels', labels, 'an object of label name → string value');
    for (const k of ['alerts', 'dashboard']) if (m[k] !== undefined && typeof m[k] !== 'boolean') fail(`monitoring.${k}`, m[k], 'true or false');
    monitoring = {
      ...(kind ? { scrapeKind: kind } : {}),
      ...(interval ? { interval } : {}),
      ...(namespace ? { namespace } : {}),
      ...(labels ? { labels: labels as Record<string, string> } : {}),
      ...(m['alerts'] !== undefined ? { alerts: m['alerts'] as boolean } : {}),
      ...(m['dashboard'] !== undefined ? { dashboard: m['dashboard'] as boolean } : {}),
    };
  }

  return {
    controlPlane,
    appClusters,
    ...(oidc ? { oidc } : {}),
    ...(dex ? { dex } : {}),
    backend,
    images,
    skipAwait,
    dexConnectors,
    manifests,
    ...(anynines ? { anynines } : {}),
    ...(monitoring ? { monitoring } : {}),
    ...(catalogue ? { catalogue } : {}),
  };
}

/** Checks a base64 key of one of the allowed decoded lengths (cookie keys). */
export function checkBase64Key(key: string, value: string, lengths: readonly number[]): void {
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : undefined;
  if (!decoded || !lengths.includes(decoded.length)) {
    // Never echo a secret: report only its shape.
    throw new StackConfigError(
      `${CONFIG_NAMESPACE}:${key}: expected base64 of ${lengths.join(' or ')} bytes, got a value of ${value.length} characters` +
        `${decoded ? ` decoding to ${decoded.length} bytes` : ' that is not base64'}; generate one with: openssl rand -base64 ${lengths[0]}`,
    );
  }
}
