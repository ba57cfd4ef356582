/**
 * What a Crossplane harness is, whichever way Crossplane runs (`runtime: 'processes'`, crossplane.ts, or
 * `'pods'`, crossplane-pods.ts): its options, the harness interface, its error and the names both use, the
 * base both ways extend (the start's order, the package waits, the registry pushes, the stop) and the strategy
 * interface crossplane-start.ts picks one of.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE } from '../../constructs/crossplane/index.js';
import { isNotFound } from '../core/client.js';
import { applyManifests } from './apply.js';
import { type CrossplaneBinaries, type CrossplaneVersion, type UpstreamSource, upstreamSource } from './build.js';
import { clientOf } from './client.js';
import type { RealCluster } from './cluster.js';
import { forgetAtExit, sleep } from './_harness.js';
import { RUN_ID_ENV, type RegisteredProcess, registryDir, removeEntry, writeEntry } from './registry.js';
import { packageYamlFromDir, pushPackageYaml, pushXpkgFile } from './xpkg.js';

export const CROSSPLANE_NAMESPACE = 'crossplane-system';
/** Prefixes the harness's ImageConfigs rewrite to its registry. */
export const REWRITTEN_PREFIXES: readonly string[] = ['xpkg.crossplane.io/crossplane-contrib', 'xpkg.upbound.io/crossplane-contrib'];

/**
 * Environment of Crossplane core in both runtimes: its client-go informers list, then watch, instead of one streaming
 * watch-list (client-go 0.35 turns `WatchListClient` on by default).
 *
 * Why: Crossplane starts an informer for each XR and claim kind the moment its CRD is Established. A watch-list request
 * then is served from the API server's watch cache, which for a CRD that old is still initializing; Kubernetes 1.35
 * answers `429` with `Retry-After: 1` (ResilientWatchCacheInitialization, GA) and client-go waits that second. A list
 * (read from etcd while the cache initializes) followed by a watch from its resourceVersion is answered at once. With 11
 * XRDs, Crossplane's XR and claim controllers are started after about 4 s instead of 12 s, and a claim made right after
 * the packages are Healthy is composed that much sooner (measured: docs/sandbox.md "Where the time goes").
 * Nothing else changes: the same objects are listed and watched.
 */
export const CROSSPLANE_CORE_ENV: Readonly<Record<string, string>> = { KUBE_FEATURE_WatchListClient: 'false' };

/** provider-kubernetes' command-line flags for `opts`: `--poll` and providerArgs (both runtimes). */
export function providerKubernetesArgs(opts: Pick<CrossplaneOptions, 'providerPollInterval' | 'providerArgs'>): string[] {
  return [`--poll=${opts.providerPollInterval ?? '10s'}`, ...(opts.providerArgs ?? [])];
}

/** Processes of the Crossplane harness. */
export type CrossplaneComponent = 'forwarder' | 'namespace-forwarder' | 'registry' | 'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes';

/**
 * How Crossplane runs: `processes` (core, function and provider as local processes, the `External` package
 * runtime played by the harness; any cluster) or `pods` (core from our CrossplaneInstall construct, the function
 * and provider as the Deployments Crossplane's default package runtime creates; a cluster with a node started
 * with `clusterDnsKubeletConfig()`, see crossplane-pods.ts).
 */
export type CrossplaneRuntime = 'processes' | 'pods';

