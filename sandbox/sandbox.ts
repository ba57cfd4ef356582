/**
 * The local sandbox: a whole Klutch on this machine, no Docker and no cloud (`npm run sandbox`, docs/sandbox.md).
 *
 * 1. clusters: a control plane and two app clusters — real etcd + kube-apiserver + kube-controller-manager each
 *    (runtime/realinfra);
 * 2. the OIDC provider: the real `oidc-provider` instance of test/support (in this process, on 127.0.0.1);
 * 3. real Crossplane 2.3 on the control plane (core, function-patch-and-transform, provider-kubernetes, an OCI
 *    registry: local processes of the harness, no packages installed), the Configuration package klutch-kit
 *    synthesizes, pushed to the harness's registry, and the sandbox's local a8s operator (sandbox/a8s-operator: a
 *    real PostgreSQL server per a8s Postgresql);
 * 4. `pulumi up` of the stack program (stacks/main.ts) in `runtime` manifests mode with `klutch-kit:catalogue` set to
 *    that package, with the Pulumi toolchain built from Go: binding CRDs, backend and konnector objects (no pod runs
 *    them here), and the `Configuration`, Function, provider-kubernetes and its ProviderConfig, which Crossplane's
 *    package manager installs (XRDs, Compositions); then the export templates;
 * 5. the backend and one konnector per app cluster as local processes (tsx);
 * 6. both app clusters bound with the `kubectl-bind` binary (non-interactive `--token` path);
 * then `provisionDemo()` creates a PostgresqlInstance and a ServiceBinding in app-1 and follows every hop (claim →
 * XR → provider-kubernetes Object → a8s object → status and the credentials Secret back in app-1), ending in a
 * ready-to-run `psql` command; `changeDemoPlan()` changes the claim's plan and follows it to the a8s object.
 *
 * `apiStyle` (`npm run sandbox -- --api-style claims|namespaced`): the catalogue's API style. With
 * ApiStyle.NAMESPACED_XR the control plane serves namespaced XRs and no claims: the object the konnector syncs
 * up *is* the XR, it composes `kubernetes.m.crossplane.io` Objects (provider-kubernetes' ClusterProviderConfig,
 * installed by pulumi up with `klutch-kit:catalogue.apiStyle`), and the ServiceBinding's credentials come down
 * as the composed `<binding>-creds` Secret.
 */
import { RUNTIME_NODE_FLAGS } from '../runtime/image/node-flags.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { EngineEvent, OpMap, Stack, UpResult } from '@pulumi/pulumi/automation/index.js';
import { CoreResources, isAlreadyExists, KubeClient, type KubeObject, type ResourceRef } from '../runtime/core/client.js';
import { getCondition, type Condition } from '../runtime/core/conditions.js';
import { freePort, startCluster, startCrossplane, type CrossplaneHarness, type RealCluster } from '../runtime/realinfra/index.js';
import { type PulumiBinaries, ensurePulumiBinaries } from '../runtime/realinfra/pulumi-build.js';
import { ensureDexBinary } from '../runtime/realinfra/build.js';
import { applyManifests, waitForCrdsEstablished } from '../runtime/realinfra/apply.js';
import { clientOf } from '../runtime/realinfra/client.js';
import { clusterDnsKubeletConfig } from '../runtime/realinfra/cluster-dns.js';
import { podsRegistry } from '../runtime/realinfra/crossplane-start.js';
import { A9S_BINDING_SECRET_SUFFIX } from '../constructs/catalogue/index.js';
import { API_STYLE_NAMES, ApiStyle } from '../constructs/dataservice/index.js';
import { generateStackSecrets } from '../stacks/secrets.js';
// The sandbox's issuer is the test OP (a real, OpenID-certified oidc-provider instance), reused, not copied.
import { OidcTestProvider } from '../test/support/oidc-provider.js';
import { A8S_RESOURCES, assertReachable, SandboxA8sOperator, secretNameOf, serverUser, type Postgresql } from './a8s-operator/index.js';
import { startSandboxA9s, type SandboxA9s } from './a9s.js';
import { awaitCatalogue, binderExportRoles, pushCatalogue, type InstalledCatalogue, type PushedCatalogue } from './catalogue.js';
import {
  bindThroughDex,
  createLocalStack,
  type LocalStackOptions,
  deploymentReady,
  loadPulumiAutomation,
  PODS_NAMESPACE,
  podsStackConfig,
  prepareDex,
  type PreparedDex,
  runKonnectorOnNode,
  serviceAddress,
  TcpForwarders,
} from './pods.js';
import { SANDBOX_DIR, STATE_FILE, type SandboxState } from './state.js';
import { KONNECTOR_NAMESPACE } from '../contract/api/constants.js';

export { SANDBOX_DIR, STATE_FILE, type SandboxState };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const BACKEND_CLIENT_ID = 'klutch-backend';
export const BACKEND_RESOURCE = 'urn:klutch:backend';
export const BIND_APIS = ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com'] as const;
/** Steps printed by startSandbox (6), provisionDemo (the 7th) and changeDemoPlan (the 8th). */
export const SANDBOX_STEPS = 8;
/**
 * `pulumi up --parallel`: the CLI's default is 4 per core, 8 here, and the three Crossplane packages awaited Healthy
 * hold three of those slots for most of the update; the other steps wait on API servers, not on this machine's cores.
 */
export const SANDBOX_PULUMI_PARALLEL = 64;
/** The sandbox's stack: its state dies with its clusters, so the engine writes it once, at the end. */
const SANDBOX_STACK: LocalStackOptions = { skipCheckpoints: true };
/** The Crossplane release line the sandbox's control plane runs. */
export const SANDBOX_CROSSPLANE = '2.3';
/** The demo's plans: provisioned with the first, changed to the second. */
export const DEMO_PLANS = ['postgresql-single-nano', 'postgresql-single-small'] as const;

/** The catalogue's claim APIs the demo uses (served by Crossplane from the catalogue's XRDs). */
export const SANDBOX_CLAIMS = {
  postgresqlInstances: {
    group: 'anynines.com',
    version: 'v1',
    plural: 'postgresqlinstances',
    kind: 'PostgresqlInstance',
    namespaced: true,
  } satisfies ResourceRef,
  serviceBindings: { group: 'anynines.com', version: 'v1', plural: 'servicebindings', kind: 'ServiceBinding', namespaced: true } satisfies ResourceRef,
};
export const DEMO = { namespace: 'shop', instance: 'orders-db', binding: 'orders-db-binding' } as const;

/** Creates the demo's namespace in an app cluster unless it exists (the a9s demo, beside this one, may create it at the same time). */
/** Field manager of the demo's claims (applied server-side, see provisionDemo). */
export const DEMO_FIELD_MANAGER = 'klutch-kit-sandbox-demo';

async function ensureDemoNamespace(app: KubeClient): Promise<void> {
  if (await app.getOrNull(CoreResources.namespaces, undefined, DEMO.namespace)) return;
  await app.create(CoreResources.namespaces, { metadata: { name: DEMO.namespace } }).catch((e: unknown) => {
    if (!isAlreadyExists(e)) throw e;
  });
}

export interface SandboxOptions {
  /** A line per completed step (and a few details). */
  log?: (line: string) => void;
  /** Where logs, the Pulumi project/state and the state file go. @default a fresh folder under SANDBOX_DIR */
  dir?: string;
  /** Write `STATE_FILE` (the CLI does; the test does not). */
  writeState?: boolean;
  /**
   * Also a9s (`--a9s`): the broker stand-in (sandbox/a9s-broker-standin.ts, a real PostgreSQL per instance) and the real
   * provider-anynines on the control plane, with the ControlPlaneCluster's `postgresql` a9s ProviderConfigs (sandbox/a9s.ts).
   * Needs provider-anynines' sources (`KLUTCH_KIT_KLUTCHIO_SRC`) or its cached build. @default false
   */
  a9s?: boolean;
  /** The catalogue's API style (`--api-style claims|namespaced`). @default ApiStyle.CLAIMS */
  apiStyle?: ApiStyle;
  /**
   * `--pods`: the control plane gets a real node (root, one per host: it waits for the host-wide node lock); Crossplane,
   * the backend (2 replicas), Dex as the OIDC provider and a konnector per app cluster run there as pods, from images
   * built without Docker (`pulumi up` builds and pushes the runtime images); kubectl bind logs in at Dex; with `a9s`,
   * provider-anynines is a pod too (sandbox/pods.ts). @default false
   */
  pods?: boolean;
}

