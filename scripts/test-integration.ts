/**
 * `npm run test:integration`: the integration suites (real kube-apiserver, etcd, Crossplane, a real node) in
 * lanes — jest processes side by side, each `--runInBand`. Most suites wait far more than they compute
 * (provider poll intervals, watches), so on the 2-core CI machine two lanes finish well before one (figures in
 * docs/realinfra.md). The suites that start a real node share one lane (their host-wide lock); the rest are
 * spread by the durations recorded in test/integration/durations.json (scripts/_lanes.ts).
 *
 *   npm run test:integration                      # every suite, 2 lanes (KLUTCH_KIT_TEST_LANES or --lanes N)
 *   npm run test:integration -- --lanes 1         # one jest process, as before
 *   npm run test:integration -- --record          # also write the measured durations back
 *   npm run test:integration -- test/integration/konnector/faults.test.ts   # just these files, one lane
 *
 * Each lane's output is prefixed `[lane N]`; the last line sums the lanes as jest does ("Tests: … passed").
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { A9S_COMPONENTS, BUILDS_LATER_ENV, EARLY_COMPONENTS, LATE_COMPONENTS, MID_COMPONENTS, ensureComponent } from '../runtime/realinfra/build.js';
import { PULUMI_COMPONENTS, ensurePulumiBinaries } from '../runtime/realinfra/pulumi-build.js';
import { RUN_ID_ENV } from '../runtime/realinfra/registry.js';
import { type JestJson, type Lane, type Stage, type SuiteFile, STAGES, failureSummary, mergeDurations, planLanes, suitesOf } from './_lanes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATIONS = path.join(ROOT, 'test', 'integration', 'durations.json');
const JEST = ['--experimental-vm-modules', '--no-warnings', path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js')];

function usage(message: string): never {
  process.stderr.write(`test:integration: ${message}\nusage: npm run test:integration [-- --lanes N] [-- --record] [-- <test file>…]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let laneArg: string | undefined;
let record = false;
const files: string[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--lanes') laneArg = argv[++i] ?? usage('--lanes needs a number');
  else if (a.startsWith('--lanes=')) laneArg = a.slice('--lanes='.length);
  else if (a === '--record') record = true;
  else if (a.startsWith('-')) usage(`unknown option "${a}"`);
  else files.push(a);
}
// Named files run in one lane unless --lanes says otherwise; the whole set in KLUTCH_KIT_TEST_LANES lanes, or 2.
laneArg ??= files.length > 0 ? '1' : (process.env['KLUTCH_KIT_TEST_LANES'] ?? '2');
const laneCount = Number(laneArg);
if (!Number.isInteger(laneCount) || laneCount < 1 || laneCount > 8)
  usage(`--lanes (or KLUTCH_KIT_TEST_LANES) must be a whole number from 1 to 8, got "${laneArg}"`);

function findSuites(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findSuites(p));
    else if (e.name.endsWith('.test.ts')) out.push(path.relative(ROOT, p).split(path.sep).join('/'));
  }
  return out;
}

const suites = files.length > 0 ? files : findSuites(path.join(ROOT, 'test', 'integration'));
for (const f of suites) if (!fs.existsSync(path.join(ROOT, f))) usage(`no such test file "${f}"`);
const durations: Record<string, number> = fs.existsSync(DURATIONS) ? (JSON.parse(fs.readFileSync(DURATIONS, 'utf8')) as Record<string, number>) : {};
const plan = planLanes(
  suites.map((p): SuiteFile => ({ path: p, text: fs.readFileSync(path.join(ROOT, p), 'utf8') })),
  durations,
  laneCount,
);

const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const out = (line: string) => process.stdout.write(`${line}\n`);
out(
  `test:integration: ${suites.length} suite(s) in ${plan.lanes.length} lane(s)` +
    (plan.nodeSuites.length ? `; ${plan.nodeSuites.length} real-node suite(s) together in lane 1` : '') +
    (plan.unknown.length ? `; no recorded duration for ${plan.unknown.join(', ')}` : ''),
);
plan.lanes.forEach((l, i) =>
  out(
    `  lane ${i + 1}: ${suitesOf(l).length} suite(s), ≈ ${Math.round(l.expectedSeconds)} s recorded; by stage: ` +
      STAGES.filter((st) => l.stages[st].length > 0)
        .map((st) => `${st} ${l.stages[st].length}`)
        .join(', '),
  ),
);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-lanes-'));
const children = new Set<ReturnType<typeof spawn>>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    for (const c of children) c.kill('SIGTERM');
    process.exit(130);
  });
}

interface JestRun {
  readonly code: number;
  readonly json?: JestJson;
}

interface LaneResult {
  readonly runs: JestRun[];
  readonly seconds: number;
}

function runJest(index: number, part: string, suitesOfRun: readonly string[], extraEnv: Record<string, string>): Promise<JestRun> {
  const outputFile = path.join(tmp, `lane-${index + 1}-${part}.json`);
  const env = { ...process.env, ...extraEnv };
  // Each jest process is its own test run: the jest globalSetup names it, and its teardown ends only its clusters.
  delete env[RUN_ID_ENV];
  const child = spawn(
    process.execPath,
    [...JEST, '--runTestsByPath', ...suitesOfRun, '--selectProjects', 'integration', '--runInBand', '--json', '--outputFile', outputFile],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  const prefix = `[lane ${index + 1}] `;
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`));
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      let json: JestJson | undefined;
      try {
        json = JSON.parse(fs.readFileSync(outputFile, 'utf8')) as JestJson;
      } catch {
        json = undefined; // jest ended before writing its results: counted as a failure below
      }
      if (signal) out(`test:integration: lane ${index + 1} (${part}) ended by ${signal}`);
      resolve({ code: code ?? 1, json });
    });
  });
}

/** What each stage's suites need built beyond the earlier stages' (scripts/_lanes.ts STAGES). */
const STAGE_BUILDS: Record<Stage, { readonly names: readonly string[]; build(log: (line: string) => void): Promise<void> }> = {
  // built before the tests in CI (`npm run realinfra -- --early`); elsewhere the suites build what they miss
  kube: { names: EARLY_COMPONENTS, build: async () => {} },
  crossplane: {
    names: MID_COMPONENTS,
    async build(log) {
      for (const c of MID_COMPONENTS) await ensureComponent(c, { log });
    },
  },
  // provider-anynines from the klutchio sources (fetched at the pinned commit, or KLUTCH_KIT_KLUTCHIO_SRC's mirror): when
  // that fails, the other late suites still run, and the a9s suites, which ask for it again, fail with the reason
  late: {
    names: LATE_COMPONENTS,
    async build(log) {
      for (const c of LATE_COMPONENTS) {
        if (!(A9S_COMPONENTS as readonly string[]).includes(c)) await ensureComponent(c, { log });
        else await ensureComponent(c, { log }).catch((e: Error) => log(`${c}: not built (${e.message}); the a9s suites will fail on it`));
      }
    },
  },
  pulumi: {
    names: PULUMI_COMPONENTS,
    async build(log) {
      await ensurePulumiBinaries({ log });
    },
  },
};

