/**
 * `npm run bench:sandbox`: starts the sandbox (`npm run sandbox`) N times per variant, one run after the other, reads
 * each step's time from its output as it comes, stops it after the "Klutch sandbox is up." line with
 * `npm run sandbox -- --down`, and prints per step the median, the spread and the ratio to the last recorded run
 * (docs/bench/sandbox.json), flagging a step more than 1.2× slower; the 1-minute load average before and after
 * each run goes beside it. `--record` writes the medians to docs/bench/sandbox.json and the time to the psql line to
 * docs/figures.json (then to every mark of it in README.md and docs/, as `npm run docs:figures` does).
 *
 *   npm run bench:sandbox                          # default sandbox, 3 runs
 *   npm run bench:sandbox -- --runs 5 --variant default --variant namespaced
 *   npm run bench:sandbox -- --variant pods        # as root
 *   npm run bench:sandbox -- --record              # and write the figures
 *
 * Flags: --runs N (3), --variant default|pods|a9s|namespaced (repeatable; default), --record, --timeout-min N (10,
 * per run: a run not up by then is stopped, brought down and reported).
 */
import { spawn, execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  BENCH_FIGURES,
  BENCH_VARIANTS,
  BenchArgsError,
  compare,
  REGRESSION_RATIO,
  benchRecord,
  formatLoad,
  formatTable,
  parseBenchArgs,
  psqlFigure,
  PSQL_ROW,
  RunParser,
  summarize,
  type BenchRecords,
  type BenchVariant,
} from './_bench-sandbox.js';
import { docFiles, loadFigures, renderMarks, type Figures } from './_doc-figures.js';
import { STATE_FILE, type SandboxState } from '../sandbox/state.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RECORDS = path.join(root, 'docs', 'bench', 'sandbox.json');
const out = (l: string) => process.stdout.write(`${l}\n`);
const load1 = () => os.loadavg()[0]!;

const npmSandbox = (flags: readonly string[]) => ['run', '--silent', 'sandbox', '--', ...flags];

/** `npm run sandbox -- --down`, then the state file must be gone (else the next run would refuse to start). */
async function down(): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    execFile('npm', npmSandbox(['--down']), { cwd: root, timeout: 120_000 }, (e, _o, err) =>
      e ? reject(new Error(`sandbox --down failed: ${err || e.message}`)) : resolve(),
    ),
  );
  if (fs.existsSync(STATE_FILE)) throw new Error(`sandbox --down left ${STATE_FILE}: the sandbox is not down`);
}

interface RunResult {
  times: Map<string, number>;
  error?: string;
}

/** The pid of a sandbox that is running now (one per state folder), or undefined. */
function runningSandbox(): number | undefined {
  if (!fs.existsSync(STATE_FILE)) return undefined;
  const { supervisorPid } = JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as SandboxState;
  try {
    process.kill(supervisorPid, 0);
    return supervisorPid;
  } catch {
    return undefined;
  }
}

