// startCluster(): a real, throwaway Kubernetes control plane on loopback — etcd, kube-apiserver and
// kube-controller-manager built from the Go wrapper modules in tools/ (see build.ts) — in its own
// temporary folder, with TLS, RBAC, an admin client certificate and service-account tokens.
import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { probe } from './probe.js';
import { ensureBinaries, type RealInfraBinaries } from './build.js';
import { type ClusterPki, createClusterPki } from './pki.js';
import type { CrossplaneVersion } from './build.js';
import type { CrossplaneHarness, CrossplaneOptions } from './crossplane-harness.js';
import { startCrossplane } from './crossplane-start.js';
import { RUN_ID_ENV, type RegisteredProcess, type RegistryEntry, killRegistered, registryDir, removeEntry, writeEntry } from './registry.js';
import { HarnessProcess } from './_process.js';
import { NODE_CONTROLLERS, type NodeOptions, type RealNode, startNode } from './node.js';
import { freePort, logTail, sleep } from './_harness.js';

export { freePort, logTail };

/** Flags for a component, merged over the defaults by flag name (without `--`); `null` removes a default flag. */
export type ComponentArgs = Readonly<Record<string, string | null>>;

/**
 * kube-apiserver's Go runtime by default: `GOGC=400` (collect when the heap has grown 4× past the live data, not 1×),
 * at most `GOMEMLIMIT=1GiB` (nearer than that, Go collects as often as it must). A cluster here is started, filled with
 * CRDs and objects in seconds and thrown away; with Go's default, about 30 % of kube-apiserver's CPU in that burst was
 * garbage collection (a CPU profile of the sandbox's control plane during `pulumi up`), on 2 cores shared with
 * everything else. These took the sandbox's three API servers from 15.9 to about 10.9 CPU-seconds over Crossplane's
 * start and `pulumi up`; the control plane's then held about 1.0 GB instead of 0.6 GB (docs/sandbox.md). Without the
 * limit it grew to 1.4 GB for the same CPU. StartClusterOptions.apiServerEnv overrides either.
 */
export const DEFAULT_API_SERVER_ENV: Readonly<Record<string, string>> = { GOGC: '400', GOMEMLIMIT: '1GiB' };

/** The controllers kube-controller-manager runs by default. */
export const DEFAULT_CONTROLLERS: readonly string[] = [
  'namespace-controller',
  'garbage-collector-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
];

export interface StartClusterOptions {
  /** Cluster name: a DNS label. Used in the folder name, the kubeconfig context and the CA's name. */
  readonly name: string;
  /** Extra or overriding kube-apiserver flags, e.g. `{ 'feature-gates': 'X=true' }`. */
  readonly apiServerArgs?: ComponentArgs;
  /**
   * Environment of kube-apiserver, over DEFAULT_API_SERVER_ENV, e.g. `{ GOMEMLIMIT: '2GiB' }` (a soft memory limit for its
   * Go runtime) or `{ GOGC: '100' }` (Go's default collector). @default DEFAULT_API_SERVER_ENV
   */
  readonly apiServerEnv?: Readonly<Record<string, string>>;
  /** Extra or overriding kube-controller-manager flags, e.g. `{ controllers: '*' }`. */
  readonly controllerManagerArgs?: ComponentArgs;
  /** Extra or overriding etcd flags. */
  readonly etcdArgs?: ComponentArgs;
  /** Progress lines of the harness (not the components' own logs, which go to files in `dir/logs`). @default none */
  readonly log?: (line: string) => void;
  /** Binaries to run. @default ensureBinaries() (builds them on a cold cache) */
  readonly binaries?: RealInfraBinaries;
  /** Time allowed for each component to become ready. @default 120000 */
  readonly readyTimeoutMs?: number;
  /** Folder in which the cluster's temporary folder is created. @default os.tmpdir() */
  readonly baseDir?: string;
  /**
   * Also start real Crossplane on the cluster (`cluster.crossplane`): its registry, core with the External
   * package runtime, function-patch-and-transform and provider-kubernetes (see crossplane.ts). A version
   * line, or options. Needs root (network namespaces). With `{ runtime: 'pods' }` Crossplane runs as pods on the
   * node instead (needs `nodes: 1` and `node: { kubeletConfig: clusterDnsKubeletConfig() }`; crossplane-pods.ts).
   * @default no Crossplane
   */
  readonly crossplane?: CrossplaneVersion | Omit<CrossplaneOptions, 'log'>;
  /**
   * Real nodes (`cluster.node`): 1 adds containerd + runc, kubelet, kube-proxy and kube-scheduler, the CNI
   * bridge, a local image registry and the controllers pods need (see node.ts). One node per host at a
   * time (a host-wide lock). Needs root and the Debian packages containerd, runc, containernetworking-plugins.
   * @default 0
   */
  readonly nodes?: 0 | 1;
  /** Options of the node, when `nodes` is 1. */
  readonly node?: NodeOptions;
}