export interface Sandbox {
  readonly controlPlane: RealCluster;
  readonly apps: readonly [RealCluster, RealCluster];
  readonly backendUrl: string;
  /** The OIDC issuer: the test OP's, or with `pods` Dex's (`https://<node IP>:<port>/dex`). */
  readonly issuer: string;
  /** The sandbox's OIDC provider (in this process); none with `pods` (Dex runs as a pod). */
  readonly op?: OidcTestProvider;
  /** Whether the topology runs as pods on the control plane's node (SandboxOptions.pods). */
  readonly pods: boolean;
  readonly stack: Stack;
  /** Real Crossplane on the control plane. */
  readonly crossplane: CrossplaneHarness;
  /** The catalogue package installed on the control plane. */
  readonly catalogue: InstalledCatalogue;
  /** The local a8s operator (PostgreSQL servers) on the control plane. */
  readonly a8s: SandboxA8sOperator;
  /** With `a9s`: the broker stand-in and provider-anynines on the control plane. */
  readonly a9s?: SandboxA9s;
  /** The catalogue's API style: claims, or namespaced XRs bound without claims. */
  readonly apiStyle: ApiStyle;
  /** The backend and konnectors as local processes (none with `pods`). */
  readonly processes: ReadonlyArray<{ name: string; child: ChildProcess; log: string }>;
  /** Seconds per step. */
  readonly timings: Record<string, number>;
  /** What `kubectl-bind` printed per app cluster and API. */
  readonly bindOutput: Record<string, string>;
  readonly dir: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > end) throw new Error(`sandbox: timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(200);
  }
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, KUBECONFIG: '', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    const t = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

/** The configuration name (`claims`, `namespaced`) of an API style. */
export function apiStyleName(style: ApiStyle): 'claims' | 'namespaced' {
  return style.namespaced ? 'namespaced' : 'claims';
}

/** Checks the options' combinations before anything starts; the message names the option and the value. */
function checkOptions(opts: SandboxOptions, apiStyle: ApiStyle): void {
  if (!Object.values(API_STYLE_NAMES).includes(apiStyle)) throw new Error(`SandboxOptions.apiStyle: ${String(apiStyle)} is not an ApiStyle`);
}

/** Starts the sandbox (`SandboxRun`'s steps, one after the other); on a failure stops what it started. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  return new SandboxRun(opts).start();
}

/**
 * One start of the sandbox, as named steps that hand their results on in fields: `startClusters` → `startIssuer` →
 * `startCrossplane` → `pulumiUp` → `startBackend` → `bindApps` (the last two as local processes, or as pods with
 * `pods`). Everything a step starts is registered for `stop()` as it starts, so a failure anywhere stops it all.
 */
export class SandboxRun {
  private readonly started = Date.now();
  private readonly apiStyle: ApiStyle;
  private readonly pods: boolean;
  private readonly say: (line: string) => void;
  private readonly dir: string;
  private readonly a8sDataDir: string;
  private readonly a9sDataDir: string;
  private readonly timings: Record<string, number> = {};
  private readonly stops: Array<() => Promise<void>> = [];
  private readonly processes: Array<{ name: string; child: ChildProcess; log: string }> = [];
  private readonly clusters: RealCluster[] = [];
  private readonly bindOutput: Record<string, string> = {};
  private readonly forwarders = new TcpForwarders();
  private readonly clientSecret = randomBytes(18).toString('base64url');
  private steps = 0;
  // filled by the steps, in this order
  private bins?: PulumiBinaries;
  private dexBinary = '';
  private cp?: RealCluster;
  private apps?: readonly [RealCluster, RealCluster];
  private machine: Array<{ id: string; secret: string }> = [];
  private op?: OidcTestProvider;
  private dex?: PreparedDex;
  private backendPort = 0;
  private backendUrl = '';
  private issuer = '';
  private crossplane?: CrossplaneHarness;
  private crossplaneStarting?: Promise<CrossplaneHarness>;
  /** Without pods: the catalogue package, pushed by Crossplane's start before its core runs (CrossplaneOptions.beforeCore). */
  private cataloguePushed?: Promise<PushedCatalogue>;
  /** The Pulumi stack, created (`pulumi stack init`) while the clusters start. */
  private stackCreating?: Promise<Stack>;
  /** `stack.up()` to its end: the update, then the automation API's reads of the outputs and the history. */
  private upFinishing?: Promise<UpResult>;
  /** Every cluster start, so that stop() stops a cluster whose start ended after a failure elsewhere. */
  private readonly clusterStarts: Array<Promise<unknown>> = [];
  private a8sOperator?: SandboxA8sOperator;
  private a9sStarting?: Promise<SandboxA9s>;
  private a9sPart?: SandboxA9s;
  private pushed?: PushedCatalogue;
  private stack?: Stack;
  private catalogue?: InstalledCatalogue;
  /** Per stack cluster name (`control-plane`, `app-1`, …): resolved once pulumi up created its foundation (CRDs, Namespaces). */
  private readonly foundations = new Map<string, { done: Promise<void>; resolve: () => void }>();
  /** The backend and konnectors (not with pods): the konnectors start beside pulumi up once their clusters' foundations exist. */
  private localProcesses?: Promise<void>;
  private stopping = false;

  constructor(private readonly opts: SandboxOptions = {}) {
    this.apiStyle = opts.apiStyle ?? ApiStyle.CLAIMS;
    checkOptions(opts, this.apiStyle);
    this.pods = opts.pods ?? false;
    this.say = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
    fs.mkdirSync(SANDBOX_DIR, { recursive: true });
    this.dir = opts.dir ?? fs.mkdtempSync(path.join(SANDBOX_DIR, 'run-'));
    fs.mkdirSync(path.join(this.dir, 'logs'), { recursive: true });
    this.a8sDataDir = sandboxA8sDataDir(this.dir);
    // unique: a8sDataDir falls back to a fixed name under the temporary folder, which runs side by side would share
    this.a9sDataDir = `${this.a8sDataDir}-a9s-${randomBytes(4).toString('hex')}`;
    this.stops.push(() => this.forwarders.stop());
  }

  /** Runs every step; on a failure stops what was started and rethrows. */
  async start(): Promise<Sandbox> {
    try {
      await this.startClusters();
      await this.startIssuer();
      this.writeState();
      await this.startCrossplane();
      await this.pulumiUp();
      // the harness's and provider-anynines' host processes (forwarders), known now, for a --down after a killed supervisor
      this.writeState();
      await this.startBackend();
      await this.bindApps();
      // the automation API's reads after the update (beside steps 5 and 6), and whether it succeeded
      await this.upFinishing;
      return this.sandbox();
    } catch (e) {
      this.say(`sandbox: failed: ${(e as Error).message}`);
      for (const p of this.processes) this.say(`  ${p.name} log: ${p.log}`);
      await this.stop();
      throw e;
    }
  }

  /** Stops everything in the reverse order of its start, then removes the run's folder (unless it was given). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled(this.clusterStarts);
    await this.crossplaneStarting?.catch(() => undefined);
    await this.stackCreating?.catch(() => undefined);
    for (const p of this.processes) await stopChild(p.child).catch(() => undefined);
    for (const s of this.stops.reverse()) await s().catch(() => undefined);
    await Promise.all(this.clusters.map((c) => c.stop().catch(() => undefined)));
    if (this.opts.writeState) fs.rmSync(STATE_FILE, { force: true });
    if (!this.opts.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** One numbered step: its time into `timings`, a line with the time since start and the step's details. */
  private async step<T>(what: string, fn: () => Promise<T>, detail?: (v: T) => string): Promise<T> {
    const t = Date.now();
    const v = await fn();
    this.timings[what] = (Date.now() - t) / 1000;
    this.steps++;
    const details = detail ? `\n      ${detail(v).split('\n').join('\n      ')}` : '';
    this.say(
      `[${this.steps}/${SANDBOX_STEPS}] ${what} … done in ${this.timings[what]!.toFixed(1)} s (+${((Date.now() - this.started) / 1000).toFixed(1)} s)${details}`,
    );
    return v;
  }

  /** The state file `npm run sandbox -- --down` reads (with `writeState`): every pid and folder started so far. */
  private writeState(): void {
    if (!this.opts.writeState) return;
    const { clusters, crossplane, a9sPart } = this;
    const state: SandboxState = {
      supervisorPid: process.pid,
      dir: this.dir,
      a8sDataDir: this.a8sDataDir,
      ...(this.opts.a9s ? { a9sDataDir: this.a9sDataDir } : {}),
      backendUrl: this.backendUrl,
      issuer: this.issuer,
      clusters: clusters.map((c) => ({
        name: c.name,
        server: c.server,
        kubeconfigPath: c.kubeconfigPath,
        dir: c.dir,
        pids: [...clusterPids(c), ...(c === clusters[0] && crossplane ? harnessPids(crossplane) : []), ...(c === clusters[0] && a9sPart ? a9sPart.pids() : [])],
      })),
      processes: this.processes.map((p) => ({ name: p.name, pid: p.child.pid!, log: p.log })),
    };
    fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
  }

  /**
   * A runtime component of the repository as a local process, its output in `logs/<name>.log`: one node process with
   * tsx's loader (`--import tsx`) and the component's Node.js flags (RUNTIME_NODE_FLAGS, as in its image).
   */
  private spawnLocal(name: string, component: keyof typeof RUNTIME_NODE_FLAGS, args: string[]): ChildProcess {
    if (this.stopping) throw new Error(`sandbox: stopping, ${name} not started`);
    const log = path.join(this.dir, 'logs', `${name}.log`);
    const fd = fs.openSync(log, 'a');
    const file = path.join(REPO_ROOT, 'runtime', component, 'main.ts');
    const child = spawn(process.execPath, [...RUNTIME_NODE_FLAGS[component], '--import', 'tsx', file, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, KUBECONFIG: '' },
      stdio: ['ignore', fd, fd],
    });
    fs.closeSync(fd);
    this.processes.push({ name, child, log });
    return child;
  }

  /**
   * 1. clusters (and the Pulumi toolchain, warm: a few stat calls, and its stack; with pods Dex's binary); without pods,
   * Crossplane starts on the control plane as soon as that is up, beside the app clusters' start (step 3 waits for it).
   */
  private async startClusters(): Promise<void> {
    const pods = this.pods;
    const [bins, cp, app1, app2] = await this.step(
      pods
        ? 'clusters: control plane with a real node + 2 app clusters (real kube-apiserver, etcd, kube-controller-manager; kubelet, containerd)'
        : 'clusters: control plane + 2 app clusters (real kube-apiserver, etcd, kube-controller-manager)',
      async () => {
        const bins = ensurePulumiBinaries({});
        // the automation API loads and the stack is created while the clusters start (step 4 needs them)
        loadPulumiAutomation().catch(() => undefined);
        this.stackCreating = bins.then((b) => createLocalStack(path.join(this.dir, 'pulumi'), b, 'sandbox', 'klutch-kit sandbox', SANDBOX_STACK));
        this.stackCreating.catch(() => undefined);
        const dex = pods ? ensureDexBinary({}).then((b) => (this.dexBinary = b)) : undefined;
        // with pods: the node, with the cluster DNS the Crossplane pods need (their function endpoint is a Service name)
        const node = (name: string) => (pods && name === 'sandbox-cp' ? { nodes: 1 as const, node: { kubeletConfig: clusterDnsKubeletConfig() } } : {});
        const cs = ['sandbox-cp', 'sandbox-app-1', 'sandbox-app-2'].map((name) =>
          startCluster({ name, ...node(name) }).then((c) => {
            this.clusters.push(c);
            // stop() waits for every cluster start, then stops them all
            if (name === 'sandbox-cp' && !pods && !this.stopping) this.beginCrossplane(c);
            return c;
          }),
        );
        this.clusterStarts.push(...cs);
        const started = [await bins, ...(await Promise.all(cs))] as const;
        await dex;
        return started;
      },
      (v) =>
        [
          ...v.slice(1).map((c) => `${(c as RealCluster).name}: ${(c as RealCluster).server}  kubeconfig ${(c as RealCluster).kubeconfigPath}`),
          pulumiChoice(v[0] as PulumiBinaries),
        ].join('\n'),
    );
    this.bins = bins;
    this.cp = cp;
    this.apps = [app1, app2];
    this.machine = this.apps.map((a) => ({ id: `sandbox-${a.name.replace(/^sandbox-/, '')}`, secret: randomBytes(18).toString('base64url') }));
  }

  /**
   * 2. the OIDC provider (listening; clients registered once the backend URL is known, right below); with pods, Dex
   * (a pod once pulumi up ran): its image, TLS and issuer, and the backend URL, a loopback forwarder to its Service.
   */
  private async startIssuer(): Promise<void> {
    const cp = this.cp!;
    if (this.pods) {
      this.dex = await this.step(
        'Dex: image from the harness binary pushed to the node registry, its TLS, the issuer on the node IP',
        async () => {
          const d = await prepareDex(cp, this.dexBinary, this.dir, this.forwarders, 'klutch-kit sandbox CA');
          this.backendPort = await this.forwarders.listen('127.0.0.1', () => serviceAddress(cp.kubeConfig, PODS_NAMESPACE, 'klutch-backend', 'http'));
          return d;
        },
        (d) => `issuer ${d.issuer}, image ${d.image}`,
      );
      this.backendUrl = `http://127.0.0.1:${this.backendPort}`;
      this.issuer = this.dex.issuer;
      return;
    }
    this.backendPort = await freePort();
    this.backendUrl = `http://127.0.0.1:${this.backendPort}`;
    this.op = await this.step(
      'OIDC provider (oidc-provider, in this process)',
      async () => {
        const op = await OidcTestProvider.listen([
          { username: 'dev', password: randomBytes(9).toString('base64url'), sub: 'sandbox-dev', email: 'dev@sandbox.test' },
        ]);
        this.stops.push(() => op.stop());
        op.start(
          [
            { client_id: BACKEND_CLIENT_ID, client_secret: this.clientSecret, redirect_uris: [`${this.backendUrl}/callback`] },
            ...this.machine.map((m) => ({
              client_id: m.id,
              client_secret: m.secret,
              grant_types: ['client_credentials'],
              response_types: [],
              redirect_uris: [],
            })),
          ],
          { [BACKEND_RESOURCE]: { audience: BACKEND_RESOURCE, scope: 'bind' } },
        );
        return op;
      },
      (op) => `issuer ${op.issuer}`,
    );
    this.issuer = this.op.issuer;
  }

  /**
   * 3. real Crossplane on the control plane (its packages left to pulumi up), the catalogue package pushed to its
   * registry, the local a8s operator; with a9s, provider-anynines starting beside pulumi up.
   */
  private async startCrossplane(): Promise<void> {
    const cp = this.cp!;
    const { pods, apiStyle } = this;
    this.pushed = await this.step(
      `Crossplane ${SANDBOX_CROSSPLANE} on the control plane${pods ? ' (as pods, starting beside pulumi up)' : ''}, catalogue package pushed to its registry, local a8s operator`,
      async () => {
        // without pods begun in step 1 once the control plane was up (a no-op here); with pods now
        this.beginCrossplane(cp);
        // Without pods the package is pushed as soon as the registry serves, before Crossplane's core starts, and pulumi up
        // starts beside the rest of Crossplane's start (it waits for it). Crossplane as pods starts beside the catalogue
        // push and the a8s operator; step 4 starts pulumi up once it is Available (its packages need Crossplane's CRDs and
        // image rewrites). The package goes to the registry address the Crossplane pods pull from.
        const pushed = pods
          ? await pushCatalogue(cp, { registry: podsRegistry(cp) }, { apiStyle })
          : await Promise.race([this.cataloguePushed!, this.crossplaneStarting!.then(() => this.cataloguePushed!)]);
        // the backend pods' ServiceAccount hands out only what the control plane's binder roles grant
        if (pods) await applyManifests(cp.kubeConfig, binderExportRoles(pushed.packageRef, this.apiStyle), { continueOnError: false });
        await this.startA8sOperator();
        if (this.opts.a9s) {
          // provider-anynines installs while pulumi up runs (step 4 waits for it); with pods once Crossplane is up, and
          // stopped before it (registered after Crossplane's stop)
          const starting = this.crossplaneStarting!.then((xp) => {
            const a9s = startSandboxA9s(cp, xp, { dataDir: this.a9sDataDir, apiStyle: this.apiStyle });
            this.stops.push(async () => (await a9s.catch(() => undefined))?.stop());
            return a9s;
          });
          starting.catch(() => undefined);
          this.a9sStarting = starting;
        }
        return pushed;
      },
      (c) =>
        `${this.crossplane ? `Crossplane ${this.crossplane.versions.crossplane}` : `Crossplane ${SANDBOX_CROSSPLANE} starting${pods ? ' as pods on the node' : ' (pulumi up waits for it)'}`}, registry ${c.packageRef.split('/')[0]}\npackage ${c.packageRef} (${c.digest.slice(0, 19)}…): ${c.xrds.length} XRDs, API style ${apiStyleName(apiStyle)}\nlocal a8s operator: PostgreSQL ${this.a8sOperator!.instances.binaries.major} servers on 127.0.0.2+ port 5432, data under ${this.a8sDataDir}`,
    );
  }

  /**
   * Starts Crossplane on the control plane (once): provider-kubernetes re-reads the a8s objects every second (the
   * harness's default is 10 s), so status comes back sooner; `install: false`, the Function, Provider and ProviderConfig
   * come from pulumi up (klutch-kit:catalogue).
   */
  private beginCrossplane(cp: RealCluster): void {
    if (this.crossplaneStarting) return;
    let pushing: (p: Promise<PushedCatalogue>) => void = () => undefined;
    this.cataloguePushed = new Promise<PushedCatalogue>((resolve) => (pushing = resolve));
    this.cataloguePushed.catch(() => undefined);
    // without pods: the catalogue goes to the registry before Crossplane's core starts (its failure fails the start)
    const beforeCore = async ({ registry }: { registry: string }) => {
      const push = pushCatalogue(cp, { registry }, { apiStyle: this.apiStyle });
      pushing(push);
      await push;
    };
    const starting = startCrossplane(cp, {
      version: SANDBOX_CROSSPLANE,
      providerPollInterval: '1s',
      install: false,
      ...(this.pods ? { runtime: 'pods' as const } : { beforeCore }),
    });
    starting.catch(() => undefined);
    this.crossplaneStarting = starting.then((xp) => {
      this.crossplane = xp;
      this.stops.push(() => xp.stop());
      return xp;
    });
    this.crossplaneStarting.catch(() => undefined);
  }

  /** The local a8s operator (a real PostgreSQL server per a8s Postgresql), its data removed on stop. */
  private async startA8sOperator(): Promise<void> {
    const a8s = new SandboxA8sOperator({ client: new KubeClient(this.cp!.kubeConfig), dataDir: this.a8sDataDir });
    await a8s.start();
    this.stops.push(async () => {
      await a8s.stop();
      fs.rmSync(this.a8sDataDir, { recursive: true, force: true });
    });
    this.a8sOperator = a8s;
  }

  /**
   * 4. pulumi up of the stack program, runtime manifests mode plus the catalogue package (klutch-kit:catalogue):
   * binding CRDs, backend and konnector objects, and the Configuration, Function, provider-kubernetes and its
   * ProviderConfig, which real Crossplane installs.
   */
  private async pulumiUp(): Promise<void> {
    const cp = this.cp!;
    const dir = this.dir;
    const up = await this.step(
      this.pods
        ? 'pulumi up (stacks/main.ts, manifests: runtime, images built and pushed to the node, catalogue: Configuration package); Crossplane (pods) installed the packages'
        : 'pulumi up (stacks/main.ts, manifests: runtime, catalogue: Configuration package); Crossplane installed the packages',
      async () => {
        const t = Date.now();
        const stack = await (this.stackCreating ?? createLocalStack(path.join(dir, 'pulumi'), this.bins!, 'sandbox', 'klutch-kit sandbox', SANDBOX_STACK));
        await stack.setAllConfig(this.stackConfig());
        const split = { setUp: (Date.now() - t) / 1000, up: 0, packages: 0 };
        if (!this.pods) {
          this.localProcesses = this.startLocalProcesses();
          this.localProcesses.catch(() => undefined);
        }
        const res = await this.up(stack);
        split.up = (Date.now() - t) / 1000 - split.setUp;
        this.catalogue = await awaitCatalogue(cp, this.crossplane!, this.pushed!);
        split.packages = (Date.now() - t) / 1000 - split.setUp - split.up;
        if (this.a9sStarting) {
          const a9s = (this.a9sPart = await this.a9sStarting);
          this.say(
            `      a9s: provider-anynines ${a9s.provider.version} (${this.pods ? 'a pod' : `network namespace ${a9s.provider.networkNamespace}`}), broker stand-in ${a9s.broker.url}; ProviderConfigs ${a9s.providerConfigs.map((p) => p.metadata.name).join(', ')} healthy`,
          );
        }
        return { stack, res, split };
      },
      ({ res, split }) =>
        [
          `resources: ${JSON.stringify(res)}  (log ${path.join(dir, 'logs', 'pulumi-up.log')}, per resource ${path.join(dir, 'logs', 'pulumi-timeline.log')})`,
          `stack set-up ${split.setUp.toFixed(1)} s, pulumi up ${split.up.toFixed(1)} s, then the packages Healthy and the export templates ${split.packages.toFixed(1)} s`,
          `catalogue ${this.catalogue!.packageRef} installed by Crossplane: ${this.catalogue!.xrds.length} XRDs; ${this.apiStyle.namespaced ? 'namespaced XR' : 'claim'} APIs ${this.catalogue!.claimCrds.join(', ')}`,
        ].join('\n'),
    );
    this.stack = up.stack;
  }

  /**
   * `pulumi up` beside the Crossplane start (with pods: once Crossplane is Available), its output in
   * `logs/pulumi-up.log`, each resource's start and end in `logs/pulumi-timeline.log`. Resolves with the update's
   * resource changes as soon as the engine reports its summary with every step ended: what the stack applies exists
   * then. The automation API's calls after the update (`pulumi stack output` twice, `pulumi stack history`) run on
   * beside the next steps, in `upFinishing`, which start() awaits (and which fails the start if the update did not
   * succeed).
   */
  private async up(stack: Stack): Promise<OpMap> {
    // With pods, the packages pulumi applies at once need Crossplane's CRDs and the ImageConfigs that send its package
    // pulls to the node registry, both there once Crossplane is Available; the images build inside pulumi up beside
    // the packages' install, and only the objects naming them wait for their push (stacks/_deploy.ts).
    if (this.pods) await this.crossplaneStarting;
    const out = fs.openSync(path.join(this.dir, 'logs', 'pulumi-up.log'), 'a');
    const timelineFd = fs.openSync(path.join(this.dir, 'logs', 'pulumi-timeline.log'), 'a');
    const timeline = resourceTimeline(timelineFd, Date.now());
    const steps = new UpSteps();
    let summarized: (changes: OpMap) => void = () => undefined;
    const summary = new Promise<OpMap>((resolve) => (summarized = resolve));
    const full = stack
      .up({
        color: 'never',
        parallel: SANDBOX_PULUMI_PARALLEL,
        onOutput: (s) => fs.writeSync(out, s),
        onEvent: (e) => {
          timeline(e);
          // a component reports no end of its own: an app cluster's foundation is done when `<cluster>-objects`, which
          // waits for it, starts
          const started = e.resourcePreEvent?.metadata;
          const cluster =
            started?.type === 'kubernetes:yaml/v2:ConfigGroup' && started.urn.endsWith('-objects') ? started.urn.split('::').pop()!.slice(0, -8) : '';
          if (cluster.startsWith('app-')) this.foundation(cluster).resolve();
          steps.see(e);
          if (e.summaryEvent && steps.succeeded()) summarized(e.summaryEvent.resourceChanges);
        },
      })
      .then((res) => {
        if (res.summary.result !== 'succeeded') throw new Error(`pulumi up: ${res.summary.result}`);
        return res;
      })
      .finally(() => {
        fs.closeSync(out);
        fs.closeSync(timelineFd);
      });
    full.catch(() => undefined);
    this.upFinishing = full;
    const [changes] = await Promise.all([Promise.race([summary, full.then((res) => res.summary.resourceChanges ?? {})]), this.crossplaneStarting]);
    // every foundation exists now, whether or not its event was seen
    for (const name of ['control-plane', 'app-1', 'app-2']) this.foundation(name).resolve();
    return changes;
  }

  /**
   * The gate of a stack cluster's foundation (`app-1`, `app-2`: resolved when pulumi up created it), or of the whole
   * update (`control-plane`: resolved when pulumi up is through).
   */
  private foundation(cluster: string): { done: Promise<void>; resolve: () => void } {
    let gate = this.foundations.get(cluster);
    if (!gate) {
      let resolve = () => {};
      const done = new Promise<void>((r) => (resolve = r));
      gate = { done, resolve };
      this.foundations.set(cluster, gate);
    }
    return gate;
  }

  /** The stack's configuration: the pods topology (podsStackConfig), or runtime manifests with kubeconfig access. */
  private stackConfig(): Parameters<Stack['setAllConfig']>[0] {
    const [cp, apps, pushed] = [this.cp!, this.apps!, this.pushed!];
    const secrets = generateStackSecrets();
    const style = apiStyleName(this.apiStyle);
    if (this.pods) {
      return podsStackConfig({
        controlPlane: { name: 'control-plane', cluster: cp },
        appClusters: [
          { name: 'app-1', cluster: apps[0] },
          { name: 'app-2', cluster: apps[1] },
        ],
        backend: { url: this.backendUrl, prettyName: 'Klutch sandbox', replicas: 2 },
        dex: this.dex!,
        catalogue: { package: pushed.packageRef, apiStyle: style },
        secrets,
      });
    }
    const kc = (c: RealCluster) => fs.readFileSync(c.kubeconfigPath, 'utf8');
    return {
      'klutch-kit:controlPlane': { value: JSON.stringify({ name: 'control-plane', access: { kind: 'kubeconfig' } }) },
      'klutch-kit:appClusters': {
        value: JSON.stringify([
          { name: 'app-1', access: { kind: 'kubeconfig' } },
          { name: 'app-2', access: { kind: 'kubeconfig' } },
        ]),
      },
      'klutch-kit:backend': { value: JSON.stringify({ url: this.backendUrl, prettyName: 'Klutch sandbox' }) },
      'klutch-kit:oidc': { value: JSON.stringify({ issuerUrl: this.issuer, clientId: BACKEND_CLIENT_ID }) },
      'klutch-kit:skipAwait': { value: 'true' },
      'klutch-kit:manifests': { value: 'runtime' },
      'klutch-kit:catalogue': { value: JSON.stringify({ install: 'ConfigurationPackage', package: pushed.packageRef, apiStyle: style }) },
      'klutch-kit:kubeconfig-control-plane': { value: kc(cp), secret: true },
      'klutch-kit:kubeconfig-app-1': { value: kc(apps[0]), secret: true },
      'klutch-kit:kubeconfig-app-2': { value: kc(apps[1]), secret: true },
      'klutch-kit:oidcClientSecret': { value: this.clientSecret, secret: true },
      'klutch-kit:cookieSigningKey': { value: secrets['cookieSigningKey']!, secret: true },
      'klutch-kit:cookieEncryptionKey': { value: secrets['cookieEncryptionKey']!, secret: true },
    };
  }

  /** 5. the backend: with pods its 2 pods and Dex Ready on the node; else the backend and 2 konnectors as local processes. */
  private async startBackend(): Promise<void> {
    if (this.pods)
      await this.step(
        'backend (2 pods) + Dex (a pod) Ready on the node',
        () => this.podsReady(),
        () => `backend ${this.backendUrl} (a loopback forwarder to its Service), Dex ${this.issuer} (a forwarder on the node IP to its Service)`,
      );
    else
      await this.step(
        'backend + 2 konnectors as local processes (tsx; the konnectors started during pulumi up)',
        () => this.localProcesses!,
        () => this.processes.map((p) => `${p.name}: pid ${p.child.pid}  log ${p.log}`).join('\n'),
      );
  }

  /** The backend and Dex as pods, from the images pulumi up built and pushed, reachable from the host. */
  private async podsReady(): Promise<void> {
    const cp = this.cp!;
    await Promise.all([
      deploymentReady(cp.kubeConfig, PODS_NAMESPACE, 'klutch-backend', 2, 180_000),
      deploymentReady(cp.kubeConfig, PODS_NAMESPACE, 'dex', 1, 180_000),
    ]);
    // the host reaches both through their Services (the forwarders): kube-proxy programs them a moment after Ready
    await cp.node!.waitForService(PODS_NAMESPACE, 'dex', { port: 'http' });
    await eventually('backend /readyz through its Service', async () => (await fetch(`${this.backendUrl}/readyz`)).ok, 60_000);
  }

  /** The backend and a konnector per app cluster as local processes (tsx), until the backend is ready. */
  private async startLocalProcesses(): Promise<void> {
    // a konnector as soon as pulumi up created what it lists and watches, its cluster's binding CRDs; the backend once
    // pulumi up is through: it writes the binder ClusterRoles the stack creates (a server-side apply conflict otherwise)
    const konnectors = Promise.all(
      this.apps!.map(async (a, i) => {
        const port = await freePort();
        await this.foundation(`app-${i + 1}`).done;
        this.spawnLocal(`konnector-${a.name}`, 'konnector', [
          '--kubeconfig',
          a.kubeconfigPath,
          '--no-leader-elect',
          `--health-address=127.0.0.1:${port}`,
          '--heartbeat-interval=10s',
          // the demo's namespace (both demos'); a claim elsewhere shows NamespaceNotAllowed naming the flag
          `--allow-namespace=${DEMO.namespace}`,
        ]);
      }),
    );
    await this.foundation('control-plane').done;
    const backend = this.spawnLocal('klutch-backend', 'backend', [
      '--kubeconfig',
      this.cp!.kubeconfigPath,
      `--listen-address=127.0.0.1:${this.backendPort}`,
      `--oidc-issuer-url=${this.issuer}`,
      `--oidc-issuer-client-id=${BACKEND_CLIENT_ID}`,
      `--oidc-issuer-client-secret=${this.clientSecret}`,
      '--oidc-bearer-audience',
      BACKEND_CLIENT_ID,
      BACKEND_RESOURCE,
      `--cookie-signing-key=${randomBytes(32).toString('base64')}`,
      '--no-leader-elect',
      '--pretty-name=Klutch sandbox',
    ]);
    await konnectors;
    this.writeState();
    await eventually(
      'backend /readyz',
      async () => {
        if (backend.exitCode !== null) throw new Error(`klutch-backend exited with ${backend.exitCode}; see ${this.processes[0]!.log}`);
        return (await fetch(`${this.backendUrl}/readyz`)).ok;
      },
      90_000,
    );
  }

  /** 6. both app clusters bound: kubectl bind logging in at Dex with pods (and a konnector pod each), else kubectl-bind with `--token`. */
  private async bindApps(): Promise<void> {
    const bound = () =>
      Object.entries(this.bindOutput)
        .map(([k, v]) => `${k}: ${v.split('\n').slice(-1)[0]}`)
        .join('\n');
    const apps = this.apps!;
    if (this.pods) {
      await this.step(
        'kubectl bind (login at Dex): both app clusters bound (postgresqlinstances, servicebindings); a konnector pod each',
        () => this.bindThroughDex(),
        () => bound() + `\nkonnectors: Deployments konnector-${apps[0].name}/konnector, konnector-${apps[1].name}/konnector on the control plane's node`,
      );
    } else {
      await this.step('kubectl-bind: both app clusters bound (postgresqlinstances, servicebindings)', () => this.bindWithToken(), bound);
    }
  }

  /** kubectl bind (in-process), the login at Dex through the backend's OIDC flow; a konnector pod per app cluster. */
  private async bindThroughDex(): Promise<void> {
    for (const a of this.apps!) {
      // the image the stack built and put into the app cluster's konnector Deployment: kubectl bind keeps it
      const installed = await clientOf(a.kubeConfig).request<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(
        'GET',
        `/apis/apps/v1/namespaces/${KONNECTOR_NAMESPACE}/deployments/konnector`,
      );
      const konnectorImage = installed.spec.template.spec.containers[0]!.image;
      // the demo's namespace, where the konnector may bind (kubectl bind --allow-namespace: it must exist)
      const app = new KubeClient(a.kubeConfig);
      await ensureDemoNamespace(app).finally(() => app.close());
      for (const api of BIND_APIS) {
        const [plural, ...group] = api.split('.');
        const r = await bindThroughDex({
          app: a,
          backendUrl: this.backendUrl,
          caPem: this.dex!.caPem,
          group: group.join('.'),
          plural: plural!,
          konnectorImage,
          allowNamespaces: [DEMO.namespace],
          timeoutMs: 90_000,
        });
        this.bindOutput[`${a.name} ${api}`] = r.said.trim();
      }
      await runKonnectorOnNode(this.cp!, a, this.forwarders, { namespace: `konnector-${a.name}`, timeoutMs: 180_000 });
    }
    await this.boundCrds();
  }

  /**
   * kubectl-bind, non-interactive (`--token` from a client-credentials grant), both app clusters side by side, both
   * APIs in one command each (`--resource` twice: one provider kubeconfig Secret, the CRDs made together).
   */
  private async bindWithToken(): Promise<void> {
    await Promise.all(
      this.apps!.map(async (a, i) => {
        const { access_token } = await this.op!.clientCredentials(this.machine[i]!.id, this.machine[i]!.secret, { resource: BACKEND_RESOURCE, scope: 'bind' });
        const r = await run([
          path.join(REPO_ROOT, 'bin', 'kubectl-bind.js'),
          `${this.backendUrl}/export`,
          '--kubeconfig',
          a.kubeconfigPath,
          ...BIND_APIS.flatMap((api) => ['--resource', api]),
          '--token',
          access_token,
          '--yes',
          '--skip-konnector',
          '--timeout',
          '90s',
        ]);
        if (r.code !== 0) throw new Error(`kubectl-bind ${BIND_APIS.join(' ')} on ${a.name}: exit ${r.code}\n${r.stderr}\n${r.stdout}`);
        // its table: a line per binding (NAME, SECRET, CLAIMS)
        for (const api of BIND_APIS) {
          const line = r.stdout.split('\n').find((l) => l.startsWith(`${api}\t`));
          if (!line) throw new Error(`kubectl-bind on ${a.name} printed no line for ${api}:\n${r.stdout}`);
          this.bindOutput[`${a.name} ${api}`] = line;
        }
      }),
    );
    await this.boundCrds();
  }

  /** The bound CRDs in both app clusters (what the konnectors install), Established: claims can be created. */
  private async boundCrds(): Promise<void> {
    await Promise.all(this.apps!.map((a) => waitForCrdsEstablished(a.kubeConfig, BIND_APIS, 60_000)));
  }

  /** The running sandbox, as the steps left it. */
  private sandbox(): Sandbox {
    return {
      controlPlane: this.cp!,
      apps: this.apps!,
      backendUrl: this.backendUrl,
      issuer: this.issuer,
      ...(this.op ? { op: this.op } : {}),
      pods: this.pods,
      stack: this.stack!,
      crossplane: this.crossplane!,
      catalogue: this.catalogue!,
      a8s: this.a8sOperator!,
      ...(this.a9sPart ? { a9s: this.a9sPart } : {}),
      apiStyle: this.apiStyle,
      processes: this.processes,
      timings: this.timings,
      bindOutput: this.bindOutput,
      dir: this.dir,
      stop: () => this.stop(),
    };
  }
}