export interface CrossplaneOptions {
  /** Crossplane core release line. */
  readonly version: CrossplaneVersion;
  /** Where Crossplane and its packages run. @default 'processes' */
  readonly runtime?: CrossplaneRuntime;
  /**
   * Install `Function` function-patch-and-transform, `Provider` provider-kubernetes (both synthesized by
   * our constructs with their default packages) and an InjectedIdentity `ProviderConfig` named `default`,
   * and wait until they are healthy. With false, apply your own (named `function-patch-and-transform` and
   * `provider-kubernetes`); the harness serves them as soon as Crossplane creates their revisions. With
   * `runtime: 'pods'`, Crossplane's runtime runs them, and the harness puts providerPollInterval and providerArgs on
   * the DeploymentRuntimeConfig `provider-kubernetes` (the control plane's) once it exists.
   * @default true
   */
  readonly install?: boolean;
  /** provider-kubernetes `--poll` (how often an Object's target is re-read). @default '10s' */
  readonly providerPollInterval?: string;
  /** Extra provider-kubernetes flags, e.g. `['--debug']`. @default none */
  readonly providerArgs?: readonly string[];
  /** Extra Crossplane core flags. @default none */
  readonly coreArgs?: readonly string[];
  /** Progress lines. @default the cluster's log */
  readonly log?: (line: string) => void;
  /** Binaries. @default ensureCrossplaneBinaries(version) (builds them on a cold cache) */
  readonly binaries?: CrossplaneBinaries;
  /** Time allowed for each component to become ready. @default 180000 */
  readonly readyTimeoutMs?: number;
  /**
   * Called once the registry serves and Crossplane's CRDs, namespace and ImageConfigs are applied, before Crossplane
   * core starts (which waits for it): the moment to push the packages Crossplane is to install and to apply objects of
   * its kinds, beside the rest of the start (e.g. `pulumi up`). Its error fails the start. Only with `runtime:
   * 'processes'` (with `'pods'` the registry address is known before the start: `podsRegistry(cluster)`).
   * @default none
   */
  readonly beforeCore?: (prepared: { readonly registry: string }) => Promise<void>;
}

/** The kinds of Crossplane package. */
export type PackageKind = 'Function' | 'Provider' | 'Configuration';

/** What a package image is pushed from. */
export type PackageSource =
  /** The full `package.yaml` (the package's `crossplane.yaml` followed by its objects, `---` separated). */
  | { readonly packageYaml: string }
  /** A folder with `crossplane.yaml` and the package's objects in `*.yaml` files (searched recursively). */
  | { readonly dir: string }
  /** An `.xpkg` file (OCI image tarball). */
  | { readonly xpkgFile: string };

/** Real Crossplane on a harness cluster (`cluster.crossplane`). */
export interface CrossplaneHarness {
  /** How Crossplane runs (CrossplaneOptions.runtime). */
  readonly runtime: CrossplaneRuntime;
  /** The release line (`2.3` or `1.20`). */
  readonly version: CrossplaneVersion;
  /** The exact versions running, e.g. `{ crossplane: 'v2.3.4', functionPatchAndTransform: 'v0.10.8', … }`. */
  readonly versions: Readonly<Record<'crossplane' | 'functionPatchAndTransform' | 'providerKubernetes', string>>;
  /** `127.0.0.1:<port>`: the OCI registry, the same address from the host and from Crossplane. Plain HTTP. */
  readonly registry: string;
  /** `crossplane-system`. */
  readonly namespace: string;
  /** Folder with the harness's certificates, caches, sockets and logs (inside the cluster's folder). */
  readonly dir: string;
  readonly logs: Readonly<Record<CrossplaneComponent, string>>;
  /**
   * The network namespaces the harness runs processes in, as the kernel names them (`net:[4026532291]`, the target of
   * `/proc/<pid>/ns/net`): Crossplane core's and provider-kubernetes', then the function's. They end with their
   * processes (stop()). Empty with `runtime: 'pods'`.
   */
  readonly networkNamespaces: readonly string[];
  /**
   * The loopback address (of 127.231.0.0/16) where the host reaches the ports of Crossplane's namespace: core's metrics
   * (8090) and health (8091), provider-kubernetes' metrics (8080), health (8081) and webhook (9443, the address of the
   * `provider-kubernetes` ExternalName Service kube-apiserver calls). Empty with `runtime: 'pods'`.
   */
  readonly namespaceAddress: string;
  /** PIDs of the running processes (provider-kubernetes only once its revision is installed). */
  pids(): Readonly<Record<CrossplaneComponent, number | undefined>>;
  /**
   * Pushes a package image to the registry. `ref` is `<repository>:<tag>` (e.g. `klutch/catalogue:v0.1.0`)
   * or a full reference on `registry`. Resolves to the full reference (`127.0.0.1:<port>/<repository>:<tag>`),
   * which a `Configuration`/`Function`/`Provider` can name directly (or through `rewriteImages`).
   */
  pushPackage(ref: string, source: PackageSource): Promise<string>;
  /**
   * Adds an ImageConfig rewriting `prefix` (e.g. `xpkg.example.com/klutch`) to `<registry>/<path of prefix>`,
   * so objects naming `prefix/...` install from the local registry unchanged. Returns the rewritten prefix.
   */
  rewriteImages(prefix: string): Promise<string>;
  /** Applies our constructs' Function, Provider and `default` ProviderConfig and waits until they are healthy. */
  installDefaultPackages(): Promise<void>;
  /** Waits until the package (`Function`, `Provider` or `Configuration`) is Installed and Healthy; errors name what is missing. */
  waitForPackage(kind: PackageKind, name: string, timeoutMs?: number): Promise<void>;
  /** Ends every process (the namespaces end with them). Idempotent. */
  stop(): Promise<void>;
  /** Synchronous last resort (process exit). */
  killSync(): void;
}

