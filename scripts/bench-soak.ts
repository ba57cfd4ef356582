/**
 * npm run bench:soak [-- --minutes 30 --rate 3 --objects 30]
 *
 * Soak: one control plane and three app clusters (runtime/realinfra), bound through the real bind
 * backend (--backend-replicas `klutch-backend` child processes with leader election, behind a
 * round-robin proxy on loopback; machine clients log in at a real OIDC issuer on loopback and bind
 * with `kubectl bind --token`), one `klutch-konnector` child process per app cluster. Every
 * --restart-every seconds of the churn one of these processes is killed with SIGKILL and started
 * again with the same arguments (a konnector, then a backend replica — the Lease holder and a standby
 * in turn —, then the next konnector, …); each restart is printed with the time until the process
 * was ready again and, for a backend, who holds the leader Lease afterwards. The load generator keeps
 * about --objects claims alive per app cluster and churns them (create, spec update, delete) at --rate operations per second over all clusters for --minutes; a
 * provider stand-in on the control plane answers every upstream claim with a status and a credential
 * Secret (owned by the claim, so the garbage collector removes it with the claim), which the konnector
 * brings down.
 *
 * At the end: every claim converged on both sides (spec up = down = written, status down = up = final,
 * credential Secrets down = up for live claims, gone on both sides for deleted ones, nothing lost,
 * duplicated or unexpected); RSS of the konnectors and the backend replicas (VmRSS every
 * --sample-seconds) per process incarnation as start / peak / end, start being the sample right after
 * the initial sync (for a restarted incarnation: 15 s after it was ready again). Exit code 1 when
 * anything diverges, a process exits on its own, a restarted process is not ready in time, the Lease
 * is not sane after a backend restart, or a judged incarnation's RSS ends more than --max-rss-growth %
 * above its start (an incarnation that was killed, or whose start sample was taken again — restarted,
 * or a standby that became the leader —, is judged only when its series spans 5 minutes or more;
 * shorter ones are listed, not judged); 130 on Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, type WriteStream } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { bindingCrds } from '../contract/api/index.js';
import { CoreResources, KubeClient, type KubeObject } from '../runtime/core/client.js';
import { Controller } from '../runtime/core/controller.js';
import { Informer } from '../runtime/core/informer.js';
import { silentLogger } from '../runtime/core/logger.js';
import { applyManifests, probe, startCluster, waitForCrdsEstablished, type RealCluster } from '../runtime/realinfra/index.js';
import { BINDING_RESOURCES, KONNECTOR_NAMESPACE } from '../contract/index.js';
import { PROVIDER_KUBECONFIG_LABEL } from '../runtime/kubectl-bind/exit.js';
import { OidcTestProvider } from '../test/support/oidc-provider.js';
import { RoundRobinProxy } from '../test/support/round-robin-proxy.js';
import { canonical, compareSoak, type ClaimView, type ClusterState, type Difference, type SecretView } from './_soak-converge.js';
import { claimCrd, credentialsExportTemplate, CREDS_LABEL, CREDS_LABEL_VALUE } from './_bench-api.js';
import { bundleProgram, cpuSeconds, freePort, repo } from './_bench-procs.js';
import { RssSampler, rssChecks, rssGrowthProblems } from './_soak-rss.js';
import { leaseSanity, restartTarget, restartTicks, type LeaseView, type ReplicaView } from './_soak-restarts.js';

const num =
  (flag: string, min: number, integer = false) =>
  (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
      throw new Error(`${flag}: "${v}" must be ${integer ? 'an integer' : 'a number'} >= ${min}`);
    return n;
  };
const opts = new Command('bench-soak')
  .option('--minutes <n>', 'length of the churn in minutes', num('--minutes', 0.1), 30)
  .option('--rate <n>', 'claim operations (create, update, delete) per second, over all app clusters', num('--rate', 0.1), 3)
  .option('--objects <n>', 'claims kept alive per app cluster (the churn keeps the count within ±20 %)', num('--objects', 1, true), 30)
  .option('--namespaces <n>', 'consumer namespaces per app cluster', num('--namespaces', 1, true), 2)
  .option('--app-clusters <n>', 'app clusters bound to the control plane', num('--app-clusters', 1, true), 3)
  .option('--concurrency <n>', 'operations in flight at most', num('--concurrency', 1, true), 8)
  .option('--settle <seconds>', 'time allowed to converge, after the initial creates and after the churn', num('--settle', 1), 240)
  .option('--sample-seconds <n>', 'RSS sampling interval', num('--sample-seconds', 1), 10)
  .option('--max-rss-growth <percent>', 'fail when a process ends more than this much above its start RSS', num('--max-rss-growth', 0), 10)
  .option('--konnector-log-level <level>', 'log level of the konnector processes (logs go to files in the log folder)', 'info')
  .option('--backend-log-level <level>', 'log level of the backend processes', 'info')
  .option('--backend-replicas <n>', 'klutch-backend processes (leader election, behind a round-robin proxy)', num('--backend-replicas', 1, true), 2)
  .option(
    '--restart-every <seconds>',
    'during the churn, kill -9 one konnector or backend replica (in turn) this often and start it again; 0: no restarts',
    num('--restart-every', 0),
    45,
  )
  .option('--ready-timeout <seconds>', 'time a restarted process has to be ready again (/readyz 200)', num('--ready-timeout', 1), 120)
  .parse(process.argv)
  .opts<{
    minutes: number;
    rate: number;
    objects: number;
    namespaces: number;
    appClusters: number;
    concurrency: number;
    settle: number;
    sampleSeconds: number;
    maxRssGrowth: number;
    konnectorLogLevel: string;
    backendLogLevel: string;
    backendReplicas: number;
    restartEvery: number;
    readyTimeout: number;
  }>();

// ---------------------------------------------------------------------------------------------
// The data service of the soak: a claim with a spec the consumer writes, a status and a credential
// Secret the provider writes.

const GROUP = 'soak.klutch.test';
const SOAKDBS = { group: GROUP, version: 'v1', plural: 'soakdbs', kind: 'SoakDB', namespaced: true };
const CRD_NAME = `soakdbs.${GROUP}`;
const SECRETS = CoreResources.secrets;

interface Spec {
  size: number;
  tier: 'Shared' | 'Dedicated';
}
const secretName = (claim: string) => `${claim}-creds`;
const expectedStatus = (spec: unknown) => {
  const s = spec as Spec;
  return { phase: 'Ready', observedSize: s.size, observedTier: s.tier };
};
const expectedSecret = (claim: string, spec: unknown): Record<string, string> => {
  const s = spec as Spec;
  return { username: claim, password: `pw-${claim}-${s.size}`, tier: s.tier };
};

const soakCrd = (): KubeObject =>
  claimCrd(
    SOAKDBS,
    { size: { type: 'integer' }, tier: { type: 'string', enum: ['Shared', 'Dedicated'] } },
    { phase: { type: 'string' }, observedSize: { type: 'integer' }, observedTier: { type: 'string' } },
  );
/** The backend offers the CRD through this template, with a claim on the labelled credential Secrets. */
const soakTemplate = (): KubeObject => credentialsExportTemplate(SOAKDBS);

