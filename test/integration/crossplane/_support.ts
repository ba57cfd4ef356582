/**
 * Support for the tests on real Crossplane: a control plane synthesized by our constructs (catalogue
 * in a Configuration package), raw object access, polling, and the **a8s operator stand-in**: no a8s
 * operator runs here, so a test plays it at operator level only, writing the status of the a8s objects
 * (`postgresqls.postgresql.anynines.com` etc.) the way the operator reports it (fields from the vendored
 * a8s CRDs, imports/crds/a8s/). Nothing is played at claim or XR level.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { parse } from 'yaml';
import {
  CatalogueInstall,
  ControlPlaneCluster,
  renderTopology,
  synthTopology,
  type RenderedCluster,
  type RenderedPackage,
} from '../../../constructs/topology/index.js';
import type { Catalogue, CatalogueProps } from '../../../constructs/catalogue/index.js';
import { applyManifests, clientOf, startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { isNotFound } from '../../../runtime/core/client.js';
import { ResourcePaths } from '../../../runtime/core/discovery.js';
import { joinPackageYaml } from '../../../runtime/xpkg/image.js';
import { runPush } from '../../../runtime/cli/package.js';
import { toYaml } from '../../../constructs/topology/index.js';

export type Obj = KubernetesObject & { spec?: Record<string, any>; status?: Record<string, any> };

export const REPO = process.cwd();
export const CATALOGUE_PACKAGE_REPOSITORY = 'klutch/catalogue';

/** The vendored CRDs of a folder under imports/crds/. */
export function vendoredCrds(folder: string, only?: (file: string) => boolean): Obj[] {
  const dir = join(REPO, 'imports', 'crds', folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && (!only || only(f)))
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Obj);
}

/** Our control plane, catalogue installed as a Configuration package from `packageRef`. */
export interface CatalogueSetup {
  /** The catalogue (default: all of it). */
  readonly catalogue?: CatalogueProps;
  /** Let the package manager resolve the package's dependsOn (off for a9s here: provider-anynines runs in test/integration/a9s/). @default false */
  readonly resolveDependencies?: boolean;
}

export function synthControlPlane(
  packageRef: string,
  setup: CatalogueSetup = {},
): { app: App; cluster: RenderedCluster; pkg: RenderedPackage; cp: ControlPlaneCluster } {
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'CP', {
    host: 'bind.example.com',
    dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] } as never,
    anynines: { baseDomain: 'a9s.example.com' },
    ...(setup.catalogue ? { catalogue: setup.catalogue } : {}),
    catalogueInstall: CatalogueInstall.configurationPackage({ package: packageRef, skipDependencyResolution: !setup.resolveDependencies }),
  });
  const [cluster] = renderTopology(app);
  const pkg = cluster.packages![0];
  return { app, cluster, pkg, cp };
}