/** A Crossplane harness component failed to start; the message names it and carries its log tail. */
export class CrossplaneStartError extends Error {
  constructor(
    readonly component: CrossplaneComponent | 'packages',
    readonly logTail: string,
    detail: string,
  ) {
    super(`realinfra: crossplane: ${component} ${detail}${logTail ? `\n--- last lines of ${component}'s log ---\n${logTail}` : ''}`);
    this.name = 'CrossplaneStartError';
  }
}

/** A Crossplane object as the harness reads it. */
export type XpObject = KubernetesObject & {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { conditions?: XpCondition[] };
};
/** A condition of a Crossplane object's status. */
export interface XpCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export const conditionOf = (o: XpObject | undefined, type: string): XpCondition | undefined => o?.status?.conditions?.find((c) => c.type === type);

/** The upstream module sources of what the harness runs (their release is the version it reports). */
export interface CrossplaneSources {
  readonly core: UpstreamSource;
  readonly fn: UpstreamSource;
  readonly pk: UpstreamSource;
}

/** The components with a log of their own in a package's failure: core, or the package's own runtime. */
export type PackageRuntimeComponent = 'crossplane' | 'function-patch-and-transform' | 'provider-kubernetes';

const PACKAGE_PLURALS: Readonly<Record<string, string>> = { Function: 'functions', Provider: 'providers', Configuration: 'configurations' };
const tagOf = (ref: string) => ref.slice(ref.lastIndexOf(':') + 1);

/**
 * What both ways of running Crossplane share (processes in crossplane.ts, pods in crossplane-pods.ts): the folder and
 * logs, the registry entry, the start's order (sources, `startCrossplane()` of the way, the default packages), the
 * waits with their errors, ImageConfigs, package pushes, and an idempotent stop. A way fills in the named steps.
 */
export abstract class CrossplaneHarnessBase<B extends CrossplaneBinaries = CrossplaneBinaries> implements CrossplaneHarness {
  abstract readonly runtime: CrossplaneRuntime;
  readonly namespace = CROSSPLANE_NAMESPACE;
  readonly dir: string;
  readonly logs: Readonly<Record<CrossplaneComponent, string>>;
  registry = '';
  versions: CrossplaneHarness['versions'] = { crossplane: '', functionPatchAndTransform: '', providerKubernetes: '' };
  networkNamespaces: readonly string[] = [];
  namespaceAddress = '';
  protected readonly registryFile: string;
  /** When the start began (progress lines and figures count from it). */
  protected t0 = Date.now();
  private stopping: Promise<void> | undefined;

