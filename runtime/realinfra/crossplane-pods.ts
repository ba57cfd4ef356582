// Crossplane as pods on the harness's real node, the `runtime: 'pods'` strategy of startCrossplane() (crossplane-start.ts,
// `startCrossplane(cluster, { version, runtime: 'pods' })`): the production shape, where the host-process harness
// (crossplane.ts) plays the package runtime itself.
//
//  - Images, written without Docker from the binaries the harness builds (runtime/image/crossplane.ts): Crossplane
//    core (binary, CRDs, webhook configurations), and function-patch-and-transform and provider-kubernetes as
//    package images that are their own runtime image (package.yaml layer + binary entrypoint). Pushed to the node's
//    registry, which the node's pods reach at <node IP>:<port> through a forwarder (the registry itself stays on
//    127.0.0.1); containerd pulls from the same address.
//  - Crossplane core and its RBAC manager: the objects OUR CrossplaneInstall construct renders from Crossplane's own
//    chart (InstallMethod.helmTemplate(), helm built from tools/pulumi/kubernetes, the chart from the Crossplane module at the
//    release's version), with only the image repository set. `crossplane core init` in the init container creates
//    the CRDs, the Lock, the TLS CA and Secrets and the webhook configurations, as on any cluster.
//  - The Function and the Provider our constructs synthesize (the Provider with the DeploymentRuntimeConfig the
//    control plane ships, ServiceAccount `provider-kubernetes`), applied unchanged; ImageConfigs rewrite
//    `xpkg.crossplane.io/crossplane-contrib` to the registry. Crossplane's DEFAULT package runtime creates their
//    Deployments, Services and TLS Secrets; it reaches the function through its headless Service's DNS name, which
//    the cluster DNS (cluster-dns.ts, CoreDNS) answers.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import {
  CrossplaneInstall,
  CrossplaneVersion as ConstructsCrossplaneVersion,
  DeploymentRuntimeConfig,
  Function as XpFunction,
  InstallMethod,
  KubernetesProviderConfig,
  PROVIDER_KUBERNETES_PACKAGE,
  Provider,
} from '../../constructs/crossplane/index.js';
import { crossplaneCoreImage, packageRuntimeImage, pullSize } from '../image/crossplane.js';
import { type ImageIndex, writeLayout } from '../image/oci.js';
import { pushLayoutImage } from '../image/registry.js';
import { HarnessProcess } from './_process.js';
import { applyManifests, waitForCrdsEstablished } from './apply.js';
import { type CrossplaneBinaries, type CrossplaneVersion, type PodsBinaries, ensureCrossplaneBinaries, ensurePodsBinaries } from './build.js';
import { clientOf } from './client.js';
import type { RealCluster } from './cluster.js';
import { CLUSTER_DNS, clusterDnsKubeletConfig, nodeHasClusterDns, startClusterDns } from './cluster-dns.js';
import {
  CROSSPLANE_CORE_ENV,
  CROSSPLANE_NAMESPACE,
  type CrossplaneComponent,
  type CrossplaneHarness,
  CrossplaneHarnessBase,
  type CrossplaneOptions,
  type CrossplaneSources,
  CrossplaneStartError,
  type CrossplaneStrategy,
  type PackageKind,
  REWRITTEN_PREFIXES,
  type XpObject,
  conditionOf,
  providerKubernetesArgs,
} from './crossplane-harness.js';
import { FORWARDER_JS, sleep } from './_harness.js';
import { type RegisteredProcess, killRegistered } from './registry.js';
import { packageYamlFromDir } from './xpkg.js';

type Obj = XpObject;

/** Where the runtime binary is in each package image (upstream's paths: function SDK images and provider images). */
const FUNCTION_BINARY_PATH = '/function';
const PROVIDER_BINARY_PATH = '/usr/local/bin/provider';

