/**
 * npm run bench:scale [-- --clusters 5,20,50 --claims 100 --rate 1 --idle-seconds 150]
 *
 * Many app clusters, one control plane: what each bound app cluster costs the control plane.
 *
 * Design (why it is built this way on a 2-core, 24 GB machine):
 * - Control plane: a full realinfra cluster (etcd, kube-apiserver, kube-controller-manager) — the
 *   thing measured. Crossplane is not started: the bench plays the provider (it sets each claim's
 *   status and creates its credentials Secret in the provider namespace, as a composition would), so
 *   the figures are the binding layer's cost, not Crossplane's.
 * - The real bind backend (runtime/backend, bundled with esbuild and run as its own process, so its
 *   RSS is measurable) with its controllers, and the real OIDC test provider
 *   (test/support/oidc-provider.ts). Every app cluster binds with kubectl-bind's own code path
 *   (`bind()` of runtime/kubectl-bind/bind.ts, bearer mode): an id_token of the issuer with its own
 *   subject (`scale-app-<k>`) → POST /bind → APIServiceExportRequest → APIServiceBinding with the
 *   claims accepted. So every app cluster has its own identity, its own cluster namespace and
 *   ServiceAccount on the control plane.
 * - App clusters: K real kube-apiservers sharing one etcd with distinct --etcd-prefix and no
 *   kube-controller-manager (scripts/_scale-apps.ts): 50 full clusters (≈ 300–380 MB apiserver +
 *   etcd + KCM each) plus 50 konnector processes would not fit next to the control plane. The app side
 *   is not what is measured; each app cluster still has its own API, namespaces, CRDs and objects.
 * - Konnectors: one Konnector instance per app cluster (own clients, own binding, own provider
 *   ServiceAccount, own heartbeat), hosted `--per-host` instances per Node process
 *   (scripts/_scale-konnectors.ts), so there is not one Node process per app cluster.
 *
 * Per K (fresh control plane and app clusters each time):
 *  1. baseline: control plane + backend + observer, nothing bound; a `--baseline-seconds` idle window;
 *  2. bind K app clusters (4 at a time) and start their konnectors; one warm-up claim per app cluster
 *     (creates the APIServiceNamespace → provider namespace + RBAC);
 *  3. load: every app cluster creates `--claims` claims at `--rate` claims/s (all app clusters at
 *     once); for every claim seen upstream the bench (as provider) patches status Ready and creates
 *     a labelled credentials Secret; measured: up (claim created on the app → on the control plane),
 *     status down, credentials down, and end to end (claim created → its credentials on the app);
 *  4. idle: after a settle time, an `--idle-seconds` window (default 150 s = one heartbeat period of
 *     the konnector's default 5 min interval: each konnector writes one heartbeat in it);
 *  5. at rest (`--rest-seconds`, 0 skips): kube-apiserver is restarted, so its watch cache holds every
 *     object once without the event history of the load; measured once the watches are back.
 * Memory is read three ways: RSS (/proc), heap in use (go_memstats) and the live heap — HeapAlloc of a
 * heap profile taken with gc=1, i.e. right after a full GC (the bench's control plane runs with
 * profiling on); `--heap-profiles <dir>` keeps those profiles for `go tool pprof`. The control plane's
 * kube-apiserver takes extra flags and environment (`--cp-apiserver-arg`, `--cp-apiserver-env`, e.g.
 * GOMEMLIMIT) to measure what a setting buys.
 * Control-plane figures: kube-apiserver CPU (/proc utime+stime) and RSS, etcd db size (total and in
 * use, from etcd's /metrics), registered watchers and long-running WATCH requests, stored objects,
 * apiserver_request_total deltas (requests/s idle and under load, by resource), heartbeat writes
 * (PATCH clusterbindings/status) and their server-side latency, backend RSS and CPU. Per-cluster
 * figures are (value at K − baseline) / K. Results are merged by K into `--results` (JSON), and the
 * table printed covers every K in that file, with the ratios between consecutive K values.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cpus, loadavg } from 'node:os';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { bindingCrds } from '../contract/api/index.js';
import { CoreResources, KubeClient, type KubeObject } from '../runtime/core/client.js';
import { Informer } from '../runtime/core/informer.js';
import { loadKubeconfigFile } from '../runtime/core/kubeconfig.js';
import { bind } from '../runtime/kubectl-bind/bind.js';
import { applyManifests, ensureBinaries, startCluster, waitForCrdsEstablished, type RealCluster } from '../runtime/realinfra/index.js';
import { OidcTestProvider } from '../test/support/oidc-provider.js';
import { startAppServers, type AppServers } from './_scale-apps.js';
import { claimCrd, credentialsExportTemplate, CREDS_LABEL, CREDS_LABEL_VALUE } from './_bench-api.js';
import { bundleProgram, cpuSeconds, repo, rssMb } from './_bench-procs.js';

const opts = new Command('bench-scale')
  .option('--clusters <list>', 'comma-separated numbers of app clusters (K); each K runs on a fresh control plane', '5,20,50')
  .option('--claims <n>', 'claims per app cluster', '100')
  .option('--rate <n>', 'claims created per second by each app cluster during the load phase', '1')
  .option('--idle-seconds <n>', 'length of the idle measurement window after the load', '150')
  .option('--baseline-seconds <n>', 'length of the idle window before anything is bound', '30')
  .option('--settle-seconds <n>', 'wait between the end of the load and the idle window', '30')
  .option(
    '--rest-seconds <n>',
    'after the idle window the kube-apiserver is restarted (at rest: every object once, no event history); wait this long after its watches are back, then measure; 0 skips',
    '30',
  )
  .option('--provider-workers <n>', 'parallel provider actions (status + credentials Secret) of the bench', '32')
  .option('--per-host <n>', 'konnector instances per Node host process', '10')
  .option('--heartbeat-ms <n>', "konnector heartbeat interval (default: the konnector's, 5 min)", '')
  .option('--results <file>', 'JSON file the results are merged into (by K)', '/tmp/bench-scale-results.json')
  .option('--label <text>', 'label stored with the results (e.g. "before", "after")', '')
  .option(
    '--cp-apiserver-arg <flag=value>',
    'extra control-plane kube-apiserver flag, repeatable (e.g. --cp-apiserver-arg watch-cache-sizes=secrets#0)',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option(
    '--cp-apiserver-env <NAME=value>',
    'extra control-plane kube-apiserver environment variable, repeatable (e.g. --cp-apiserver-env GOMEMLIMIT=400MiB)',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option('--heap-profiles <dir>', 'write the control-plane kube-apiserver heap profiles (after a forced GC) at baseline and end into this folder', '')
  .parse(process.argv)
  .opts();

const num = (flag: string, v: string, min = 0): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${flag}: "${v}" must be a number >= ${min}`);
  return n;
};
const KS = String(opts.clusters)
  .split(',')
  .map((x) => num('clusters', x, 1));
const CLAIMS = num('claims', opts.claims, 1);
const RATE = num('rate', opts.rate, 0.01);
const IDLE_S = num('idle-seconds', opts.idleSeconds, 10);
const BASE_S = num('baseline-seconds', opts.baselineSeconds, 5);
const SETTLE_S = num('settle-seconds', opts.settleSeconds, 0);
const REST_S = num('rest-seconds', opts.restSeconds, 0);
const PER_HOST = num('per-host', opts.perHost, 1);
const PROVIDER_WORKERS = num('provider-workers', opts.providerWorkers, 1);
const HEARTBEAT_MS = opts.heartbeatMs ? num('heartbeat-ms', opts.heartbeatMs, 1000) : undefined;
const CP_APISERVER_ARGS: Record<string, string> = Object.fromEntries(
  (opts.cpApiserverArg as string[]).map((a) => {
    const m = /^--?([a-z0-9-]+)=(.*)$|^([a-z0-9-]+)=(.*)$/.exec(a);
    if (!m) throw new Error(`--cp-apiserver-arg: "${a}" must be flag=value, e.g. watch-cache-sizes=secrets#0`);
    return [m[1] ?? m[3]!, m[2] ?? m[4]!];
  }),
);
const CP_APISERVER_ENV: Record<string, string> = Object.fromEntries(
  (opts.cpApiserverEnv as string[]).map((a) => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(a);
    if (!m) throw new Error(`--cp-apiserver-env: "${a}" must be NAME=value, e.g. GOMEMLIMIT=400MiB`);
    return [m[1]!, m[2]!];
  }),
);
const HEAP_DIR = String(opts.heapProfiles);

const log = (s: string) => process.stderr.write(`[bench:scale ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};

// ------------------------------------------------------------------------------------------ the API

const GROUP = 'scale.klutch.test';
const INSTANCES = { group: GROUP, version: 'v1', plural: 'instances', kind: 'Instance', namespaced: true };
const WORK_NS = 'work';
const CLIENT_ID = 'klutch-backend';

const instanceCrd = (): KubeObject => claimCrd(INSTANCES, { plan: { type: 'string' }, replicas: { type: 'integer' } }, { phase: { type: 'string' } });
const exportTemplate = (): KubeObject => credentialsExportTemplate(INSTANCES);

// ------------------------------------------------------------------------------------------ processes

function procStat(pid: number | undefined): { cpu: number; rssMb: number } {
  return pid === undefined ? { cpu: NaN, rssMb: NaN } : { cpu: cpuSeconds(pid), rssMb: rssMb(pid) };
}

interface Child {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function spawnChild(
  args: string[],
  ready: RegExp,
  what: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 300_000,
): Promise<Child & { match: RegExpExecArray }> {
  const proc = spawn(process.execPath, args, { cwd: repo, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const child: Child = {
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
  process.on('exit', () => proc.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready within ${timeoutMs / 1000} s:\n${out.slice(-3000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.length > 1_000_000) out = out.slice(-200_000);
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ ...child, match: m });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? sig}) before it was ready:\n${out.slice(-3000)}`));
    });
  });
}

// ------------------------------------------------------------------------------------------ metrics

type Labels = Record<string, string>;
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Labels = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const sumOf = (s: Sample[], name: string, f: (l: Labels) => boolean = () => true): number =>
  s.filter((x) => x.name === name && f(x.labels)).reduce((a, x) => a + x.value, 0);

interface Snapshot {
  t: number;
  cpu: Record<string, number>;
  rss: Record<string, number>;
  /** `VERB resource[/sub]` → apiserver_request_total (all codes) */
  requests: Record<string, number>;
  watchers: number;
  watchRequests: number;
  /** open WATCH requests by resource */
  watchByResource: Record<string, number>;
  /** apiserver_storage_objects by resource */
  objectsByResource: Record<string, number>;
  /** apiserver_watch_events_total: events sent to watchers */
  watchEvents: number;
  /** kube-apiserver go_memstats_heap_inuse_bytes (MB) */
  heapMb: number;
  /** kube-apiserver go_goroutines and go_memstats_stack_inuse_bytes (MB): stacks are in RSS, not in the heap */
  goroutines: number;
  stackMb: number;
  /** established TCP connections to the control-plane kube-apiserver (from /proc/net/tcp{,6}) */
  connections: number;
  /** apiserver_watch_cache_capacity by resource: how many events of history the watch cache keeps */
  watchCacheCapacity: Record<string, number>;
  objects: number;
  hbCount: number;
  hbSum: number;
  etcdDb: number;
  etcdInUse: number;
}

