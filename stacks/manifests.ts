/**
 * What goes into each cluster: cdk8s charts rendered **in memory** (`chart.toJson()`), never from files,
 * so that the same constructs drive `cdk8s synth` and `pulumi up`.
 *
 * A {@link ManifestSource} returns the objects of one cluster in apply order; {@link splitForDeploy}
 * separates the objects every other object may depend on (CustomResourceDefinitions and Namespaces), which
 * the components deploy first, from the rest.
 */
import { App, Chart } from 'cdk8s';
import { appClusterBindingKind, bindingCrds, KUBECONFIG_SECRET_KEY } from '../contract/index.js';
import { BindBackend, Dex, type DexConnector, Konnector, KonnectorFlowControl } from '../constructs/runtime/index.js';
import { KlutchMonitoring, ScrapeKind, type MonitoringOptions } from '../constructs/monitoring/index.js';
import { cataloguePackageObjects } from './catalogue.js';
import type { AppClusterConfig, MonitoringConfig, StackConfig } from './config.js';
import { STACK_SECRETS } from './secret-names.js';

/** The stack's `monitoring` config as the options of constructs/monitoring (also used by the topology source). */
export function monitoringOptions(m: MonitoringConfig): MonitoringOptions {
  return {
    ...(m.scrapeKind ? { scrapeKind: m.scrapeKind === 'PodMonitor' ? ScrapeKind.POD_MONITOR : ScrapeKind.SERVICE_MONITOR } : {}),
    ...(m.interval ? { interval: m.interval } : {}),
    ...(m.namespace ? { namespace: m.namespace } : {}),
    ...(m.labels ? { labels: { ...m.labels } } : {}),
    ...(m.alerts !== undefined ? { alerts: m.alerts } : {}),
    ...(m.dashboard !== undefined ? { dashboard: m.dashboard } : {}),
  };
}

/** A Kubernetes object as plain JSON. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [k: string]: unknown };
  readonly [k: string]: unknown;
}

export { STACK_SECRETS };

/** Namespace on the control plane holding the AppClusterBindings and app-cluster kubeconfig Secrets. */
export const APP_CLUSTER_BINDING_NAMESPACE = 'klutch-app-clusters';

export interface ControlPlaneManifestInput {
  readonly config: StackConfig;
  /** Resolved image references. */
  readonly images: { readonly backend: string; readonly dex?: string };
  /** Whether the stack created the cookie encryption key Secret entry. */
  readonly hasCookieEncryptionKey: boolean;
}

export interface AppClusterManifestInput {
  readonly config: StackConfig;
  readonly cluster: AppClusterConfig;
  readonly images: { readonly konnector: string };
}

/** Produces the objects of each cluster, in apply order. */
export interface ManifestSource {
  controlPlane(input: ControlPlaneManifestInput): KubeObject[];
  appCluster(input: AppClusterManifestInput): KubeObject[];
}

function render(build: (chart: Chart) => void): KubeObject[] {
  const app = new App({ outdir: '/nonexistent-never-written' });
  const chart = new Chart(app, 'stack');
  build(chart);
  return chart.toJson() as KubeObject[];
}

/** The issuer used when Dex runs on the control plane: `<backend url>/dex`. */
export function dexIssuer(config: StackConfig): string {
  return config.dex?.issuerUrl ?? `${backendUrl(config)}/dex`;
}

export function backendUrl(config: StackConfig): string {
  return config.backend.url;
}

/**
 * The built-in source: the binding API CRDs on every cluster; the bind backend (and Dex when no external issuer
 * is configured) and, with `klutch-kit:catalogue`, the catalogue's Configuration package install on the control plane; the konnector on app clusters bound by the CLI flow.
 */