  /** `registryLog`: where the registry logs, when it is not the harness's own (the node's). */
  constructor(
    protected readonly cluster: RealCluster,
    readonly version: CrossplaneVersion,
    protected readonly bins: B,
    protected readonly opts: CrossplaneOptions,
    registryLog?: string,
  ) {
    this.dir = path.join(cluster.dir, 'crossplane');
    const logDir = path.join(this.dir, 'logs');
    fs.mkdirSync(logDir, { recursive: true });
    const l = (c: CrossplaneComponent) => path.join(logDir, `${c}.log`);
    this.logs = {
      forwarder: l('forwarder'),
      'namespace-forwarder': l('namespace-forwarder'),
      registry: registryLog ?? l('registry'),
      crossplane: l('crossplane'),
      'function-patch-and-transform': l('function-patch-and-transform'),
      'provider-kubernetes': l('provider-kubernetes'),
    };
    this.registryFile = path.join(registryDir(), `${process.pid}-${path.basename(cluster.dir)}-crossplane.json`);
  }

  // ---- the steps a way fills in -------------------------------------------------------------

  /** Everything up to Crossplane core ready, with the registry and the ImageConfigs of REWRITTEN_PREFIXES. */
  protected abstract startCrossplane(sources: CrossplaneSources): Promise<void>;
  abstract pids(): ReturnType<CrossplaneHarness['pids']>;
  abstract installDefaultPackages(): Promise<void>;
  /** The host processes to record for the teardown of leftovers. */
  protected abstract registeredProcesses(): RegisteredProcess[];
  /** `<address>/<repository>:<tag>` the harness pushes `repoTag` to (the registry as the host reaches it). */
  protected abstract pushAddress(repoTag: string): string;
  /** The error to fail a wait with when a process it depends on has ended, else undefined. */
  protected abstract exitedBefore(component: CrossplaneComponent | 'packages', what: string): CrossplaneStartError | undefined;
  /** The log lines a timed-out wait for `component` shows ('' when it has none). */
  protected abstract logTailOf(component: CrossplaneComponent | 'packages'): Promise<string>;
  /** Ends what the way started (the base then forgets the harness). */
  protected abstract stopAll(): Promise<void>;
  /** Synchronous last resort of stopAll() (process exit). */
  protected abstract killAll(): void;
  /** `; package runtime: …` when the way's package runtime has a problem to report in a timeout. */
  protected runtimeProblem(): string {
    return '';
  }
  /** Whether a package's `Healthy` condition counts (set by the runtime that runs it). */
  protected get runtimeReportsHealth(): boolean {
    return true;
  }
  /** '' when a package Installed (and Healthy) is served; else what is still missing. */
  protected async notServedYet(_kind: PackageKind, _name: string): Promise<string> {
    return '';
  }
  /** After `waitForPackage` saw the package ready. */
  protected async afterPackageReady(_kind: PackageKind, _name: string): Promise<void> {}
  /** After start() installed the default packages. */
  protected onPackagesHealthy(): void {}
  /** At the end of start() with `install: false`. */
  protected withoutDefaultPackages(): void {}

  // ---- the start ----------------------------------------------------------------------------

  /** Starts Crossplane the way's way; with `install`, then the default packages, until they are healthy. */
  async start(): Promise<void> {
    this.t0 = Date.now();
    const sources = await this.upstreamSources();
    await this.startCrossplane(sources);
    if (this.opts.install ?? true) {
      await this.installDefaultPackages();
      this.onPackagesHealthy();
      this.log(`Function, Provider and ProviderConfig installed and healthy (${this.el()})`);
    } else {
      this.withoutDefaultPackages();
    }
  }