/** Each stage's builds, once: cached, or being built by another process (CI starts them in the background; the build lock makes this wait), or built here, one stage after the other (each go build uses every core). */
const stageBuilds = new Map<Stage, Promise<void>>();
function stageBuilt(stage: Stage, log: (line: string) => void): Promise<void> {
  let p = stageBuilds.get(stage);
  if (!p) {
    const i = STAGES.indexOf(stage);
    p = (i > 0 ? stageBuilt(STAGES[i - 1]!, log) : Promise.resolve()).then(() => STAGE_BUILDS[stage].build(log));
    stageBuilds.set(stage, p);
  }
  return p;
}

/** The components of the stages after `stage`: a suite of `stage` that asks for one fails at once (assertNotBuiltLater). */
const builtLater = (stage: Stage) =>
  STAGES.slice(STAGES.indexOf(stage) + 1)
    .flatMap((st) => STAGE_BUILDS[st].names)
    .join(',');

async function runLane(index: number, lane: Lane): Promise<LaneResult> {
  const laneStarted = Date.now();
  const runs: JestRun[] = [];
  for (const stage of STAGES) {
    const suitesOfStage = lane.stages[stage];
    if (suitesOfStage.length === 0) continue;
    // Outside jest, so no hook timeout runs while the stage's builds finish.
    const log = (line: string) => process.stdout.write(`[lane ${index + 1}] [realinfra:${stage}] ${line}\n`);
    try {
      await stageBuilt(stage, log);
    } catch (e) {
      out(`test:integration: lane ${index + 1}: the ${stage} builds did not finish, so ${suitesOfStage.join(', ')} did not run: ${(e as Error).message}`);
      runs.push({ code: 1 });
      continue;
    }
    runs.push(await runJest(index, stage, suitesOfStage, { [BUILDS_LATER_ENV]: builtLater(stage) }));
  }
  const seconds = Math.round((Date.now() - laneStarted) / 1000);
  out(`test:integration: lane ${index + 1} ended after ${seconds} s (${runs.every((r) => r.code === 0 && r.json) ? 'passed' : 'FAILED'})`);
  return { runs, seconds };
}

const results = await Promise.all(plan.lanes.map((l, i) => runLane(i, l)));
fs.rmSync(tmp, { recursive: true, force: true });

const runs = results.flatMap((r) => r.runs);
const sum = (k: 'numPassedTests' | 'numFailedTests' | 'numPendingTests' | 'numTotalTests') => runs.reduce((n, r) => n + (r.json?.[k] ?? 0), 0);
const failedLanes = results.map((r, i) => (r.runs.some((x) => x.code !== 0 || x.json === undefined) ? i + 1 : 0)).filter((i) => i > 0);
if (record) {
  const jsons = runs.flatMap((r) => (r.json ? [r.json] : []));
  fs.writeFileSync(DURATIONS, `${JSON.stringify(mergeDurations(durations, jsons, ROOT), null, 2)}\n`);
  out(`test:integration: durations written to ${path.relative(ROOT, DURATIONS)}`);
}
out(`test:integration: ${plan.lanes.length} lane(s) in ${elapsed()} (lanes: ${results.map((r) => `${r.seconds} s`).join(', ')})`);
const failed = sum('numFailedTests');
out(`Tests: ${failed ? `${failed} failed, ` : ''}${sum('numPassedTests')} passed, ${sum('numTotalTests')} total`);
if (failedLanes.length > 0) {
  const summary = failureSummary(
    runs.flatMap((r) => (r.json ? [r.json] : [])),
    ROOT,
  );
  if (summary.length > 0) out(['test:integration: what failed:', ...summary].join('\n'));
  out(`test:integration: FAILED in lane(s) ${failedLanes.join(', ')}`);
  process.exit(1);
}