/** The DeploymentRuntimeConfig (and ServiceAccount) of provider-kubernetes, as the control plane ships it. */
export const PROVIDER_KUBERNETES_RUNTIME = 'provider-kubernetes';

/** Figures of a pods start, for the docs. */
export interface CrossplanePodsFigures {
  /** Image build time (ms) and compressed size (bytes) per image. */
  readonly images: Readonly<Record<'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes', { buildMs: number; bytes: number }>>;
  /** ms from start to the cluster DNS Ready, Crossplane's Deployment Available, and the packages Healthy. */
  readonly clusterDnsReadyMs: number;
  readonly crossplaneAvailableMs: number;
  readonly packagesHealthyMs?: number;
}

/** The extra surface of a pods harness (`runtime: 'pods'`). */
export interface CrossplanePodsHarness extends CrossplaneHarness {
  readonly runtime: 'pods';
  /** The images pushed (`<registry>/<repository>:<tag>@<digest>`). */
  readonly images: Readonly<Record<'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes' | 'coredns', string>>;
  /** The objects CrossplaneInstall rendered and the harness applied. */
  readonly installObjects: readonly KubernetesObject[];
  readonly figures: CrossplanePodsFigures;
  /** The running pods of a component (Crossplane core, or the Deployment Crossplane made for a package). */
  podsOf(component: 'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes'): Promise<Obj[]>;
}

const cond = conditionOf;

/** Label selectors of each component's pods. */
const SELECTORS: Record<'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes', string> = {
  crossplane: 'app=crossplane',
  'function-patch-and-transform': 'pkg.crossplane.io/function=function-patch-and-transform',
  'provider-kubernetes': 'pkg.crossplane.io/provider=provider-kubernetes',
};

/** The Function, the Provider (with its DeploymentRuntimeConfig) and the `default` ProviderConfig our constructs synthesize. */
export function podsPackageObjects(opts: { providerArgs?: readonly string[] } = {}): { packages: Obj[]; providerConfig: Obj } {
  const chart = new Chart(new App(), 'harness');
  XpFunction.patchAndTransform(chart, 'Fn', { name: 'function-patch-and-transform' });
  new Provider(chart, 'Provider', {
    package: PROVIDER_KUBERNETES_PACKAGE,
    name: 'provider-kubernetes',
    runtimeConfig: new DeploymentRuntimeConfig(chart, 'ProviderKubernetesRuntime', {
      name: PROVIDER_KUBERNETES_RUNTIME,
      serviceAccountName: PROVIDER_KUBERNETES_RUNTIME,
      ...(opts.providerArgs && opts.providerArgs.length > 0 ? { args: [...opts.providerArgs] } : {}),
    }),
  });
  const pc = new Chart(new App(), 'pc');
  new KubernetesProviderConfig(pc, 'Pc', { name: 'default' });
  return { packages: chart.toJson() as Obj[], providerConfig: (pc.toJson() as Obj[])[0]! };
}

/**
 * `<node IP>:<port>`: the registry address of a pods harness on `cluster` (`CrossplaneHarness.registry`), known before
 * it starts: the node's registry port on the node IP, where the harness's forwarder listens.
 */
export function podsRegistry(cluster: RealCluster): string {
  if (!cluster?.node) throw new Error(`podsRegistry: cluster ${JSON.stringify(cluster?.name)} has no node`);
  return `${cluster.node.ip}:${Number(cluster.node.registry.split(':')[1])}`;
}

/** Crossplane as pods: the strategy of `runtime: 'pods'` (see the header). */
class PodsHarness extends CrossplaneHarnessBase<CrossplaneBinaries & PodsBinaries> implements CrossplanePodsHarness {
  readonly runtime = 'pods' as const;
  images: CrossplanePodsHarness['images'] = { crossplane: '', 'function-patch-and-transform': '', 'provider-kubernetes': '', coredns: '' };
  installObjects: KubernetesObject[] = [];
  figures: CrossplanePodsFigures = {
    images: {
      crossplane: { buildMs: 0, bytes: 0 },
      'function-patch-and-transform': { buildMs: 0, bytes: 0 },
      'provider-kubernetes': { buildMs: 0, bytes: 0 },
    },
    clusterDnsReadyMs: 0,
    crossplaneAvailableMs: 0,
  };
  private forwarder: HarnessProcess<CrossplaneComponent> | undefined;
  private hostsDir = '';
  /** With `install: false`: true once provider-kubernetes' args are on its DeploymentRuntimeConfig. */
  private providerArgsApplied: Promise<boolean> | undefined;

