/**
 * Test topology for the konnector on real clusters: what the bind backend would create on the
 * control plane (cluster namespace, ClusterBinding, APIServiceExport, a ServiceAccount whose token is
 * limited by RBAC to the cluster namespace and its bound provider namespaces, the kubeconfig Secret),
 * a minimal "backend" that assigns provider namespaces to APIServiceNamespaces, and the app-cluster
 * side (kubeconfig Secret + APIServiceBinding).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { CoreResources, isAlreadyExists, isNotFound, KubeClient, type KubeObject, type ResourceRef } from '../../../runtime/core/client.js';
import { Controller } from '../../../runtime/core/controller.js';
import { Informer } from '../../../runtime/core/informer.js';
import { bindingCrds } from '../../../contract/api/crds.js';
import { type APIServiceNamespace } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { createLogger } from '../../../runtime/core/logger.js';
import { Konnector, type KonnectorOptions } from '../../../runtime/konnector/konnector.js';
import { startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';

export const GROUP = 'test.klutch.anynines.com';
export const WIDGETS: ResourceRef = { group: GROUP, version: 'v1alpha1', plural: 'widgets', kind: 'Widget', namespaced: true };
export const WIDGETS_NAME = `widgets.${GROUP}`;
export const CREDS_LABEL = 'klutch.anynines.com/credentials';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(intervalMs);
  }
}

/** Asserts `fn` stays falsy for `ms` (used for "never arrives" checks after a positive sync barrier). */
export async function never(what: string, fn: () => Promise<unknown>, ms = 1500): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) throw new Error(`unexpected: ${what}`);
    await sleep(100);
  }
}

export function widgetSchema(extraSpec: Record<string, unknown> = {}) {
  return {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            size: { type: 'integer' },
            color: { type: 'string' },
            tags: { type: 'array', items: { type: 'string' } },
            resourceRef: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            ...extraSpec,
          },
        },
        status: { type: 'object', properties: { phase: { type: 'string' }, message: { type: 'string' } } },
      },
    },
  };
}

/** The provider's CRD for widgets (upstream objects live here). */
export function widgetCRD(extraSpec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: WIDGETS_NAME },
    spec: {
      group: GROUP,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: widgetSchema(extraSpec),
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
        },
      ],
    },
  };
}

export function widgetExport(clusterNs: string, extraSpec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExport',
    metadata: { name: WIDGETS_NAME, namespace: clusterNs },
    spec: {
      group: GROUP,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      informerScope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: widgetSchema(extraSpec),
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
        },
      ],
      permissionClaims: [credentialsClaim()],
    },
  };
}

/** Only Secrets labelled as credentials, created by the provider. */
export function credentialsClaim() {
  return { group: '', resource: 'secrets', version: 'v1', selector: { labelSelectors: [{ [CREDS_LABEL]: 'true' }], owner: 'Provider' as const } };
}

export const admin = (c: RealCluster, qps = 200) => new KubeClient(c.kubeConfig, { qps, burst: qps * 2 });

export async function ensure(c: KubeClient, r: ResourceRef, o: KubeObject): Promise<KubeObject> {
  try {
    return await c.create(r, o);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    return c.get(r, o.metadata.namespace, o.metadata.name!);
  }
}

export async function createCRDs(c: KubeClient, crds: KubeObject[]): Promise<void> {
  for (const crd of crds) await ensure(c, CoreResources.crds, crd);
  await eventually('CRDs established', async () => {
    for (const crd of crds) {
      const live = (await c.get(CoreResources.crds, undefined, crd.metadata.name!)) as KubeObject & {
        status?: { conditions?: Array<{ type: string; status: string }> };
      };
      if (!live.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) return false;
    }
    return true;
  });
}

export async function installBindingCRDs(c: KubeClient): Promise<void> {
  await createCRDs(c, bindingCrds() as unknown as KubeObject[]);
}

const ROLE_RULES_CLUSTER_NS = [
  { apiGroups: ['klutch.anynines.com'], resources: ['apiserviceexports', 'clusterbindings'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['klutch.anynines.com'], resources: ['clusterbindings/status', 'apiserviceexports/status'], verbs: ['get', 'patch', 'update'] },
  { apiGroups: ['klutch.anynines.com'], resources: ['apiservicenamespaces'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
];
const ROLE_RULES_PROVIDER_NS = [
  { apiGroups: [GROUP], resources: ['*'], verbs: ['*'] },
  { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['*'] },
];

export interface ConsumerOnProvider {
  clusterNs: string;
  sa: string;
  kubeconfig: string;
}

export async function tokenFor(c: KubeClient, ns: string, sa: string, seconds = 3600): Promise<string> {
  const tr = await c.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: seconds } },
  });
  return tr.status.token;
}