export const defaultManifestSource: ManifestSource = {
  controlPlane(input) {
    const { config } = input;
    const url = backendUrl(config);
    const issuerUrl = config.oidc?.issuerUrl ?? dexIssuer(config);
    const clientId = config.oidc?.clientId ?? 'klutch-backend';
    const oidcSecret = { name: STACK_SECRETS.oidc.name, key: STACK_SECRETS.oidc.clientSecretKey };
    const objects = render((chart) => {
      // API Priority and Fairness: one flow per konnector, so a busy app cluster cannot starve the others
      new KonnectorFlowControl(chart, 'flow-control');
      const backend = new BindBackend(chart, 'backend', {
        ...(input.images.backend ? { image: input.images.backend } : {}),
        prettyName: config.backend.prettyName,
        replicas: config.backend.replicas,
        oidc: {
          issuerUrl,
          clientId,
          clientSecret: oidcSecret,
          callbackUrl: `${url}/callback`,
          ...(!config.oidc && config.dex?.caConfigMap ? { issuerCa: { configMap: config.dex.caConfigMap, key: 'ca.crt' } } : {}),
        },
        cookies: {
          signingKey: { name: STACK_SECRETS.cookies.name, key: STACK_SECRETS.cookies.signingKey },
          ...(input.hasCookieEncryptionKey ? { encryptionKey: { name: STACK_SECRETS.cookies.name, key: STACK_SECRETS.cookies.encryptionKey } } : {}),
        },
      });
      if (config.monitoring) new KlutchMonitoring(chart, 'monitoring', { ...monitoringOptions(config.monitoring), backend });
      if (!config.oidc) {
        const dex = new Dex(chart, 'dex', {
          issuer: issuerUrl,
          ...(input.images.dex ? { image: input.images.dex } : {}),
          staticClients: [{ id: clientId, name: config.backend.prettyName, redirectUris: [`${url}/callback`], secret: oidcSecret }],
          connectors: config.dexConnectors.map((c): DexConnector => ({ type: c.type, id: c.id, name: c.name, config: { ...c.config } })),
        });
        if (config.dex?.tlsSecretName) dex.serveTls(config.dex.tlsSecretName);
      }
    });
    const crds = bindingCrds() as unknown as KubeObject[];
    const extra: KubeObject[] = config.appClusters.some((a) => a.binding === 'controlPlane')
      ? [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP_CLUSTER_BINDING_NAMESPACE } }]
      : [];
    // klutch-kit:catalogue: the Configuration package and the Crossplane packages it needs (Crossplane already runs)
    return [...crds, ...extra, ...objects, ...cataloguePackageObjects(config)];
  },
  appCluster(input) {
    if (input.cluster.binding === 'controlPlane') {
      // The konnector runs on the control plane (AppClusterBinding.spec.konnector.deploy); it installs what it needs.
      return [];
    }
    const objects = render((chart) => {
      const konnector = new Konnector(chart, 'konnector', { ...(input.images.konnector ? { image: input.images.konnector } : {}) });
      if (input.config.monitoring) new KlutchMonitoring(chart, 'monitoring', { ...monitoringOptions(input.config.monitoring), konnector });
    });
    return [...(bindingCrds() as unknown as KubeObject[]), ...objects];
  },
};

/**
 * The AppClusterBinding (control-plane mode) of an app cluster, and the name of the kubeconfig Secret it
 * references; both live on the control plane in {@link APP_CLUSTER_BINDING_NAMESPACE}.
 */
export function appClusterBinding(cluster: AppClusterConfig): { binding: KubeObject; secretName: string } {
  const secretName = `${cluster.name}-kubeconfig`;
  return {
    secretName,
    binding: {
      apiVersion: appClusterBindingKind.apiVersion,
      kind: appClusterBindingKind.kind,
      metadata: { name: cluster.name, namespace: APP_CLUSTER_BINDING_NAMESPACE },
      spec: {
        kubeconfigSecretRef: { namespace: APP_CLUSTER_BINDING_NAMESPACE, name: secretName, key: KUBECONFIG_SECRET_KEY },
        konnector: { deploy: true },
      },
    },
  };
}

/** Objects deployed first: CustomResourceDefinitions and Namespaces. */
export function isFoundation(o: Pick<KubeObject, 'apiVersion' | 'kind'>): boolean {
  return (o.kind === 'CustomResourceDefinition' && o.apiVersion.startsWith('apiextensions.k8s.io/')) || (o.kind === 'Namespace' && o.apiVersion === 'v1');
}

export interface DeploySplit {
  /** CRDs and Namespaces, CRDs first. */
  readonly foundation: KubeObject[];
  /** Everything else, in the order given. */
  readonly objects: KubeObject[];
}

/** Splits a cluster's objects into the foundation group and the rest; rejects duplicates and nameless objects. */
export function splitForDeploy(cluster: string, objs: readonly KubeObject[]): DeploySplit {
  const seen = new Set<string>();
  const crds: KubeObject[] = [];
  const namespaces: KubeObject[] = [];
  const objects: KubeObject[] = [];
  objs.forEach((o, i) => {
    if (!o || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || !o.metadata || typeof o.metadata.name !== 'string' || o.metadata.name === '') {
      throw new Error(`cluster "${cluster}": object #${i} has no apiVersion/kind/metadata.name (got ${JSON.stringify(o)?.slice(0, 200)})`);
    }
    const id = `${o.apiVersion.split('/').slice(0, -1).join('/')}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    if (seen.has(id))
      throw new Error(`cluster "${cluster}": object ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name} appears twice`);
    seen.add(id);
    if (o.kind === 'CustomResourceDefinition' && isFoundation(o)) crds.push(o);
    else if (isFoundation(o)) namespaces.push(o);
    else objects.push(o);
  });
  return { foundation: [...crds, ...namespaces], objects };
}

/** Group/kind pairs a set of CRDs defines. */
export function definedKinds(crds: readonly KubeObject[]): Set<string> {
  const out = new Set<string>();
  for (const c of crds) {
    const spec = c['spec'] as { group?: string; names?: { kind?: string } } | undefined;
    if (spec?.group && spec.names?.kind) out.add(`${spec.group}/${spec.names.kind}`);
  }
  return out;
}
