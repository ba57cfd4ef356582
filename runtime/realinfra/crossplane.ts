// Crossplane as processes, the `runtime: 'processes'` strategy of startCrossplane() (crossplane-start.ts): real
// Crossplane on top of a harness cluster — Crossplane core (2.3 or 1.20) with the
// `External` package runtime, function-patch-and-transform (mTLS over a unix socket) and provider-kubernetes
// as local processes, plus an OCI registry (crane) for the package images the harness builds from the
// upstream module sources. Crossplane's package manager installs the Function and Provider objects our
// constructs synthesize, unchanged: ImageConfigs rewrite `xpkg.crossplane.io/crossplane-contrib` (and
// `xpkg.upbound.io/crossplane-contrib`) to the local registry. The harness plays the package runtime: it
// runs the processes, publishes the function's endpoint and the runtime's health in the revisions' status.
//
// Every listener stays on loopback, and no root is needed: processes that bind all interfaces run in network
// namespaces of their own, made by an ordinary user through user namespaces (userns.ts); the one that must talk to
// the cluster (core, provider) reaches the host through two forwarders joined by unix sockets, and the host reaches
// its ports on a loopback address of the harness's own. The API server and the registry stay on the host's 127.0.0.1.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { App, Chart } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { Function as XpFunction, KubernetesProviderConfig, PROVIDER_KUBERNETES_PACKAGE, Provider } from '../../constructs/crossplane/index.js';
import { applyManifests, readManifests, waitForCrdsEstablished } from './apply.js';
import { ensureCrossplaneBinaries } from './build.js';
import { UNIX_PATH_MAX, nsenterArgv, pickLoopbackAddress, unshareArgv, userNamespaceProblem } from './userns.js';
import { type RegisteredProcess, killRegistered } from './registry.js';
import { HarnessProcess } from './_process.js';
import { isConflict, type ResourceRef } from '../core/client.js';
import { Informer, onAny } from '../core/informer.js';
import { clientOf } from './client.js';
import { probe } from './probe.js';
import { installedCrds, revisionInstalled, ServeLoop } from './package-runtime.js';
import type { RealCluster } from './cluster.js';
import { FORWARDER_JS, freePort, logTail } from './_harness.js';
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

const execFileAsync = promisify(execFile);

const tail = (file: string) => logTail(file, 30);

async function openssl(args: string[], what: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { timeout: 30_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(`realinfra: crossplane: openssl failed while making the ${what}: ${(err.stderr ?? err.message).trim()}`, { cause: e });
  }
}

