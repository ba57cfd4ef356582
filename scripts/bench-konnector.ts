/**
 * npm run bench:konnector [-- --sizes 100,1000,5000 --concurrency 32 --qps 500] (the konnector at its defaults unless --qps/--workers)
 *
 * On real clusters (a control plane and an app cluster from runtime/realinfra), with the konnector
 * as a child process (`klutch-konnector`, leader election off):
 *  1. raw create throughput of a plain client against the control plane (the physical limit);
 *  2. for each N: create N claims in the app cluster; time until all exist upstream (per-object
 *     latency = first seen upstream − create returned downstream), then patch every upstream status
 *     and time until all statuses are back down; throughput, p50/p99, and the konnector's peak RSS;
 *  3. the same N again with the konnector unthrottled (QPS 0, 32 workers): the pipeline ceiling, so
 *     the table shows what the settings under test (the defaults unless --qps/--workers) cost
 *     (`--no-ceiling` skips it). The zero-cost ceiling of step 1 (create + update + apply as if the
 *     konnector and the watches used no CPU) is printed too; no konnector can reach it on shared cores.
 * With --konnector-from <dir>, the konnector of another checkout (an earlier commit) runs too, with the
 * settings under test, round by round beside this checkout's: before/after figures from one run.
 * Each konnector runs as in its image: on the image's Node.js (--node; `--node current` for the bench's own) with its
 * checkout's Node.js flags (runtime/image/node-flags.ts), then --node-args.
 * Every round starts its konnector anew, and one round that is not counted goes first (--no-warm-up-round skips it):
 * the first burst on new clusters costs more, and a konnector kept from an earlier round has compiled its hot code.
 * The konnector's CPU of the up phase is printed per object twice, labelled: from a baseline taken
 * once it is started and idle (informers synced, before the N objects), and with its start-up CPU
 * (process start until idle) added; the start-up CPU itself too.
 * Prints a table; figures go into docs/konnector.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { Command } from 'commander';
import { ApiError, CoreResources, KubeClient, resourcePath, type KubeObject } from '../runtime/core/client.js';
import { Informer } from '../runtime/core/informer.js';
import { startCluster, type RealCluster } from '../runtime/realinfra/index.js';
import { svgChart } from './_svg-chart.js';
import {
  bundleProgram,
  cpuPerObject,
  cpuSeconds,
  freePort,
  mainThreadCpuSeconds,
  median,
  metricSum,
  peakRssMb,
  percentile,
  repo,
  rssMb,
} from './_bench-procs.js';
import { LOCAL_NODE_VERSION, localNodeBinary } from '../runtime/image/base.js';
import { defaultImageCache } from '../runtime/image/build.js';
import { DEFAULT_QPS, DEFAULT_WORKERS } from '../runtime/konnector/defaults.js';
import { DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING } from '../runtime/konnector/object-cap.js';
import {
  bindOnApp,
  createCRDs,
  ensure,
  eventually,
  installBindingCRDs,
  countDelta,
  MiniBackend,
  parallel,
  requestCounts,
  setUpConsumerOnProvider,
  widgetCRD,
  WIDGETS,
  WIDGETS_NAME,
} from '../test/integration/konnector/fixture.js';

const opts = new Command('bench-konnector')
  .option('--sizes <list>', 'comma-separated object counts', '100,1000,5000')
  .option('--concurrency <n>', 'parallel requests of the load generator', '32')
  .option('--rate <n>', 'pace the load generator at this many creates (and status patches) per second; 0 = as fast as it can (a burst)', '0')
  .option('--qps <n>', "konnector client QPS (burst = 2 × QPS); default: the konnector's", String(DEFAULT_QPS))
  .option('--workers <n>', "konnector workers per sync controller; default: the konnector's", String(DEFAULT_WORKERS))
  .option('--repeat <k>', 'run each N this many times per konnector setting, alternating the settings, and compare medians (damps a busy machine)', '1')
  .option('--no-warm-up-round', 'skip the round that goes first and is not counted (the first round on new clusters costs the konnector more)')
  .option('--no-ceiling', 'skip the unthrottled konnector (--qps 0, 32 workers) run after each N that the table compares the settings with')
  .option(
    '--konnector-from <dir>',
    "also run another checkout's konnector (e.g. `git worktree add /tmp/before main`) with the settings under test, alternating with this one's: before/after in one run",
  )
  .option(
    '--node <path>',
    "the Node.js the konnector runs on: `image` (the image's, runtime/image/base.ts LOCAL_NODE_VERSION, fetched once into the image cache: the konnector as deployed), `current` (the bench's own) or a path",
    'image',
  )
  .option('--node-args <args>', 'extra Node.js flags for the konnector process, space-separated (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")', '')
  .option('--konnector-log-level <level>', 'log level of the konnector process (its JSON logs go to stderr)', 'warn')
  .option('--runner <kind>', 'bundle: run an esbuild bundle with plain node (as deployed); tsx: run the sources under tsx', 'bundle')
  .option('--chart <file>', 'also draw throughput and p99 against N as an SVG chart here', 'docs/images/bench-konnector.svg')
  .parse(process.argv)
  .opts();
const sizes = String(opts.sizes).split(',').map(Number);
const concurrency = Number(opts.concurrency);

const pct = percentile;

const rate = Number(opts.rate);
if (!Number.isFinite(rate) || rate < 0) throw new Error(`--rate: ${opts.rate} must be a number >= 0`);

/** Like `parallel`, but item k is started no earlier than k / rate seconds after the start (rate > 0). */
async function paced<T>(items: T[], n: number, f: (x: T) => Promise<void>): Promise<void> {
  if (!(rate > 0)) return parallel(items, n, f);
  const t0 = performance.now();
  let k = 0;
  await parallel(items, n, async (x) => {
    const due = t0 + (k++ * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await f(x);
  });
}

/**
 * CPU seconds of every process that does the work: both clusters' etcd and kube-apiserver, the konnector, this
 * load generator; `clustersOnly`: the clusters' processes alone, their kube-controller-managers included.
 */
function cpuSnapshot(cp: RealCluster, app: RealCluster, konnectorPid?: number, clustersOnly = false): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, pid: number | undefined) => {
    if (pid === undefined) return;
    try {
      out[k] = cpuSeconds(pid);
    } catch {
      /* exited */
    }
  };
  add('cp apiserver', cp.pids()['kube-apiserver']);
  add('cp etcd', cp.pids().etcd);
  add('app apiserver', app.pids()['kube-apiserver']);
  add('app etcd', app.pids().etcd);
  if (clustersOnly) {
    add('cp controller-manager', cp.pids()['kube-controller-manager']);
    add('app controller-manager', app.pids()['kube-controller-manager']);
    return out;
  }
  add('konnector', konnectorPid);
  add('bench', process.pid);
  return out;
}
const cpuDelta = (a: Record<string, number>, b: Record<string, number>): string =>
  Object.keys(b)
    .map((k) => `${k} ${(b[k]! - (a[k] ?? 0)).toFixed(1)}`)
    .join(', ');