interface Env {
  cp: RealCluster;
  cpc: KubeClient;
  backendPid: number;
  hostPids: () => number[];
  apps: AppServers | undefined;
}

async function snapshot(e: Env): Promise<Snapshot> {
  const [apiText, etcdText] = await Promise.all([
    e.cpc.request<string>('GET', '/metrics').then(String),
    fetch(`http://127.0.0.1:${e.cp.ports.etcdClient}/metrics`).then((r) => r.text()),
  ]);
  const api = parseProm(apiText);
  const etcd = parseProm(etcdText);
  const requests: Record<string, number> = {};
  for (const s of api) {
    if (s.name !== 'apiserver_request_total') continue;
    const k = `${s.labels.verb} ${s.labels.resource ?? ''}${s.labels.subresource ? '/' + s.labels.subresource : ''}`;
    requests[k] = (requests[k] ?? 0) + s.value;
  }
  const pids = e.cp.pids();
  const st = {
    apiserver: procStat(pids['kube-apiserver']),
    etcd: procStat(pids.etcd),
    kcm: procStat(pids['kube-controller-manager']),
    backend: procStat(e.backendPid),
  };
  const hosts = e.hostPids().map(procStat);
  const hb = (l: Labels) => l.resource === 'clusterbindings' && l.subresource === 'status' && l.verb === 'PATCH';
  return {
    t: performance.now(),
    cpu: {
      apiserver: st.apiserver.cpu,
      etcd: st.etcd.cpu,
      kcm: st.kcm.cpu,
      backend: st.backend.cpu,
      konnectors: hosts.reduce((a, h) => a + h.cpu, 0),
      bench: procStat(process.pid).cpu,
    },
    rss: {
      apiserver: st.apiserver.rssMb,
      etcd: st.etcd.rssMb,
      kcm: st.kcm.rssMb,
      backend: st.backend.rssMb,
      konnectors: hosts.reduce((a, h) => a + h.rssMb, 0),
    },
    requests,
    watchers: sumOf(api, 'apiserver_registered_watchers'),
    watchRequests: sumOf(api, 'apiserver_longrunning_requests', (l) => l.verb === 'WATCH'),
    watchByResource: api
      .filter((x) => x.name === 'apiserver_longrunning_requests' && x.labels.verb === 'WATCH' && x.value > 0)
      .reduce<Record<string, number>>((a, x) => ({ ...a, [x.labels.resource ?? '']: (a[x.labels.resource ?? ''] ?? 0) + x.value }), {}),
    objectsByResource: api
      .filter((x) => x.name === 'apiserver_storage_objects' && x.value > 0)
      .reduce<Record<string, number>>((a, x) => ({ ...a, [x.labels.resource ?? '']: (a[x.labels.resource ?? ''] ?? 0) + x.value }), {}),
    watchEvents: sumOf(api, 'apiserver_watch_events_total'),
    heapMb: sumOf(api, 'go_memstats_heap_inuse_bytes') / 1048576,
    goroutines: sumOf(api, 'go_goroutines'),
    stackMb: sumOf(api, 'go_memstats_stack_inuse_bytes') / 1048576,
    connections: establishedTo(e.cp.ports.apiServer),
    watchCacheCapacity: api
      .filter((x) => x.name === 'apiserver_watch_cache_capacity' && x.value > 0)
      .reduce<Record<string, number>>((a, x) => ({ ...a, [x.labels.resource ?? '']: x.value }), {}),
    objects: sumOf(api, 'apiserver_storage_objects'),
    hbCount: sumOf(api, 'apiserver_request_duration_seconds_count', hb),
    hbSum: sumOf(api, 'apiserver_request_duration_seconds_sum', hb),
    etcdDb: sumOf(etcd, 'etcd_mvcc_db_total_size_in_bytes'),
    etcdInUse: sumOf(etcd, 'etcd_mvcc_db_total_size_in_use_in_bytes'),
  };
}