  /** The sources of core, function and provider; the constructs' default packages must name their releases. */
  private async upstreamSources(): Promise<CrossplaneSources> {
    const [core, fn, pk] = await Promise.all([
      upstreamSource(`crossplane-${this.version}`),
      upstreamSource('function-patch-and-transform'),
      upstreamSource('provider-kubernetes'),
    ]);
    this.versions = { crossplane: core.version, functionPatchAndTransform: fn.version, providerKubernetes: pk.version };
    if (tagOf(PATCH_AND_TRANSFORM_PACKAGE) !== fn.version || tagOf(PROVIDER_KUBERNETES_PACKAGE) !== pk.version) {
      throw new Error(
        `realinfra: crossplane: the constructs' default packages (${PATCH_AND_TRANSFORM_PACKAGE}, ${PROVIDER_KUBERNETES_PACKAGE}) ` +
          `are not the versions the harness builds (${fn.version}, ${pk.version})`,
      );
    }
    return { core, fn, pk };
  }

  // ---- shared -------------------------------------------------------------------------------

  protected log(line: string): void {
    this.opts.log?.(`${this.cluster.name}: crossplane${this.runtime === 'pods' ? ' (pods)' : ''}: ${line}`);
  }

  /** Seconds since the start, for the progress lines. */
  protected el(): string {
    return `${((Date.now() - this.t0) / 1000).toFixed(1)} s`;
  }

  protected get timeoutMs(): number {
    return this.opts.readyTimeoutMs ?? 180_000;
  }

  protected get kc() {
    return this.cluster.kubeConfig;
  }

  /** Whether stop() was called. */
  protected get stopRequested(): boolean {
    return this.stopping !== undefined;
  }