/** Ports of a running cluster (all on 127.0.0.1). */
export interface ClusterPorts {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiServer: number;
  readonly controllerManager: number;
}

export interface RealCluster {
  readonly name: string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** The cluster's temporary folder (certificates, etcd data, kubeconfig, logs/). Removed by stop(). */
  readonly dir: string;
  /** Admin kubeconfig (client certificate in `system:masters`). */
  readonly kubeconfigPath: string;
  /** A ready admin KubeConfig. */
  readonly kubeConfig: KubeConfig;
  /** PEM of the cluster CA (signs the serving and client certificates). */
  readonly caPem: string;
  /** The service-account token issuer (`--service-account-issuer`), also the default token audience. */
  readonly serviceAccountIssuer: string;
  readonly ports: ClusterPorts;
  /** Log files of the components. */
  readonly logs: Readonly<Record<'etcd' | 'kube-apiserver' | 'kube-controller-manager', string>>;
  /** PIDs of the running components. */
  pids(): Readonly<Record<'etcd' | 'kube-apiserver' | 'kube-controller-manager', number | undefined>>;
  /** Ends every process (SIGTERM, then SIGKILL after a grace period) and removes `dir`. Idempotent. */
  stop(): Promise<void>;
  /** Stops kube-apiserver and starts it again on the same port and etcd; resolves when /readyz is ok. */
  restartApiServer(): Promise<void>;
  /** A KubeConfig for this cluster that authenticates with a bearer token (e.g. from the TokenRequest API). */
  kubeconfigForToken(token: string, namespace?: string): KubeConfig;
  /** Real Crossplane on this cluster, when started with the `crossplane` option. */
  readonly crossplane?: CrossplaneHarness;
  /** The real node, when started with `nodes: 1`. */
  readonly node?: RealNode;
}

/** A component failed to start; the message carries the tail of its log. */
export class ClusterStartError extends Error {
  constructor(
    readonly cluster: string,
    readonly component: string,
    readonly logTail: string,
    detail: string,
  ) {
    super(`realinfra: cluster "${cluster}": ${component} ${detail}\n--- last lines of ${component}'s log ---\n${logTail}`);
    this.name = 'ClusterStartError';
  }
}

const NAME_RE = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';
type Proc = HarnessProcess<ComponentName>;

// ---------------------------------------------------------------------------------------------
// registry & exit hook

const live = new Set<ClusterImpl>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.killSync();
  });
  // Node ends the process on these signals without emitting 'exit'. When nobody else handles the
  // signal, end the clusters and re-raise it so the default behaviour (exit) still happens; when the
  // program has its own handler (e.g. `klutch-kit cluster start` stopping gracefully), leave it alone.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      if (process.listenerCount(sig) > 1) return;
      for (const c of live) c.killSync();
      process.removeListener(sig, handler);
      process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

function argsList(defaults: Record<string, string>, overrides: ComponentArgs | undefined): string[] {
  const merged: Record<string, string | null> = { ...defaults, ...(overrides ?? {}) };
  return Object.entries(merged)
    .filter((e): e is [string, string] => e[1] !== null)
    .map(([k, v]) => `--${k.replace(/^--/, '')}=${v}`);
}

// ---------------------------------------------------------------------------------------------
// the cluster