/**
 * kube-apiserver's live heap: a heap profile requested with gc=1 runs a full GC first, so its
 * HeapAlloc is the memory the objects, caches and connections really hold — unlike RSS and heap in
 * use, which also carry garbage and pages the Go runtime has not returned yet. The profile (legacy
 * text format) is written to `--heap-profiles`; `go tool pprof -top -sample_index=inuse_space
 * -diff_base=<base> <kube-apiserver binary> <end>` shows what holds the difference.
 */
async function liveHeapMb(e: Env, tag: string): Promise<number> {
  const text = String(await e.cpc.request<string>('GET', '/debug/pprof/heap', { query: { gc: 1, debug: 1 } }));
  const m = /^# HeapAlloc = (\d+)$/m.exec(text);
  if (!m) throw new Error(`kube-apiserver heap profile without "# HeapAlloc": ${text.slice(0, 200)}`);
  if (HEAP_DIR) {
    mkdirSync(HEAP_DIR, { recursive: true });
    writeFileSync(path.join(HEAP_DIR, `heap-${tag}.txt`), text);
  }
  return Number(m[1]) / 1048576;
}

/** Established TCP connections whose local port is `port` (the server side), from /proc/net/tcp and tcp6. */
function establishedTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      // c[1] local address:port, c[3] state (01 = ESTABLISHED)
      if (c[3] === '01' && c[1]?.endsWith(':' + hex)) n++;
    }
  }
  return n;
}

const reqTotal = (s: Snapshot, watch = false) =>
  Object.entries(s.requests)
    .filter(([k]) => watch || !k.startsWith('WATCH'))
    .reduce((a, [, v]) => a + v, 0);
function topRequests(a: Snapshot, b: Snapshot, seconds: number, n = 8): string {
  return Object.entries(b.requests)
    .map(([k, v]) => [k, v - (a.requests[k] ?? 0)] as const)
    .filter(([k, d]) => d > 0 && !k.startsWith('WATCH'))
    .sort((x, y) => y[1] - x[1])
    .slice(0, n)
    .map(([k, d]) => `${k} ${(d / seconds).toFixed(3)}/s`)
    .join(', ');
}

// ------------------------------------------------------------------------------------------ one K

interface Result {
  k: number;
  label: string;
  /** control-plane kube-apiserver flags and environment given with --cp-apiserver-arg/--cp-apiserver-env */
  apiserverArgs?: Record<string, string>;
  apiserverEnv?: Record<string, string>;
  date: string;
  claims: number;
  rate: number;
  idleSeconds: number;
  heartbeatMs: number;
  loadavg: number;
  bindP50: number;
  bindP99: number;
  base: {
    /** kube-apiserver HeapAlloc right after a forced GC (MB); absent in results of older runs */
    apiserverLiveHeap?: number;
    apiserverGoroutines?: number;
    apiserverStackMb?: number;
    apiserverConnections?: number;
    watchCacheCapacity?: Record<string, number>;
    apiserverHeap: number;
    watchByResource: Record<string, number>;
    apiserverRss: number;
    etcdInUse: number;
    etcdDb: number;
    watchers: number;
    watchRequests: number;
    objects: number;
    backendRss: number;
    idleReqPerS: number;
    idleCpuMc: number;
  };
  end: {
    apiserverLiveHeap?: number;
    apiserverGoroutines?: number;
    apiserverStackMb?: number;
    apiserverConnections?: number;
    watchCacheCapacity?: Record<string, number>;
    apiserverHeap: number;
    watchByResource: Record<string, number>;
    apiserverRss: number;
    etcdInUse: number;
    etcdDb: number;
    watchers: number;
    watchRequests: number;
    objects: number;
    backendRss: number;
    konnectorRss: number;
  };
  idle: {
    watchEventsPerS: number;
    reqPerS: number;
    apiserverCpuMc: number;
    etcdCpuMc: number;
    backendCpuMc: number;
    heartbeats: number;
    heartbeatPerS: number;
    heartbeatMeanMs: number;
    top: string;
  };
  load: {
    watchEventsPerClaim: number;
    seconds: number;
    reqPerS: number;
    apiserverCpuMsPerClaim: number;
    etcdCpuMsPerClaim: number;
    backendCpuMsPerClaim: number;
    konnectorCpuMsPerClaim: number;
    reqPerClaim: number;
    top: string;
  };
  /**
   * After a restart of the control-plane kube-apiserver (absent with --rest-seconds 0 and in older results): its watch cache
   * holds every object once, without the event history of the load, and its heap has not grown with the load.
   */
  rest?: {
    apiserverLiveHeap: number;
    apiserverRss: number;
    apiserverHeap: number;
    goroutines: number;
    stackMb: number;
    connections: number;
    watchRequests: number;
  };
  sync: { upP50: number; upP99: number; downP50: number; downP99: number; credsP50: number; credsP99: number; e2eP50: number; e2eP99: number };
}