const showCounts = (a: Record<string, number>, b: Record<string, number>): string =>
  Object.entries(countDelta(a, b))
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

/** The checkout whose konnector --konnector-from compares with this one's (absolute), if any. */
const fromDir = opts.konnectorFrom === undefined ? undefined : resolve(String(opts.konnectorFrom));
if (fromDir !== undefined && !existsSync(join(fromDir, 'runtime/konnector/main.ts'))) {
  throw new Error(`--konnector-from: ${opts.konnectorFrom} has no runtime/konnector/main.ts; pass a klutch-kit checkout (e.g. made by git worktree add)`);
}

/** The command line of the konnector of checkout `from` (this one when undefined). */
async function konnectorEntry(from: string | undefined): Promise<string[]> {
  if (opts.runner === 'tsx') return ['--import', 'tsx', join(from ?? repo, 'runtime/konnector/main.ts')];
  return [await bundleProgram('runtime/konnector/main.ts', from === undefined ? 'klutch-konnector.mjs' : 'klutch-konnector-from.mjs', from)];
}

/**
 * `--all-namespaces` for a konnector that requires a namespace choice (the bench's claims spread over many
 * namespaces; its admin kubeconfig is cluster-wide anyway); nothing for a --konnector-from checkout older
 * than that flag, which would refuse it as unknown.
 */
function namespaceChoiceArgs(from: string | undefined): string[] {
  return knowsFlag(from, '--all-namespaces') ? ['--all-namespaces'] : [];
}

/** Whether the konnector of `from`'s checkout (undefined: this one) declares `flag`: an older one refuses flags it does not know. */
function knowsFlag(from: string | undefined, flag: string): boolean {
  return readFileSync(join(from ?? repo, 'runtime/konnector/main.ts'), 'utf8').includes(`'${flag}`);
}