  protected async get(pathName: string): Promise<XpObject | undefined> {
    try {
      return await clientOf(this.kc).request<XpObject>('GET', pathName);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Records the way's processes, so a teardown of leftovers finds them. */
  protected register(): void {
    writeEntry(this.registryFile, {
      ownerPid: process.pid,
      runId: process.env[RUN_ID_ENV],
      name: `${this.cluster.name}-crossplane`,
      dir: this.dir,
      processes: this.registeredProcesses(),
    });
  }

  /** Polls `check` every 500 ms until it is true; fails naming `component` when a process ends or the time is up. */
  protected async waitFor(component: CrossplaneComponent | 'packages', what: string, check: () => Promise<boolean>, timeoutMs = this.timeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      const exited = this.exitedBefore(component, what);
      if (exited) throw exited;
      try {
        if (await check()) return;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new CrossplaneStartError(
          component,
          await this.logTailOf(component),
          `did not get ready within ${timeoutMs / 1000} s (waiting for ${what}${last ? `; last error: ${last}` : ''}${this.runtimeProblem()})`,
        );
      }
      await sleep(500);
    }
  }

  async waitForPackage(kind: PackageKind, name: string, timeoutMs = this.timeoutMs): Promise<void> {
    const plural = Object.hasOwn(PACKAGE_PLURALS, kind) ? PACKAGE_PLURALS[kind] : undefined;
    if (!plural) throw new Error(`CrossplaneHarness.waitForPackage: kind ${JSON.stringify(kind)} must be Function, Provider or Configuration`);
    let last = 'not found';
    try {
      await this.waitFor(
        'packages',
        `${kind} ${name} Installed and Healthy`,
        async () => {
          const o = await this.get(`/apis/pkg.crossplane.io/v1/${plural}/${encodeURIComponent(name)}`);
          if (!o) {
            last = 'not found';
            return false;
          }
          const installed = conditionOf(o, 'Installed');
          const healthy = conditionOf(o, 'Healthy');
          last = `Installed=${installed?.status ?? '?'}${installed?.message ? ` (${installed.message})` : ''}, Healthy=${healthy?.status ?? '?'}${healthy?.message ? ` (${healthy.message})` : ''}`;
          if (installed?.status !== 'True' || (this.runtimeReportsHealth && healthy?.status !== 'True')) return false;
          const missing = await this.notServedYet(kind, name);
          if (missing) last = missing;
          return missing === '';
        },
        timeoutMs,
      );
    } catch (e) {
      if (!(e instanceof CrossplaneStartError)) throw e;
      const component: PackageRuntimeComponent | 'packages' =
        kind !== 'Configuration' && (name === 'function-patch-and-transform' || name === 'provider-kubernetes') ? name : 'packages';
      throw new CrossplaneStartError(
        component,
        await this.logTailOf(component === 'packages' ? 'crossplane' : component),
        `${kind} ${name} did not become Installed and Healthy within ${timeoutMs / 1000} s: ${last}${this.runtimeProblem()}`,
      );
    }
    await this.afterPackageReady(kind, name);
  }

  async rewriteImages(prefix: string): Promise<string> {
    if (typeof prefix !== 'string' || !/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+$/.test(prefix)) {
      throw new Error(`CrossplaneHarness.rewriteImages: prefix ${JSON.stringify(prefix)} must be "<registry host>/<path>", e.g. "xpkg.example.com/klutch"`);
    }
    const rewritten = `${this.registry}${prefix.slice(prefix.indexOf('/'))}`;
    const name = `klutch-kit-harness-${prefix.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`.slice(0, 63).replace(/-$/, '');
    await applyManifests(
      this.kc,
      [
        {
          apiVersion: 'pkg.crossplane.io/v1beta1',
          kind: 'ImageConfig',
          metadata: { name },
          spec: { matchImages: [{ type: 'Prefix', prefix }], rewriteImage: { prefix: rewritten } },
        } as KubernetesObject,
      ],
      { fieldManager: 'klutch-kit-harness', continueOnError: false },
    );
    return rewritten;
  }

  async pushPackage(ref: string, source: PackageSource): Promise<string> {
    // a tag may have capitals (OCI: [A-Za-z0-9_][A-Za-z0-9_.-]*; Klutch's v2 branch tags provider-anynines KLT-877)
    const ok =
      typeof ref === 'string' && (/^[a-z0-9._/:-]+(@sha256:[a-f0-9]{64})?$/.test(ref) || /^[a-z0-9._/:-]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(ref));
    if (!ok || !ref.includes(':')) {
      throw new Error(
        `CrossplaneHarness.pushPackage: ref ${JSON.stringify(ref)} must be "<repository>:<tag>" (e.g. "klutch/catalogue:v0.1.0") or "${this.registry}/<repository>:<tag>"`,
      );
    }
    const repoTag = ref.startsWith(`${this.registry}/`) ? ref.slice(this.registry.length + 1) : ref;
    const badSource = () => new Error(`CrossplaneHarness.pushPackage: source ${JSON.stringify(source)} must be { packageYaml }, { dir } or { xpkgFile }`);
    if (!source || typeof source !== 'object') throw badSource();
    if ('xpkgFile' in source) {
      await pushXpkgFile(this.bins.crane, this.pushAddress(repoTag), source.xpkgFile);
      return `${this.registry}/${repoTag}`;
    }
    const yaml = 'packageYaml' in source ? source.packageYaml : 'dir' in source ? packageYamlFromDir(source.dir) : undefined;
    if (typeof yaml !== 'string' || yaml.trim() === '') throw badSource();
    await pushPackageYaml(this.bins.crane, this.pushAddress(repoTag), yaml, path.join(this.dir, 'images'));
    return `${this.registry}/${repoTag}`;
  }

  // ---- the stop -----------------------------------------------------------------------------

  stop(): Promise<void> {
    this.stopping ??= this.stopAndForget();
    return this.stopping;
  }

  private async stopAndForget(): Promise<void> {
    await this.stopAll();
    forgetAtExit(this);
    removeEntry(this.registryFile);
    this.log('stopped');
  }

  killSync(): void {
    this.killAll();
    removeEntry(this.registryFile);
    forgetAtExit(this);
  }
}

/** One way of running Crossplane, a strategy of startCrossplane (crossplane-start.ts). */
export interface CrossplaneStrategy {
  readonly runtime: CrossplaneRuntime;
  /**
   * Checks what the way needs of the cluster and the host, ensures its binaries (building them on a cold cache), and
   * makes the harness, not started yet. Fails naming what is missing and how to get it, before anything runs.
   */
  prepare(cluster: RealCluster, opts: CrossplaneOptions): Promise<CrossplaneHarnessBase>;
}