// ---------------------------------------------------------------------------------------------
// Output and process bookkeeping

const T0 = Date.now();
const stamp = () => {
  const s = Math.round((Date.now() - T0) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};
const say = (line: string) => process.stdout.write(`[soak ${stamp()}] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const logDir = mkdtempSync(path.join(tmpdir(), 'klutch-soak-'));
const cleanups: Array<{ what: string; run: () => Promise<void> }> = [];
let cleaning: Promise<void> | undefined;
let aborted = false;
/** Cluster starts in progress: a signal waits for them, so a cluster that comes up late is stopped too. */
let starting: Promise<unknown> = Promise.resolve();

/** Stops everything started so far, newest first; runs once even when called again (signal + finally). */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    // again while anything was registered meanwhile (a restart that was spawning when the clean-up began)
    while (cleanups.length > 0) {
      for (const c of cleanups.splice(0).reverse()) {
        try {
          await c.run();
        } catch (e) {
          process.stderr.write(`[soak] stopping ${c.what} failed: ${(e as Error).message}\n`);
        }
      }
    }
  })();
  return cleaning;
}

// Ctrl-C reaches this process twice (from the terminal's process group and relayed by the tsx
// wrapper): a repeated signal must not end the process before its clean-up has stopped the children.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (aborted) return;
    aborted = true;
    say(`${sig}: stopping every process started`);
    void starting.then(cleanUp, cleanUp).finally(() => {
      say(`stopped every process (${((Date.now() - T0) / 1000).toFixed(0)} s in total)`);
      process.exit(130);
    });
  });
}

interface Child {
  name: string;
  proc: ChildProcess;
  logFile: string;
  output: () => string;
  exited: Promise<void>;
}

/**
 * Spawns a Node.js child with its output in `<logDir>/<name>.log` (appended after `header` when
 * given: a restarted process keeps one log); registers its stop (SIGTERM, SIGKILL after 15 s).
 */
function spawnNode(name: string, args: string[], env: Record<string, string> = {}, header?: string): Child {
  const logFile = path.join(logDir, `${name.replace(/\s+/g, '-')}.log`);
  const file: WriteStream = createWriteStream(logFile, { flags: header ? 'a' : 'w' });
  if (header) file.write(`\n----- ${header} -----\n`);
  const proc = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let tail = '';
  const keep = (d: Buffer) => {
    file.write(d);
    tail = (tail + d.toString()).slice(-20_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  cleanups.push({
    what: name,
    run: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
      await new Promise<void>((r) => file.end(() => r()));
    },
  });
  return { name, proc, logFile, output: () => tail, exited };
}

/**
 * A child the soak may kill and start again with the same arguments, one incarnation at a time.
 * `env` is called per incarnation (a backend replica gets a new POD_NAME, as a replacement pod would).
 */
class Supervised {
  incarnation = 0;
  child!: Child;
  /** RSS names of the incarnations the soak killed */
  readonly killed = new Set<string>();
  /** CPU seconds of killed incarnations, read right before the kill */
  readonly cpuAtKill = new Map<string, number>();
  private readonly killedPids = new Set<number>();

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: (incarnation: number) => Record<string, string>,
    readonly readyUrl: string,
  ) {}

  /** the name of this incarnation in the RSS table: `<name>`, then `<name> #2`, … */
  get rssName(): string {
    return this.incarnation <= 1 ? this.name : `${this.name} #${this.incarnation}`;
  }
  get pid(): number {
    return this.child.proc.pid!;
  }
  get identity(): string {
    return this.env(this.incarnation).POD_NAME ?? '';
  }
  alive(): boolean {
    return this.child.proc.exitCode === null && this.child.proc.signalCode === null;
  }

  start(header?: string): Child {
    if (aborted || cleaning) throw new Error(`not starting ${this.name} again: the soak is stopping`);
    this.incarnation++;
    this.child = spawnNode(this.name, this.args, this.env(this.incarnation), header);
    return this.child;
  }

  /** Why the current incarnation ended although the soak did not kill it; undefined while it runs or after a kill. */
  crashed(): string | undefined {
    const p = this.child.proc;
    if (this.alive() || this.killedPids.has(p.pid!)) return undefined;
    return `${this.name} (pid ${p.pid}) exited on its own (${p.exitCode ?? p.signalCode}):\n${this.child.output().slice(-3000)}`;
  }

  async kill9(): Promise<void> {
    this.killed.add(this.rssName);
    this.killedPids.add(this.pid);
    this.cpuAtKill.set(this.rssName, cpuSeconds(this.pid));
    this.child.proc.kill('SIGKILL');
    await this.child.exited;
  }

  /** Polls /readyz until 200; throws when the process exits or `timeoutMs` passes. */
  async waitReady(timeoutMs: number): Promise<void> {
    const r = await until(
      `${this.name} (pid ${this.pid}) to be ready (${this.readyUrl} 200)`,
      async () => {
        const why = this.crashed();
        if (why) return { crashed: why };
        return (await probe(this.readyUrl, {}, 2000)).status === 200 && { crashed: undefined };
      },
      timeoutMs,
      100,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- ${this.name} output ---\n${this.child.output().slice(-3000)}`);
    });
    if (r.crashed) throw new Error(r.crashed);
  }
}

const LEASE_NS = 'kube-system';
const LEASE_NAME = 'klutch-backend';
/** A restarted incarnation's RSS start sample is taken this long after it is ready again. */
const RESTART_BASELINE_MS = 15_000;
/**
 * A restarted incarnation is judged by the RSS growth check only when its start and end samples are this far apart.
 * 5 minutes: in the first 30-minute run with restarts a standby backend grew 62.3 → 68.8 MiB (×1.10) in the 4 minutes
 * after its restart — a fresh Node process warming up — while every incarnation with 5 minutes or more of samples
 * stayed within ×0.92–1.07.
 */
const RESTART_MIN_RSS_SPAN_MS = 300_000;

interface RestartRecord {
  n: number;
  /** soak time of the kill (mm:ss) */
  at: string;
  name: string;
  oldPid: number;
  newPid: number;
  /** seconds from the kill to the new process spawned, and to its /readyz answering 200 */
  spawnS: number;
  readyS: number;
  /** backend restarts: who holds the leader Lease afterwards */
  lease?: string;
  problem?: string;
}

/** Each replica as the Lease check sees it: identity, running or not, the role line of its /readyz. */
async function replicaViews(backends: readonly Supervised[]): Promise<ReplicaView[]> {
  return Promise.all(
    backends.map(async (b) => ({
      name: b.name,
      identity: b.identity,
      alive: b.alive(),
      role: b.alive()
        ? await probe(b.readyUrl, {}, 2000).then(
            (r) => /^role: .*$/m.exec(r.body)?.[0],
            () => undefined,
          )
        : undefined,
    })),
  );
}

/** Waits until the backend's leader Lease is sane (see leaseSanity); returns the leading replica's name. */
async function leaderNow(cpc: KubeClient, backends: readonly Supervised[], timeoutMs: number): Promise<string> {
  let last = '';
  return until(
    `a sane leader Lease ${LEASE_NS}/${LEASE_NAME}`,
    async () => {
      const lease = await cpc.getOrNull<KubeObject & { spec?: LeaseView }>(CoreResources.leases, LEASE_NS, LEASE_NAME);
      const v = leaseSanity(lease?.spec, await replicaViews(backends), Date.now());
      if ('leader' in v) return v.leader;
      last = v.problem;
      return undefined;
    },
    timeoutMs,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; last seen: ${last}`);
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs: number, everyMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (aborted) throw new Error(`aborted while waiting for ${what}`);
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// The provider stand-in: status and credential Secret for every upstream claim.

class ProviderStandIn {
  private readonly informer: Informer;
  private readonly ctl: Controller;
  writes = 0;

  constructor(private readonly cpc: KubeClient) {
    this.informer = new Informer(cpc, SOAKDBS, {});
    this.ctl = new Controller({ name: 'soak-provider', workers: 4, backoffMaxMs: 5000, logger: silentLogger, reconciler: (k) => this.reconcile(k) });
    const enqueue = (o: KubeObject) => this.ctl.enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
    this.informer.addEventHandler({ onAdd: enqueue, onUpdate: (_, o) => enqueue(o) });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync(60_000);
    this.ctl.start();
  }

  async stop(): Promise<void> {
    await this.ctl.stop();
    await this.informer.stop();
  }

  private async reconcile(key: string): Promise<void> {
    const o = this.informer.get(key) as (KubeObject & { spec?: Spec; status?: unknown }) | undefined;
    if (!o || o.metadata.deletionTimestamp || !o.spec) return; // the garbage collector removes the Secret with the claim
    const ns = o.metadata.namespace!;
    const name = o.metadata.name!;
    const data = Object.fromEntries(Object.entries(expectedSecret(name, o.spec)).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const want = {
      metadata: {
        name: secretName(name),
        namespace: ns,
        labels: { [CREDS_LABEL]: CREDS_LABEL_VALUE },
        ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'SoakDB', name, uid: o.metadata.uid! }],
      },
      type: 'Opaque',
      data,
    } as KubeObject;
    const live = await this.cpc.getOrNull<KubeObject & { data?: Record<string, string> }>(SECRETS, ns, secretName(name));
    if (!live) {
      await this.cpc.create(SECRETS, want);
      this.writes++;
    } else if (canonical(live.data ?? {}) !== canonical(data) || live.metadata.ownerReferences?.[0]?.uid !== o.metadata.uid) {
      await this.cpc.update(SECRETS, { ...want, metadata: { ...want.metadata, resourceVersion: live.metadata.resourceVersion } });
      this.writes++;
    }
    const status = expectedStatus(o.spec);
    if (canonical(o.status) !== canonical(status)) {
      await this.cpc.mergePatch(SOAKDBS, ns, name, { status }, 'status');
      this.writes++;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The load generator's model of one app cluster.

interface AppCluster {
  name: string;
  cluster: RealCluster;
  client: KubeClient;
  clusterNs: string;
  konnector: Supervised;
  namespaces: string[];
  live: Map<string, Spec>;
  deleted: Set<string>;
  busy: Set<string>;
  next: number;
  ops: { create: number; update: number; delete: number };
  /** creates before the churn (the initial population) */
  initialCreates: number;
  errors: number;
  lastError?: string;
}

const randomSpec = (): Spec => ({ size: 1 + Math.floor(Math.random() * 1000), tier: Math.random() < 0.5 ? 'Shared' : 'Dedicated' });
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const split = (k: string) => [k.slice(0, k.indexOf('/')), k.slice(k.indexOf('/') + 1)] as const;

async function createClaim(a: AppCluster): Promise<void> {
  const ns = pick(a.namespaces);
  const name = `c-${a.next++}`;
  const k = `${ns}/${name}`;
  const spec = randomSpec();
  a.busy.add(k);
  try {
    await a.client.create(SOAKDBS, { metadata: { name, namespace: ns }, spec } as KubeObject);
    a.live.set(k, spec);
    a.ops.create++;
  } catch (e) {
    a.errors++;
    a.lastError = `create ${k}: ${(e as Error).message}`;
    const o = await a.client.getOrNull<KubeObject & { spec: Spec }>(SOAKDBS, ns, name).catch(() => undefined);
    if (o) a.live.set(k, o.spec); // it was created after all
  } finally {
    a.busy.delete(k);
  }
}

async function updateClaim(a: AppCluster): Promise<void> {
  const free = [...a.live.keys()].filter((k) => !a.busy.has(k));
  if (free.length === 0) return createClaim(a);
  const k = pick(free);
  const [ns, name] = split(k);
  const spec = randomSpec();
  a.busy.add(k);
  try {
    await a.client.mergePatch(SOAKDBS, ns, name, { spec });
    a.live.set(k, spec);
    a.ops.update++;
  } catch (e) {
    a.errors++;
    a.lastError = `update ${k}: ${(e as Error).message}`;
    const o = await a.client.getOrNull<KubeObject & { spec: Spec }>(SOAKDBS, ns, name).catch(() => undefined);
    if (o) a.live.set(k, o.spec);
  } finally {
    a.busy.delete(k);
  }
}

async function deleteClaim(a: AppCluster): Promise<void> {
  const free = [...a.live.keys()].filter((k) => !a.busy.has(k));
  if (free.length === 0) return;
  const k = pick(free);
  const [ns, name] = split(k);
  a.busy.add(k);
  try {
    await a.client.delete(SOAKDBS, ns, name);
    a.live.delete(k);
    a.deleted.add(k);
    a.ops.delete++;
  } catch (e) {
    a.errors++;
    a.lastError = `delete ${k}: ${(e as Error).message}`;
    const o = await a.client.getOrNull(SOAKDBS, ns, name).catch(() => 'unknown' as const);
    if (o === undefined || (o !== 'unknown' && o.metadata.deletionTimestamp)) {
      a.live.delete(k);
      a.deleted.add(k);
    }
  } finally {
    a.busy.delete(k);
  }
}

/** Keeps the live count within ±20 % of --objects; inside that band create, update and delete are equally likely. */
function oneOp(a: AppCluster): Promise<void> {
  const n = a.live.size;
  if (n < Math.floor(opts.objects * 0.8)) return createClaim(a);
  if (n > Math.ceil(opts.objects * 1.2)) return deleteClaim(a);
  const r = Math.random();
  return r < 1 / 3 ? createClaim(a) : r < 2 / 3 ? updateClaim(a) : deleteClaim(a);
}

// ---------------------------------------------------------------------------------------------

type Obj = KubeObject & { spec?: unknown; status?: unknown; data?: Record<string, string> };
const claimView = (o: Obj): ClaimView => ({
  namespace: o.metadata.namespace!,
  name: o.metadata.name!,
  spec: o.spec,
  status: o.status,
  deleting: !!o.metadata.deletionTimestamp,
});
const secretView = (o: Obj): SecretView => ({
  namespace: o.metadata.namespace!,
  name: o.metadata.name!,
  data: Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])),
});

interface Snapshot {
  diffs: Difference[];
  /** objects seen: claims and credential Secrets downstream (all app clusters) and upstream */
  counts: { downClaims: number; downSecrets: number; upClaims: number; upSecrets: number };
}

async function snapshot(cpc: KubeClient, apps: AppCluster[]): Promise<Snapshot> {
  const creds = { labelSelector: `${CREDS_LABEL}=${CREDS_LABEL_VALUE}` };
  const [up, upSecrets, clusters] = await Promise.all([
    cpc.list<Obj>(SOAKDBS),
    cpc.list<Obj>(SECRETS, undefined, creds),
    Promise.all(
      apps.map(async (a): Promise<ClusterState> => {
        const [down, downSecrets, asns] = await Promise.all([
          a.client.list<Obj>(SOAKDBS),
          a.client.list<Obj>(SECRETS, undefined, creds),
          cpc.list<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, a.clusterNs),
        ]);
        const namespaces: Record<string, string> = {};
        for (const x of asns.items) if (x.status?.namespace) namespaces[x.metadata.name!] = x.status.namespace;
        return {
          cluster: a.name,
          live: a.live,
          deleted: a.deleted,
          namespaces,
          down: down.items.map(claimView),
          downSecrets: downSecrets.items.map(secretView),
        };
      }),
    ),
  ]);
  const diffs = compareSoak({ clusters, up: up.items.map(claimView), upSecrets: upSecrets.items.map(secretView), secretName, expectedStatus, expectedSecret });
  const counts = {
    downClaims: clusters.reduce((n, c) => n + c.down.length, 0),
    downSecrets: clusters.reduce((n, c) => n + c.downSecrets.length, 0),
    upClaims: up.items.length,
    upSecrets: upSecrets.items.length,
  };
  return { diffs, counts };
}

/** Polls the comparison until it is empty or `timeoutMs` passed; returns the last differences and the time taken. */
async function converge(cpc: KubeClient, apps: AppCluster[], timeoutMs: number): Promise<Snapshot & { seconds: number }> {
  const t = Date.now();
  for (;;) {
    const snap = await snapshot(cpc, apps);
    if (snap.diffs.length === 0 || Date.now() - t > timeoutMs || aborted) return { ...snap, seconds: (Date.now() - t) / 1000 };
    await sleep(2000);
  }
}

function showDiffs(diffs: Difference[], max = 60): string {
  const lines = diffs.slice(0, max).map((d) => `  ${d.object}: ${d.difference}`);
  if (diffs.length > max) lines.push(`  … and ${diffs.length - max} more`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  say(
    `soak: ${opts.appClusters} app clusters, ${opts.minutes} min churn at ${opts.rate} ops/s (≈${opts.objects} live claims per cluster in ${opts.namespaces} namespaces), ${cpus().length} cores, load ${load()}`,
  );
  say(`logs of the child processes: ${logDir}`);

  // Clusters: the control plane and the app clusters, in parallel.
  const names = ['soak-cp', ...Array.from({ length: opts.appClusters }, (_, i) => `soak-app-${i + 1}`)];
  const all = Promise.allSettled(
    names.map((name) =>
      startCluster({ name }).then((c) => {
        cleanups.push({ what: `cluster ${c.name}`, run: () => c.stop() });
        return c;
      }),
    ),
  );
  starting = all;
  const started = await all;
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const [cp, ...appClusters] = started.map((s) => (s as PromiseFulfilledResult<RealCluster>).value);
  say(`clusters up (${names.join(', ')}); load ${load()}`);
  const cpc = new KubeClient(cp!.kubeConfig, { qps: 0, burst: 1 });
  cleanups.push({ what: 'control-plane client', run: async () => cpc.close() });

  // Control plane: binding CRDs, the data-service CRD and its export template.
  const crds = bindingCrds() as unknown as KubeObject[];
  await applyManifests(cp!.kubeConfig, [...crds, soakCrd(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } }] as never[]);
  await waitForCrdsEstablished(cp!.kubeConfig, [...crds.map((c) => c.metadata.name!), CRD_NAME]);
  await applyManifests(cp!.kubeConfig, [soakTemplate()] as never[]);

  // OIDC issuer and the backend (a child process).
  const clientId = 'klutch-backend';
  const clientSecret = randomBytes(12).toString('hex');
  const resource = 'urn:klutch:backend';
  const machines = appClusters.map((_, i) => ({ id: `soak-machine-${i + 1}`, secret: randomBytes(12).toString('hex') }));
  const op = await OidcTestProvider.listen([
    { username: 'nobody', password: randomBytes(8).toString('hex'), sub: 'user-nobody', email: 'nobody@example.test' },
  ]);
  cleanups.push({ what: 'OIDC issuer', run: () => op.stop() });
  const [backendJs, konnectorJs] = await Promise.all([
    bundleProgram('runtime/backend/main.ts', 'soak-backend.mjs'),
    bundleProgram('runtime/konnector/main.ts', 'soak-konnector.mjs'),
  ]);
  // The backend replicas, each on a port of its own (kept across restarts), behind a round-robin
  // proxy (the stand-in for their Service): binds go through every replica.
  const proxy = new RoundRobinProxy();
  const proxyUrl = await proxy.start();
  cleanups.push({ what: 'round-robin proxy', run: () => proxy.stop() });
  const cookieKey = randomBytes(32).toString('base64');
  const backends: Supervised[] = [];
  for (let r = 1; r <= opts.backendReplicas; r++) {
    const port = await freePort();
    backends.push(
      new Supervised(
        `backend-${r}`,
        [
          backendJs,
          `--kubeconfig=${cp!.kubeconfigPath}`,
          `--listen-address=127.0.0.1:${port}`,
          `--oidc-issuer-url=${op.issuer}`,
          `--oidc-issuer-client-id=${clientId}`,
          `--oidc-issuer-client-secret=${clientSecret}`,
          `--oidc-callback-url=${proxyUrl}/callback`,
          '--oidc-bearer-audience',
          clientId,
          resource,
          `--cookie-signing-key=${cookieKey}`,
          `--lease-namespace=${LEASE_NS}`,
          '--pretty-name=Soak Provider',
          '--bind-rate=0',
          '--max-clusters-per-identity=0',
          `--log-level=${opts.backendLogLevel}`,
        ],
        // the leader-election identity: a killed replica comes back as a new pod would, with a new name
        (incarnation) => ({ POD_NAME: `soak-backend-${r}-${incarnation}` }),
        `http://127.0.0.1:${port}/readyz`,
      ),
    );
  }
  for (const b of backends) b.start();
  proxy.targets = backends.map((b) => b.readyUrl.replace(/\/readyz$/, ''));
  op.start(
    [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [`${proxyUrl}/callback`] },
      ...machines.map((m) => ({ client_id: m.id, client_secret: m.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] })),
    ],
    { [resource]: { audience: resource, scope: 'bind' } },
  );
  // ready = OIDC discovery done and, on the leader, its controllers synced
  await Promise.all(backends.map((b) => b.waitReady(120_000)));
  const leader = await leaderNow(cpc, backends, 60_000);
  say(
    `${backends.length} backend replicas ready (${backends.map((b) => `${b.name} ${proxy.targets[backends.indexOf(b)]} pid ${b.pid}`).join(', ')}; ${leader} holds the Lease ${LEASE_NS}/${LEASE_NAME}) behind ${proxyUrl}; binding ${appClusters.length} app clusters with kubectl bind --token`,
  );

  // Bind every app cluster as a CI pipeline would: a machine token, kubectl bind, no konnector Deployment
  // (the konnector runs here as a process).
  const apps: AppCluster[] = [];
  await Promise.all(
    appClusters.map(async (cluster, i) => {
      const { access_token } = await op.clientCredentials(machines[i]!.id, machines[i]!.secret, { resource, scope: 'bind' });
      const bind = spawnNode(
        `kubectl-bind-${i + 1}`,
        [
          `${repo}bin/kubectl-bind.js`,
          `${proxyUrl}/export`,
          '--kubeconfig',
          cluster.kubeconfigPath,
          '--resource',
          CRD_NAME,
          '--token',
          access_token,
          '--yes',
          '--skip-konnector',
          '--timeout',
          '120s',
        ],
        { KUBECONFIG: '' },
      );
      const code = await new Promise<number | null>((r) => bind.proc.once('exit', (c) => r(c)));
      if (code !== 0) throw new Error(`kubectl bind for ${cluster.name} exited ${code}:\n${bind.output().slice(-3000)}`);
      const client = new KubeClient(cluster.kubeConfig, { qps: 0, burst: 1 });
      cleanups.push({ what: `client of ${cluster.name}`, run: async () => client.close() });
      const kc = (
        await client.list<KubeObject & { data: { kubeconfig: string } }>(SECRETS, KONNECTOR_NAMESPACE, {
          labelSelector: `${PROVIDER_KUBECONFIG_LABEL}=true`,
        })
      ).items[0];
      const clusterNs = kc && /namespace: (\S+)/.exec(Buffer.from(kc.data.kubeconfig, 'base64').toString())?.[1];
      if (!clusterNs) throw new Error(`${cluster.name}: no provider kubeconfig Secret with a namespace in ${KONNECTOR_NAMESPACE} after kubectl bind`);
      // a fixed health port, so a restarted konnector runs with the very same arguments
      const healthPort = await freePort();
      const konnector = new Supervised(
        `konnector ${cluster.name}`,
        [
          konnectorJs,
          '--kubeconfig',
          cluster.kubeconfigPath,
          '--no-leader-elect',
          // the soak's claims spread over many namespaces; its admin kubeconfig is cluster-wide anyway
          '--all-namespaces',
          '--health-address',
          `127.0.0.1:${healthPort}`,
          '--log-level',
          opts.konnectorLogLevel,
        ],
        () => ({ KLUTCH_KONNECTOR_VERSION: 'v0.1.0-soak' }),
        `http://127.0.0.1:${healthPort}/readyz`,
      );
      konnector.start();
      apps[i] = {
        name: cluster.name,
        cluster,
        client,
        clusterNs,
        konnector,
        namespaces: Array.from({ length: opts.namespaces }, (_, j) => `soak-${String.fromCharCode(97 + j)}`),
        live: new Map(),
        deleted: new Set(),
        busy: new Set(),
        next: 0,
        ops: { create: 0, update: 0, delete: 0 },
        initialCreates: 0,
        errors: 0,
      };
    }),
  );
  await Promise.all(
    apps.map(async (a) => {
      await until(
        `${a.name}: CRD ${CRD_NAME} established`,
        async () => {
          const why = a.konnector.crashed();
          if (why) throw new Error(why);
          const c = await a.client.getOrNull<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(
            CoreResources.crds,
            undefined,
            CRD_NAME,
          );
          return c?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
        },
        120_000,
      );
      for (const ns of a.namespaces) await a.client.create(CoreResources.namespaces, { metadata: { name: ns } });
    }),
  );
  say(`bound: ${apps.map((a) => `${a.name} → ${a.clusterNs} (konnector pid ${a.konnector.pid})`).join(', ')}`);

  const provider = new ProviderStandIn(cpc);
  await provider.start();
  cleanups.push({ what: 'provider stand-in', run: () => provider.stop() });

  // RSS sampling from now on.
  const rss = new RssSampler();
  const supervised = [...apps.map((a) => a.konnector), ...backends];
  for (const p of supervised) rss.track(p.rssName, p.pid);
  rss.sample();
  const sampler = setInterval(() => rss.sample(), opts.sampleSeconds * 1000);
  cleanups.push({ what: 'RSS sampler', run: async () => clearInterval(sampler) });
  const rssNow = () => {
    const r = rss.sample();
    return Object.entries(r)
      .map(([k, v]) => `${k.replace('konnector soak-', 'k-').replace('backend-', 'b-')} ${v.toFixed(0)}`)
      .join(', ');
  };

  // Initial population, then the initial sync.
  const ops = (a: AppCluster) => a.ops.create + a.ops.update + a.ops.delete;
  await Promise.all(
    apps.map(async (a) => {
      for (let i = 0; i < opts.objects; i++) await createClaim(a);
    }),
  );
  const initial = await converge(cpc, apps, opts.settle * 1000);
  if (initial.diffs.length) {
    say(`initial sync did not converge within ${opts.settle} s:\n${showDiffs(initial.diffs)}`);
    return 1;
  }
  rss.markStart();
  say(
    `initial sync: ${apps.length} × ${opts.objects} claims with status and credential Secret on both sides in ${initial.seconds.toFixed(1)} s. RSS start = this sample (after the initial sync), MiB: ${rssNow()}`,
  );

  // Churn.
  for (const a of apps) a.initialCreates = a.ops.create;
  const initialCreates = apps.reduce((s, a) => s + ops(a), 0);
  const loads: number[] = [];
  const loadSampler = setInterval(() => loads.push(loadavg()[0]), opts.sampleSeconds * 1000);
  cleanups.push({ what: 'load sampler', run: async () => clearInterval(loadSampler) });
  const churnMs = opts.minutes * 60_000;
  const t0 = performance.now();
  let k = 0;
  let nextReport = 1;
  const inflight = new Set<Promise<void>>();

  // Restarts: at every tick kill -9 the next konnector or backend replica and start it again.
  const restarts: RestartRecord[] = [];
  const restartState: { error?: Error } = {};
  const baselineTimers = new Set<NodeJS.Timeout>();
  /** incarnations whose RSS start sample is taken again during the churn, and why */
  const rebased = new Map<string, string>();
  /** Takes the start sample of `p`'s current incarnation again RESTART_BASELINE_MS from now (its work changed). */
  const rebase = (p: Supervised, why: string) => {
    const name = p.rssName;
    rebased.set(name, why);
    const timer = setTimeout(() => {
      baselineTimers.delete(timer);
      if (p.rssName === name && p.alive()) rss.markStart(Date.now(), [name]);
    }, RESTART_BASELINE_MS);
    baselineTimers.add(timer);
  };
  cleanups.push({ what: 'RSS baseline timers', run: async () => baselineTimers.forEach((t) => clearTimeout(t)) });
  const leaseHolder = async () =>
    (await cpc.getOrNull<KubeObject & { spec?: LeaseView }>(CoreResources.leases, LEASE_NS, LEASE_NAME).catch(() => undefined))?.spec?.holderIdentity;
  const restartOne = async (n: number, p: Supervised, isBackend: boolean): Promise<RestartRecord> => {
    const at = stamp();
    const oldPid = p.pid;
    const oldName = p.rssName;
    const oldIdentity = p.identity;
    const holderBefore = isBackend ? await leaseHolder() : undefined;
    const tKill = performance.now();
    await p.kill9();
    rss.retire(oldName);
    p.start(`incarnation ${p.incarnation + 1}: started again at soak time ${stamp()} after kill -9 of pid ${oldPid}`);
    const spawnS = (performance.now() - tKill) / 1000;
    rss.track(p.rssName, p.pid);
    await p.waitReady(opts.readyTimeout * 1000);
    const readyS = (performance.now() - tKill) / 1000;
    // The baseline of a restarted incarnation: a sample shortly after it is ready (it has re-listed everything by then).
    rebase(p, 'restarted');
    const rec: RestartRecord = { n, at, name: p.name, oldPid, newPid: p.pid, spawnS, readyS };
    if (isBackend) {
      try {
        const leader = await leaderNow(cpc, backends, 60_000);
        const s = ((performance.now() - tKill) / 1000).toFixed(1);
        const now = backends.find((b) => b.name === leader)!;
        // a standby that took over started the controllers (informers, caches): its memory has a new baseline
        if (now !== p && now.identity !== holderBefore) rebase(now, `became the leader at ${stamp()} (restart ${n})`);
        rec.lease =
          holderBefore === oldIdentity
            ? `the killed ${p.name} held it; ${leader === p.name ? `its new incarnation took it back` : `moved to ${leader}`} ${s} s after the kill`
            : `stayed with ${leader} (checked ${s} s after the kill)`;
      } catch (e) {
        rec.problem = `leader Lease not sane within 60 s after the restart of ${p.name}: ${(e as Error).message}`;
      }
    }
    return rec;
  };
  const ticks = restartTicks(churnMs, opts.restartEvery * 1000);
  let standbyKills = 0;
  const restarter = (async () => {
    for (let i = 0; i < ticks.length; i++) {
      for (let left = ticks[i]! - (performance.now() - t0); left > 0 && !aborted; left = ticks[i]! - (performance.now() - t0)) await sleep(Math.min(500, left));
      if (aborted || performance.now() - t0 >= churnMs) return;
      const target = restartTarget(i, apps.length, backends.length);
      let p: Supervised;
      if (target.kind === 'konnector') p = apps[target.index]!.konnector;
      else {
        const leader = await leaderNow(cpc, backends, 60_000);
        const standbys = backends.filter((b) => b.name !== leader);
        // standbys in turn, so each replica is killed as a standby now and then
        p = target.role === 'leader' || standbys.length === 0 ? backends.find((b) => b.name === leader)! : standbys[standbyKills++ % standbys.length]!;
      }
      const rec = await restartOne(i + 1, p, target.kind === 'backend');
      if (aborted) return; // a Ctrl-C during the restart: its Lease check was cut short, nothing to report
      restarts.push(rec);
      say(
        `restart ${rec.n} (kill -9 at ${rec.at}): ${rec.name} pid ${rec.oldPid} → ${rec.newPid}, started ${rec.spawnS.toFixed(2)} s and ready (/readyz 200) ${rec.readyS.toFixed(1)} s after the kill${rec.lease ? `; leader Lease: ${rec.lease}` : ''}${rec.problem ? `; PROBLEM: ${rec.problem}` : ''}`,
      );
    }
  })().catch((e: Error) => {
    restartState.error = e;
  });
  if (ticks.length)
    say(
      `restarts: ${ticks.length} planned, every ${opts.restartEvery} s of the churn (konnectors in turn and backend replicas, the leader and a standby in turn)`,
    );

  const progress = () => {
    const total = apps.reduce((s, a) => s + ops(a), 0) - initialCreates;
    const errs = apps.reduce((s, a) => s + a.errors, 0);
    const live = apps.reduce((s, a) => s + a.live.size, 0);
    return `ops ${total} (${apps.map((a) => `${a.name.replace('soak-', '')} c${a.ops.create - a.initialCreates}/u${a.ops.update}/d${a.ops.delete}`).join(', ')}; creates/updates/deletes after the initial ones), errors ${errs}, live ${live}; RSS MiB: ${rssNow()}; load ${load()}`;
  };
  while (!aborted) {
    const due = t0 + (k * 1000) / opts.rate;
    if (due - t0 >= churnMs) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    while (inflight.size >= opts.concurrency) await Promise.race(inflight);
    for (const proc of supervised) {
      const why = proc.crashed();
      if (why) throw new Error(`during the churn: ${why}`);
    }
    if (restartState.error) throw restartState.error;
    const p: Promise<void> = oneOp(apps[k % apps.length]!).finally(() => inflight.delete(p));
    inflight.add(p);
    k++;
    if (performance.now() - t0 >= nextReport * 60_000) {
      say(`minute ${nextReport}/${opts.minutes}: ${progress()}`);
      nextReport++;
    }
  }
  await Promise.all(inflight);
  await restarter;
  if (aborted) return 130;
  if (restartState.error) throw restartState.error;
  const churnSeconds = (performance.now() - t0) / 1000;
  say(`churn done after ${churnSeconds.toFixed(0)} s: ${progress()}`);

  // Convergence.
  const final = await converge(cpc, apps, opts.settle * 1000);
  rss.sample();
  clearInterval(sampler);
  clearInterval(loadSampler);
  baselineTimers.forEach((t) => clearTimeout(t));
  const rows = rss.summary();
  const cpu = new Map<string, number>();
  for (const proc of supervised) {
    for (const [name, sec] of proc.cpuAtKill) cpu.set(name, sec);
    cpu.set(proc.rssName, cpuSeconds(proc.pid));
  }
  const killed = new Set(supervised.flatMap((proc) => [...proc.killed]));
  const { checked, excluded } = rssChecks(rows, { killed, rebased, minSpanMs: RESTART_MIN_RSS_SPAN_MS });
  const byRow = new Map(excluded.map((x) => [x.row.name, x.reason]));
  const leaseProblems = restarts.filter((r) => r.problem).map((r) => `restart ${r.n}: ${r.problem}`);
  const served = new Map<string, number>();
  for (const l of proxy.log) served.set(l.target, (served.get(l.target) ?? 0) + 1);
  const binds = proxy.log.filter((l) => l.path.startsWith('/bind'));

  const totalOps = apps.reduce((s, a) => s + ops(a), 0) - initialCreates;
  const creates = apps.reduce((s, a) => s + a.ops.create, 0) - initialCreates;
  const fc = final.counts;
  const errors = apps.reduce((s, a) => s + a.errors, 0);
  const lines = [
    '',
    `## Soak: ${apps.length} app clusters, ${(churnSeconds / 60).toFixed(1)} min churn, ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} cores, load average (1/5/15 min) ${load()}`,
    '',
    `churn operations: ${totalOps} (${(totalOps / churnSeconds).toFixed(2)}/s; ${creates} creates, ${apps.reduce((s, a) => s + a.ops.update, 0)} updates, ${apps.reduce((s, a) => s + a.ops.delete, 0)} deletes) after ${initialCreates} initial creates; errors ${errors}${
      errors
        ? ` (last: ${apps
            .map((a) => a.lastError)
            .filter(Boolean)
            .join('; ')})`
        : ''
    }`,
    `machine load during the churn (1-min load average every ${opts.sampleSeconds} s): mean ${(loads.reduce((x, y) => x + y, 0) / Math.max(1, loads.length)).toFixed(1)}, max ${Math.max(0, ...loads).toFixed(1)}`,
    `at the end: ${apps.reduce((s, a) => s + a.live.size, 0)} live claims, ${apps.reduce((s, a) => s + a.deleted.size, 0)} deleted; provider stand-in writes ${provider.writes}`,
    `seen at the last check: downstream ${fc.downClaims} claims + ${fc.downSecrets} credential Secrets, upstream ${fc.upClaims} claims + ${fc.upSecrets} credential Secrets`,
    `convergence after the churn: ${final.diffs.length === 0 ? `all equal at a check ${final.seconds.toFixed(1)} s after the last operation` : `${final.diffs.length} differences left after ${final.seconds.toFixed(0)} s`}`,
    `backend: ${backends.length} replicas behind ${proxyUrl}; requests served: ${backends.map((b, i) => `${b.name} ${served.get(proxy.targets[i]!) ?? 0}`).join(', ')}; POST /bind by ${binds.map((l) => `${backends[proxy.targets.indexOf(l.target)]?.name ?? l.target} (${l.status})`).join(', ') || 'none'}`,
    '',
    ...(restarts.length
      ? [
          `restarts (kill -9, then the same command again), every ${opts.restartEvery} s of the churn:`,
          '',
          '| # | kill at | process | pid → pid | started after (s) | ready after (s) | leader Lease afterwards |',
          '|---:|---|---|---|---:|---:|---|',
          ...restarts.map(
            (r) =>
              `| ${r.n} | ${r.at} | ${r.name} | ${r.oldPid} → ${r.newPid} | ${r.spawnS.toFixed(2)} | ${r.readyS.toFixed(1)} | ${r.problem ? `PROBLEM: ${r.problem}` : (r.lease ?? '–')} |`,
          ),
          '',
        ]
      : [
          opts.restartEvery > 0 ? `restarts: none (the churn is shorter than --restart-every ${opts.restartEvery} s)` : 'restarts: off (--restart-every 0)',
          '',
        ]),
    'RSS (VmRSS in MiB) per process incarnation (`#2` = after the first restart); start = the sample right after the initial sync, for a restarted',
    `incarnation ${RESTART_BASELINE_MS / 1000} s after it was ready again, for a replica that became the leader ${RESTART_BASELINE_MS / 1000} s after that;`,
    'peak = highest of all samples; end = after convergence, or the last sample before a kill:',
    '',
    '| process | pid | start | peak | end | end/start | samples | CPU s | growth check |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.pid} | ${r.startMb.toFixed(1)} | ${r.peakMb.toFixed(1)} | ${r.endMb.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.samples} | ${(cpu.get(r.name) ?? NaN).toFixed(1)} | ${byRow.has(r.name) ? 'not judged' : 'judged'} |`,
    ),
    '',
    ...(excluded.length
      ? ['not judged by the RSS growth check (listed above for information):', ...excluded.map((x) => `  ${x.row.name}: ${x.reason}`), '']
      : []),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  const rssProblems = rssGrowthProblems(checked, opts.maxRssGrowth / 100);
  if (final.diffs.length === 0 && rssProblems.length === 0 && leaseProblems.length === 0) {
    say(
      `VERDICT: PASS — every claim converged (spec, status, credential Secret; none lost, duplicated or left over) after ${restarts.length} restarts; no judged RSS grew more than ${opts.maxRssGrowth} % from its start (${checked.length} judged, ${excluded.length} not)${restarts.some((r) => r.lease) ? '; the leader Lease was sane after every backend restart' : ''}`,
    );
    return 0;
  }
  if (final.diffs.length) say(`VERDICT: FAIL — ${final.diffs.length} objects diverge:\n${showDiffs(final.diffs)}`);
  if (rssProblems.length) say(`VERDICT: FAIL — RSS grew more than ${opts.maxRssGrowth} %:\n${rssProblems.map((p) => `  ${p}`).join('\n')}`);
  if (leaseProblems.length) say(`VERDICT: FAIL — leader Lease:\n${leaseProblems.map((p) => `  ${p}`).join('\n')}`);
  return 1;
}

main()
  .catch((e) => {
    // after a signal the clean-up pulls the clusters away under the running steps: no stack then
    process.stderr.write(`bench-soak: ${aborted ? `stopped: ${(e as Error).message}` : ((e as Error).stack ?? String(e))}\n`);
    return 1;
  })
  .then(async (code) => {
    await cleanUp();
    say(`stopped every process (${((Date.now() - T0) / 1000).toFixed(0)} s in total)`);
    process.exit(aborted ? 130 : code);
  });