/**
 * Whether an update's engine events show every step it began ended with its outputs and none failed: a failed step
 * has a `resOpFailedEvent` (and an error diagnostic) and no outputs event. Read when the summary event arrives, it says
 * whether the update succeeded before the CLI and the automation API are through.
 */
export class UpSteps {
  private readonly open = new Set<string>();
  private failed = false;

  see(e: EngineEvent): void {
    const begun = e.resourcePreEvent?.metadata;
    const ended = e.resOutputsEvent?.metadata;
    if (begun) this.open.add(`${begun.op} ${begun.urn}`);
    if (ended) this.open.delete(`${ended.op} ${ended.urn}`);
    if (e.resOpFailedEvent || e.diagnosticEvent?.severity === 'error') this.failed = true;
  }

  succeeded(): boolean {
    return !this.failed && this.open.size === 0;
  }
}

/**
 * An `onEvent` of `pulumi up` that writes a line per resource step to `fd`: the milliseconds since `t0`, `start` or
 * `done`, the operation and the resource's type and name, so that the update's critical path can be read off.
 */
export function resourceTimeline(fd: number, t0: number): (e: EngineEvent) => void {
  return (e) => {
    const [what, m] = e.resourcePreEvent ? ['start', e.resourcePreEvent.metadata] : e.resOutputsEvent ? ['done ', e.resOutputsEvent.metadata] : [];
    if (!what || !m) return;
    const [, , type, name] = m.urn.split('::');
    fs.writeSync(fd, `${String(Date.now() - t0).padStart(7)} ms  ${what}  ${m.op.padEnd(7)}  ${type?.split('$').pop()}  ${name}\n`);
  };
}

