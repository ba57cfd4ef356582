/**
 * What a Crossplane harness is, whichever way Crossplane runs (`runtime: 'processes'`, crossplane.ts, or
 * `'pods'`, crossplane-pods.ts): its options, the harness interface, its error and the names both use.
 */
import type { CrossplaneBinaries, CrossplaneVersion } from './build.js';

export const CROSSPLANE_NAMESPACE = 'crossplane-system';
/** Prefixes the harness's ImageConfigs rewrite to its registry. */
export const REWRITTEN_PREFIXES: readonly string[] = ['xpkg.crossplane.io/crossplane-contrib', 'xpkg.upbound.io/crossplane-contrib'];

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
  /** Extra provider-kubernetes flags, e.g. `['--enable-watches']`. @default none */
  readonly providerArgs?: readonly string[];
  /** Extra Crossplane core flags. @default none */
  readonly coreArgs?: readonly string[];
  /** Progress lines. @default the cluster's log */
  readonly log?: (line: string) => void;
  /** Binaries. @default ensureCrossplaneBinaries(version) (builds them on a cold cache) */
  readonly binaries?: CrossplaneBinaries;
  /** Time allowed for each component to become ready. @default 180000 */
  readonly readyTimeoutMs?: number;
}

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
  waitForPackage(kind: 'Function' | 'Provider' | 'Configuration', name: string, timeoutMs?: number): Promise<void>;
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
