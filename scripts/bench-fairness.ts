/**
 * npm run bench:fairness [-- --noisy 5000 --quiet-rate 5 --profiles default,unthrottled --flow-control off,on]
 *
 * A noisy neighbour on one control plane: app cluster "noisy" creates a burst of --noisy claims while
 * app cluster "quiet" creates --quiet-rate claims per second, each followed by a status written upstream
 * (as a provider would) that has to come back down. Measured: the quiet cluster's per-claim sync latency
 * up (created downstream → exists upstream) and down (status written upstream → seen downstream), p50,
 * p99 and max, and the noisy cluster's throughput — for each noisy konnector profile (`default`: the
 * konnector's defaults; `unthrottled`: --qps 0 --workers 32, a konnector configured to hammer) with the
 * KonnectorFlowControl objects (FlowSchema + PriorityLevelConfiguration) off and on.
 *
 * Real parts: three real clusters from runtime/realinfra (control plane, noisy, quiet), two konnector
 * child processes (esbuild bundles run by plain node, as deployed), each authenticating to the control
 * plane as its own ServiceAccount (so API Priority and Fairness sees two flows). The bind backend's part
 * is the MiniBackend of the konnector tests (provider namespaces); it is not on the measured path.
 * Exit code 1 when the quiet cluster's p99 (up or down) reaches --max-p99 seconds at the defaults with
 * flow control on — the configuration users get.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { App, Chart } from 'cdk8s';
import { Command } from 'commander';
import { KonnectorFlowControl } from '../constructs/runtime/index.js';
import { CoreResources, KubeClient, type KubeObject, type ResourceRef } from '../runtime/core/client.js';
import { Informer } from '../runtime/core/informer.js';
import { applyManifests, startCluster, type RealCluster } from '../runtime/realinfra/index.js';
import { DEFAULT_QPS, DEFAULT_WORKERS } from '../runtime/konnector/defaults.js';
import {
  bindOnApp,
  createCRDs,
  ensure,
  eventually,
  GROUP,
  installBindingCRDs,
  MiniBackend,
  parallel,
  setUpConsumerOnProvider,
  widgetCRD,
  WIDGETS,
  WIDGETS_NAME,
} from '../test/integration/konnector/fixture.js';
import { bundleProgram, percentile, repo } from './_bench-procs.js';

const opts = new Command('bench-fairness')
  .option('--noisy <n>', 'claims the noisy app cluster creates in one burst', '5000')
  .option('--concurrency <n>', 'parallel creates of the noisy burst', '32')
  .option('--quiet-rate <n>', 'claims per second the quiet app cluster creates during the burst', '5')
  .option('--profiles <list>', 'noisy konnector profiles: default (the konnector defaults), unthrottled (--qps 0 --workers 32)', 'default,unthrottled')
  .option('--flow-control <list>', 'run without (off) and/or with (on) the KonnectorFlowControl objects on the control plane', 'off,on')
  .option('--max-p99 <seconds>', 'fail when the quiet p99 at defaults with flow control on reaches this', '1')
  .parse(process.argv)
  .opts<{ noisy: string; concurrency: string; quietRate: string; profiles: string; flowControl: string; maxP99: string }>();

const positive = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: ${JSON.stringify(v)} must be a number > 0`);
  return n;
};
const noisyN = positive('--noisy', opts.noisy);
const concurrency = positive('--concurrency', opts.concurrency);
const quietRate = positive('--quiet-rate', opts.quietRate);
const maxP99 = positive('--max-p99', opts.maxP99);
const PROFILES: Record<string, { qps: number; workers: number }> = {
  default: { qps: DEFAULT_QPS, workers: DEFAULT_WORKERS },
  unthrottled: { qps: 0, workers: 32 },
};
const profiles = opts.profiles.split(',').map((p) => {
  if (!PROFILES[p]) throw new Error(`--profiles: ${JSON.stringify(p)} is not one of ${Object.keys(PROFILES).join(', ')}`);
  return p;
});
const flowControl = opts.flowControl.split(',').map((f) => {
  if (f !== 'on' && f !== 'off') throw new Error(`--flow-control: ${JSON.stringify(f)} must be on or off`);
  return f === 'on';
});

const log = (s: string) => process.stderr.write(`[fairness] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FLOW_RESOURCES: ResourceRef[] = [
  { group: 'flowcontrol.apiserver.k8s.io', version: 'v1', plural: 'flowschemas', kind: 'FlowSchema', namespaced: false },
  { group: 'flowcontrol.apiserver.k8s.io', version: 'v1', plural: 'prioritylevelconfigurations', kind: 'PriorityLevelConfiguration', namespaced: false },
];

/** The KonnectorFlowControl objects as the Pulumi component ships them, for the bench's exported group. */
function flowControlObjects(): KubeObject[] {
  const chart = new Chart(new App(), 'fairness');
  new KonnectorFlowControl(chart, 'flow', { exportedApiGroups: [GROUP] });
  return chart.toJson() as KubeObject[];
}