  constructor(cluster: RealCluster, version: CrossplaneVersion, bins: CrossplaneBinaries & PodsBinaries, opts: CrossplaneOptions) {
    super(cluster, version, bins, opts, cluster.node!.logs.registry);
  }

  /** Host PIDs are not the harness's: the components run as containers under the node's containerd. */
  pids(): ReturnType<CrossplaneHarness['pids']> {
    return {
      forwarder: this.forwarder?.pid,
      'namespace-forwarder': undefined,
      registry: this.cluster.node?.pids().registry,
      crossplane: undefined,
      'function-patch-and-transform': undefined,
      'provider-kubernetes': undefined,
    };
  }

  protected registeredProcesses(): RegisteredProcess[] {
    return this.forwarder?.pid !== undefined ? [{ component: 'forwarder', pid: this.forwarder.pid, binary: process.execPath }] : [];
  }

  /** Pushes go through the node registry's loopback address; pods pull from the node IP (`registry`). */
  protected pushAddress(repoTag: string): string {
    return `${this.cluster.node!.registry}/${repoTag}`;
  }

  protected exitedBefore(_component: CrossplaneComponent | 'packages', what: string): CrossplaneStartError | undefined {
    return this.forwarder?.exit ? new CrossplaneStartError('forwarder', '', `${this.forwarder.describeExit()} before ${what}`) : undefined;
  }

  protected async logTailOf(component: CrossplaneComponent | 'packages'): Promise<string> {
    return component === 'packages' || component === 'forwarder' || component === 'namespace-forwarder' || component === 'registry'
      ? ''
      : await this.podLogTail(component);
  }