/** The PIDs of a cluster's processes. */
export function clusterPids(c: RealCluster): number[] {
  return Object.values(c.pids()).filter((p): p is number => p !== undefined);
}

/** The PIDs of the Crossplane harness's processes. */
export function harnessPids(xp: CrossplaneHarness): number[] {
  return Object.values(xp.pids()).filter((p): p is number => p !== undefined);
}

/**
 * Where the local a8s operator keeps its PostgreSQL servers' data: `<run>/a8s`, unless the servers' user
 * (`postgres`, when the sandbox runs as root) cannot enter the run folder (e.g. under /root); then a folder of the
 * same run under the system's temporary folder. Either way it is recorded in the state file and removed on stop.
 */
export function sandboxA8sDataDir(runDir: string): string {
  const inRun = path.join(runDir, 'a8s');
  try {
    assertReachable(runDir, serverUser(), 'run folder');
    return inRun;
  } catch {
    // the run folder's full path in the name: two sandboxes whose run folders share a base name (`…/run`) must not
    // share (and remove) one data folder
    const id = createHash('sha256').update(path.resolve(runDir)).digest('hex').slice(0, 8);
    return path.join(os.tmpdir(), `klutch-kit-sandbox-a8s-${path.basename(runDir)}-${id}`);
  }
}