async function setFlowControl(cp: RealCluster, cpc: KubeClient, on: boolean, objects: KubeObject[]): Promise<void> {
  if (on) {
    await applyManifests(cp.kubeConfig, objects as never[]);
    return;
  }
  for (const o of objects) {
    const r = FLOW_RESOURCES.find((x) => x.kind === o.kind)!;
    await cpc.delete(r, undefined, o.metadata.name!).catch(() => undefined);
  }
}

function startKonnector(entry: string, app: RealCluster, profile: { qps: number; workers: number }): ChildProcess {
  return spawn(
    process.execPath,
    [
      entry,
      '--kubeconfig',
      app.kubeconfigPath,
      '--no-leader-elect',
      // the bench's claims spread over many namespaces; its admin kubeconfig is cluster-wide anyway
      '--all-namespaces',
      '--health-address',
      '127.0.0.1:0',
      '--qps',
      String(profile.qps),
      '--burst',
      String(Math.max(1, profile.qps * 2)),
      '--workers',
      String(profile.workers),
      '--log-level',
      'warn',
    ],
    { cwd: repo, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, KLUTCH_KONNECTOR_VERSION: 'v0.1.0-bench' } },
  );
}

async function stopChild(c: ChildProcess | undefined): Promise<void> {
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

interface Result {
  profile: string;
  flowControl: boolean;
  quiet: number;
  upP50: number;
  upP99: number;
  upMax: number;
  downP50: number;
  downP99: number;
  downMax: number;
  noisySeconds: number;
}

async function main(): Promise<void> {
  log('starting the control plane and two app clusters');
  const [cp, noisy, quiet] = await Promise.all([startCluster({ name: 'fair-cp' }), startCluster({ name: 'fair-noisy' }), startCluster({ name: 'fair-quiet' })]);
  const cpc = new KubeClient(cp.kubeConfig, { qps: 0 });
  const nc = new KubeClient(noisy.kubeConfig, { qps: 0 });
  const qc = new KubeClient(quiet.kubeConfig, { qps: 0 });
  const backend = new MiniBackend(cp);
  let noisyK: ChildProcess | undefined;
  let quietK: ChildProcess | undefined;
  const results: Result[] = [];
  try {
    await Promise.all([installBindingCRDs(cpc), createCRDs(cpc, [widgetCRD()]), installBindingCRDs(nc), installBindingCRDs(qc)]);
    await backend.start();
    await bindOnApp(noisy, await setUpConsumerOnProvider(cp, 'cluster-noisy'));
    await bindOnApp(quiet, await setUpConsumerOnProvider(cp, 'cluster-quiet'));
    const entry = await bundleProgram('runtime/konnector/main.ts', 'klutch-konnector.mjs');
    quietK = startKonnector(entry, quiet, PROFILES.default!);
    const flowObjects = flowControlObjects();

    let round = 0;
    for (const profile of profiles) {
      await stopChild(noisyK);
      noisyK = startKonnector(entry, noisy, PROFILES[profile]!);
      for (const c of [nc, qc]) {
        await eventually(
          'the bound CRD on an app cluster',
          async () => {
            const crd = (await c.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME)) as
              (KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }) | undefined;
            return crd?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
          },
          120_000,
          200,
        );
      }
      for (const on of flowControl) {
        round++;
        await setFlowControl(cp, cpc, on, flowObjects);
        await sleep(2000); // the API server's APF configuration controller picks the change up
        const nns = `noisy-${round}`;
        const qns = `quiet-${round}`;
        const npns = `cluster-noisy-${nns}`;
        const qpns = `cluster-quiet-${qns}`;
        await ensure(nc, CoreResources.namespaces, { metadata: { name: nns } });
        await ensure(qc, CoreResources.namespaces, { metadata: { name: qns } });
        // Warm-up: the first object of a namespace waits for its provider namespace.
        await nc.create(WIDGETS, { metadata: { name: 'warmup', namespace: nns }, spec: { size: -1 } });
        await qc.create(WIDGETS, { metadata: { name: 'warmup', namespace: qns }, spec: { size: -1 } });
        await eventually(
          'warm-up upstream',
          async () => (await cpc.getOrNull(WIDGETS, npns, 'warmup')) && (await cpc.getOrNull(WIDGETS, qpns, 'warmup')),
          60_000,
          100,
        );

        const seenUp = new Map<string, number>();
        const seenDown = new Map<string, number>();
        let noisyUp = 0;
        const upQuiet = new Informer(cpc, WIDGETS, { namespace: qpns });
        upQuiet.addEventHandler({ onAdd: (o) => void (seenUp.has(o.metadata.name!) || seenUp.set(o.metadata.name!, performance.now())) });
        const upNoisy = new Informer(cpc, WIDGETS, { namespace: npns });
        upNoisy.addEventHandler({ onAdd: () => void noisyUp++ });
        const downQuiet = new Informer(qc, WIDGETS, { namespace: qns });
        const onDown = (o: KubeObject) => {
          if ((o as { status?: { phase?: string } }).status?.phase === 'done' && !seenDown.has(o.metadata.name!))
            seenDown.set(o.metadata.name!, performance.now());
        };
        downQuiet.addEventHandler({ onAdd: onDown, onUpdate: (_, o) => onDown(o) });
        for (const i of [upQuiet, upNoisy, downQuiet]) i.start();
        await Promise.all([upQuiet, upNoisy, downQuiet].map((i) => i.waitForSync(30_000)));
        noisyUp = 0;

        log(`${profile} konnector, flow control ${on ? 'on' : 'off'}: burst of ${noisyN} noisy claims, quiet claims at ${quietRate}/s`);
        const t0 = performance.now();
        let burstDone = false;
        const burst = parallel(
          Array.from({ length: noisyN }, (_, i) => i),
          concurrency,
          async (i) => {
            await nc.create(WIDGETS, { metadata: { name: `n-${i}`, namespace: nns }, spec: { size: i } });
          },
        )
          .then(() => eventually(`${noisyN} noisy claims upstream`, async () => noisyUp >= noisyN, 1_800_000, 100))
          .then(() => {
            burstDone = true;
            return (performance.now() - t0) / 1000;
          });
        // The quiet cluster's claims: one every 1/rate s for as long as the burst is being synced.
        const upLat: number[] = [];
        const downLat: number[] = [];
        const flows: Promise<void>[] = [];
        for (let k = 0; !burstDone; k++) {
          const due = t0 + (k * 1000) / quietRate;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const name = `q-${k}`;
          flows.push(
            (async () => {
              await qc.create(WIDGETS, { metadata: { name, namespace: qns }, spec: { size: k } });
              const created = performance.now();
              await eventually(`quiet ${name} upstream`, async () => seenUp.has(name), 300_000, 10);
              upLat.push((seenUp.get(name)! - created) / 1000);
              await cpc.mergePatch(WIDGETS, qpns, name, { status: { phase: 'done' } }, 'status');
              const patched = performance.now();
              await eventually(`quiet ${name} status down`, async () => seenDown.has(name), 300_000, 10);
              downLat.push((seenDown.get(name)! - patched) / 1000);
            })(),
          );
        }
        const noisySeconds = await burst;
        await Promise.all(flows);
        for (const i of [upQuiet, upNoisy, downQuiet]) await i.stop();
        const r: Result = {
          profile,
          flowControl: on,
          quiet: upLat.length,
          upP50: percentile(upLat, 50),
          upP99: percentile(upLat, 99),
          upMax: Math.max(...upLat),
          downP50: percentile(downLat, 50),
          downP99: percentile(downLat, 99),
          downMax: Math.max(...downLat),
          noisySeconds,
        };
        results.push(r);
        log(
          `  quiet: ${r.quiet} claims, up p50 ${r.upP50.toFixed(2)} s p99 ${r.upP99.toFixed(2)} s max ${r.upMax.toFixed(2)} s; down p50 ${r.downP50.toFixed(2)} s p99 ${r.downP99.toFixed(2)} s; noisy: ${noisyN} in ${noisySeconds.toFixed(1)} s`,
        );
      }
    }
  } finally {
    await Promise.all([stopChild(noisyK), stopChild(quietK)]);
    await backend.stop().catch(() => undefined);
    for (const c of [cpc, nc, qc]) c.close();
    await Promise.all([cp.stop(), noisy.stop(), quiet.stop()]);
  }

  const f = (x: number) => x.toFixed(2);
  process.stdout.write(
    [
      `${new Date().toISOString()}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end; noisy burst ${noisyN} claims (${concurrency} parallel creates), quiet ${quietRate} claims/s`,
      '',
      '| noisy konnector | flow control | quiet claims | up p50 (s) | up p99 (s) | up max (s) | down p50 (s) | down p99 (s) | down max (s) | noisy burst synced (s) | noisy obj/s |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...results.map(
        (r) =>
          `| ${r.profile} | ${r.flowControl ? 'on' : 'off'} | ${r.quiet} | ${f(r.upP50)} | ${f(r.upP99)} | ${f(r.upMax)} | ${f(r.downP50)} | ${f(r.downP99)} | ${f(r.downMax)} | ${r.noisySeconds.toFixed(1)} | ${(noisyN / r.noisySeconds).toFixed(0)} |`,
      ),
    ].join('\n') + '\n',
  );
  const shipped = results.find((r) => r.profile === 'default' && r.flowControl);
  if (shipped && Math.max(shipped.upP99, shipped.downP99) >= maxP99) {
    process.stderr.write(
      `bench-fairness: the quiet cluster's p99 at defaults with flow control is ${f(Math.max(shipped.upP99, shipped.downP99))} s, not under ${maxP99} s\n`,
    );
    process.exitCode = 1;
  }
}

main().catch((e) => {
  process.stderr.write(`bench-fairness: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