  async podsOf(component: 'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes'): Promise<Obj[]> {
    const list = await clientOf(this.kc).request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/pods`, {
      query: { labelSelector: SELECTORS[component] },
    });
    return list.items.filter((p) => !p.metadata?.deletionTimestamp);
  }

  /** The last lines of a component's pod log (also written to `logs[component]`). */
  private async podLogTail(component: 'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes', lines = 30): Promise<string> {
    try {
      const pods = await this.podsOf(component);
      if (pods.length === 0) return '(no pod)';
      const pod = pods[0]!;
      const container = component === 'crossplane' ? 'crossplane' : 'package-runtime';
      const statuses = (pod.status?.['containerStatuses'] ?? []) as Array<{ name: string; state?: Record<string, unknown> }>;
      const text = await clientOf(this.kc).request<unknown>('GET', `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/pods/${pod.metadata!.name}/log`, {
        query: { container, tailLines: String(lines) },
      });
      const body = typeof text === 'string' ? text : JSON.stringify(text);
      fs.writeFileSync(this.logs[component], body);
      return `${body.replace(/\s+$/, '')}\n(pod ${pod.metadata!.name}: ${JSON.stringify(statuses.map((s) => ({ [s.name]: s.state })))})`;
    } catch (e) {
      return `(no log: ${(e as Error).message})`;
    }
  }

  /** Writes an image into a throwaway layout and pushes it through the node registry's loopback address. */
  private async push(name: string, idx: ImageIndex, repoTag: string): Promise<string> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xp-image-'));
    const layout = path.join(tmp, 'layout');
    try {
      writeLayout(layout, { [name]: idx });
      const r = await pushLayoutImage(layout, name, this.pushAddress(repoTag));
      return `${this.registry}/${repoTag}@${r.digest}`;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  // ---- the start, in steps ------------------------------------------------------------------

  /**
   * The registry at the node IP, the cluster DNS (while the images are written), the images, Crossplane core from the
   * CrossplaneInstall construct until it is Available, then the ImageConfigs.
   */
  protected async startCrossplane(src: CrossplaneSources): Promise<void> {
    await this.startRegistryForwarder();
    const dns = this.startDns();
    const refs = await this.buildAndPushImages(src);
    this.images = { ...refs, coredns: '' };
    await this.installCore(src.core);
    this.images = { ...this.images, coredns: (await dns).image };
    for (const prefix of REWRITTEN_PREFIXES) await this.rewriteImages(prefix);
  }

  /** The registry at the node IP: a forwarder to the node's registry on loopback, and containerd told it is plain HTTP. */
  private async startRegistryForwarder(): Promise<void> {
    const node = this.cluster.node!;
    const regPort = Number(node.registry.split(':')[1]);
    this.registry = podsRegistry(this.cluster);
    this.forwarder = new HarnessProcess<CrossplaneComponent>({
      component: 'forwarder',
      binary: process.execPath,
      args: ['-e', FORWARDER_JS, JSON.stringify([{ lh: node.ip, lp: regPort, th: '127.0.0.1', tp: regPort }])],
      logFile: this.logs.forwarder,
      cwd: this.dir,
    });
    this.register();
    await this.waitFor('forwarder', 'its "ready" line', async () => /^ready$/m.test(fs.readFileSync(this.logs.forwarder, 'utf8')), 30_000);
    this.hostsDir = path.join(node.dir, 'containerd', 'certs.d', this.registry);
    fs.mkdirSync(this.hostsDir, { recursive: true });
    fs.writeFileSync(
      path.join(this.hostsDir, 'hosts.toml'),
      [`server = "http://${this.registry}"`, `[host."http://${this.registry}"]`, '  capabilities = ["pull", "resolve"]', '  skip_verify = true', ''].join('\n'),
    );
    this.log(`registry ${this.registry} (forwarder to ${node.registry}) (${this.el()})`);
  }

  /** The cluster DNS (CoreDNS), started now and awaited once Crossplane is Available. */
  private startDns(): Promise<{ image: string }> {
    const dns = startClusterDns(this.cluster, this.bins.coredns, { timeoutMs: this.timeoutMs }).then((r) => {
      this.figures = { ...this.figures, clusterDnsReadyMs: Date.now() - this.t0 };
      this.log(`cluster DNS (CoreDNS) Ready at ${CLUSTER_DNS.ip} (${this.el()})`);
      return r;
    });
    dns.catch(() => undefined);
    return dns;
  }

  /** Crossplane core's image and the two package images that are their own runtime image, written and pushed. */
  private async buildAndPushImages(src: CrossplaneSources): Promise<Record<'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes', string>> {
    const timed = (f: () => ImageIndex) => {
      const t = Date.now();
      const idx = f();
      return { idx, ms: Date.now() - t };
    };
    const core = timed(() =>
      crossplaneCoreImage({
        binary: this.bins.crossplane,
        crdsDir: path.join(src.core.dir, 'cluster', 'crds'),
        webhookConfigurationsDir: path.join(src.core.dir, 'cluster', 'webhookconfigurations'),
        version: src.core.version,
      }),
    );
    const fn = timed(() =>
      packageRuntimeImage({
        title: 'function-patch-and-transform',
        version: src.fn.version,
        packageYaml: packageYamlFromDir(path.join(src.fn.dir, 'package')),
        binary: this.bins.functionPatchAndTransform,
        binaryPath: FUNCTION_BINARY_PATH,
      }),
    );
    const pk = timed(() =>
      packageRuntimeImage({
        title: 'provider-kubernetes',
        version: src.pk.version,
        packageYaml: packageYamlFromDir(path.join(src.pk.dir, 'package')),
        binary: this.bins.providerKubernetes,
        binaryPath: PROVIDER_BINARY_PATH,
      }),
    );
    this.figures = {
      ...this.figures,
      images: {
        crossplane: { buildMs: core.ms, bytes: pullSize(core.idx) },
        'function-patch-and-transform': { buildMs: fn.ms, bytes: pullSize(fn.idx) },
        'provider-kubernetes': { buildMs: pk.ms, bytes: pullSize(pk.idx) },
      },
    };
    const [coreRef, fnRef, pkRef] = await Promise.all([
      this.push('crossplane', core.idx, `crossplane/crossplane:${src.core.version}`),
      this.push('function-patch-and-transform', fn.idx, `crossplane-contrib/function-patch-and-transform:${src.fn.version}`),
      this.push('provider-kubernetes', pk.idx, `crossplane-contrib/provider-kubernetes:${src.pk.version}`),
    ]);
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    this.log(
      `images written and pushed (${this.el()}): crossplane ${mb(pullSize(core.idx))} in ${core.ms} ms, ` +
        `function-patch-and-transform ${mb(pullSize(fn.idx))} in ${fn.ms} ms, provider-kubernetes ${mb(pullSize(pk.idx))} in ${pk.ms} ms`,
    );
    return { crossplane: coreRef, 'function-patch-and-transform': fnRef, 'provider-kubernetes': pkRef };
  }

  /** Crossplane core from the CrossplaneInstall construct (Crossplane's chart at the release's version), until Available. */
  private async installCore(coreSrc: CrossplaneSources['core']): Promise<void> {
    const chartDir = path.join(this.dir, 'chart', 'crossplane');
    fs.rmSync(path.dirname(chartDir), { recursive: true, force: true });
    fs.cpSync(path.join(coreSrc.dir, 'cluster', 'charts', 'crossplane'), chartDir, { recursive: true });
    for (const f of fs.readdirSync(chartDir, { recursive: true }) as string[])
      fs.chmodSync(path.join(chartDir, f), fs.statSync(path.join(chartDir, f)).isDirectory() ? 0o755 : 0o644);
    const chartYaml = parseYaml(fs.readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const release = coreSrc.version.replace(/^v/, '');
    // What Crossplane's release build does to the chart (the source says 0.0.1).
    fs.writeFileSync(path.join(chartDir, 'Chart.yaml'), toYaml({ ...chartYaml, version: release, appVersion: release }));
    const app = new App();
    const chart = new Chart(app, 'crossplane');
    const install = new CrossplaneInstall(chart, 'Crossplane', {
      version: ConstructsCrossplaneVersion.of(release),
      namespace: CROSSPLANE_NAMESPACE,
      installMethod: InstallMethod.helmTemplate({ chart: chartDir, helmExecutable: this.bins.helm }),
      ...(this.opts.coreArgs && this.opts.coreArgs.length > 0 ? { args: [...this.opts.coreArgs] } : {}),
      values: { image: { repository: `${this.registry}/crossplane/crossplane` }, extraEnvVarsCrossplane: { ...CROSSPLANE_CORE_ENV } },
    });
    this.installObjects = chart.toJson() as KubernetesObject[];
    await applyManifests(this.kc, this.installObjects, { fieldManager: 'klutch-kit-harness', continueOnError: false });
    this.log(`CrossplaneInstall (${install.installMethod.kind}) applied: ${this.installObjects.length} objects (${this.el()})`);
    await this.waitFor('crossplane', 'the crossplane and crossplane-rbac-manager Deployments Available', async () => {
      for (const d of ['crossplane', 'crossplane-rbac-manager']) {
        const o = await this.get(`/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/${d}`);
        if (cond(o, 'Available')?.status !== 'True' || Number(o?.status?.['readyReplicas'] ?? 0) < 1) return false;
      }
      return true;
    });
    this.figures = { ...this.figures, crossplaneAvailableMs: Date.now() - this.t0 };
    this.log(`crossplane ${coreSrc.version} Available (${this.el()})`);
  }

  protected onPackagesHealthy(): void {
    this.figures = { ...this.figures, packagesHealthyMs: Date.now() - this.t0 };
  }

  protected withoutDefaultPackages(): void {
    this.providerArgsWhenRuntimeConfigAppears();
  }

  /** provider-kubernetes' flags (`--poll`, providerArgs) as the DeploymentRuntimeConfig's container args. */
  private providerRuntimeArgs(): string[] {
    return providerKubernetesArgs(this.opts);
  }

  /**
   * With `install: false` the Provider and its DeploymentRuntimeConfig are someone else's (e.g. `pulumi up`): as the
   * process runtime passes `--poll` and providerArgs to the provider it runs, the harness applies them (field manager
   * klutch-kit-harness, only the package-runtime container's args) to the DeploymentRuntimeConfig
   * `provider-kubernetes` (the name the control plane ships) once it exists; Crossplane's runtime then rolls them out.
   */
  private providerArgsWhenRuntimeConfigAppears(): void {
    const path_ = `/apis/pkg.crossplane.io/v1beta1/deploymentruntimeconfigs/${PROVIDER_KUBERNETES_RUNTIME}`;
    const args = this.providerRuntimeArgs();
    this.providerArgsApplied = (async () => {
      while (!this.stopRequested) {
        if (await this.get(path_).catch(() => undefined)) {
          await applyManifests(
            this.kc,
            [
              {
                apiVersion: 'pkg.crossplane.io/v1beta1',
                kind: 'DeploymentRuntimeConfig',
                metadata: { name: PROVIDER_KUBERNETES_RUNTIME },
                spec: { deploymentTemplate: { spec: { selector: {}, template: { spec: { containers: [{ name: 'package-runtime', args }] } } } } },
              } as KubernetesObject,
            ],
            { fieldManager: 'klutch-kit-harness', continueOnError: false },
          );
          this.log(`provider-kubernetes args ${args.join(' ')} applied to DeploymentRuntimeConfig ${PROVIDER_KUBERNETES_RUNTIME} (${this.el()})`);
          return true;
        }
        await sleep(500);
      }
      return false;
    })().catch((e: unknown) => {
      this.log(`applying provider-kubernetes args to DeploymentRuntimeConfig ${PROVIDER_KUBERNETES_RUNTIME} failed: ${(e as Error).message}`);
      return false;
    });
  }

  async installDefaultPackages(): Promise<void> {
    const { packages, providerConfig } = podsPackageObjects({ providerArgs: this.providerRuntimeArgs() });
    await applyManifests(this.kc, packages, { fieldManager: 'klutch-kit-harness', continueOnError: false });
    await Promise.all([this.waitForPackage('Function', 'function-patch-and-transform'), this.waitForPackage('Provider', 'provider-kubernetes')]);
    await waitForCrdsEstablished(this.kc, ['providerconfigs.kubernetes.crossplane.io'], this.timeoutMs);
    await applyManifests(this.kc, [providerConfig], { fieldManager: 'klutch-kit-harness', continueOnError: false });
  }

  /** With install: false, the provider's flags are on its runtime config (if it has the one the control plane ships). */
  protected async afterPackageReady(kind: PackageKind, name: string): Promise<void> {
    if (kind === 'Provider' && name === 'provider-kubernetes' && this.providerArgsApplied) {
      if (await this.get(`/apis/pkg.crossplane.io/v1beta1/deploymentruntimeconfigs/${PROVIDER_KUBERNETES_RUNTIME}`)) await this.providerArgsApplied;
    }
  }

  /**
   * Removes what the harness deployed, so the node runs none of it: Crossplane core first (so nothing re-creates the
   * package Deployments), then every Deployment in crossplane-system and the cluster DNS; waits until their pods are gone.
   */
  protected async stopAll(): Promise<void> {
    await this.providerArgsApplied;
    const client = clientOf(this.kc);
    const del = (p: string) => client.request('DELETE', p, { query: { propagationPolicy: 'Foreground', gracePeriodSeconds: 1 } }).catch(() => undefined);
    const podsLeft = async (ns: string, selector?: string) =>
      (
        await client
          .request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`, selector ? { query: { labelSelector: selector } } : {})
          .catch(() => ({ items: [] }))
      ).items.length;
    try {
      if (this.cluster.node && (await this.get(`/api/v1/namespaces/${CROSSPLANE_NAMESPACE}`))) {
        for (const c of ['crossplane', 'function-patch-and-transform', 'provider-kubernetes'] as const) await this.podLogTail(c, 200);
        await del(`/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/crossplane`);
        await del(`/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/crossplane-rbac-manager`);
        const deadline = Date.now() + 60_000;
        while ((await podsLeft(CROSSPLANE_NAMESPACE, 'app in (crossplane,crossplane-rbac-manager)')) > 0 && Date.now() < deadline) await sleep(500);
        const ds = await client.request<{ items: Obj[] }>('GET', `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments`);
        for (const d of ds.items) await del(`/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/${d.metadata!.name}`);
        await del(`/apis/apps/v1/namespaces/${CLUSTER_DNS.namespace}/deployments/${CLUSTER_DNS.name}`);
        while (((await podsLeft(CROSSPLANE_NAMESPACE)) > 0 || (await podsLeft(CLUSTER_DNS.namespace, 'k8s-app=kube-dns')) > 0) && Date.now() < deadline)
          await sleep(500);
      }
    } catch (e) {
      this.log(`removing the Crossplane pods failed (${(e as Error).message}); the node's stop deletes them`);
    }
    await this.forwarder?.stop(5000);
    if (this.hostsDir) fs.rmSync(this.hostsDir, { recursive: true, force: true });
  }

  protected killAll(): void {
    this.forwarder?.killSync();
    if (this.forwarder?.child.pid !== undefined) killRegistered({ component: 'forwarder', pid: this.forwarder.child.pid, binary: process.execPath });
    if (this.hostsDir) fs.rmSync(this.hostsDir, { recursive: true, force: true });
  }
}