type Claim = KubeObject & { spec?: { resourceRef?: ObjRef; plan?: string }; status?: { conditions?: Condition[] } };
type Secret = KubeObject & { type?: string; data?: Record<string, string> };
interface ObjRef {
  apiVersion: string;
  kind: string;
  name: string;
}
type Composite = KubeObject & { spec?: { resourceRefs?: ObjRef[]; crossplane?: { resourceRefs?: ObjRef[] } }; status?: { conditions?: Condition[] } };
type XpObject = KubeObject & {
  spec?: { forProvider?: { manifest?: KubeObject } };
  status?: { conditions?: Condition[]; atProvider?: { manifest?: KubeObject } };
};

/** A ResourceRef for an object reference (plural = lower-case kind + s, true for the kinds the demo follows). */
function refOf(r: ObjRef, namespaced: boolean): ResourceRef {
  const [group, version] = r.apiVersion.includes('/') ? (r.apiVersion.split('/') as [string, string]) : ['', r.apiVersion];
  return { group, version, kind: r.kind, plural: `${r.kind.toLowerCase()}s`, namespaced };
}

/**
 * One claim followed through the control plane: claim → XR → Object → a8s object. With ApiStyle.NAMESPACED_XR
 * there is no claim: `claimUp` and `xr` are the same object, the XR the konnector synced up.
 */