/**
 * The Node.js flags the konnector of `from`'s checkout (undefined: this one) runs with in its image
 * (runtime/image/node-flags.ts; none in a checkout older than that file): each konnector is measured at its defaults.
 */
async function nodeFlagsOf(from: string | undefined): Promise<string[]> {
  const file = join(from ?? repo, 'runtime/image/node-flags.ts');
  if (!existsSync(file)) return [];
  const m = (await import(pathToFileURL(file).href)) as { RUNTIME_NODE_FLAGS: { konnector: readonly string[] } };
  return [...m.RUNTIME_NODE_FLAGS.konnector];
}

/** The raised cache cap, for a konnector that has one (a --konnector-from checkout older than the cap has no limit). */
function objectCapArgs(from: string | undefined): string[] {
  return knowsFlag(from, '--max-cached-objects-per-binding') ? ['--max-cached-objects-per-binding', String(objectCap)] : [];
}

/**
 * A konnector setting the bench runs: the one under test, the same from --konnector-from's checkout,
 * and the unthrottled one that gives the pipeline ceiling.
 */
interface Profile {
  label: string;
  /** The namespace tag of its rounds. */
  tag: string;
  qps: number;
  workers: number;
  /** The checkout its konnector comes from; undefined: this one. */
  from?: string;
}

/**
 * The konnector's cap on the objects one binding may cache (--max-cached-objects-per-binding): every round
 * adds its N objects (and a warm-up one) in a namespace of its own, and a konnector holds those of every
 * round before it, so the cap is raised past what the whole run creates (a capped konnector stops syncing).
 */
let objectCap = DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING;
/** The konnector process running now, ended with the bench (also on a signal). */
let liveKonnector: ChildProcess | undefined;
process.on('exit', () => liveKonnector?.kill('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // exit() runs the exit hooks: this one, and the harness's that ends the clusters.
  process.once(sig, () => process.exit(130));
}

/** The konnector's /metrics port (its --health-address), for the time its client limiter made requests wait. */
let healthPort = 0;
/** Seconds the running konnector's requests have waited for its client-side rate limit so far (both clusters). */
async function throttledSeconds(): Promise<number> {
  return konnectorMetric('klutch_konnector_client_throttled_seconds_total');
}
/** The sum of one metric of the running konnector (all label sets). */
async function konnectorMetric(name: string): Promise<number> {
  return metricSum(await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text(), name);
}

async function startKonnector(app: RealCluster, profile: Profile): Promise<ChildProcess> {
  const entry = await konnectorEntry(profile.from);
  const nodeFlags = await nodeFlagsOf(profile.from);
  healthPort = await freePort();
  return (liveKonnector = spawn(
    konnectorNode,
    [
      ...nodeFlags,
      ...String(opts.nodeArgs).split(' ').filter(Boolean),
      ...entry,
      '--kubeconfig',
      app.kubeconfigPath,
      '--no-leader-elect',
      ...namespaceChoiceArgs(profile.from),
      '--health-address',
      `127.0.0.1:${healthPort}`,
      '--qps',
      String(profile.qps),
      '--burst',
      String(Math.max(1, profile.qps * 2)),
      '--workers',
      String(profile.workers),
      '--log-level',
      String(opts.konnectorLogLevel),
      ...objectCapArgs(profile.from),
    ],
    { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, KLUTCH_KONNECTOR_VERSION: 'v0.1.0-bench' } },
  ));
}