export function kubeconfigText(kc: KubeConfig): string {
  return kc.exportConfig();
}

/** What the backend creates on the control plane for one consumer cluster. */
export async function setUpConsumerOnProvider(cp: RealCluster, clusterNs: string, opts: { exports?: KubeObject[] } = {}): Promise<ConsumerOnProvider> {
  const c = admin(cp);
  await ensure(c, CoreResources.namespaces, { metadata: { name: clusterNs } });
  await ensure(c, CoreResources.serviceaccounts, { metadata: { name: 'konnector', namespace: clusterNs } });
  await ensure(c, CoreResources.roles, { metadata: { name: 'konnector', namespace: clusterNs }, rules: ROLE_RULES_CLUSTER_NS });
  await ensure(c, CoreResources.rolebindings, {
    metadata: { name: 'konnector', namespace: clusterNs },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'konnector' },
    subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: clusterNs }],
  });
  const token = await tokenFor(c, clusterNs, 'konnector');
  const kubeconfig = kubeconfigText(cp.kubeconfigForToken(token, clusterNs));
  await ensure(c, CoreResources.secrets, {
    metadata: { name: 'kubeconfig', namespace: clusterNs },
    data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  });
  await ensure(c, BINDING_RESOURCES.clusterBindings, {
    metadata: { name: 'cluster', namespace: clusterNs },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'Test Provider' },
  });
  for (const e of opts.exports ?? [widgetExport(clusterNs)]) await ensure(c, BINDING_RESOURCES.apiServiceExports, e);
  c.close();
  return { clusterNs, sa: 'konnector', kubeconfig };
}

/** App-cluster side of a binding: the kubeconfig Secret and the APIServiceBinding (claims accepted). */
export async function bindOnApp(app: RealCluster, p: ConsumerOnProvider, opts: { name?: string; claims?: unknown[] } = {}): Promise<void> {
  const c = admin(app);
  await ensure(c, CoreResources.namespaces, { metadata: { name: 'klutch-bind' } });
  await ensure(c, CoreResources.secrets, {
    metadata: { name: 'kubeconfig-provider', namespace: 'klutch-bind' },
    data: { kubeconfig: Buffer.from(p.kubeconfig).toString('base64') },
  });
  await ensure(c, BINDING_RESOURCES.apiServiceBindings, {
    metadata: { name: opts.name ?? WIDGETS_NAME, namespace: 'klutch-bind' },
    spec: {
      kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-provider', key: 'kubeconfig' },
      permissionClaims: opts.claims ?? [{ ...credentialsClaim(), state: 'Accepted' }],
    },
  });
  c.close();
}

/**
 * The part of the bind backend the konnector depends on: for each APIServiceNamespace without
 * status, create provider namespace `<clusterNs>-<name>`, grant the consumer's ServiceAccount access
 * there, and set `status.namespace`; delete the provider namespace when the APIServiceNamespace goes.
 */
export class MiniBackend {
  private readonly client: KubeClient;
  private readonly informer: Informer<APIServiceNamespace>;
  private readonly ctl: Controller;