/**
 * Crossplane as pods (`runtime: 'pods'`) on a cluster with a node (see the header); refuses a cluster without a node, or
 * whose kubelet does not point pods at the cluster DNS, before it builds anything.
 */
export const crossplaneAsPods: CrossplaneStrategy = {
  runtime: 'pods',
  async prepare(cluster: RealCluster, opts: CrossplaneOptions): Promise<CrossplaneHarnessBase> {
    if (!cluster?.node) {
      throw new Error(
        `startCrossplane: runtime "pods" needs a cluster with a node: startCluster({ nodes: 1, node: { kubeletConfig: clusterDnsKubeletConfig() } })`,
      );
    }
    if (!nodeHasClusterDns(cluster.node.dir)) {
      throw new Error(
        `startCrossplane: runtime "pods" needs the node's kubelet to point pods at the cluster DNS (${CLUSTER_DNS.ip}): ` +
          `start the cluster with startCluster({ nodes: 1, node: { kubeletConfig: ${JSON.stringify(clusterDnsKubeletConfig())} } }) (clusterDnsKubeletConfig())`,
      );
    }
    const xpBins = opts.binaries ?? (await ensureCrossplaneBinaries(opts.version, { log: opts.log }));
    const podBins = await ensurePodsBinaries({ log: opts.log });
    for (const [k, v] of Object.entries({ ...xpBins, ...podBins })) {
      if (!fs.existsSync(v)) throw new Error(`startCrossplane: binary ${k} not found at ${v}; run \`npm run realinfra -- --crossplane --pods\``);
    }
    return new PodsHarness(cluster, opts.version, { ...xpBins, ...podBins }, opts);
  },
};
