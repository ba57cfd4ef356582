/**
 * `npm run bench:synth`: synthesizes topologies of growing size — D data services on the control
 * plane × A app clusters, each app cluster binding every data service with one claim each — and
 * prints objects, wall time (construct / render / write), objects/s, peak RSS and the growth
 * ratio between consecutive sizes. Each size runs in a fresh process so peak RSS is its own.
 *
 *   npm run bench:synth                 # the grid 10/50/200 data services × 1/10/100 app clusters
 *   npm run bench:synth -- --quick      # 10/50 × 1/10
 *   npm run bench:synth -- --validate   # also time `klutch-kit validate` on each output
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { svgChart } from './_svg-chart.js';

interface Row {
  dataServices: number;
  appClusters: number;
  objects: number;
  constructMs: number;
  renderMs: number;
  writeMs: number;
  totalMs: number;
  /** CPU time (user + system) of construct + render + write: what the synth costs without other jobs on the machine. */
  cpuMs: number;
  validateMs?: number;
  peakRssMb: number;
}

async function one(dataServices: number, appClusters: number, validate: boolean): Promise<Row> {
  const { App } = await import('cdk8s');
  const { keyvalue } = await import('../constructs/catalogue/index.js');
  const { A9sBackend } = await import('../constructs/dataservice/index.js');
  const { AnyninesServiceType } = await import('../constructs/crossplane/index.js');
  const { AppCluster, ControlPlaneCluster, renderTopology, writeRendered } = await import('../constructs/topology/index.js');

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'ControlPlane', {
    host: 'bind.bench.example.com',
    catalogue: false,
    anynines: { baseDomain: 'a9s.bench.example.com' },
    dex: {
      connectors: [
        {
          type: 'oidc',
          id: 'sso',
          name: 'SSO',
          config: { issuer: 'https://sso.example.com', clientID: 'klutch', clientSecret: '$SSO' },
          secretEnv: { SSO: { name: 'sso', key: 'secret' } },
        },
      ],
    },
  });
  const broker = cp.addProviderConfig('keyvalue-service-broker', AnyninesServiceType.SERVICE_BROKER);
  const base = keyvalue();
  for (let i = 0; i < dataServices; i++) {
    cp.addDataService(`Bench${i}`, {
      ...base,
      kind: `XBench${i}Instance`,
      claimKind: `Bench${i}Instance`,
      backends: [new A9sBackend({ name: `a9s-bench${i}`, providerConfig: broker })],
    });
  }
  for (let a = 0; a < appClusters; a++) {
    const ac = new AppCluster(app, `App${a}`, { clusterName: `app-${a}`, controlPlane: cp });
    for (let i = 0; i < dataServices; i++) {
      ac.addClaim({
        kind: `Bench${i}Instance`,
        name: `db-${i}`,
        namespace: `team-${i % 5}`,
        spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-nano-ssl', compositionRef: { name: `a9s-bench${i}` } },
      });
    }
  }
  const t1 = performance.now();
  const clusters = renderTopology(app);
  const t2 = performance.now();
  const cacheDir = benchDir();
  mkdirSync(cacheDir, { recursive: true });
  const dir = mkdtempSync(join(cacheDir, 'run-'));
  try {
    writeRendered(join(dir, 'dist'), clusters);
    const t3 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    let validateMs: number | undefined;
    if (validate) {
      const { validateDirectory } = await import('../constructs/validate/index.js');
      const r = validateDirectory(join(dir, 'dist'));
      validateMs = performance.now() - t3;
      if (!r.ok)
        throw new Error(
          `bench output is invalid: ${r.issues
            .slice(0, 3)
            .map((i) => `${i.file} ${i.path} ${i.message}`)
            .join('; ')}`,
        );
    }
    return {
      dataServices,
      appClusters,
      objects: clusters.reduce((n, c) => n + c.files.length, 0),
      constructMs: t1 - t0,
      renderMs: t2 - t1,
      writeMs: t3 - t2,
      totalMs: t3 - t0,
      cpuMs: (cpu.user + cpu.system) / 1000,
      validateMs,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where the output goes. Default: /dev/shm (tmpfs) when present, so the figures measure klutch-kit
 * and not a disk shared with other jobs (on the 2-core CI box, creating one small file costs
 * 0.07 ms on tmpfs but 0.2–3 ms on the contended disk). `--disk` writes to the project's disk
 * (node_modules/.cache, git-ignored); `KLUTCH_BENCH_DIR` picks any folder.
 */
function benchDir(): string {
  if (process.env.KLUTCH_BENCH_DIR) return process.env.KLUTCH_BENCH_DIR;
  if (!process.argv.includes('--disk') && existsSync('/dev/shm')) return '/dev/shm/klutch-bench';
  return join(process.cwd(), 'node_modules', '.cache', 'klutch-bench');
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const validate = args.includes('--validate');
  const oneIdx = args.indexOf('--one');
  if (oneIdx >= 0) {
    const row = await one(Number(args[oneIdx + 1]), Number(args[oneIdx + 2]), validate);
    process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  const ds = args.includes('--quick') ? [10, 50] : [10, 50, 200];
  const acs = args.includes('--quick') ? [1, 10] : [1, 10, 100];
  const script = fileURLToPath(import.meta.url);
  const rows: Row[] = [];
  console.log(
    `klutch-kit synth benchmark — Node ${process.version}, ${new Date().toISOString()}, output under ${benchDir()}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    'data services × app clusters | objects | construct ms | render ms | write ms | wall ms | CPU ms | objects/s (wall) | objects/s (CPU) | peak RSS MB' +
      (validate ? ' | validate ms' : ''),
  );
  for (const d of ds) {
    for (const a of acs) {
      const r = spawnSync(
        process.execPath,
        [...process.execArgv, script, '--one', String(d), String(a), ...(validate ? ['--validate'] : []), ...(args.includes('--disk') ? ['--disk'] : [])],
        { encoding: 'utf8', maxBuffer: 1 << 24 },
      );
      if (r.status !== 0) throw new Error(`size ${d}×${a} failed:\n${r.stderr}`);
      const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as Row;
      rows.push(row);
      console.log(
        `${String(d).padStart(4)} × ${String(a).padEnd(3)} | ${fmt(row.objects).padStart(7)} | ${fmt(row.constructMs).padStart(7)} | ${fmt(row.renderMs).padStart(7)} | ${fmt(row.writeMs).padStart(7)} | ${fmt(row.totalMs).padStart(7)} | ${fmt(row.cpuMs).padStart(7)} | ${fmt(row.objects / (row.totalMs / 1000)).padStart(8)} | ${fmt(row.objects / (row.cpuMs / 1000)).padStart(8)} | ${fmt(row.peakRssMb).padStart(6)}` +
          (validate ? ` | ${fmt(row.validateMs ?? 0).padStart(7)}` : ''),
      );
    }
  }
  // Growth: each size against the next bigger one (by objects): time ratio / work ratio.
  const sorted = [...rows].sort((x, y) => x.objects - y.objects);
  console.log('\ngrowth (each size vs the next smaller one): work ×, wall ×, CPU ×, CPU/work');
  let worst = 0;
  for (let i = 1; i < sorted.length; i++) {
    const w = sorted[i].objects / sorted[i - 1].objects;
    const t = sorted[i].totalMs / sorted[i - 1].totalMs;
    const c = sorted[i].cpuMs / sorted[i - 1].cpuMs;
    if (w >= 2) worst = Math.max(worst, c / w);
    console.log(`${sorted[i - 1].objects} → ${sorted[i].objects}: work ×${fmt(w, 2)}, wall ×${fmt(t, 2)}, CPU ×${fmt(c, 2)}, CPU/work ${fmt(c / w, 2)}`);
  }
  // The targets.
  const big = sorted.filter((r) => r.objects >= 10_000);
  const tenK = big[0];
  if (tenK)
    console.log(
      `\ntarget 10,000 objects < 3 s: ${fmt(tenK.objects)} objects in ${fmt(tenK.totalMs)} ms wall (${tenK.totalMs < 3000 ? 'met' : 'MISSED'}), ${fmt(tenK.cpuMs)} ms CPU (${tenK.cpuMs < 3000 ? 'met' : 'MISSED'})`,
    );
  const pairs = sorted.flatMap((a) =>
    sorted.filter((b) => b.objects / a.objects >= 9 && b.objects / a.objects <= 11 && a.objects >= 1000).map((b) => ({ a, b })),
  );
  for (const { a, b } of pairs) {
    const ratio = (b.totalMs / a.totalMs / (b.objects / a.objects)) * 10;
    const cratio = (b.cpuMs / a.cpuMs / (b.objects / a.objects)) * 10;
    console.log(
      `target 10× work in ≤ 11× time: ${fmt(a.objects)} → ${fmt(b.objects)} objects: wall ${fmt(a.totalMs)} → ${fmt(b.totalMs)} ms (×${fmt(ratio, 1)} per 10× work, ${ratio <= 11 ? 'met' : 'MISSED'}), CPU ${fmt(a.cpuMs)} → ${fmt(b.cpuMs)} ms (×${fmt(cratio, 1)}, ${cratio <= 11 ? 'met' : 'MISSED'})`,
    );
  }
  if (worst > 0) console.log(`worst CPU/work ratio between neighbouring sizes (≥ 2× work): ${fmt(worst, 2)}`);
  // The chart next to the table (--chart <file>; default docs/images/bench-synth.svg).
  const chartIdx = args.indexOf('--chart');
  const chart = chartIdx >= 0 ? args[chartIdx + 1] : 'docs/images/bench-synth.svg';
  writeFileSync(
    chart,
    svgChart({
      title: 'synth: throughput and time against the number of objects',
      subtitle: `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}, Node ${process.version}${validate ? ', with validation' : ''} (npm run bench:synth${args.includes('--quick') ? ' -- --quick' : ''})`,
      xLabel: 'objects written',
      panels: [
        {
          title: 'Throughput',
          yLabel: 'objects/s',
          series: [
            { name: 'per wall second', points: sorted.map((r) => [r.objects, r.objects / (r.totalMs / 1000)]) },
            { name: 'per CPU second', points: sorted.map((r) => [r.objects, r.objects / (r.cpuMs / 1000)]) },
          ],
        },
        {
          title: 'Time',
          yLabel: 'milliseconds',
          series: [
            { name: 'wall', points: sorted.map((r) => [r.objects, r.totalMs]) },
            { name: 'CPU', points: sorted.map((r) => [r.objects, r.cpuMs]) },
          ],
        },
      ],
    }),
  );
  console.log(`chart: ${chart}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(1);
});