export function packageYamlOf(pkg: RenderedPackage): string {
  return joinPackageYaml(
    toYaml(pkg.meta),
    pkg.files.map((f) => toYaml(f.object)),
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a value other than undefined; the error names `what` and the last value seen. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000, everyMs = 500): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (Date.now() > end)
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last !== undefined ? ` (last: ${String(last).slice(0, 300)})` : ''}`);
    await sleep(everyMs);
  }
}

/** Raw object access on one cluster. */
export class Api {
  readonly paths: ResourcePaths;
  constructor(readonly kc: KubeConfig) {
    this.paths = new ResourcePaths(clientOf(kc));
  }

  async path(apiVersion: string, kind: string, name: string, namespace?: string): Promise<string> {
    return this.paths.objectPath({ apiVersion, kind, metadata: { name, namespace } });
  }

  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<Obj | undefined> {
    try {
      return await clientOf(this.kc).request<Obj>('GET', await this.path(apiVersion, kind, name, namespace));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<Obj[]> {
    const r = await this.paths.resource(apiVersion, kind);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = r.namespaced && namespace ? `/namespaces/${namespace}` : '';
    const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
    return (await clientOf(this.kc).request<{ items: Obj[] }>('GET', `${base}${ns}/${r.name}${q}`)).items;
  }

  async create(o: Obj): Promise<Obj> {
    const p = await this.path(o.apiVersion!, o.kind!, o.metadata!.name!, o.metadata!.namespace);
    return clientOf(this.kc).request<Obj>('POST', p.slice(0, p.lastIndexOf('/')), { body: o });
  }

  async apply(o: Obj, fieldManager = 'klutch-kit-crossplane-test'): Promise<Obj> {
    const p = await this.path(o.apiVersion!, o.kind!, o.metadata!.name!, o.metadata!.namespace);
    return clientOf(this.kc).request<Obj>('PATCH', `${p}?fieldManager=${fieldManager}&force=true`, { body: o, contentType: 'application/apply-patch+yaml' });
  }

  async delete(apiVersion: string, kind: string, name: string, namespace?: string): Promise<void> {
    try {
      await clientOf(this.kc).request('DELETE', await this.path(apiVersion, kind, name, namespace));
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Merge-patches the status subresource. */
  async patchStatus(apiVersion: string, kind: string, name: string, namespace: string | undefined, status: Record<string, unknown>): Promise<Obj> {
    return clientOf(this.kc).request<Obj>('PATCH', `${await this.path(apiVersion, kind, name, namespace)}/status`, {
      body: { status },
      contentType: 'application/merge-patch+json',
    });
  }
}

export const condition = (o: Obj | undefined, type: string) =>
  (o?.status?.conditions as Array<{ type: string; status: string; reason?: string; message?: string }> | undefined)?.find((c) => c.type === type);

/**
 * The a8s operator stand-in: writes what the a8s operators write into the status of their objects,
 * nothing else. `postgresqlRunning` reports every replica ready (`readyReplicas` = `spec.replicas`,
 * `clusterStatus: Running`); `bindingImplemented` reports the binding done (`implemented: true`,
 * `secret: <name>-service-binding`); `conditionReady` sets `Ready=True` on a Backup or Restore.
 */
export class A8sOperatorStandIn {
  constructor(private readonly api: Api) {}

  async postgresqlNotRunning(name: string, namespace: string): Promise<void> {
    await this.api.patchStatus('postgresql.anynines.com/v1beta3', 'Postgresql', name, namespace, { readyReplicas: 0, clusterStatus: 'NotRunning' });
  }

  async postgresqlRunning(name: string, namespace: string): Promise<void> {
    const pg = await this.api.get('postgresql.anynines.com/v1beta3', 'Postgresql', name, namespace);
    if (!pg) throw new Error(`a8s stand-in: Postgresql ${namespace}/${name} does not exist`);
    await this.api.patchStatus('postgresql.anynines.com/v1beta3', 'Postgresql', name, namespace, {
      readyReplicas: pg.spec!.replicas,
      clusterStatus: 'Running',
    });
  }

  async bindingImplemented(name: string, namespace: string): Promise<void> {
    await this.api.patchStatus('servicebindings.anynines.com/v1beta3', 'ServiceBinding', name, namespace, {
      implemented: true,
      secret: { name: `${name}-service-binding`, namespace },
    });
  }

  async conditionReady(kind: 'Backup' | 'Restore', name: string, namespace: string): Promise<void> {
    await this.api.patchStatus('backups.anynines.com/v1beta3', kind, name, namespace, {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Succeeded',
          message: 'a8s operator stand-in',
          lastTransitionTime: new Date().toISOString(),
          observedGeneration: 1,
        },
      ],
    });
  }
}

export const NS = 'team-a';

/** A harness cluster with the catalogue installed from its Configuration package, as the tests share it. */
export interface CatalogueCluster {
  readonly cluster: RealCluster;
  readonly api: Api;
  readonly a8s: A8sOperatorStandIn;
  readonly catalogue: Catalogue;
  readonly xrds: Obj[];
  readonly packageRef: string;
  readonly pushedDigest: string;
  readonly timings: Record<string, number>;
}

/**
 * Starts a cluster with real Crossplane `version`, pushes the catalogue package (built by klutch-kit's
 * xpkg code) to the harness registry, applies the a8s and provider-anynines CRDs, then the synthesized
 * control plane's Configuration, provider-kubernetes RBAC and ProviderConfig, and waits until the
 * package manager has installed the package and every XRD is Established and Offered.
 */
export async function startCatalogueCluster(name: string, version: '2.3' | '1.20', setup: CatalogueSetup = {}): Promise<CatalogueCluster> {
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  // provider-kubernetes re-reads each Object's target every 3 s (default 10 s): operator status and
  // deletions travel faster, the test takes less time; nothing else changes.
  const cluster = await startCluster({ name, crossplane: { version, providerPollInterval: '3s' } });
  timings.harnessStart = Date.now() - t0;
  try {
    const api = new Api(cluster.kubeConfig);
    // What the operators and providers would bring: the a8s CRDs and provider-anynines' CRDs.
    await applyManifests(
      cluster.kubeConfig,
      [
        ...vendoredCrds('a8s'),
        ...vendoredCrds('provider-anynines', (f) => /_(serviceinstances|servicebindings|backups|restores)\.yaml$/.test(f)),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      ],
      { continueOnError: false },
    );
    const t1 = Date.now();
    const installed = await installCatalogue(cluster, api, 'v0.1.0', setup);
    timings.packageInstall = Date.now() - t1;
    return { cluster, api, a8s: new A8sOperatorStandIn(api), timings, ...installed };
  } catch (e) {
    await cluster.stop();
    throw e;
  }
}

/**
 * Synthesizes the control plane with the catalogue as a Configuration package `klutch/catalogue:<tag>`,
 * pushes it to the harness registry, applies the Configuration, provider-kubernetes' RBAC and
 * ProviderConfig(s), and waits until the package is installed and every XRD is Established (and
 * Offered, when it offers claims).
 */
export async function installCatalogue(
  cluster: RealCluster,
  api: Api,
  tag: string,
  setup: CatalogueSetup = {},
): Promise<{ catalogue: Catalogue; xrds: Obj[]; packageRef: string; pushedDigest: string }> {
  const xp = cluster.crossplane!;
  const packageRef = `${xp.registry}/${CATALOGUE_PACKAGE_REPOSITORY}:${tag}`;
  const synth = synthControlPlane(packageRef, setup);
  const xrds = synth.pkg.files.map((f) => f.object as Obj).filter((o) => o.kind === 'CompositeResourceDefinition');
  // The package: synthesized to <outdir>/control-plane.packages/klutch-catalogue/, then built and
  // pushed by `klutch-kit package push` (runPush; no crane, no Docker).
  const outdir = mkdtempSync(join(tmpdir(), 'klutch-xp-synth-'));
  let pushed: { digest: string };
  try {
    await synthTopology(synth.app, { outdir });
    const from = join(outdir, 'control-plane.packages', 'klutch-catalogue');
    pushed = await runPush(packageRef, { from }, { out: () => undefined, err: () => undefined });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
  // From the synthesized control plane: the Configuration, provider-kubernetes' RBAC for the a8s kinds
  // and its ProviderConfig (the harness installed the Function and Provider our constructs emit).
  // (With namespaced XRs also the ClusterProviderConfig of the kubernetes.m.crossplane.io Objects.)
  const wanted = (o: Obj) =>
    (['Configuration', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind!) &&
      /configuration|provider-kubernetes/.test(`${o.kind}/${o.metadata!.name}`.toLowerCase())) ||
    (o.kind === 'ProviderConfig' && o.apiVersion!.startsWith('kubernetes.crossplane.io/')) ||
    (o.kind === 'ClusterProviderConfig' && o.apiVersion!.startsWith('kubernetes.m.crossplane.io/'));
  const objs = synth.cluster.files.map((f) => f.object as Obj).filter(wanted);
  const kinds = [...new Set(objs.map((o) => o.kind))].sort().join(',');
  const expected = `${setup.catalogue?.apiStyle?.namespaced ? 'ClusterProviderConfig,' : ''}ClusterRole,ClusterRoleBinding,Configuration,ProviderConfig`;
  if (kinds !== expected) throw new Error(`the synthesized control plane gave ${kinds}, expected ${expected}`);
  await applyManifests(cluster.kubeConfig, objs, { continueOnError: false });
  await xp.waitForPackage('Configuration', 'klutch-catalogue', 180_000);
  await waitForXrdsServed(api, xrds, 180_000);
  return { catalogue: synth.cp.catalogue!, xrds, packageRef, pushedDigest: pushed.digest };
}

/**
 * Waits until every XRD is Established (and Offered, when it offers claims) and the API server serves its
 * XR kind and claim kind. The conditions alone are not enough: the API server's discovery lists a new CRD's
 * group a moment after the CRD is Established, and a claim created in between fails with "not served".
 */
export async function waitForXrdsServed(api: Api, xrds: readonly Obj[], timeoutMs: number): Promise<void> {
  for (const x of xrds) {
    const name = x.metadata!.name!;
    const spec = x.spec as {
      group: string;
      names: { kind: string };
      claimNames?: { kind: string };
      versions: Array<{ name: string; referenceable?: boolean }>;
    };
    const version = (spec.versions.find((v) => v.referenceable) ?? spec.versions[0]!).name;
    await waitFor(
      `XRD ${name} Established${spec.claimNames ? ' and Offered' : ''}, its kinds served`,
      async () => {
        const live = await api.get('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition', name);
        // A v2 XRD of namespaced XRs offers no claims, so it has no Offered condition.
        const offered = !spec.claimNames || condition(live, 'Offered')?.status === 'True';
        if (condition(live, 'Established')?.status !== 'True' || !offered) return undefined;
        for (const kind of [spec.names.kind, ...(spec.claimNames ? [spec.claimNames.kind] : [])]) await api.paths.resource(`${spec.group}/${version}`, kind);
        return live;
      },
      timeoutMs,
    );
  }
}

export const GROUP = 'anynines.com/v1';
export const claimOf = (kind: string, name: string, spec: Record<string, unknown>): Obj => ({
  apiVersion: GROUP,
  kind,
  metadata: { name, namespace: NS },
  spec,
});

/** The XR of a claim (once bound) and its composed resources (the resourceRefs, once all exist). */
export async function composed(api: Api, kind: string, name: string, count = 1, namespace = NS): Promise<{ claim: Obj; xr: Obj; resources: Obj[] }> {
  return waitFor(`${kind} ${namespace}/${name} bound to an XR with ${count} composed resource(s)`, async () => {
    const claim = await api.get(GROUP, kind, name, namespace);
    const ref = claim?.spec?.resourceRef as { apiVersion: string; kind: string; name: string } | undefined;
    if (!ref) return undefined;
    const xr = await api.get(ref.apiVersion, ref.kind, ref.name);
    const refs = (xr?.spec?.resourceRefs ?? []) as Array<{ apiVersion: string; kind: string; name: string }>;
    if (!xr || refs.length < count) return undefined;
    const resources: Obj[] = [];
    for (const r of refs) {
      const o = await api.get(r.apiVersion, r.kind, r.name);
      if (!o) return undefined;
      resources.push(o);
    }
    return { claim: claim!, xr, resources };
  });
}

/** The spec of a live CRD without what the API server adds by default (conversion strategy None). */
export function crdSpec(crd: Obj | Record<string, any>): Record<string, any> {
  const spec = JSON.parse(JSON.stringify(crd.spec)) as Record<string, any>;
  if (spec.conversion?.strategy === 'None' && Object.keys(spec.conversion).length === 1) delete spec.conversion;
  return spec;
}