/** Waits for the konnector's graceful shutdown (and any --cpu-prof output); SIGKILL after 10 s. */
async function stopKonnector(k: ChildProcess): Promise<void> {
  if (k.exitCode !== null || k.signalCode !== null) return;
  const exited = new Promise<void>((r) => k.once('exit', () => r()));
  k.kill('SIGTERM');
  const t = setTimeout(() => k.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

interface Row {
  profile: string;
  n: number;
  upSeconds: number;
  upThroughput: number;
  upP50: number;
  upP99: number;
  downSeconds: number;
  downP50: number;
  downP99: number;
  rssMb: number;
  peakRssMb: number;
  cpuSeconds: number;
  /** The konnector's CPU of the up phase from its idle baseline (informers synced, before the N objects), seconds. */
  upCpuSeconds: number;
  /** The konnector's CPU from its process start until idle, seconds (the process this round ran on). */
  startUpCpuSeconds: number;
  /** Time the konnector's requests waited for its client-side rate limit during this N (up and down). */
  throttledSeconds: number;
}

/** The node binary the konnector runs on (--node), resolved once in main(). */
let konnectorNode = process.execPath;

/** --node: `image`, `current` or a path; the binary and how the output names it. */
async function resolveKonnectorNode(choice: string, log: (s: string) => void): Promise<{ path: string; label: string }> {
  if (choice === 'current') return { path: process.execPath, label: `Node.js ${process.version} (the bench's own, --node current)` };
  if (choice !== 'image') {
    if (!existsSync(choice)) throw new Error(`--node: ${JSON.stringify(choice)} is neither \`image\`, \`current\` nor an existing file`);
    return { path: choice, label: `${choice} (--node)` };
  }
  try {
    const path = await localNodeBinary({ cacheDir: defaultImageCache(), log });
    return { path, label: `Node.js v${LOCAL_NODE_VERSION}, the image's (--node current: the bench's own, ${process.version})` };
  } catch (e) {
    throw new Error(
      `--node image: cannot get the image's Node.js ${LOCAL_NODE_VERSION}: ${(e as Error).message}; --node current runs the konnector on this Node.js (${process.version})`,
      {
        cause: e,
      },
    );
  }
}

async function main(): Promise<void> {
  const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
  const node = await resolveKonnectorNode(String(opts.node), log);
  konnectorNode = node.path;
  log(`the konnector runs on ${node.label}`);
  log('starting control plane and app cluster');
  const [cp, app] = await Promise.all([startCluster({ name: 'bench-cp' }), startCluster({ name: 'bench-app' })]);
  const cpc = new KubeClient(cp.kubeConfig, { qps: 0, burst: 1 });
  // A round ends with one DELETE of its whole collection: 3,000 objects took more than the client's default 30 s on a
  // slower 2-core machine (2026-11-30), so this client waits as long as the API server's own limit allows.
  const ac = new KubeClient(app.kubeConfig, { qps: 0, burst: 1, timeoutMs: 120_000 });
  const backend = new MiniBackend(cp);
  let konnector: ChildProcess | undefined;
  try {
    await Promise.all([installBindingCRDs(cpc), createCRDs(cpc, [widgetCRD()]), installBindingCRDs(ac)]);
    await backend.start();
    const p = await setUpConsumerOnProvider(cp, 'cluster-bench');
    await bindOnApp(app, p);

    // 1. Raw create rate of a plain client on the control plane.
    await ensure(cpc, CoreResources.namespaces, { metadata: { name: 'raw' } });
    const rawN = Math.max(...sizes.filter((s) => s <= 1000), 100);
    const rawCpu0 = cpuSnapshot(cp, app);
    const t0 = performance.now();
    await parallel(
      Array.from({ length: rawN }, (_, i) => i),
      concurrency,
      async (i) => {
        await cpc.create(WIDGETS, { metadata: { name: `raw-${i}`, namespace: 'raw' }, spec: { size: i } });
      },
    );
    const rawRate = rawN / ((performance.now() - t0) / 1000);
    log(`raw create rate: ${rawRate.toFixed(0)} objects/s (${rawN} objects, ${concurrency} in parallel); CPU s: ${cpuDelta(rawCpu0, cpuSnapshot(cp, app))}`);

    // The writes the konnector itself makes per object, each alone on the same API server, for the
    // cost model: an update adding a finalizer (downstream) and a server-side-apply create (upstream).
    const rawOp = async (what: string, f: (i: number) => Promise<unknown>): Promise<number> => {
      const c0 = cpuSnapshot(cp, app);
      const s0 = performance.now();
      await parallel(
        Array.from({ length: rawN }, (_, i) => i),
        concurrency,
        async (i) => void (await f(i)),
      );
      const rate = rawN / ((performance.now() - s0) / 1000);
      log(`raw ${what}: ${rate.toFixed(0)} objects/s; CPU s: ${cpuDelta(c0, cpuSnapshot(cp, app))}`);
      return rate;
    };
    const finalizerRate = await rawOp('finalizer update (PUT)', async (i) => {
      const o = await cpc.get(WIDGETS, 'raw', `raw-${i}`);
      await cpc.update(WIDGETS, { ...o, metadata: { ...o.metadata, finalizers: ['bench.klutch.anynines.com/f'] } });
    });
    const getRate = await rawOp('GET (subtracted from the update)', (i) => cpc.get(WIDGETS, 'raw', `raw-${i}`));
    const updateRate = 1 / (1 / finalizerRate - 1 / getRate);
    const applyRate = await rawOp('server-side-apply create', (i) =>
      cpc.apply(
        WIDGETS,
        { apiVersion: `${WIDGETS.group}/${WIDGETS.version}`, kind: 'Widget', metadata: { name: `apply-${i}`, namespace: 'raw' }, spec: { size: i } },
        'bench',
        { force: true },
      ),
    );
    // Every synced object costs a create (the user's), a finalizer update and an apply create, on API
    // servers that share this machine's cores: the konnector cannot beat this pipeline rate.
    const pipelineRate = 1 / (1 / rawRate + 1 / updateRate + 1 / applyRate);
    log(
      `zero-cost ceiling (create + finalizer update + apply create on shared cores, no konnector or watch cost): ${pipelineRate.toFixed(0)} objects/s = ${((100 * pipelineRate) / rawRate).toFixed(0)}% of the raw create rate`,
    );

    const setting = `QPS ${opts.qps}, ${opts.workers} workers`;
    const tested: Profile = { label: fromDir ? `${setting}, this checkout` : setting, tag: 't', qps: Number(opts.qps), workers: Number(opts.workers) };
    const before: Profile | undefined = fromDir ? { ...tested, label: `${setting}, ${fromDir}`, tag: 'b', from: fromDir } : undefined;
    const unthrottled: Profile = { label: 'unthrottled (QPS 0, 32 workers)', tag: 'u', qps: 0, workers: 32 };
    const compared = before ? [before, tested] : [tested];
    /** CPU of the running konnector from its process start until idle. */
    let startUpCpu = 0;
    /**
     * Starts `profile`'s konnector for a round (a new process every round, so that each round measures the
     * same thing: a konnector started and idle, then N objects); returns once it is idle (its start-up
     * re-list done).
     */
    const use = async (profile: Profile): Promise<ChildProcess> => {
      if (konnector) await stopKonnector(konnector);
      konnector = await startKonnector(app, profile);
      await eventually('bound CRD on the app cluster', () => ac.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME), 120_000, 200);
      await eventually('CRD established', async () => {
        const c = (await ac.get(CoreResources.crds, undefined, WIDGETS_NAME)) as KubeObject & {
          status?: { conditions?: Array<{ type: string; status: string }> };
        };
        return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
      });
      // Idle: less than 20 ms of konnector CPU in a second, and the clusters quiet too (less than 150 ms
      // of their processes' CPU in that second: the deletes of the round before are done), so that no
      // round starts on a machine still busy with the one before.
      const pid = konnector.pid!;
      const clustersCpu = () => Object.values(cpuSnapshot(cp, app, undefined, true)).reduce((a, b) => a + b, 0);
      await eventually(
        'the konnector and the clusters to be idle',
        async () => {
          const [c0, k0] = [cpuSeconds(pid), clustersCpu()];
          await new Promise((r) => setTimeout(r, 1000));
          return cpuSeconds(pid) - c0 < 0.02 && clustersCpu() - k0 < 0.15;
        },
        300_000,
        0,
      );
      startUpCpu = cpuSeconds(pid);
      return konnector;
    };

    const rows: Row[] = [];
    const repeat = Number(opts.repeat);
    if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat: ${opts.repeat} must be an integer >= 1`);
    // With --konnector-from the two konnectors take turns at going first (A B, B A, …), so neither has the
    // earlier places of a run to itself.
    // The first round of a run on new clusters mostly cost the konnector more than its later rounds (2026-11-29: in
    // 7 of 8 runs, by 2–40 %; medians 1.03 against 0.96 ms per object): one round that is not counted goes first.
    const warmUp = { n: Math.min(...sizes), k: -1, profile: compared[0]!, counted: false };
    const rounds = [
      ...(opts.warmUpRound ? [warmUp] : []),
      ...sizes.flatMap((n) =>
        Array.from({ length: repeat }, (_, k) =>
          [...(k % 2 === 0 ? compared : [...compared].reverse()), ...(opts.ceiling ? [unthrottled] : [])].map((profile) => ({ n, k, profile, counted: true })),
        ).flat(),
      ),
    ];
    objectCap = Math.max(DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING, rounds.reduce((sum, r) => sum + r.n + 1, 0) + 1000);
    for (const { n, k, profile, counted } of rounds) {
      konnector = await use(profile);
      const ns = `bench-${profile.tag}-${n}-${counted ? k : 'warmup'}`;
      const pns = `cluster-bench-${ns}`;
      await ensure(ac, CoreResources.namespaces, { metadata: { name: ns } });
      // Warm-up object: the first one waits for the APIServiceNamespace to be assigned.
      await ac.create(WIDGETS, { metadata: { name: 'warmup', namespace: ns }, spec: { size: -1 } });
      await eventually('warm-up upstream', () => cpc.getOrNull(WIDGETS, pns, 'warmup'), 60_000, 100);

      const created = new Map<string, number>();
      const seenUp = new Map<string, number>();
      const upInf = new Informer(cpc, WIDGETS, { namespace: pns });
      upInf.addEventHandler({
        onAdd: (o) => {
          if (!seenUp.has(o.metadata.name!)) seenUp.set(o.metadata.name!, performance.now());
        },
      });
      upInf.start();
      await upInf.waitForSync(30_000);

      const list = Array.from({ length: n }, (_, i) => `w-${i}`);
      const cpu0 = cpuSeconds(konnector.pid!);
      const throttled0 = await throttledSeconds();
      const reconciles0 = await konnectorMetric('klutch_reconcile_total');
      const main0 = mainThreadCpuSeconds(konnector.pid!);
      const all0 = cpuSnapshot(cp, app, konnector.pid);
      const [cpReq0, appReq0] = await Promise.all([requestCounts(cpc, 'widgets'), requestCounts(ac, 'widgets')]);
      const start = performance.now();
      await paced(list, concurrency, async (name) => {
        await ac.create(WIDGETS, { metadata: { name, namespace: ns }, spec: { size: 1, color: 'x' } });
        created.set(name, performance.now());
      });
      await eventually(`${n} objects upstream`, async () => list.every((x) => seenUp.has(x)), 1_800_000, 100);
      const upDone = Math.max(...list.map((x) => seenUp.get(x)!));
      const upLat = list.map((x) => (seenUp.get(x)! - created.get(x)!) / 1000);

      const allUp = cpuSnapshot(cp, app, konnector.pid);
      const mainUp = mainThreadCpuSeconds(konnector.pid!) - main0;
      const reconcilesUp = (await konnectorMetric('klutch_reconcile_total')) - reconciles0;
      const [cpReqUp, appReqUp] = await Promise.all([requestCounts(cpc, 'widgets'), requestCounts(ac, 'widgets')]);
      log(
        `${profile.label}, N=${n} up: widget requests on the app cluster: ${showCounts(appReq0, appReqUp)}; on the control plane: ${showCounts(cpReq0, cpReqUp)}`,
      );
      // Each observer only watches during its own phase, so it does not load the API servers otherwise.
      await upInf.stop();
      const statusPatched = new Map<string, number>();
      const seenDown = new Map<string, number>();
      const downInf = new Informer(ac, WIDGETS, { namespace: ns });
      const onDown = (o: KubeObject) => {
        const ph = (o as { status?: { phase?: string } }).status?.phase;
        if (ph === 'done' && !seenDown.has(o.metadata.name!)) seenDown.set(o.metadata.name!, performance.now());
      };
      downInf.addEventHandler({ onAdd: onDown, onUpdate: (_, o) => onDown(o) });
      downInf.start();
      await downInf.waitForSync(30_000);
      const allDown0 = cpuSnapshot(cp, app, konnector.pid);
      const sStart = performance.now();
      await paced(list, concurrency, async (name) => {
        await cpc.mergePatch(WIDGETS, pns, name, { status: { phase: 'done' } }, 'status');
        statusPatched.set(name, performance.now());
      });
      await eventually(`${n} statuses down`, async () => list.every((x) => seenDown.has(x)), 1_800_000, 100);
      const downDone = Math.max(...list.map((x) => seenDown.get(x)!));
      const downLat = list.map((x) => (seenDown.get(x)! - statusPatched.get(x)!) / 1000);
      await downInf.stop();

      const row: Row = {
        profile: profile.label,
        n,
        upSeconds: (upDone - start) / 1000,
        upThroughput: n / ((upDone - start) / 1000),
        upP50: pct(upLat, 50),
        upP99: pct(upLat, 99),
        downSeconds: (downDone - sStart) / 1000,
        downP50: pct(downLat, 50),
        downP99: pct(downLat, 99),
        rssMb: rssMb(konnector.pid!),
        peakRssMb: peakRssMb(konnector.pid!),
        cpuSeconds: cpuSeconds(konnector.pid!) - cpu0,
        upCpuSeconds: allUp.konnector! - all0.konnector!,
        startUpCpuSeconds: startUpCpu,
        throttledSeconds: (await throttledSeconds()) - throttled0,
      };
      if (counted) rows.push(row);
      const perObj = cpuPerObject(row.upCpuSeconds, row.startUpCpuSeconds, n);
      log(
        `${counted ? '' : 'warm-up round, not counted: '}${profile.label}, N=${n}: konnector CPU up ${perObj.fromIdleMs.toFixed(2)} ms/object from idle (${row.upCpuSeconds.toFixed(2)} s), ` +
          `${perObj.withStartUpMs.toFixed(2)} ms/object with its start-up (${row.startUpCpuSeconds.toFixed(2)} s from process start to idle)`,
      );
      log(
        `${profile.label}, N=${n}: of the CPU up, main thread ${mainUp.toFixed(2)} s, other threads (V8's compiler, GC helpers) ${(row.upCpuSeconds - mainUp).toFixed(2)} s; ` +
          `${(reconcilesUp / n).toFixed(2)} reconciles per object`,
      );
      log(
        `${profile.label}, N=${n}: up ${row.upSeconds.toFixed(1)} s (CPU s: ${cpuDelta(all0, allUp)}), down ${row.downSeconds.toFixed(1)} s (CPU s: ${cpuDelta(allDown0, cpuSnapshot(cp, app, konnector.pid))})`,
      );
      // The round's objects go (the konnector deletes the upstream copies and lets go of its finalizers), so
      // that every round starts with the same objects on the clusters and in a new konnector's caches: a
      // konnector holding the objects of every earlier round spent more CPU per object in each later one.
      // One DELETE of the collection; one the API server or the client cut off (a timeout) is sent again while
      // objects without a deletionTimestamp are left.
      const deleteAll = () =>
        ac.request('DELETE', resourcePath(WIDGETS, ns)).catch((e: unknown) => {
          if (e instanceof ApiError && (e.code === 0 || e.code === 504)) return log(`DELETE of ${ns}'s objects cut off (${e.message}); sending it again`);
          throw e;
        });
      await deleteAll();
      await eventually(
        `the ${n + 1} objects of ${ns} deleted on both clusters`,
        async () => {
          const left = (await ac.list(WIDGETS, ns)).items;
          if (left.some((o) => !o.metadata.deletionTimestamp)) await deleteAll();
          return left.length === 0 && (await cpc.list(WIDGETS, pns)).items.length === 0;
        },
        600_000,
        250,
      );
    }

    const f = (x: number, d = 2) => x.toFixed(d);
    const lines = [
      ...(rate > 0 ? [`load generator paced at ${rate} objects/s (throughput below is then bounded by the pace)`] : []),
      `raw create rate (plain client, ${concurrency} parallel, control plane): ${f(rawRate, 0)} objects/s; update ${f(updateRate, 0)}/s; server-side-apply create ${f(applyRate, 0)}/s`,
      `zero-cost ceiling on these shared cores (1 / (1/create + 1/update + 1/apply)): ${f(pipelineRate, 0)} objects/s = ${f((100 * pipelineRate) / rawRate, 0)}% of raw`,
      '',
      '| konnector | N | all upstream (s) | throughput (obj/s) | % of raw | % of zero-cost ceiling | up p50 (s) | up p99 (s) | all status down (s) | down p50 (s) | down p99 (s) | RSS (MB) | peak RSS (MB) | konnector CPU (s) | konnector CPU up from idle (ms/obj) | konnector start-up CPU (s) | CPU up with start-up (ms/obj) | waited for QPS limit (s) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.profile} | ${r.n} | ${f(r.upSeconds, 1)} | ${f(r.upThroughput, 0)} | ${f((100 * r.upThroughput) / rawRate, 0)}% | ${f((100 * r.upThroughput) / pipelineRate, 0)}% | ${f(r.upP50)} | ${f(r.upP99)} | ${f(r.downSeconds, 1)} | ${f(r.downP50)} | ${f(r.downP99)} | ${f(r.rssMb, 0)} | ${f(r.peakRssMb, 0)} | ${f(r.cpuSeconds, 1)} | ${f(cpuPerObject(r.upCpuSeconds, r.startUpCpuSeconds, r.n).fromIdleMs)} | ${f(r.startUpCpuSeconds)} | ${f(cpuPerObject(r.upCpuSeconds, r.startUpCpuSeconds, r.n).withStartUpMs)} | ${f(r.throttledSeconds, 2)} |`,
      ),
      '',
      'konnector CPU up from idle: its CPU from the baseline taken once it is started and idle (informers synced), before the N objects, to all N upstream, over N.',
      'konnector start-up CPU: its CPU from process start until idle; CPU up with start-up adds it to the up phase, over N (what one fresh konnector syncing N objects costs).',
      'konnector CPU (s): the whole round from the idle baseline, up and status down.',
    ];
    // The settings against the same pipeline without client-side limits, N by N: what the limits cost.
    for (const r of rows.filter((x) => compared.some((p) => p.label === x.profile))) {
      lines.push(
        `N=${r.n}: ${r.profile}: requests waited ${f(r.throttledSeconds, 2)} s in all for the client-side limit, over ${f(r.upSeconds + r.downSeconds, 1)} s of syncing`,
      );
    }
    // Medians over the repeats (with --repeat 1: the one run).
    for (const n of sizes) {
      const u = rows.filter((r) => r.n === n && r.profile === unthrottled.label);
      for (const p of compared) {
        const t = rows.filter((r) => r.n === n && r.profile === p.label);
        if (t.length === 0) continue;
        const per = t.map((r) => cpuPerObject(r.upCpuSeconds, r.startUpCpuSeconds, n));
        const head = `N=${n}${repeat > 1 ? ` (medians of ${repeat})` : ''}: ${p.label}`;
        lines.push(
          `${head}: konnector CPU up ${f(median(per.map((x) => x.fromIdleMs)))} ms/object from idle, ${f(median(per.map((x) => x.withStartUpMs)))} ms/object with its start-up (start-up ${f(median(t.map((r) => r.startUpCpuSeconds)))} s)`,
        );
        if (u.length === 0) continue;
        const [tUp, uUp] = [median(t.map((r) => r.upThroughput)), median(u.map((r) => r.upThroughput))];
        const [tDown, uDown] = [median(t.map((r) => n / r.downSeconds)), median(u.map((r) => n / r.downSeconds))];
        lines.push(
          `${head} syncs ${f(tUp, 0)} obj/s up = ${f((100 * tUp) / uUp, 0)}% of the pipeline ceiling (the unthrottled konnector: ${f(uUp, 0)} obj/s); down ${f(tDown, 0)} obj/s = ${f((100 * tDown) / uDown, 0)}% (${f(uDown, 0)} obj/s)`,
        );
      }
    }
    lines.push(`konnector on ${node.label}`);
    lines.push(
      `machine: ${cpus().length} cores, load average at the end ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} (1, 5, 15 min)`,
    );
    process.stdout.write(lines.join('\n') + '\n');
    if (opts.chart && rows.length > 0) {
      writeFileSync(
        String(opts.chart),
        svgChart({
          title: 'konnector sync: throughput and p99 latency against N',
          subtitle: `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}, concurrency ${concurrency}, QPS ${opts.qps}, ${opts.workers} workers${rate > 0 ? `, paced at ${rate}/s` : ''} (npm run bench:konnector)`,
          xLabel: 'N (objects)',
          panels: [
            {
              title: 'Throughput',
              yLabel: 'objects/s',
              series: [
                { name: 'up (spec to control plane)', points: rows.filter((r) => r.profile === tested.label).map((r) => [r.n, r.upThroughput]) },
                { name: 'down (status to app cluster)', points: rows.filter((r) => r.profile === tested.label).map((r) => [r.n, r.n / r.downSeconds]) },
              ],
            },
            {
              title: 'p99 latency',
              yLabel: 'seconds',
              series: [
                { name: 'up', points: rows.filter((r) => r.profile === tested.label).map((r) => [r.n, r.upP99]) },
                { name: 'down', points: rows.filter((r) => r.profile === tested.label).map((r) => [r.n, r.downP99]) },
              ],
            },
          ],
        }),
      );
      log(`chart: ${opts.chart}`);
    }
  } finally {
    if (konnector) await stopKonnector(konnector);
    await backend.stop().catch(() => undefined);
    cpc.close();
    ac.close();
    await Promise.all([cp.stop(), app.stop()]);
  }
}

main().catch((e) => {
  process.stderr.write(`bench-konnector: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