export interface ClaimPath {
  claimUp: Claim;
  xr: Composite;
  object: XpObject;
  /** The a8s object the Object manages (Postgresql or ServiceBinding), as read from the control plane. */
  a8s: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
}

export interface DemoResult {
  /** The provider namespace on the control plane the claims were synced to. */
  upstreamNamespace: string;
  instance: ClaimPath;
  binding: ClaimPath;
  instanceDown: Claim;
  bindingDown: Claim;
  secretDown: Secret;
  /** Decoded credentials of the Secret in app-1. */
  credentials: { username: string; password: string; database: string; instance_service: string };
  /** The ready-to-run psql command. */
  psql: string;
  /** Seconds since the claims were created, per hop. */
  hops: Record<string, number>;
  seconds: number;
}

const ready = (c: { status?: { conditions?: Condition[] } } | undefined) => getCondition(c?.status?.conditions, 'Ready')?.status === 'True';
const shellQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/**
 * Follows a claim on the control plane to its XR, the provider-kubernetes Object and the a8s object it manages; a
 * namespaced XR (ApiStyle.NAMESPACED_XR) straight to its namespaced `kubernetes.m.crossplane.io` Object.
 */
async function followClaim(
  cp: KubeClient,
  ref: ResourceRef,
  ns: string,
  name: string,
  mark: (hop: string) => void,
  label: string,
  style: ApiStyle,
): Promise<ClaimPath> {
  const composedObject = (x: Composite | null | undefined) =>
    (x?.spec?.resourceRefs ?? x?.spec?.crossplane?.resourceRefs ?? []).find((r) => r.kind === 'Object');
  if (style.namespaced) {
    const xr = await eventually(
      `${ref.kind} ${ns}/${name} (a namespaced XR) with a composed Object`,
      async () => {
        const x = await cp.getOrNull<Composite>(ref, ns, name);
        return composedObject(x) ? x : undefined;
      },
      120_000,
    );
    mark(`${label}: XR composed the Object`);
    // a namespaced ServiceBinding also composes its credentials Secret as an Object: follow the one with the a8s object
    const objects = (xr.spec?.crossplane?.resourceRefs ?? []).filter((r) => r.kind === 'Object');
    const a8sObject = await eventually(
      `the Object of ${ref.kind} ${ns}/${name} that manages an a8s object`,
      async () => {
        for (const r of objects) {
          const o = await cp.getOrNull<XpObject>(refOf(r, true), ns, r.name);
          if (o && o.spec?.forProvider?.manifest?.kind !== 'Secret') return r;
        }
        return undefined;
      },
      60_000,
    );
    return followObject(cp, xr as Claim, xr, a8sObject, ns, mark, label);
  }
  const claimUp = await eventually(
    `${ref.kind} ${ns}/${name} bound to an XR`,
    async () => {
      const c = await cp.getOrNull<Claim>(ref, ns, name);
      return c?.spec?.resourceRef ? c : undefined;
    },
    120_000,
  );
  mark(`${label}: claim bound to XR`);
  const xrRef = claimUp.spec!.resourceRef!;
  const xr = await eventually(
    `XR ${xrRef.kind} ${xrRef.name} with a composed Object`,
    async () => {
      const x = await cp.getOrNull<Composite>(refOf(xrRef, false), undefined, xrRef.name);
      const refs = x?.spec?.resourceRefs ?? x?.spec?.crossplane?.resourceRefs ?? [];
      return refs.some((r) => r.kind === 'Object') ? x : undefined;
    },
    120_000,
  );
  mark(`${label}: XR composed the Object`);
  return followObject(cp, claimUp, xr, composedObject(xr)!, undefined, mark, label);
}