async function runK(K: number): Promise<Result> {
  log(`K=${K}: starting the control plane`);
  const bins = await ensureBinaries();
  const cp = await startCluster({
    name: 'scale-cp',
    binaries: bins,
    // profiling on: the live heap is read from /debug/pprof/heap
    apiServerArgs: { profiling: 'true', ...CP_APISERVER_ARGS },
    apiServerEnv: CP_APISERVER_ENV,
  });
  const cpc = new KubeClient(cp.kubeConfig, { qps: 0, burst: 1 });
  const stops: Array<() => Promise<unknown>> = [async () => cp.stop(), async () => cpc.close()];
  const hosts: Child[] = [];
  let apps: AppServers | undefined;
  const informers: Informer[] = [];
  const clients: KubeClient[] = [];
  try {
    const crds = bindingCrds() as unknown as KubeObject[];
    await applyManifests(cp.kubeConfig, [
      ...(crds as never[]),
      instanceCrd() as never,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } } as never,
    ]);
    await waitForCrdsEstablished(cp.kubeConfig, [...crds.map((c) => c.metadata.name!), `instances.${GROUP}`]);
    await applyManifests(cp.kubeConfig, [exportTemplate() as never]);

    // issuer and backend
    const op = await OidcTestProvider.listen([]);
    stops.unshift(() => op.stop());
    const clientSecret = 'backend-secret-' + randomBytes(6).toString('hex');
    op.start([{ client_id: CLIENT_ID, client_secret: clientSecret, redirect_uris: ['http://127.0.0.1:9/callback'] }]);
    const backendFile = await bundleProgram('runtime/backend/main.ts', 'klutch-backend.mjs');
    const backend = await spawnChild(
      [
        backendFile,
        `--kubeconfig=${cp.kubeconfigPath}`,
        '--listen-address=127.0.0.1:0',
        `--oidc-issuer-url=${op.issuer}`,
        `--oidc-issuer-client-id=${CLIENT_ID}`,
        `--oidc-issuer-client-secret=${clientSecret}`,
        `--cookie-signing-key=${randomBytes(32).toString('base64')}`,
        '--no-leader-elect',
        '--bind-rate=0',
        '--max-clusters-per-identity=0',
        '--pretty-name=Scale Provider',
        '--log-level=info',
      ],
      /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*klutch-backend serving/,
      'klutch-backend',
    );
    stops.unshift(() => backend.stop());
    const backendUrl = backend.match[1]!;
    log(`backend ${backendUrl} (pid ${backend.proc.pid})`);

    // observer on the control plane, and the bench as provider: status Ready + credentials Secret
    const created = new Map<string, number>();
    const upSeen = new Map<string, number>();
    const statusPatched = new Map<string, number>();
    const secretCreated = new Map<string, number>();
    const downSeen = new Map<string, number>();
    const credsSeen = new Map<string, number>();
    const provider = new KubeClient(cp.kubeConfig, { qps: 0, burst: 1 });
    clients.push(provider);
    const work: Array<() => Promise<void>> = [];
    // idle workers wait here; each new job wakes one of them
    const waiting: Array<() => void> = [];
    const wake = () => waiting.shift()?.();
    let stopWork = false;
    const workers = Array.from({ length: PROVIDER_WORKERS }, async () => {
      while (!stopWork) {
        const job = work.shift();
        if (!job) {
          await new Promise<void>((r) => waiting.push(r));
          continue;
        }
        for (let attempt = 0; ; attempt++) {
          try {
            await job();
            break;
          } catch (err) {
            if (attempt >= 5) {
              log(`provider action failed: ${(err as Error).message}`);
              break;
            }
            await sleep(200 * (attempt + 1));
          }
        }
      }
    });
    const upInf = new Informer(cpc, INSTANCES, { name: 'observer: instances on the control plane' });
    informers.push(upInf);
    upInf.addEventHandler({
      onAdd: (o) => {
        const name = o.metadata.name!;
        if (upSeen.has(name)) return;
        upSeen.set(name, performance.now());
        const ns = o.metadata.namespace!;
        work.push(async () => {
          if (!statusPatched.has(name)) {
            await provider.mergePatch(INSTANCES, ns, name, { status: { phase: 'Ready' } }, 'status');
            statusPatched.set(name, performance.now());
          }
          if (!secretCreated.has(name)) {
            try {
              await provider.create(CoreResources.secrets, {
                metadata: { name: `${name}-creds`, namespace: ns, labels: { [CREDS_LABEL]: CREDS_LABEL_VALUE } },
                type: 'Opaque',
                data: { password: Buffer.from(randomBytes(12).toString('hex')).toString('base64') },
              });
            } catch (err) {
              if (!String((err as Error).message).includes('already exists')) throw err;
            }
            secretCreated.set(name, performance.now());
          }
        });
        wake();
      },
    });
    upInf.start();
    await upInf.waitForSync(60_000);

    const env: Env = { cp, cpc, backendPid: backend.proc.pid!, hostPids: () => hosts.map((h) => h.proc.pid!).filter(Boolean), apps: undefined };
    // kube-apiserver publishes apiserver_storage_objects about a minute after it starts: wait for it,
    // so the baseline's objects are not counted per app cluster
    for (const end = Date.now() + 120_000; (await snapshot(env)).objects === 0 && Date.now() < end;) await sleep(2000);
    await sleep(5_000);
    const b0 = await snapshot(env);
    await sleep(BASE_S * 1000);
    const b1 = await snapshot(env);
    const baseS = (b1.t - b0.t) / 1000;
    const tag = `K${K}${opts.label ? '-' + String(opts.label) : ''}`;
    const baseLiveHeap = await liveHeapMb(env, `${tag}-base`);
    log(
      `baseline: apiserver RSS ${b1.rss.apiserver!.toFixed(0)} MB, etcd in use ${(b1.etcdInUse / 1e6).toFixed(1)} MB, watchers ${b1.watchers}, WATCH requests ${b1.watchRequests}, objects ${b1.objects}, backend RSS ${b1.rss.backend!.toFixed(0)} MB, idle ${((reqTotal(b1) - reqTotal(b0)) / baseS).toFixed(2)} req/s (${topRequests(b0, b1, baseS)})`,
    );

    // app clusters
    log(`K=${K}: starting ${K} app API servers (shared etcd)`);
    apps = await startAppServers({ binaries: bins, log: () => undefined });
    env.apps = apps;
    stops.unshift(() => apps!.stop());
    const t0 = performance.now();
    const appList = await apps.add(K, 4);
    log(`app API servers ready in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    // bind each app cluster through the backend, kubectl-bind's bearer path
    const bindTimes: number[] = [];
    const nullIo = { out: new PassThrough().resume(), err: new PassThrough().resume(), in: new PassThrough() };
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(4, K) }, async () => {
        while (next < K) {
          const i = next++;
          const app = appList[i]!;
          const consumer = new KubeClient(loadKubeconfigFile(app.kubeconfigPath));
          const now = Math.floor(Date.now() / 1000);
          const token = await op.signAsIssuer({ iss: op.issuer, sub: `scale-app-${i}`, aud: CLIENT_ID, iat: now, exp: now + 600 });
          const s = performance.now();
          try {
            await bind({
              url: `${backendUrl}/export`,
              consumer,
              token,
              resources: [`instances.${GROUP}`],
              yes: true,
              skipKonnector: true,
              dryRun: false,
              open: false,
              output: undefined,
              timeoutMs: 120_000,
              io: nullIo,
            });
          } finally {
            consumer.close();
          }
          bindTimes.push((performance.now() - s) / 1000);
        }
      }),
    );
    log(`bound ${K} app clusters: bind p50 ${pct(bindTimes, 50).toFixed(2)} s, p99 ${pct(bindTimes, 99).toFixed(2)} s`);

    // konnectors
    const hostFile = await bundleProgram('scripts/_scale-konnectors.ts', 'scale-konnectors.mjs');
    for (let i = 0; i < K; i += PER_HOST) {
      const group = appList.slice(i, i + PER_HOST);
      const h = await spawnChild(
        [hostFile, ...group.map((a) => a.kubeconfigPath)],
        /ready \d+/,
        `konnector host ${i / PER_HOST}`,
        HEARTBEAT_MS ? { SCALE_HEARTBEAT_MS: String(HEARTBEAT_MS) } : {},
      );
      hosts.push(h);
      stops.unshift(() => h.stop());
    }
    log(`${K} konnectors in ${hosts.length} host processes; waiting for the bound CRDs`);
    const appClients = appList.map((a) => {
      const c = new KubeClient(loadKubeconfigFile(a.kubeconfigPath), { qps: 0, burst: 1 });
      clients.push(c);
      return c;
    });
    await Promise.all(
      appClients.map(async (c, i) => {
        const end = Date.now() + 300_000;
        for (;;) {
          const crd = await c.getOrNull<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(
            CoreResources.crds,
            undefined,
            `instances.${GROUP}`,
          );
          if (crd?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) break;
          if (Date.now() > end) throw new Error(`app cluster ${appList[i]!.name}: bound CRD not established after 300 s`);
          await sleep(500);
        }
        await c.create(CoreResources.namespaces, { metadata: { name: WORK_NS } });
      }),
    );
    await sleep(2000); // a just-established CRD may answer 404 for a moment

    // app-side observers
    for (const [i, c] of appClients.entries()) {
      const inst = new Informer(c, INSTANCES, { namespace: WORK_NS, name: `observer ${appList[i]!.name} instances` });
      const onInst = (o: KubeObject) => {
        if ((o as { status?: { phase?: string } }).status?.phase === 'Ready' && !downSeen.has(o.metadata.name!))
          downSeen.set(o.metadata.name!, performance.now());
      };
      inst.addEventHandler({ onAdd: onInst, onUpdate: (_, o) => onInst(o) });
      const sec = new Informer(c, CoreResources.secrets, {
        namespace: WORK_NS,
        labelSelector: `${CREDS_LABEL}=${CREDS_LABEL_VALUE}`,
        name: `observer ${appList[i]!.name} secrets`,
      });
      sec.addEventHandler({
        onAdd: (o) => {
          const n = o.metadata.name!.replace(/-creds$/, '');
          if (!credsSeen.has(n)) credsSeen.set(n, performance.now());
        },
      });
      informers.push(inst, sec);
      inst.start();
      sec.start();
    }
    await Promise.all(informers.map((i) => i.waitForSync(60_000)));

    // warm-up: one claim per app cluster (APIServiceNamespace → provider namespace and RBAC)
    const createClaim = async (c: KubeClient, name: string) => {
      for (let attempt = 0; ; attempt++) {
        try {
          await c.create(INSTANCES, { metadata: { name, namespace: WORK_NS }, spec: { plan: 'small', replicas: 1 } });
          return;
        } catch (err) {
          if (attempt >= 20) throw err;
          await sleep(500);
        }
      }
    };
    await Promise.all(appClients.map((c, i) => createClaim(c, `w${i}-warmup`)));
    const warm = appClients.map((_, i) => `w${i}-warmup`);
    const waitAll = async (what: string, names: string[], seen: Map<string, number>, timeoutMs: number) => {
      const end = Date.now() + timeoutMs;
      while (!names.every((n) => seen.has(n))) {
        if (Date.now() > end) throw new Error(`${what}: ${names.filter((n) => !seen.has(n)).length} of ${names.length} missing after ${timeoutMs / 1000} s`);
        await sleep(200);
      }
    };
    await waitAll('warm-up claims with credentials on the app clusters', warm, credsSeen, 300_000);
    log('every app cluster synced its warm-up claim and got its credentials');

    // load
    const names: string[][] = appClients.map((_, i) => Array.from({ length: CLAIMS }, (_x, j) => `c${i}-${j}`));
    const l0 = await snapshot(env);
    const loadStart = performance.now();
    await Promise.all(
      appClients.map(async (c, i) => {
        const offset = (i / K) * (1000 / RATE);
        for (const [j, name] of names[i]!.entries()) {
          const due = loadStart + offset + (j * 1000) / RATE;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          await createClaim(c, name);
          created.set(name, performance.now());
        }
      }),
    );
    const all = names.flat();
    await waitAll('claims with credentials on the app clusters', all, credsSeen, 1_800_000);
    await waitAll('claim statuses on the app clusters', all, downSeen, 300_000);
    const l1 = await snapshot(env);
    const loadS = (l1.t - l0.t) / 1000;
    const lat = (to: Map<string, number>, from: Map<string, number>) => all.map((n) => (to.get(n)! - from.get(n)!) / 1000);
    const up = lat(upSeen, created);
    const down = lat(downSeen, statusPatched);
    const creds = lat(credsSeen, secretCreated);
    const e2e = lat(credsSeen, created);
    const nClaims = all.length;
    log(
      `load: ${nClaims} claims in ${loadS.toFixed(0)} s; up p50 ${pct(up, 50).toFixed(2)} p99 ${pct(up, 99).toFixed(2)} s; status down p50 ${pct(down, 50).toFixed(2)} p99 ${pct(down, 99).toFixed(2)} s; ` +
        `creds down p50 ${pct(creds, 50).toFixed(2)} p99 ${pct(creds, 99).toFixed(2)} s; claim→creds p50 ${pct(e2e, 50).toFixed(2)} p99 ${pct(e2e, 99).toFixed(2)} s; ` +
        `${((reqTotal(l1) - reqTotal(l0)) / loadS).toFixed(1)} req/s (${topRequests(l0, l1, loadS)})`,
    );

    // idle
    await sleep(SETTLE_S * 1000);
    const i0 = await snapshot(env);
    log(`idle window: ${IDLE_S} s`);
    await sleep(IDLE_S * 1000);
    const i1 = await snapshot(env);
    const idleS = (i1.t - i0.t) / 1000;
    const endLiveHeap = await liveHeapMb(env, `${tag}-end`);
    const hb = i1.hbCount - i0.hbCount;
    const mc = (a: Snapshot, b: Snapshot, k: string, s: number) => (1000 * (b.cpu[k]! - a.cpu[k]!)) / s;
    const res: Result = {
      k: K,
      label: String(opts.label),
      apiserverArgs: CP_APISERVER_ARGS,
      apiserverEnv: CP_APISERVER_ENV,
      date: new Date().toISOString(),
      claims: CLAIMS,
      rate: RATE,
      idleSeconds: IDLE_S,
      heartbeatMs: HEARTBEAT_MS ?? 300_000,
      loadavg: loadavg()[0]!,
      bindP50: pct(bindTimes, 50),
      bindP99: pct(bindTimes, 99),
      base: {
        apiserverLiveHeap: baseLiveHeap,
        apiserverGoroutines: b1.goroutines,
        apiserverStackMb: b1.stackMb,
        apiserverConnections: b1.connections,
        watchCacheCapacity: b1.watchCacheCapacity,
        apiserverHeap: b1.heapMb,
        watchByResource: b1.watchByResource,
        apiserverRss: b1.rss.apiserver!,
        etcdInUse: b1.etcdInUse,
        etcdDb: b1.etcdDb,
        watchers: b1.watchers,
        watchRequests: b1.watchRequests,
        objects: b1.objects,
        backendRss: b1.rss.backend!,
        idleReqPerS: (reqTotal(b1) - reqTotal(b0)) / baseS,
        idleCpuMc: mc(b0, b1, 'apiserver', baseS),
      },
      end: {
        apiserverLiveHeap: endLiveHeap,
        apiserverGoroutines: i1.goroutines,
        apiserverStackMb: i1.stackMb,
        apiserverConnections: i1.connections,
        watchCacheCapacity: i1.watchCacheCapacity,
        apiserverHeap: i1.heapMb,
        watchByResource: i1.watchByResource,
        apiserverRss: i1.rss.apiserver!,
        etcdInUse: i1.etcdInUse,
        etcdDb: i1.etcdDb,
        watchers: i1.watchers,
        watchRequests: i1.watchRequests,
        objects: i1.objects,
        backendRss: i1.rss.backend!,
        konnectorRss: i1.rss.konnectors!,
      },
      idle: {
        watchEventsPerS: (i1.watchEvents - i0.watchEvents) / idleS,
        reqPerS: (reqTotal(i1) - reqTotal(i0)) / idleS,
        apiserverCpuMc: mc(i0, i1, 'apiserver', idleS),
        etcdCpuMc: mc(i0, i1, 'etcd', idleS),
        backendCpuMc: mc(i0, i1, 'backend', idleS),
        heartbeats: hb,
        heartbeatPerS: hb / idleS,
        heartbeatMeanMs: hb > 0 ? (1000 * (i1.hbSum - i0.hbSum)) / hb : NaN,
        top: topRequests(i0, i1, idleS, 12),
      },
      load: {
        watchEventsPerClaim: (l1.watchEvents - l0.watchEvents) / nClaims,
        seconds: loadS,
        reqPerS: (reqTotal(l1) - reqTotal(l0)) / loadS,
        apiserverCpuMsPerClaim: (1000 * (l1.cpu.apiserver! - l0.cpu.apiserver!)) / nClaims,
        etcdCpuMsPerClaim: (1000 * (l1.cpu.etcd! - l0.cpu.etcd!)) / nClaims,
        backendCpuMsPerClaim: (1000 * (l1.cpu.backend! - l0.cpu.backend!)) / nClaims,
        konnectorCpuMsPerClaim: (1000 * (l1.cpu.konnectors! - l0.cpu.konnectors!)) / nClaims,
        reqPerClaim: (reqTotal(l1) - reqTotal(l0)) / nClaims,
        top: topRequests(l0, l1, loadS, 12),
      },
      sync: {
        upP50: pct(up, 50),
        upP99: pct(up, 99),
        downP50: pct(down, 50),
        downP99: pct(down, 99),
        credsP50: pct(creds, 50),
        credsP99: pct(creds, 99),
        e2eP50: pct(e2e, 50),
        e2eP99: pct(e2e, 99),
      },
    };
    log(
      `idle: ${res.idle.reqPerS.toFixed(2)} req/s, apiserver ${res.idle.apiserverCpuMc.toFixed(0)} mCPU, ${hb} heartbeats (${res.idle.heartbeatMeanMs.toFixed(1)} ms mean); ${res.idle.top}`,
    );
    log(`stored objects by resource: baseline ${JSON.stringify(b1.objectsByResource)}, end ${JSON.stringify(i1.objectsByResource)}`);
    log(
      `kube-apiserver: goroutines ${b1.goroutines} → ${i1.goroutines}, stacks ${b1.stackMb.toFixed(1)} → ${i1.stackMb.toFixed(1)} MB, TCP connections ${b1.connections} → ${i1.connections}; ` +
        `watch cache capacity (events of history) ${JSON.stringify(i1.watchCacheCapacity)}`,
    );
    log(`open WATCH requests by resource: baseline ${JSON.stringify(b1.watchByResource)}, end ${JSON.stringify(i1.watchByResource)}`);
    log(
      `end: apiserver live heap after GC ${endLiveHeap.toFixed(1)} MB (baseline ${baseLiveHeap.toFixed(1)}), heap in use ${res.end.apiserverHeap.toFixed(0)} MB (baseline ${res.base.apiserverHeap.toFixed(0)}), RSS ${res.end.apiserverRss.toFixed(0)} MB, etcd in use ${(res.end.etcdInUse / 1e6).toFixed(1)} MB (db ${(res.end.etcdDb / 1e6).toFixed(1)} MB), watchers ${res.end.watchers}, WATCH requests ${res.end.watchRequests}, objects ${res.end.objects}, backend RSS ${res.end.backendRss.toFixed(0)} MB, konnector hosts RSS ${res.end.konnectorRss.toFixed(0)} MB`,
    );
    if (REST_S > 0) res.rest = await atRest(env, cp, i1, `${tag}-rest`);
    stopWork = true;
    for (const w of waiting.splice(0)) w();
    void workers;
    return res;
  } finally {
    for (const i of informers) await i.stop().catch(() => undefined);
    for (const c of clients) c.close();
    for (const s of stops) await s().catch((e) => log(`stop: ${(e as Error).message}`));
  }
}

/**
 * The control plane at rest: restart kube-apiserver (etcd keeps everything), wait until the
 * konnectors' watches are back and it publishes its object counts again, let it settle, measure.
 */
async function atRest(e: Env, cp: RealCluster, end: Snapshot, tag: string): Promise<NonNullable<Result['rest']>> {
  log('at rest: restarting the control-plane kube-apiserver (its watch cache then holds every object once, without the history of the load)');
  await cp.restartApiServer();
  const deadline = Date.now() + 180_000;
  for (;;) {
    const s = await snapshot(e).catch(() => undefined);
    if (s && s.watchRequests >= end.watchRequests && s.objects > 0) break;
    if (Date.now() > deadline) {
      log(`at rest: after 180 s ${s?.watchRequests ?? '?'} of ${end.watchRequests} WATCH requests are back; measuring anyway`);
      break;
    }
    await sleep(2000);
  }
  await sleep(REST_S * 1000);
  const s = await snapshot(e);
  const live = await liveHeapMb(e, tag);
  log(
    `at rest: apiserver live heap after GC ${live.toFixed(1)} MB, heap in use ${s.heapMb.toFixed(0)} MB, RSS ${s.rss.apiserver!.toFixed(0)} MB, ` +
      `goroutines ${s.goroutines}, stacks ${s.stackMb.toFixed(1)} MB, TCP connections ${s.connections}, WATCH requests ${s.watchRequests}`,
  );
  return {
    apiserverLiveHeap: live,
    apiserverRss: s.rss.apiserver!,
    apiserverHeap: s.heapMb,
    goroutines: s.goroutines,
    stackMb: s.stackMb,
    connections: s.connections,
    watchRequests: s.watchRequests,
  };
}

// ------------------------------------------------------------------------------------------ report

function perCluster(r: Result) {
  const k = r.k;
  return {
    apiserverRssMb: (r.end.apiserverRss - r.base.apiserverRss) / k,
    apiserverHeapMb: (r.end.apiserverHeap - r.base.apiserverHeap) / k,
    apiserverLiveHeapMb: ((r.end.apiserverLiveHeap ?? NaN) - (r.base.apiserverLiveHeap ?? NaN)) / k,
    apiserverStackKb: (((r.end.apiserverStackMb ?? NaN) - (r.base.apiserverStackMb ?? NaN)) * 1024) / k,
    goroutines: ((r.end.apiserverGoroutines ?? NaN) - (r.base.apiserverGoroutines ?? NaN)) / k,
    connections: ((r.end.apiserverConnections ?? NaN) - (r.base.apiserverConnections ?? NaN)) / k,
    restLiveHeapMb: ((r.rest?.apiserverLiveHeap ?? NaN) - (r.base.apiserverLiveHeap ?? NaN)) / k,
    restRssMb: ((r.rest?.apiserverRss ?? NaN) - r.base.apiserverRss) / k,
    etcdInUseKb: (r.end.etcdInUse - r.base.etcdInUse) / 1024 / k,
    etcdDbKb: (r.end.etcdDb - r.base.etcdDb) / 1024 / k,
    watchers: (r.end.watchers - r.base.watchers) / k,
    watchRequests: (r.end.watchRequests - r.base.watchRequests) / k,
    objects: (r.end.objects - r.base.objects) / k,
    backendRssKb: ((r.end.backendRss - r.base.backendRss) * 1024) / k,
    idleReqPerS: (r.idle.reqPerS - r.base.idleReqPerS) / k,
    idleCpuMc: (r.idle.apiserverCpuMc - r.base.idleCpuMc) / k,
  };
}

function report(results: Result[]): string {
  const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  const rows = [...results].sort((a, b) => a.k - b.k);
  const pc = rows.map(perCluster);
  const lines: string[] = [];
  lines.push(
    `${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}; claims/app cluster ${rows[0]?.claims}, ${rows[0]?.rate} claims/s per app cluster during load, heartbeat ${(rows[0]?.heartbeatMs ?? 0) / 1000} s`,
  );
  lines.push('');
  lines.push('Control plane, totals:');
  lines.push(
    '| K | load avg | bind p50/p99 (s) | apiserver RSS (MB) base → end | heap in use (MB) base → end | live heap after GC (MB) base → end | etcd in use (MB) base → end | open WATCHes base → end | objects base → end | backend RSS (MB) base → end | konnector hosts RSS (MB) |',
  );
  lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(
      `| ${r.k} | ${f(r.loadavg ?? NaN, 1)} | ${f(r.bindP50)} / ${f(r.bindP99)} | ${f(r.base.apiserverRss, 0)} → ${f(r.end.apiserverRss, 0)} | ${f(r.base.apiserverHeap, 0)} → ${f(r.end.apiserverHeap, 0)} | ${f(r.base.apiserverLiveHeap ?? NaN, 0)} → ${f(r.end.apiserverLiveHeap ?? NaN, 0)} | ${f(r.base.etcdInUse / 1e6, 1)} → ${f(r.end.etcdInUse / 1e6, 1)} | ${r.base.watchRequests} → ${r.end.watchRequests} | ${r.base.objects} → ${r.end.objects} | ${f(r.base.backendRss, 0)} → ${f(r.end.backendRss, 0)} | ${f(r.end.konnectorRss, 0)} |`,
    );
  }
  lines.push('');
  lines.push('Idle and load:');
  lines.push(
    '| K | idle req/s (base) | idle apiserver mCPU (base) | idle watch events/s | heartbeats/s | heartbeat PATCH mean (ms) | load req/s | load req/claim | apiserver CPU ms/claim | etcd ms/claim | backend ms/claim | up p50/p99 (s) | status down p50/p99 (s) | creds down p50/p99 (s) | claim→creds p50/p99 (s) |',
  );
  lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(
      `| ${r.k} | ${f(r.idle.reqPerS)} (${f(r.base.idleReqPerS)}) | ${f(r.idle.apiserverCpuMc, 0)} (${f(r.base.idleCpuMc, 0)}) | ${f(r.idle.watchEventsPerS ?? NaN, 1)} | ${f(r.idle.heartbeatPerS, 3)} | ${f(r.idle.heartbeatMeanMs, 1)} | ${f(r.load.reqPerS, 1)} | ${f(r.load.reqPerClaim, 1)} | ${f(r.load.apiserverCpuMsPerClaim, 1)} | ${f(r.load.etcdCpuMsPerClaim, 1)} | ${f(r.load.backendCpuMsPerClaim, 2)} | ${f(r.sync.upP50)} / ${f(r.sync.upP99)} | ${f(r.sync.downP50)} / ${f(r.sync.downP99)} | ${f(r.sync.credsP50)} / ${f(r.sync.credsP99)} | ${f(r.sync.e2eP50)} / ${f(r.sync.e2eP99)} |`,
    );
  }
  lines.push('');
  lines.push('Per app cluster ((end − baseline) / K):');
  lines.push(
    '| K | apiserver RSS (MB) | apiserver heap (MB) | apiserver live heap after GC (MB) | apiserver stacks (KB) | goroutines | TCP connections | etcd in use (KB) | etcd db (KB) | open WATCHes | objects | backend RSS (KB) | idle req/s | idle apiserver mCPU |',
  );
  lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, r] of rows.entries()) {
    const p = pc[i]!;
    lines.push(
      `| ${r.k} | ${f(p.apiserverRssMb)} | ${f(p.apiserverHeapMb)} | ${f(p.apiserverLiveHeapMb)} | ${f(p.apiserverStackKb, 0)} | ${f(p.goroutines, 1)} | ${f(p.connections, 1)} | ${f(p.etcdInUseKb, 0)} | ${f(p.etcdDbKb, 0)} | ${f(p.watchRequests, 1)} | ${f(p.objects, 1)} | ${f(p.backendRssKb, 0)} | ${f(p.idleReqPerS, 4)} | ${f(p.idleCpuMc, 2)} |`,
    );
  }
  lines.push('');
  lines.push('At rest (kube-apiserver restarted after the idle window: every object once, no event history), per app cluster ((rest − baseline) / K):');
  lines.push('| K | kube-apiserver env | live heap after GC (MB) | RSS (MB) | RSS / live heap, whole process |');
  lines.push('|---:|---|---:|---:|---:|');
  for (const [i, r] of rows.entries()) {
    const p = pc[i]!;
    const env = Object.entries(r.apiserverEnv ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    lines.push(
      `| ${r.k} | ${env || '(none)'} | ${f(p.restLiveHeapMb)} | ${f(p.restRssMb)} | ${r.rest ? f(r.rest.apiserverRss / r.rest.apiserverLiveHeap) : 'n/a'} |`,
    );
  }
  if (rows.length > 1) {
    lines.push('');
    lines.push('Ratios of per-cluster figures (and of p99s) between consecutive K (1.00 = linear):');
    lines.push(
      '| K → K | apiserver RSS | etcd in use | open WATCHes | objects | backend RSS | idle req/s | idle mCPU | apiserver ms/claim | up p99 | claim→creds p99 |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (let i = 1; i < rows.length; i++) {
      const a = pc[i - 1]!;
      const b = pc[i]!;
      const q = (x: number, y: number) => f(y / x);
      lines.push(
        `| ${rows[i - 1]!.k} → ${rows[i]!.k} | ${q(a.apiserverRssMb, b.apiserverRssMb)} | ${q(a.etcdInUseKb, b.etcdInUseKb)} | ${q(a.watchRequests, b.watchRequests)} | ${q(a.objects, b.objects)} | ${q(a.backendRssKb, b.backendRssKb)} | ${q(a.idleReqPerS, b.idleReqPerS)} | ${q(a.idleCpuMc, b.idleCpuMc)} | ${q(rows[i - 1]!.load.apiserverCpuMsPerClaim, rows[i]!.load.apiserverCpuMsPerClaim)} | ${q(rows[i - 1]!.sync.upP99, rows[i]!.sync.upP99)} | ${q(rows[i - 1]!.sync.e2eP99, rows[i]!.sync.e2eP99)} |`,
      );
    }
  }
  lines.push('');
  for (const r of rows) {
    lines.push(`K=${r.k} idle requests by kind: ${r.idle.top}`);
    lines.push(`K=${r.k} load requests by kind: ${r.load.top}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const file = String(opts.results);
  const stored: Result[] = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Result[]) : [];
  for (const K of KS) {
    const r = await runK(K);
    const keep = stored.filter((x) => !(x.k === r.k && x.label === r.label));
    keep.push(r);
    stored.splice(0, stored.length, ...keep);
    writeFileSync(file, JSON.stringify(stored, null, 2));
    log(`K=${K} done; results in ${file}`);
  }
  const labels = [...new Set(stored.map((r) => r.label))];
  for (const l of labels) {
    process.stdout.write(`\n## ${l || '(no label)'}\n${report(stored.filter((r) => r.label === l))}\n`);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench:scale failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