class ClusterImpl implements RealCluster {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly serviceAccountIssuer: string;
  readonly logs: RealCluster['logs'];
  kubeConfig!: KubeConfig;
  caPem = '';
  crossplane?: CrossplaneHarness;
  node?: RealNode & { killSync(): void };
  private pki!: ClusterPki;
  private readonly procs: Partial<Record<ComponentName, Proc>> = {};
  private readonly registryFile: string;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private apiServerArgs: string[] = [];

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly ports: ClusterPorts,
    private readonly bins: RealInfraBinaries,
    private readonly opts: StartClusterOptions,
  ) {
    this.server = `https://127.0.0.1:${ports.apiServer}`;
    this.serviceAccountIssuer = this.server;
    this.kubeconfigPath = path.join(dir, 'kubeconfig');
    const logDir = path.join(dir, 'logs');
    fs.mkdirSync(logDir, { recursive: true });
    this.logs = {
      etcd: path.join(logDir, 'etcd.log'),
      'kube-apiserver': path.join(logDir, 'kube-apiserver.log'),
      'kube-controller-manager': path.join(logDir, 'kube-controller-manager.log'),
    };
    this.registryFile = path.join(registryDir(), `${process.pid}-${path.basename(dir)}.json`);
    this.register();
  }

  private get log(): (line: string) => void {
    return this.opts.log ?? (() => {});
  }

  private get readyTimeoutMs(): number {
    return this.opts.readyTimeoutMs ?? 120_000;
  }

  pids(): ReturnType<RealCluster['pids']> {
    return {
      etcd: this.procs.etcd?.exit ? undefined : this.procs.etcd?.pid,
      'kube-apiserver': this.procs['kube-apiserver']?.exit ? undefined : this.procs['kube-apiserver']?.pid,
      'kube-controller-manager': this.procs['kube-controller-manager']?.exit ? undefined : this.procs['kube-controller-manager']?.pid,
    };
  }

  private register(): void {
    const processes: RegisteredProcess[] = Object.values(this.procs)
      .filter((p): p is Proc => p !== undefined && p.pid !== undefined && !p.exit)
      .map((p) => ({ component: p.component, pid: p.pid!, binary: p.binary }));
    const entry: RegistryEntry = { ownerPid: process.pid, runId: process.env[RUN_ID_ENV], name: this.name, dir: this.dir, processes };
    writeEntry(this.registryFile, entry);
  }

  private tls(): https.RequestOptions {
    return { ca: this.pki.caPem, cert: this.pki.adminCertPem, key: this.pki.adminKeyPem };
  }

  private spawn(component: ComponentName, binary: string, args: string[], env?: Readonly<Record<string, string>>): Proc {
    const p = new HarnessProcess({
      component,
      binary,
      args,
      logFile: this.logs[component],
      cwd: this.dir,
      ...(env ? { env: { ...process.env, ...env } } : {}),
    });
    this.procs[component] = p;
    this.register();
    return p;
  }

  /** Polls `check` until it returns true; fails early when the process exits, or on timeout. */
  private async waitFor(p: Proc, what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + this.readyTimeoutMs;
    let lastError = '';
    for (;;) {
      if (p.exit) {
        throw new ClusterStartError(this.name, p.component, logTail(p.logFile), `${p.describeExit()} before ${what}`);
      }
      try {
        if (await check()) return;
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new ClusterStartError(
          this.name,
          p.component,
          logTail(p.logFile),
          `did not get ready within ${this.readyTimeoutMs / 1000} s (waiting for ${what}${lastError ? `; last error: ${lastError}` : ''})`,
        );
      }
      await sleep(200);
    }
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    const el = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    this.pki = await createClusterPki(path.join(this.dir, 'pki'), this.name);
    this.caPem = this.pki.caPem;
    this.writeKubeconfig();

    // etcd
    const etcdUrl = `http://127.0.0.1:${this.ports.etcdClient}`;
    const peerUrl = `http://127.0.0.1:${this.ports.etcdPeer}`;
    const etcd = this.spawn(
      'etcd',
      this.bins.etcd,
      argsList(
        {
          name: this.name,
          'data-dir': path.join(this.dir, 'etcd'),
          'listen-client-urls': etcdUrl,
          'advertise-client-urls': etcdUrl,
          'listen-peer-urls': peerUrl,
          'initial-advertise-peer-urls': peerUrl,
          'initial-cluster': `${this.name}=${peerUrl}`,
          'unsafe-no-fsync': 'true',
          'log-level': 'warn',
        },
        this.opts.etcdArgs,
      ),
    );
    await this.waitFor(etcd, `GET ${etcdUrl}/health`, async () => {
      const r = await probe(`${etcdUrl}/health`);
      return r.status === 200 && /"health":\s*"true"/.test(r.body);
    });
    this.log(`${this.name}: etcd ready on ${etcdUrl} (${el()})`);

    // kube-apiserver
    this.apiServerArgs = argsList(
      {
        'etcd-servers': etcdUrl,
        'bind-address': '127.0.0.1',
        'advertise-address': '127.0.0.1',
        'secure-port': String(this.ports.apiServer),
        'tls-cert-file': this.pki.servingCert,
        'tls-private-key-file': this.pki.servingKey,
        'client-ca-file': this.pki.caCert,
        'cert-dir': path.join(this.dir, 'apiserver-certs'),
        'authorization-mode': 'Node,RBAC',
        'service-account-issuer': this.serviceAccountIssuer,
        'service-account-key-file': this.pki.serviceAccountPublicKey,
        'service-account-signing-key-file': this.pki.serviceAccountKey,
        'service-cluster-ip-range': '10.0.0.0/24',
        'endpoint-reconciler-type': 'none',
        'allow-privileged': 'true',
        profiling: 'false',
        // logs, exec and port-forward: the API server calls kubelet at the node IP with the admin certificate.
        ...(this.opts.nodes
          ? { 'kubelet-client-certificate': this.pki.adminCert, 'kubelet-client-key': this.pki.adminKey, 'kubelet-preferred-address-types': 'InternalIP' }
          : {}),
      },
      this.opts.apiServerArgs,
    );
    await this.startApiServer();
    this.log(`${this.name}: kube-apiserver ready on ${this.server} (${el()})`);

    // kube-controller-manager
    const kcm = this.spawn(
      'kube-controller-manager',
      this.bins.kubeControllerManager,
      argsList(
        {
          kubeconfig: this.kubeconfigPath,
          'authentication-kubeconfig': this.kubeconfigPath,
          'authorization-kubeconfig': this.kubeconfigPath,
          'bind-address': '127.0.0.1',
          'secure-port': String(this.ports.controllerManager),
          'cert-dir': path.join(this.dir, 'controller-manager-certs'),
          'leader-elect': 'false',
          controllers: [...DEFAULT_CONTROLLERS, ...(this.opts.nodes ? NODE_CONTROLLERS : [])].join(','),
          'service-account-private-key-file': this.pki.serviceAccountKey,
          'root-ca-file': this.pki.caCert,
          'use-service-account-credentials': 'false',
          'cluster-name': this.name,
        },
        this.opts.controllerManagerArgs,
      ),
    );
    const kcmUrl = `https://127.0.0.1:${this.ports.controllerManager}/healthz`;
    await this.waitFor(kcm, `GET ${kcmUrl}`, async () => (await probe(kcmUrl, { rejectUnauthorized: false })).status === 200);
    // The serviceaccount controller creates the `default` ServiceAccount: proof that controllers run.
    await this.waitFor(kcm, 'the "default" ServiceAccount in namespace "default" (created by the serviceaccount controller)', async () => {
      const r = await probe(`${this.server}/api/v1/namespaces/default/serviceaccounts/default`, this.tls());
      return r.status === 200;
    });
    this.log(`${this.name}: kube-controller-manager ready (${el()})`);
  }

  /** Starts the node (after the control plane): containerd, kubelet, kube-proxy, kube-scheduler. */
  async startNode(): Promise<void> {
    this.node = await startNode(
      { name: this.name, dir: this.dir, server: this.server, kubeConfig: this.kubeConfig, pki: this.pki, log: this.log, readyTimeoutMs: this.readyTimeoutMs },
      this.opts.node,
    );
  }

  private async startApiServer(): Promise<void> {
    const api = this.spawn('kube-apiserver', this.bins.kubeApiServer, this.apiServerArgs, { ...DEFAULT_API_SERVER_ENV, ...this.opts.apiServerEnv });
    await this.waitFor(api, `GET ${this.server}/readyz`, async () => {
      const r = await probe(`${this.server}/readyz`, this.tls());
      return r.status === 200;
    });
  }

  private writeKubeconfig(): void {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const ctx = `klutch-kit-${this.name}`;
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': ctx,
      clusters: [{ name: ctx, cluster: { server: this.server, 'certificate-authority-data': b64(this.pki.caPem) } }],
      users: [{ name: `${ctx}-admin`, user: { 'client-certificate-data': b64(this.pki.adminCertPem), 'client-key-data': b64(this.pki.adminKeyPem) } }],
      contexts: [{ name: ctx, context: { cluster: ctx, user: `${ctx}-admin` } }],
      preferences: {},
    };
    fs.writeFileSync(this.kubeconfigPath, toYaml(doc), { mode: 0o600 });
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    this.kubeConfig = kc;
  }

  kubeconfigForToken(token: string, namespace?: string): KubeConfig {
    if (typeof token !== 'string' || token.trim() === '') {
      throw new Error(`RealCluster.kubeconfigForToken: token must be a non-empty string, got ${JSON.stringify(token)}`);
    }
    const ctx = `klutch-kit-${this.name}-token`;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: `klutch-kit-${this.name}`, server: this.server, caData: Buffer.from(this.caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: ctx, token }],
      contexts: [{ name: ctx, cluster: `klutch-kit-${this.name}`, user: ctx, ...(namespace ? { namespace } : {}) }],
      currentContext: ctx,
    });
    return kc;
  }

  async restartApiServer(): Promise<void> {
    if (this.stopped) throw new Error(`RealCluster "${this.name}": restartApiServer() after stop()`);
    const old = this.procs['kube-apiserver'];
    // Short grace: with watches open, kube-apiserver's graceful shutdown can take 10 s or more; etcd keeps the state.
    if (old) await old.stop(2000);
    const t0 = Date.now();
    await this.startApiServer();
    this.log(`${this.name}: kube-apiserver restarted (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }

  stop(): Promise<void> {
    if (!this.stopping) this.stopping = this.doStop(true);
    return this.stopping;
  }

  private async doStop(removeDir: boolean): Promise<void> {
    this.stopped = true;
    const grace = 5000;
    await this.node?.stop();
    await this.crossplane?.stop();
    await Promise.all([this.procs['kube-controller-manager']?.stop(grace), this.procs['kube-apiserver']?.stop(grace)]);
    await this.procs.etcd?.stop(grace);
    live.delete(this);
    removeEntry(this.registryFile);
    if (removeDir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.log(`${this.name}: stopped${removeDir ? '' : ` (folder kept: ${this.dir})`}`);
  }

  /** Synchronous last resort (process exit): SIGKILL everything, remove the folder. */
  killSync(): void {
    this.node?.killSync();
    this.crossplane?.killSync();
    for (const p of Object.values(this.procs)) p?.killSync();
    for (const p of Object.values(this.procs)) {
      if (p?.pid !== undefined) killRegistered({ component: p.component, pid: p.pid, binary: p.binary });
    }
    removeEntry(this.registryFile);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Cleanup after a failed start; with KLUTCH_KIT_KEEP_FAILED_CLUSTERS=1 the folder (logs, certs) is kept. */
  async abort(): Promise<boolean> {
    const keep = process.env['KLUTCH_KIT_KEEP_FAILED_CLUSTERS'] === '1';
    if (!this.stopping) this.stopping = this.doStop(!keep);
    await this.stopping;
    return keep;
  }
}

function portConflict(e: unknown): boolean {
  return e instanceof ClusterStartError && /address already in use|bind: address/i.test(e.logTail);
}

/**
 * Starts etcd, kube-apiserver and kube-controller-manager for one throwaway cluster and waits until
 * all three are ready. Several clusters can run side by side; call `stop()` on each.
 */
export async function startCluster(opts: StartClusterOptions): Promise<RealCluster> {
  if (!opts || typeof opts.name !== 'string' || !NAME_RE.test(opts.name)) {
    throw new Error(`startCluster: name must be a DNS label of at most 40 characters (lowercase letters, digits, "-"), got ${JSON.stringify(opts?.name)}`);
  }
  if (opts.nodes !== undefined && opts.nodes !== 0 && opts.nodes !== 1) {
    throw new Error(`startCluster: nodes must be 0 or 1 (one node per host: it changes host-wide state), got ${JSON.stringify(opts.nodes)}`);
  }
  for (const [k, v] of Object.entries(opts.apiServerEnv ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof v !== 'string') {
      throw new Error(`startCluster: apiServerEnv.${k} must be an environment variable name with a string value, got ${JSON.stringify(v)}`);
    }
  }
  const bins = opts.binaries ?? (await ensureBinaries({ log: opts.log }));
  for (const [k, v] of Object.entries(bins)) {
    if (!fs.existsSync(v)) throw new Error(`startCluster: binary ${k} not found at ${v}; run \`npm run realinfra\``);
  }
  installExitHook();
  const baseDir = opts.baseDir ?? os.tmpdir();
  for (let attempt = 1; ; attempt++) {
    const dir = fs.mkdtempSync(path.join(baseDir, `klutch-kit-${opts.name}-`));
    const ports: ClusterPorts = {
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      apiServer: await freePort(),
      controllerManager: await freePort(),
    };
    const cluster = new ClusterImpl(opts.name, dir, ports, bins, opts);
    live.add(cluster);
    try {
      await cluster.start();
      if (opts.nodes) await cluster.startNode();
      if (opts.crossplane !== undefined) {
        const xp = typeof opts.crossplane === 'string' ? { version: opts.crossplane } : opts.crossplane;
        cluster.crossplane = await startCrossplane(cluster, { ...xp, log: opts.log });
      }
      return cluster;
    } catch (e) {
      const kept = await cluster.abort();
      if (kept && e instanceof Error) e.message += `\n(folder kept for inspection: ${dir})`;
      if (attempt < 3 && portConflict(e)) {
        opts.log?.(`${opts.name}: port conflict, retrying with new ports`);
        continue;
      }
      throw e;
    }
  }
}