  constructor(cp: RealCluster) {
    this.client = admin(cp);
    this.informer = new Informer<APIServiceNamespace>(this.client, BINDING_RESOURCES.apiServiceNamespaces, {});
    this.ctl = new Controller({ name: 'mini-backend', workers: 2, backoffMaxMs: 2000, reconciler: (k) => this.reconcile(k) });
    this.informer.addEventHandler({
      onAdd: (o) => this.ctl.enqueue(`${o.metadata.namespace}/${o.metadata.name}`),
      onUpdate: (_, o) => this.ctl.enqueue(`${o.metadata.namespace}/${o.metadata.name}`),
      onDelete: (o) => this.ctl.enqueue(`${o.metadata.namespace}/${o.metadata.name}`),
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync(30_000);
    this.ctl.start();
  }

  async stop(): Promise<void> {
    await this.ctl.stop();
    await this.informer.stop();
    this.client.close();
  }

  private async reconcile(key: string): Promise<void> {
    const [clusterNs, name] = key.split('/') as [string, string];
    const providerNs = `${clusterNs}-${name}`;
    const o = this.informer.get(key);
    if (!o) {
      await this.client.delete(CoreResources.namespaces, undefined, providerNs);
      return;
    }
    if (o.status?.namespace) return;
    await ensure(this.client, CoreResources.namespaces, {
      metadata: { name: providerNs, annotations: { 'klutch.anynines.com/api-service-namespace': `${clusterNs}/${name}` } },
    });
    await ensure(this.client, CoreResources.roles, { metadata: { name: 'konnector', namespace: providerNs }, rules: ROLE_RULES_PROVIDER_NS });
    await ensure(this.client, CoreResources.rolebindings, {
      metadata: { name: 'konnector', namespace: providerNs },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'konnector' },
      subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: clusterNs }],
    });
    try {
      await this.client.mergePatch(BINDING_RESOURCES.apiServiceNamespaces, clusterNs, name, { status: { namespace: providerNs } }, 'status');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

export async function getOrNull<T extends KubeObject = KubeObject>(
  c: KubeClient,
  r: ResourceRef,
  ns: string | undefined,
  name: string,
): Promise<T | undefined> {
  return c.getOrNull<T>(r, ns, name);
}

/**
 * `apiserver_request_total` of one resource from an API server's /metrics: successful requests by verb
 * (`POST`, `PUT`, `APPLY`, `PUT/status`, …), failed ones as `<verb> <code>` (e.g. `PUT 409`).
 */
export async function requestCounts(c: KubeClient, resource: string): Promise<Record<string, number>> {
  const text = String(await c.request<string>('GET', '/metrics'));
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes(`resource="${resource}"`)) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1];
    const sub = /subresource="([a-z]*)"/.exec(line)?.[1];
    const code = /code="(\d+)"/.exec(line)?.[1] ?? '';
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    const k = `${sub ? `${verb}/${sub}` : verb}${code.startsWith('2') ? '' : ` ${code}`}`;
    if (verb && Number.isFinite(v)) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

/** What `requestCounts` grew by between two readings (only the keys that grew). */
export function countDelta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(b)) if (b[k]! - (a[k] ?? 0) > 0) out[k] = b[k]! - (a[k] ?? 0);
  return out;
}

/** Runs `f` over `items` with at most `n` calls in flight. */
export async function parallel<T>(items: T[], n: number, f: (x: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await f(items[i++]!);
    }),
  );
}

/** A control plane and an app cluster bound to it, with the mini backend and an in-process konnector. */
export interface BoundPair {
  cp: RealCluster;
  app: RealCluster;
  cpc: KubeClient;
  ac: KubeClient;
  backend: MiniBackend;
  konnector: Konnector;
  /** Stops the konnector, the backend, the clients and both clusters. */
  stop(): Promise<void>;
}

/**
 * Starts clusters `<name>-cp` and `<name>-app`, the binding CRDs, the widget CRD and export (consumer
 * cluster namespace `clusterNamespace`), binds the app cluster (with `claims` if given) and starts a
 * konnector; resolves once the bound CRD exists on the app cluster.
 */
export async function startBoundPair(
  name: string,
  opts: { clusterNamespace: string; claims?: unknown[]; konnector?: Partial<KonnectorOptions> },
): Promise<BoundPair> {
  const [cp, app] = await Promise.all([startCluster({ name: `${name}-cp` }), startCluster({ name: `${name}-app` })]);
  const cpc = admin(cp);
  const ac = admin(app);
  const backend = new MiniBackend(cp);
  const konnector = new Konnector({
    appKubeConfig: app.kubeConfig,
    heartbeatIntervalMs: 4000,
    providerSyncTimeoutMs: 10_000,
    resyncMs: 0,
    logger: createLogger(`konnector-${name}`, process.env.KONNECTOR_TEST_LOG ?? 'silent'),
    ...opts.konnector,
  });
  const stop = async () => {
    await konnector.stop().catch(() => undefined);
    await backend.stop();
    cpc.close();
    ac.close();
    await Promise.all([cp.stop(), app.stop()]);
  };
  try {
    await Promise.all([installBindingCRDs(cpc), createCRDs(cpc, [widgetCRD()]), installBindingCRDs(ac)]);
    await backend.start();
    await bindOnApp(app, await setUpConsumerOnProvider(cp, opts.clusterNamespace), opts.claims ? { claims: opts.claims } : {});
    await konnector.start();
    await eventually('CRD on the app cluster', () => ac.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME), 120_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { cp, app, cpc, ac, backend, konnector, stop };
}