/** The composed provider-kubernetes Object (cluster-scoped, or in `objectNs`) and the a8s object it manages. */
async function followObject(
  cp: KubeClient,
  claimUp: Claim,
  xr: Composite,
  objRef: ObjRef,
  objectNs: string | undefined,
  mark: (hop: string) => void,
  label: string,
): Promise<ClaimPath> {
  const object = await eventually(`Object ${objRef.name}`, () => cp.getOrNull<XpObject>(refOf(objRef, objectNs !== undefined), objectNs, objRef.name), 60_000);
  const manifest = object.spec!.forProvider!.manifest!;
  const a8sRef = refOf({ apiVersion: manifest.apiVersion!, kind: manifest.kind!, name: manifest.metadata.name! }, true);
  const a8s = await eventually(
    `${manifest.kind} ${manifest.metadata.namespace}/${manifest.metadata.name} created by provider-kubernetes`,
    () => cp.getOrNull(a8sRef, manifest.metadata.namespace, manifest.metadata.name!),
    120_000,
  );
  mark(`${label}: a8s ${manifest.kind} created`);
  return { claimUp, xr, object, a8s };
}

/**
 * Provisions a PostgresqlInstance and a ServiceBinding in app-1 and follows every hop: up to the control plane,
 * through real Crossplane (XR, Object) to the a8s objects the local a8s operator serves, and the status and the
 * credentials Secret back down to app-1; then connects with those credentials.
 */