/** One run: the sandbox up to its "up" line (bounded), then down, and its process gone. */
async function run(variant: BenchVariant, label: string, timeoutMs: number): Promise<RunResult> {
  const t0 = Date.now();
  const child = spawn('npm', npmSandbox(BENCH_VARIANTS[variant]), { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const parser = new RunParser();
  const tail: string[] = [];
  const keep = (l: string) => {
    tail.push(l);
    if (tail.length > 20) tail.shift();
  };
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  readline.createInterface({ input: child.stderr }).on('line', keep);
  let error: string | undefined;
  const up = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      error = `not up after ${timeoutMs / 60_000} min: stopped`;
      resolve(false);
    }, timeoutMs);
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      keep(l);
      const what = parser.line(l);
      if (what) out(`  ${label} +${((Date.now() - t0) / 1000).toFixed(1)} s  ${what}`);
      if (parser.up) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (!parser.up) error = `the sandbox exited (code ${code}) before it was up; its last lines:\n    ${tail.join('\n    ')}`;
      resolve(parser.up);
    });
  });
  // a run not up: SIGTERM stops what it started (scripts/sandbox.ts); then down in every case, and its process group gone
  if (!up) {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* exited already */
    }
  }
  await down().catch((e: Error) => (error ??= e.message));
  const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 60_000))]);
  if (!gone) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
    error ??= 'the sandbox process did not exit within 60 s of --down: killed';
  }
  return up && !error ? { times: parser.times } : { times: parser.times, error: error ?? 'not up' };
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseBenchArgs(process.argv.slice(2), typeof process.getuid === 'function' ? process.getuid() : -1);
  } catch (e) {
    if (!(e instanceof BenchArgsError)) throw e;
    process.stderr.write(`${e.message}\n`);
    return 2;
  }
  const records: BenchRecords = fs.existsSync(RECORDS) ? (JSON.parse(fs.readFileSync(RECORDS, 'utf8')) as BenchRecords) : {};
  const machine = `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.versions.node}`;
  out(
    `bench:sandbox: ${args.runs} run(s) of ${args.variants.join(', ')} on ${machine}; load average now ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let failed = 0;
  const results: Array<{ variant: BenchVariant; rows: ReturnType<typeof summarize>; load: string; ok: number }> = [];
  for (const variant of args.variants) {
    const ok: Array<Map<string, number>> = [];
    const loads: number[] = [];
    for (let i = 1; i <= args.runs; i++) {
      // never bring down a sandbox this bench did not start
      const other = runningSandbox();
      if (other !== undefined) {
        process.stderr.write(`bench:sandbox: a sandbox is already running (pid ${other}); stop it (npm run sandbox -- --down) and run the bench again\n`);
        return 1;
      }
      const label = `${variant} ${i}/${args.runs}`;
      const before = load1();
      const r = await run(variant, label, args.timeoutMs);
      const after = load1();
      loads.push(before, after);
      out(
        `  ${label}: ${r.error ? `FAILED: ${r.error}` : `psql line ${r.times.get(PSQL_ROW)?.toFixed(1) ?? '?'} s`}; load ${before.toFixed(2)} → ${after.toFixed(2)}`,
      );
      if (r.error) failed++;
      else ok.push(r.times);
    }
    if (ok.length === 0) {
      out(`\n${variant}: no run came up; nothing to compare`);
      continue;
    }
    const rows = summarize(ok);
    const load = formatLoad(loads);
    const last = records[variant];
    out(`\n${variant} (${ok.length} of ${args.runs} runs; ${load}):\n${formatTable(rows, last)}`);
    const slower = rows.filter((r) => compare(r.median, last?.medians[r.row])?.regression).map((r) => r.row);
    if (slower.length > 0) out(`⚠ more than ${REGRESSION_RATIO}× slower than the last record (${last!.date}): ${slower.join(', ')}`);
    results.push({ variant, rows, load, ok: ok.length });
  }
  if (args.record) {
    if (failed > 0) {
      process.stderr.write(`bench:sandbox: ${failed} run(s) failed; nothing recorded (record only complete benches)\n`);
      return 1;
    }
    const date = new Date().toISOString().slice(0, 10);
    const figures = { ...loadFigures(root) } as Record<string, Figures[string]>;
    for (const r of results) {
      const rec = benchRecord({ variant: r.variant, rows: r.rows, date, machine, load: r.load, runs: r.ok });
      records[r.variant] = rec;
      const name = BENCH_FIGURES[r.variant];
      const fig = name ? psqlFigure(rec, r.rows, figures[name]?.home ?? 'docs/sandbox.md') : undefined;
      if (name && fig) figures[name] = fig;
      out(
        name && fig
          ? `recorded ${r.variant}: docs/bench/sandbox.json, docs/figures.json "${name}" = ${fig.value}`
          : `recorded ${r.variant}: docs/bench/sandbox.json (no figure in docs/figures.json for it)`,
      );
    }
    fs.mkdirSync(path.dirname(RECORDS), { recursive: true });
    fs.writeFileSync(RECORDS, `${JSON.stringify(records, null, 2)}\n`);
    fs.writeFileSync(path.join(root, 'docs', 'figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
    for (const f of docFiles(root)) {
      const text = fs.readFileSync(path.join(root, f), 'utf8');
      const next = renderMarks(text, figures);
      if (next !== text) {
        fs.writeFileSync(path.join(root, f), next);
        out(`wrote ${f}`);
      }
    }
  }
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`bench:sandbox: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