const PKI_CNF = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[function]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost,IP:127.0.0.1
[webhook]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:provider-kubernetes.crossplane-system.svc,DNS:provider-kubernetes.crossplane-system.svc.cluster.local,DNS:localhost
`;

interface TlsDir {
  readonly dir: string;
  readonly crt: string;
  readonly key: string;
}

/** One CA; a client certificate for Crossplane; server certificates for the function and the provider's webhook. */
async function createPki(dir: string): Promise<{ caPem: string; crossplane: TlsDir; fn: TlsDir; webhook: TlsDir }> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const cnf = path.join(dir, 'openssl.cnf');
  fs.writeFileSync(cnf, PKI_CNF);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = path.join(dir, 'ca.crt');
  const caKey = path.join(dir, 'ca.key');
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-config',
      cnf,
      '-extensions',
      'ca',
      ...ec,
      '-keyout',
      caKey,
      '-out',
      ca,
      '-days',
      '3650',
      '-subj',
      '/CN=klutch-kit-crossplane-ca',
    ],
    'Crossplane CA',
  );
  const caPem = fs.readFileSync(ca, 'utf8');
  const leaf = async (name: string, ext: string, cn: string): Promise<TlsDir> => {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    const crt = path.join(d, 'tls.crt');
    const key = path.join(d, 'tls.key');
    await openssl(
      [
        'req',
        '-x509',
        '-new',
        '-config',
        cnf,
        '-extensions',
        ext,
        ...ec,
        '-CA',
        ca,
        '-CAkey',
        caKey,
        '-keyout',
        key,
        '-out',
        crt,
        '-days',
        '825',
        '-subj',
        `/CN=${cn}`,
      ],
      `${name} certificate`,
    );
    // tls.crt carries the chain (Crossplane takes a webhook's caBundle from the tls-server Secret's tls.crt).
    fs.writeFileSync(crt, fs.readFileSync(crt, 'utf8') + caPem);
    fs.writeFileSync(path.join(d, 'ca.crt'), caPem);
    return { dir: d, crt, key };
  };
  const [crossplane, fn, webhook] = await Promise.all([
    leaf('crossplane-client', 'client', 'crossplane'),
    leaf('function-patch-and-transform', 'function', 'function-patch-and-transform'),
    leaf('provider-kubernetes', 'webhook', 'provider-kubernetes.crossplane-system.svc'),
  ]);
  return { caPem, crossplane, fn, webhook };
}

// ---------------------------------------------------------------------------------------------
// objects

type Obj = XpObject;

/** The Function, Provider and ProviderConfig our constructs synthesize (what a control plane ships). */
export function defaultPackageObjects(): { fn: Obj; provider: Obj; providerConfig: Obj } {
  const chart = new Chart(new App(), 'harness');
  XpFunction.patchAndTransform(chart, 'Fn', { name: 'function-patch-and-transform' });
  new Provider(chart, 'Provider', { package: PROVIDER_KUBERNETES_PACKAGE, name: 'provider-kubernetes' });
  new KubernetesProviderConfig(chart, 'Pc', { name: 'default' });
  const objs = chart.toJson() as Obj[];
  const find = (kind: string) => {
    const o = objs.find((x) => x.kind === kind);
    if (!o) throw new Error(`realinfra: crossplane: the constructs synthesized no ${kind}`);
    return o;
  };
  return { fn: find('Function'), provider: find('Provider'), providerConfig: find('ProviderConfig') };
}

/** `registry/repo/name:tag` or `@digest` → `name` (the last path segment without tag or digest). */
function imageBasename(image: string): string {
  const noDigest = image.split('@')[0]!;
  const last = noDigest.slice(noDigest.lastIndexOf('/') + 1);
  return last.split(':')[0]!;
}

// ---------------------------------------------------------------------------------------------
// the harness

type XpProc = HarnessProcess<CrossplaneComponent>;

/** Crossplane as processes: the strategy of `runtime: 'processes'` (see the header). */
class ProcessesHarness extends CrossplaneHarnessBase {
  readonly runtime = 'processes' as const;
  private readonly procs: Partial<Record<CrossplaneComponent, XpProc>> = {};
  private pki!: Awaited<ReturnType<typeof createPki>>;
  private nsKubeconfig = '';
  private saDir = '';
  private fnSocket = '';
  private runtimeTimer: NodeJS.Timeout | undefined;
  private serveLoop: ServeLoop | undefined;
  private readonly revisionInformers: Informer[] = [];
  private runtimeError = '';
  private providerStarting: Promise<void> | undefined;

  private get v2(): boolean {
    return this.version !== '1.20';
  }

  pids(): ReturnType<CrossplaneHarness['pids']> {
    return {
      forwarder: this.procs.forwarder?.pid,
      'namespace-forwarder': this.procs['namespace-forwarder']?.pid,
      registry: this.procs.registry?.pid,
      crossplane: this.procs.crossplane?.pid,
      'function-patch-and-transform': this.procs['function-patch-and-transform']?.pid,
      'provider-kubernetes': this.procs['provider-kubernetes']?.pid,
    };
  }

  protected registeredProcesses(): RegisteredProcess[] {
    return Object.values(this.procs)
      .filter((p): p is XpProc => p !== undefined && p.pid !== undefined)
      .map((p) => ({ component: p.component, pid: p.pid!, binary: p.binary }));
  }

  protected pushAddress(repoTag: string): string {
    return `${this.registry}/${repoTag}`;
  }

  protected exitedBefore(component: CrossplaneComponent | 'packages', what: string): CrossplaneStartError | undefined {
    const p = component === 'packages' ? undefined : this.procs[component];
    return p?.exit ? new CrossplaneStartError(component, tail(p.logFile), `${p.describeExit()} before ${what}`) : undefined;
  }

  /** The component's log, or core's while the component has no process yet. */
  protected async logTailOf(component: CrossplaneComponent | 'packages'): Promise<string> {
    const p = component === 'packages' ? undefined : (this.procs[component] ?? this.procs.crossplane);
    return p ? tail(p.logFile) : '';
  }

  protected runtimeProblem(): string {
    return this.runtimeError ? `; package runtime: ${this.runtimeError}` : '';
  }

  /** On 1.20 with the External runtime nothing sets the runtime's health: Installed is what counts. */
  protected get runtimeReportsHealth(): boolean {
    return this.v2;
  }

  /** A function is usable once its active revision has an endpoint (what the runtime publishes). */
  protected async notServedYet(kind: PackageKind, name: string): Promise<string> {
    if (kind !== 'Function') return '';
    const revs = await clientOf(this.kc).request<{ items: Obj[] }>(
      'GET',
      `/apis/pkg.crossplane.io/v1/functionrevisions?labelSelector=${encodeURIComponent(`pkg.crossplane.io/package=${name}`)}`,
    );
    const active = revs.items.find((r) => r.spec?.['desiredState'] === 'Active');
    const endpoint = active?.status?.['endpoint'];
    return typeof endpoint === 'string' && endpoint !== '' ? '' : `Installed=True, active revision endpoint=${String(endpoint ?? '(none)')}`;
  }

  /**
   * Starts `binary args` as `component`: in Crossplane's namespace (`'xp'`, joined through the namespace forwarder's PID;
   * `privateRun`: with the service account files in a /run of its own), or in a new namespace of its own (`'own'`).
   */
  private spawnNs(component: CrossplaneComponent, where: 'xp' | 'own', binary: string, args: string[], env: NodeJS.ProcessEnv, privateRun?: string): XpProc {
    let argv: { command: string; args: string[] };
    if (where === 'own') argv = unshareArgv([binary, ...args]);
    else {
      const holder = this.procs['namespace-forwarder']?.pid;
      if (holder === undefined)
        throw new CrossplaneStartError(component, '', `cannot start: the namespace forwarder (which holds the namespace) is not running`);
      argv = nsenterArgv(
        holder,
        [binary, ...args],
        privateRun ? { from: privateRun, runDir: '/run/secrets/kubernetes.io/serviceaccount', files: ['token', 'ca.crt', 'namespace'] } : undefined,
      );
    }
    const p = new HarnessProcess({
      component,
      binary,
      command: argv.command,
      args: argv.args,
      logFile: this.logs[component],
      env: { ...process.env, ...env },
      cwd: this.dir,
    });
    this.procs[component] = p;
    this.register();
    return p;
  }

  // ---- the start, in steps ------------------------------------------------------------------

  /**
   * The namespace with its forwarders, the certificates, the registry with the package images and what `crossplane
   * core init` would create, CrossplaneOptions.beforeCore, the function, core, then the package runtime the harness plays.
   */
  protected async startCrossplane(src: CrossplaneSources): Promise<void> {
    const apiPort = Number(new URL(this.cluster.server).port);
    const regPort = await freePort();
    await this.startNamespace(apiPort, regPort);
    this.pki = await createPki(path.join(this.dir, 'pki'));
    this.writeNsKubeconfig(apiPort);
    await this.startRegistry(regPort);
    await this.pushImagesAndApplyPrerequisites(src);
    if (this.opts.beforeCore) {
      await this.opts.beforeCore({ registry: this.registry });
      this.log(`CrossplaneOptions.beforeCore done (${this.el()})`);
    }
    await this.startFunction(src.fn.version);
    await this.startCore(src.core.version);
    this.startPackageRuntime();
  }

  /**
   * Crossplane's namespace ("xp": core and provider) and the two forwarders. The namespace forwarder, started in a new
   * user + network namespace, holds it (the others join it by its PID); inside it listens on 127.0.0.1 for the API
   * server and the registry (→ unix sockets → the host forwarder → the host's 127.0.0.1) and serves the namespace's
   * own ports on unix sockets; the host forwarder offers those on the harness's loopback address.
   */
  private async startNamespace(apiPort: number, regPort: number): Promise<void> {
    const sockDir = path.join(this.dir, 's');
    fs.mkdirSync(sockDir, { recursive: true, mode: 0o700 });
    const sock = (name: string | number) => {
      const p = path.join(sockDir, String(name));
      if (Buffer.byteLength(p) > UNIX_PATH_MAX)
        throw new Error(
          `startCrossplane: the socket path ${p} is longer than ${UNIX_PATH_MAX} bytes; start the cluster in a shorter folder (StartClusterOptions.dir)`,
        );
      return p;
    };
    const nsPorts = [8080, 8081, 8090, 8091, 9443];
    this.namespaceAddress = await pickLoopbackAddress(nsPorts);
    const nsRoutes = [
      { lh: '127.0.0.1', lp: apiPort, tpath: sock('api') },
      { lh: '127.0.0.1', lp: regPort, tpath: sock('registry') },
      ...nsPorts.map((p) => ({ lpath: sock(p), th: '127.0.0.1', tp: p })),
    ];
    const hostRoutes = [
      { lpath: sock('api'), th: '127.0.0.1', tp: apiPort },
      { lpath: sock('registry'), th: '127.0.0.1', tp: regPort },
      ...nsPorts.map((p) => ({ lh: this.namespaceAddress, lp: p, tpath: sock(p) })),
    ];
    const nsFwd = unshareArgv([process.execPath, '-e', FORWARDER_JS, JSON.stringify(nsRoutes)], { loopback: true });
    this.procs['namespace-forwarder'] = new HarnessProcess<CrossplaneComponent>({
      component: 'namespace-forwarder',
      binary: process.execPath,
      command: nsFwd.command,
      args: nsFwd.args,
      logFile: this.logs['namespace-forwarder'],
      cwd: this.dir,
    });
    this.procs.forwarder = new HarnessProcess<CrossplaneComponent>({
      component: 'forwarder',
      binary: process.execPath,
      args: ['-e', FORWARDER_JS, JSON.stringify(hostRoutes)],
      logFile: this.logs.forwarder,
      cwd: this.dir,
    });
    this.register();
    const ready = (c: CrossplaneComponent) => async () => /^ready$/m.test(fs.readFileSync(this.logs[c], 'utf8'));
    await Promise.all([
      this.waitFor('namespace-forwarder', 'its "ready" line', ready('namespace-forwarder'), 30_000),
      this.waitFor('forwarder', 'its "ready" line', ready('forwarder'), 30_000),
    ]);
    this.networkNamespaces = [fs.readlinkSync(`/proc/${this.procs['namespace-forwarder'].pid}/ns/net`)];
    this.log(`namespace ${this.networkNamespaces[0]}, its ports on ${this.namespaceAddress} (${this.el()})`);
  }

  /** The registry: crane on the host's 127.0.0.1 (Crossplane in its namespace reaches it there too, through the forwarders). */
  private async startRegistry(regPort: number): Promise<void> {
    this.procs.registry = new HarnessProcess<CrossplaneComponent>({
      component: 'registry',
      binary: this.bins.crane,
      args: ['registry', 'serve', '--address', `127.0.0.1:${regPort}`],
      logFile: this.logs.registry,
      cwd: this.dir,
    });
    this.register();
    this.registry = `127.0.0.1:${regPort}`;
    await this.waitFor('registry', `GET http://${this.registry}/v2/`, async () => (await probe(`http://${this.registry}/v2/`, {}, 3000)).status === 200);
    this.log(`registry ready on ${this.registry} (${this.el()})`);
  }

  /** Package images from the upstream module sources, pushed under the names the constructs use, while what `crossplane core init` / the Helm chart would create is applied. */
  private async pushImagesAndApplyPrerequisites(src: CrossplaneSources): Promise<void> {
    const pushes = Promise.all([
      this.pushPackage(`crossplane-contrib/function-patch-and-transform:${src.fn.version}`, { dir: path.join(src.fn.dir, 'package') }),
      this.pushPackage(`crossplane-contrib/provider-kubernetes:${src.pk.version}`, { dir: path.join(src.pk.dir, 'package') }),
    ]);
    await this.applyPrerequisites(path.join(src.core.dir, 'cluster', 'crds'));
    await pushes.catch((e: unknown) => {
      throw new CrossplaneStartError('registry', tail(this.logs.registry), `did not take the package images: ${e instanceof Error ? e.message : String(e)}`);
    });
    this.log(`CRDs, namespace, Lock, TLS Secrets, ImageConfigs applied; package images pushed (${this.el()})`);
  }

  /** function-patch-and-transform: mTLS on a unix socket (path-based sockets work across network namespaces). */
  private async startFunction(version: string): Promise<void> {
    this.fnSocket = path.join(this.dir, 'fn.sock');
    this.spawnNs(
      'function-patch-and-transform',
      'own',
      this.bins.functionPatchAndTransform,
      ['--network=unix', `--address=${this.fnSocket}`, `--tls-certs-dir=${this.pki.fn.dir}`],
      {},
    );
    await this.waitFor('function-patch-and-transform', `its socket ${this.fnSocket}`, async () => fs.existsSync(this.fnSocket));
    this.networkNamespaces = [...this.networkNamespaces, fs.readlinkSync(`/proc/${this.procs['function-patch-and-transform']!.pid}/ns/net`)];
    this.log(`function-patch-and-transform ${version} listening on unix://${this.fnSocket} (${this.el()})`);
  }

  /** Crossplane core with the `External` package runtime, in Crossplane's namespace. */
  private async startCore(version: string): Promise<void> {
    fs.mkdirSync(path.join(this.dir, 'cache', 'xpkg'), { recursive: true });
    fs.mkdirSync(path.join(this.dir, 'cache', 'xfn'), { recursive: true });
    this.spawnNs(
      'crossplane',
      'xp',
      this.bins.crossplane,
      [
        'core',
        'start',
        `--namespace=${CROSSPLANE_NAMESPACE}`,
        '--enable-webhooks=false',
        '--package-runtime=External',
        `--xpkg-cache-dir=${path.join(this.dir, 'cache', 'xpkg')}`,
        `--xfn-cache-dir=${path.join(this.dir, 'cache', 'xfn')}`,
        `--tls-client-certs-dir=${this.pki.crossplane.dir}`,
        '--metrics-port=8090',
        '--health-probe-port=8091',
        ...(this.opts.coreArgs ?? []),
      ],
      { ...CROSSPLANE_CORE_ENV, KUBECONFIG: this.nsKubeconfig, POD_NAMESPACE: CROSSPLANE_NAMESPACE, POD_SERVICE_ACCOUNT: 'crossplane' },
    );
    await this.waitFor(
      'crossplane',
      `GET http://${this.namespaceAddress}:8091/readyz`,
      async () => (await probe(`http://${this.namespaceAddress}:8091/readyz`, {}, 3000)).status === 200,
    );
    this.log(`crossplane ${version} ready (${this.el()})`);
  }

  /**
   * The package runtime (endpoint, TLS secret name and runtime health in the revisions' status; the provider process):
   * served on every change of a function or provider revision (watched), and every second for what is not watched
   * (the CRDs a provider revision installed becoming Established).
   */
  private startPackageRuntime(): void {
    const runtime = new ServeLoop(
      async () => {
        if (this.stopRequested) return;
        await this.serveRevisions('functionrevisions');
        await this.serveRevisions('providerrevisions');
      },
      (e) => (this.runtimeError = e instanceof Error ? e.message : String(e)),
      () => (this.runtimeError = ''),
    );
    this.serveLoop = runtime;
    for (const [plural, kind] of [
      ['functionrevisions', 'FunctionRevision'],
      ['providerrevisions', 'ProviderRevision'],
    ] as const) {
      const ref: ResourceRef = { group: 'pkg.crossplane.io', version: 'v1', plural, kind, namespaced: false };
      const informer = new Informer(clientOf(this.kc), ref, { name: `harness ${plural}` });
      informer.addEventHandler(onAny(() => runtime.kick()));
      this.revisionInformers.push(informer.start());
    }
    this.runtimeTimer = setInterval(() => runtime.kick(), 1000);
    this.runtimeTimer.unref();
    runtime.kick();
  }

  /**
   * The admin kubeconfig of processes in the harness's namespaces (`kubeconfig-ns`; provider-anynines' too, anynines.ts):
   * the API server on the namespace's 127.0.0.1, the namespace forwarder (the API server's certificate covers 127.0.0.1).
   */
  private writeNsKubeconfig(apiPort: number): void {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const admin = this.kc.getCurrentUser();
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'crossplane',
      clusters: [{ name: 'harness', cluster: { server: `https://127.0.0.1:${apiPort}`, 'certificate-authority-data': b64(this.cluster.caPem) } }],
      users: [{ name: 'admin', user: { 'client-certificate-data': admin?.certData, 'client-key-data': admin?.keyData } }],
      contexts: [{ name: 'crossplane', context: { cluster: 'harness', user: 'admin' } }],
    };
    this.nsKubeconfig = path.join(this.dir, 'kubeconfig-ns');
    fs.writeFileSync(this.nsKubeconfig, toYaml(doc), { mode: 0o600 });
  }

  private async applyPrerequisites(crdDir: string): Promise<void> {
    const crds = readManifests(crdDir);
    const tlsSecret = (name: string, t: TlsDir) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: `${name}-tls-server`, namespace: CROSSPLANE_NAMESPACE },
      data: {
        'tls.crt': fs.readFileSync(t.crt).toString('base64'),
        'tls.key': fs.readFileSync(t.key).toString('base64'),
        'ca.crt': Buffer.from(this.pki.caPem).toString('base64'),
      },
    });
    const objects: KubernetesObject[] = [
      ...crds,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CROSSPLANE_NAMESPACE } },
      { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'Lock', metadata: { name: 'lock' } } as KubernetesObject,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'crossplane', namespace: CROSSPLANE_NAMESPACE } },
      // The provider's identity for InjectedIdentity ProviderConfigs (the constructs' DeploymentRuntimeConfig names it).
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'provider-kubernetes', namespace: CROSSPLANE_NAMESPACE } },
      tlsSecret('function-patch-and-transform', this.pki.fn) as KubernetesObject,
      tlsSecret('provider-kubernetes', this.pki.webhook) as KubernetesObject,
      // kube-apiserver calls the provider's conversion webhook through this Service: the namespace's loopback address
      // (the host forwarder); it checks the certificate against the Service's DNS name, not this address.
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'provider-kubernetes', namespace: CROSSPLANE_NAMESPACE },
        spec: { type: 'ExternalName', externalName: this.namespaceAddress, ports: [{ name: 'webhook', port: 9443, targetPort: 9443, protocol: 'TCP' }] },
      } as KubernetesObject,
    ];
    if (this.v2) {
      objects.push({
        apiVersion: 'apiextensions.crossplane.io/v1alpha1',
        kind: 'ManagedResourceActivationPolicy',
        metadata: { name: 'default' },
        spec: { activate: ['*'] },
      } as KubernetesObject);
    }
    await applyManifests(this.kc, objects, { fieldManager: 'klutch-kit-harness', continueOnError: false });
    for (const prefix of REWRITTEN_PREFIXES) await this.rewriteImages(prefix);
  }

  // ---- the package runtime ------------------------------------------------------------------

  private async serveRevisions(plural: 'functionrevisions' | 'providerrevisions'): Promise<void> {
    const list = await clientOf(this.kc).request<{ items: Obj[] }>('GET', `/apis/pkg.crossplane.io/v1/${plural}`);
    for (const rev of list.items) {
      const image = String(rev.spec?.['image'] ?? rev.spec?.['package'] ?? '');
      const base = imageBasename(image);
      const active = rev.spec?.['desiredState'] === 'Active';
      const pkg = rev.metadata?.labels?.['pkg.crossplane.io/package'] ?? '';
      if (!active || !pkg) continue;
      if (plural === 'functionrevisions' && base === 'function-patch-and-transform') {
        await this.patchRevisionStatus(
          plural,
          rev,
          { endpoint: `unix://${this.fnSocket}`, ...(this.v2 ? { tlsServerSecretName: `${pkg}-tls-server` } : {}) },
          this.v2,
        );
      }
      if (plural === 'providerrevisions' && base === 'provider-kubernetes') {
        if (this.v2)
          await this.patchRevisionStatus(plural, rev, { tlsServerSecretName: `${pkg}-tls-server` }, this.procs['provider-kubernetes']?.pid !== undefined);
        // as Crossplane's Deployment runtime: once the revision installed the package's objects (provider-kubernetes
        // starts the controllers of its managed resources when their CRDs appear: SafeStart, package-runtime.ts)
        if (!this.providerStarting && revisionInstalled(rev, this.v2) && (await this.crdsEstablished(installedCrds(rev)))) {
          this.providerStarting = this.startProvider().catch((e: unknown) => {
            this.runtimeError = e instanceof Error ? e.message : String(e);
          });
        }
      }
    }
  }

  private async crdsEstablished(names: readonly string[]): Promise<boolean> {
    for (const name of names) {
      const crd = await this.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`);
      if (conditionOf(crd ?? {}, 'Established')?.status !== 'True') return false;
    }
    return true;
  }

  private async patchRevisionStatus(plural: string, rev: Obj, fields: Record<string, string>, runtimeHealthy: boolean): Promise<void> {
    const status = rev.status ?? {};
    const missing = Object.entries(fields).some(([k, v]) => status[k] !== v);
    const cond = conditionOf(rev, 'RuntimeHealthy');
    const needCond = runtimeHealthy && cond?.status !== 'True';
    if (!missing && !needCond) return;
    const conditions = needCond
      ? [
          ...(status.conditions ?? []).filter((c) => c.type !== 'RuntimeHealthy'),
          {
            type: 'RuntimeHealthy',
            status: 'True',
            reason: 'HealthyPackageRevision',
            message: 'served by the klutch-kit harness',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ]
      : undefined;
    try {
      await clientOf(this.kc).request('PATCH', `/apis/pkg.crossplane.io/v1/${plural}/${encodeURIComponent(rev.metadata!.name!)}/status`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: rev.metadata!.resourceVersion }, status: { ...fields, ...(conditions ? { conditions } : {}) } },
      });
    } catch (e) {
      if (isConflict(e)) return; // Crossplane wrote first: next tick
      throw e;
    }
  }

  /** Starts provider-kubernetes once its revision installed the package (as Crossplane's Deployment runtime would). */
  private async startProvider(): Promise<void> {
    const t0 = Date.now();
    // InjectedIdentity outside a pod: a private mount namespace gets a tmpfs on /run with the service
    // account's token, CA and namespace where client-go's in-cluster config reads them.
    this.saDir = path.join(this.dir, 'serviceaccount');
    fs.mkdirSync(this.saDir, { recursive: true, mode: 0o700 });
    const token = await clientOf(this.kc).request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/serviceaccounts/provider-kubernetes/token`,
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7 * 24 * 3600 } } },
    );
    fs.writeFileSync(path.join(this.saDir, 'token'), token.status.token, { mode: 0o600 });
    fs.writeFileSync(path.join(this.saDir, 'ca.crt'), this.cluster.caPem);
    fs.writeFileSync(path.join(this.saDir, 'namespace'), CROSSPLANE_NAMESPACE);
    const apiPort = new URL(this.cluster.server).port;
    this.spawnNs(
      'provider-kubernetes',
      'xp',
      this.bins.providerKubernetes,
      providerKubernetesArgs(this.opts),
      {
        // Its own manager talks as admin (Crossplane's RBAC manager would give it its system role);
        // Objects use InjectedIdentity: the provider-kubernetes ServiceAccount and the RBAC granted to it.
        KUBECONFIG: this.nsKubeconfig,
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: apiPort,
        TLS_SERVER_CERTS_DIR: this.pki.webhook.dir,
      },
      this.saDir,
    );
    // the process runs: its revision's RuntimeHealthy now, not at the next tick (a Deployment without probes is Available)
    this.serveLoop?.kick();
    await this.waitFor(
      'provider-kubernetes',
      `GET http://${this.namespaceAddress}:8081/readyz`,
      async () => (await probe(`http://${this.namespaceAddress}:8081/readyz`, {}, 3000)).status === 200,
    );
    this.log(
      `provider-kubernetes ${this.versions.providerKubernetes} ready (${((Date.now() - t0) / 1000).toFixed(1)} s after its revision installed the package)`,
    );
  }

  async installDefaultPackages(): Promise<void> {
    const { fn, provider, providerConfig } = defaultPackageObjects();
    await applyManifests(this.kc, [fn, provider], { continueOnError: false });
    await Promise.all([this.waitForPackage('Function', fn.metadata!.name!), this.waitForPackage('Provider', provider.metadata!.name!)]);
    await this.waitFor(
      'provider-kubernetes',
      'provider-kubernetes to start (its CRDs established)',
      async () => this.procs['provider-kubernetes']?.pid !== undefined,
    );
    await this.providerStarting;
    if (this.procs['provider-kubernetes']?.exit) {
      const p = this.procs['provider-kubernetes'];
      throw new CrossplaneStartError('provider-kubernetes', tail(p.logFile), p.describeExit());
    }
    await waitForCrdsEstablished(this.kc, ['providerconfigs.kubernetes.crossplane.io'], this.timeoutMs);
    await applyManifests(this.kc, [providerConfig], { continueOnError: false });
  }

  protected async stopAll(): Promise<void> {
    if (this.runtimeTimer) clearInterval(this.runtimeTimer);
    await Promise.all([this.serveLoop?.stop(), ...this.revisionInformers.map((i) => i.stop())]);
    const grace = 5000;
    await Promise.all([
      this.procs['provider-kubernetes']?.stop(grace),
      this.procs.crossplane?.stop(grace),
      this.procs['function-patch-and-transform']?.stop(grace),
    ]);
    await this.procs.registry?.stop(grace);
    await Promise.all([this.procs.forwarder?.stop(grace), this.procs['namespace-forwarder']?.stop(grace)]);
  }

  protected killAll(): void {
    if (this.runtimeTimer) clearInterval(this.runtimeTimer);
    for (const i of this.revisionInformers) void i.stop();
    for (const p of Object.values(this.procs)) p?.killSync();
    for (const p of Object.values(this.procs)) {
      if (p?.child.pid !== undefined) killRegistered({ component: p.component, pid: p.child.pid, binary: p.binary });
    }
  }
}

/** Crossplane as processes (`runtime: 'processes'`): no root needed; the namespaces are an ordinary user's (userns.ts). */
export const crossplaneAsProcesses: CrossplaneStrategy = {
  runtime: 'processes',
  async prepare(cluster: RealCluster, opts: CrossplaneOptions): Promise<CrossplaneHarnessBase> {
    const problem = userNamespaceProblem();
    if (problem) throw new Error(`startCrossplane: the Crossplane harness runs its processes in network namespaces of their own: ${problem}`);
    const bins = opts.binaries ?? (await ensureCrossplaneBinaries(opts.version, { log: opts.log }));
    for (const [k, v] of Object.entries(bins)) {
      if (!fs.existsSync(v)) throw new Error(`startCrossplane: binary ${k} not found at ${v}; run \`npm run realinfra -- --crossplane\``);
    }
    return new ProcessesHarness(cluster, opts.version, bins, opts);
  },
};