export async function provisionDemo(sb: Sandbox, say: (l: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<DemoResult> {
  const t = Date.now();
  const app = new KubeClient(sb.apps[0].kubeConfig);
  const cp = new KubeClient(sb.controlPlane.kubeConfig);
  const { namespace: ns, instance, binding } = DEMO;
  const hops: Record<string, number> = {};
  const mark = (hop: string) => {
    hops[hop] = (Date.now() - t) / 1000;
    say(`      ${hops[hop]!.toFixed(1).padStart(5)} s  ${hop}`);
  };
  try {
    await ensureDemoNamespace(app);
    say(`[7/${SANDBOX_STEPS}] PostgresqlInstance + ServiceBinding in ${sb.apps[0].name}: through real Crossplane to a local PostgreSQL, credentials back down`);
    // the backend's Composition: `spec.compositionRef` on a claim, `spec.crossplane.compositionRef` on a namespaced XR
    const composition = (name: string) => (sb.apiStyle.namespaced ? { crossplane: { compositionRef: { name } } } : { compositionRef: { name } });
    // Applied server-side, as `kubectl apply --server-side` and GitOps tools do: the API server holds a POST (create)
    // for two seconds while its CRD is younger than that (apiextensions-apiserver's guard for HA peers), and the konnector
    // made these CRDs a moment ago in step 6.
    await app.apply(
      SANDBOX_CLAIMS.postgresqlInstances,
      {
        metadata: { name: instance, namespace: ns },
        spec: { service: 'a9s-postgresql14', plan: DEMO_PLANS[0], expose: 'Internal', ...composition('a8s-postgresql') },
      },
      DEMO_FIELD_MANAGER,
    );
    await app.apply(
      SANDBOX_CLAIMS.serviceBindings,
      { metadata: { name: binding, namespace: ns }, spec: { instanceRef: instance, serviceInstanceType: 'postgresql', ...composition('a8s-servicebinding') } },
      DEMO_FIELD_MANAGER,
    );
    say(`      created in ${sb.apps[0].name}: PostgresqlInstance ${ns}/${instance} (plan ${DEMO_PLANS[0]}), ServiceBinding ${ns}/${binding}`);
    const up = await eventually(
      `the ${sb.apiStyle.namespaced ? 'XRs' : 'claims'} on the control plane`,
      async () => {
        const i = (await cp.list<Claim>(SANDBOX_CLAIMS.postgresqlInstances)).items.find((o) => o.metadata.name === instance);
        const b = (await cp.list<Claim>(SANDBOX_CLAIMS.serviceBindings)).items.find((o) => o.metadata.name === binding);
        return i && b ? i.metadata.namespace! : undefined;
      },
      60_000,
    );
    mark(`${sb.apiStyle.namespaced ? 'namespaced XRs' : 'claims'} synced to the control plane (namespace ${up})`);
    const [instPath, bindPath] = await Promise.all([
      followClaim(cp, SANDBOX_CLAIMS.postgresqlInstances, up, instance, mark, 'PostgresqlInstance', sb.apiStyle),
      followClaim(cp, SANDBOX_CLAIMS.serviceBindings, up, binding, mark, 'ServiceBinding', sb.apiStyle),
    ]);
    const pgKey = `${instPath.a8s.metadata.namespace}/${instPath.a8s.metadata.name}`;
    await eventually(
      `a8s Postgresql ${pgKey} Running`,
      async () =>
        (await cp.get<Postgresql>(A8S_RESOURCES.postgresqls, instPath.a8s.metadata.namespace, instPath.a8s.metadata.name!)).status?.clusterStatus === 'Running',
      120_000,
    );
    mark(`a8s Postgresql Running (local PostgreSQL on ${sb.a8s.instances.get(pgKey)?.server.address}:5432)`);
    const instanceDown = await eventually(
      'PostgresqlInstance Ready in app-1',
      async () => {
        const c = await app.get<Claim>(SANDBOX_CLAIMS.postgresqlInstances, ns, instance);
        return ready(c) ? c : undefined;
      },
      120_000,
    );
    mark('PostgresqlInstance Ready in app-1');
    const bindingDown = await eventually(
      'ServiceBinding Ready in app-1',
      async () => {
        const c = await app.get<Claim>(SANDBOX_CLAIMS.serviceBindings, ns, binding);
        return ready(c) ? c : undefined;
      },
      120_000,
    );
    mark('ServiceBinding Ready in app-1');
    // claims: the a8s operator's Secret, brought down as is; namespaced XRs: the Secret the Composition composes from it
    const secretName = sb.apiStyle.namespaced ? `${binding}${A9S_BINDING_SECRET_SUFFIX}` : secretNameOf(bindPath.a8s.metadata.name!);
    const secretDown = await eventually(`Secret ${ns}/${secretName} in app-1`, () => app.getOrNull<Secret>(CoreResources.secrets, ns, secretName), 120_000);
    mark(`Secret ${ns}/${secretName} in app-1`);
    const d = (k: string) => Buffer.from(secretDown.data?.[k] ?? '', 'base64').toString('utf8');
    const credentials = { username: d('username'), password: d('password'), database: d('database'), instance_service: d('instance_service') };
    await eventually(
      'a PostgreSQL connection with the credentials from app-1',
      async () => {
        const c = new pg.Client({
          host: credentials.instance_service,
          port: 5432,
          user: credentials.username,
          password: credentials.password,
          database: credentials.database,
          connectionTimeoutMillis: 5_000,
        });
        c.on('error', () => undefined);
        await c.connect();
        try {
          await c.query('SELECT 1');
        } finally {
          await c.end();
        }
        return true;
      },
      60_000,
    );
    mark('first connection with those credentials');
    const psql = `PGPASSWORD=${shellQuote(credentials.password)} psql -h ${credentials.instance_service} -p 5432 -U ${credentials.username} ${credentials.database}`;
    const seconds = (Date.now() - t) / 1000;
    return { upstreamNamespace: up, instance: instPath, binding: bindPath, instanceDown, bindingDown, secretDown, credentials, psql, hops, seconds };
  } finally {
    app.close();
    cp.close();
  }
}

/** Changes the demo claim's plan in app-1 and waits until the a8s Postgresql on the control plane has the new plan's spec. */
export async function changeDemoPlan(
  sb: Sandbox,
  demo: DemoResult,
  say: (l: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<{ before: Record<string, unknown>; after: Record<string, unknown>; seconds: number }> {
  const t = Date.now();
  const app = new KubeClient(sb.apps[0].kubeConfig);
  const cp = new KubeClient(sb.controlPlane.kubeConfig);
  const a8s = demo.instance.a8s;
  try {
    const before = (await cp.get<Postgresql>(A8S_RESOURCES.postgresqls, a8s.metadata.namespace, a8s.metadata.name!)).spec ?? {};
    await app.mergePatch(SANDBOX_CLAIMS.postgresqlInstances, DEMO.namespace, DEMO.instance, { spec: { plan: DEMO_PLANS[1] } });
    const after = await eventually(
      `the a8s Postgresql with plan ${DEMO_PLANS[1]}'s spec`,
      async () => {
        const spec = (await cp.get<Postgresql>(A8S_RESOURCES.postgresqls, a8s.metadata.namespace, a8s.metadata.name!)).spec ?? {};
        return JSON.stringify(spec.resources) !== JSON.stringify(before.resources) || spec.volumeSize !== before.volumeSize ? spec : undefined;
      },
      120_000,
    );
    const seconds = (Date.now() - t) / 1000;
    const show = (s: Postgresql['spec']) => `replicas ${s?.replicas}, volumeSize ${s?.volumeSize}, limits ${JSON.stringify(s?.resources?.limits ?? {})}`;
    say(`[8/${SANDBOX_STEPS}] plan ${DEMO_PLANS[0]} → ${DEMO_PLANS[1]} in ${sb.apps[0].name} reached the a8s object … done in ${seconds.toFixed(1)} s`);
    say(`      a8s Postgresql ${a8s.metadata.namespace}/${a8s.metadata.name}: ${show(before)}  →  ${show(after)}`);
    return { before: before as Record<string, unknown>, after: after as Record<string, unknown>, seconds };
  } finally {
    app.close();
    cp.close();
  }
}

/** Which Pulumi CLI the sandbox runs: a compatible one from PATH, or the pinned release built (KLUTCH_KIT_USE_PATH_TOOLS). */
function pulumiChoice(bins: PulumiBinaries): string {
  return bins.cliFrom === 'path'
    ? `pulumi: ${bins.pulumi} from PATH (${bins.cliVersion}; KLUTCH_KIT_USE_PATH_TOOLS=0 builds the pinned release instead)`
    : `pulumi: ${bins.cliVersion}, built from tools/pulumi/cli (${bins.pulumi})`;
}
