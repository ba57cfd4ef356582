/**
 * The pure parts of `npm run bench:sandbox` (scripts/bench-sandbox.ts): its command line, the sandbox's step lines
 * (sandbox/sandbox.ts `step()`, `provisionDemo()` and scripts/sandbox.ts's connect line), medians and spreads, the
 * comparison with the last recorded run and the records it writes (docs/bench/sandbox.json, docs/figures.json).
 */
import type { MeasuredFigure } from './_doc-figures.js';

/** The sandbox variants the bench runs, and the `npm run sandbox` flags of each. */
export const BENCH_VARIANTS = {
  default: [],
  pods: ['--pods'],
  a9s: ['--a9s'],
  namespaced: ['--api-style', 'namespaced'],
} as const satisfies Record<string, readonly string[]>;
export type BenchVariant = keyof typeof BENCH_VARIANTS;

/** The docs/figures.json figure each variant's time to the psql line updates with `--record` (when it has one). */
export const BENCH_FIGURES: Partial<Record<BenchVariant, string>> = { default: 'sandbox-psql', pods: 'sandbox-pods-psql' };

/** A step is flagged when its median is more than this times the last recorded one. */
export const REGRESSION_RATIO = 1.2;

export interface BenchArgs {
  readonly runs: number;
  readonly variants: readonly BenchVariant[];
  readonly record: boolean;
  /** Per run, until the sandbox says it is up. */
  readonly timeoutMs: number;
}

/** A command line the bench refuses; the message names the flag and the value. */
export class BenchArgsError extends Error {
  constructor(message: string) {
    super(`bench:sandbox: ${message}`);
    this.name = 'BenchArgsError';
  }
}

const positiveInt = (flag: string, v: string | undefined): number => {
  if (v === undefined) throw new BenchArgsError(`${flag} needs a value (a whole number ≥ 1)`);
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new BenchArgsError(`${flag}: ${JSON.stringify(v)} is not a whole number ≥ 1`);
  return n;
};

/** Parses the bench's arguments (without `node` and the script). `uid` is this process's user id (0: root). */
export function parseBenchArgs(argv: readonly string[], uid: number): BenchArgs {
  let runs = 3;
  let timeoutMin = 10;
  let record = false;
  const variants: BenchVariant[] = [];
  const names = Object.keys(BENCH_VARIANTS);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => (inline !== undefined ? inline : argv[++i]);
    if (flag === '--runs') runs = positiveInt('--runs', value());
    else if (flag === '--timeout-min') timeoutMin = positiveInt('--timeout-min', value());
    else if (flag === '--record' && inline === undefined) record = true;
    else if (flag === '--variant') {
      const v = value();
      if (v === undefined || v === '') throw new BenchArgsError(`--variant needs a value: ${names.join(', ')}`);
      if (!names.includes(v)) throw new BenchArgsError(`--variant: ${JSON.stringify(v)} is not a variant; use one of ${names.join(', ')}`);
      if (!variants.includes(v as BenchVariant)) variants.push(v as BenchVariant);
    } else
      throw new BenchArgsError(`unknown argument ${JSON.stringify(a)}; use --runs N, --variant ${names.join('|')} (repeatable), --record, --timeout-min N`);
  }
  if (variants.includes('pods') && uid !== 0)
    throw new BenchArgsError(
      '--variant pods needs root (it runs a real node: containerd, kubelet and kube-proxy change the host’s network and cgroups); run it as root or drop --variant pods',
    );
  return { runs, variants: variants.length > 0 ? variants : ['default'], record, timeoutMs: timeoutMin * 60_000 };
}

/** One `[n/N] … done in X s` line of the sandbox. */
export interface StepLine {
  readonly n: number;
  readonly total: number;
  /** The step's whole text. */
  readonly name: string;
  /** Its short name, the key of the bench's tables and records. */
  readonly label: string;
  readonly seconds: number;
}

const STEP = /^\[(\d+)\/(\d+)\] (.+?) … done in (\d+(?:\.\d+)?) s(?: \(\+\d+(?:\.\d+)? s\))?$/;

/** The short name of a step: its text up to the first ": ", " (", ", " or " in " ("pulumi up", "clusters"). */
export function stepLabel(name: string): string {
  const cut = [': ', ' (', ', ', ' in '].map((s) => name.indexOf(s)).filter((i) => i > 0);
  return (cut.length > 0 ? name.slice(0, Math.min(...cut)) : name).trim();
}

/** The step a line of the sandbox's output reports as done, or undefined. */
export function parseStepLine(line: string): StepLine | undefined {
  const m = STEP.exec(line.trimEnd());
  if (!m) return undefined;
  return { n: Number(m[1]), total: Number(m[2]), name: m[3]!, label: stepLabel(m[3]!), seconds: Number(m[4]) };
}

/** The connect line scripts/sandbox.ts prints above the psql command: seconds after start, claim → first connection. */
export function parseConnectLine(line: string): { afterStart: number; claimToConnection: number } | undefined {
  const m = /^\s*connect \((\d+(?:\.\d+)?) s after start; claim → first connection (\d+(?:\.\d+)?) s\):$/.exec(line);
  return m ? { afterStart: Number(m[1]), claimToConnection: Number(m[2]) } : undefined;
}

/** The line after which the sandbox is up and waits (scripts/sandbox.ts). */
export const UP_LINE = 'Klutch sandbox is up.';

/** The row names the bench adds to the steps. */
export const CLAIM_ROW = 'claim → first connection';
export const PSQL_ROW = '→ psql line (after start)';

/** The times one run reported, by row name, in the order they came. */
export class RunParser {
  readonly times = new Map<string, number>();
  up = false;
  /** Feeds one output line; returns what it recognised (for the progress line), or undefined. */
  line(l: string): string | undefined {
    const s = parseStepLine(l);
    if (s) {
      this.times.set(s.label, s.seconds);
      return `[${s.n}/${s.total}] ${s.label} ${s.seconds.toFixed(1)} s`;
    }
    const c = parseConnectLine(l);
    if (c) {
      this.times.set(CLAIM_ROW, c.claimToConnection);
      this.times.set(PSQL_ROW, c.afterStart);
      return `psql line ${c.afterStart.toFixed(1)} s after start`;
    }
    if (l.trim() === UP_LINE) {
      this.up = true;
      return 'up';
    }
    return undefined;
  }
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** Median (mean of the middle two for an even count), min and max; throws on no values. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spread: no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}

/** Each row (in the order of the first run that has it) with the spread of the runs that reported it. */
export function summarize(runs: ReadonlyArray<ReadonlyMap<string, number>>): Array<{ row: string } & Spread> {
  const order: string[] = [];
  for (const r of runs) for (const k of r.keys()) if (!order.includes(k)) order.push(k);
  // the psql row last: it is the total, not a step
  const rows = order.filter((k) => k !== PSQL_ROW).concat(order.includes(PSQL_ROW) ? [PSQL_ROW] : []);
  return rows.map((row) => ({ row, ...spread(runs.flatMap((r) => (r.has(row) ? [r.get(row)!] : []))) }));
}

/** The ratio of a median to the last recorded one and whether it is a regression; undefined without a record. */
export function compare(median: number, last: number | undefined): { ratio: number; regression: boolean } | undefined {
  if (last === undefined || !(last > 0)) return undefined;
  const ratio = median / last;
  return { ratio, regression: ratio > REGRESSION_RATIO };
}

/** One variant's last recorded run in docs/bench/sandbox.json. */
export interface BenchRecord {
  readonly date: string;
  readonly machine: string;
  readonly load: string;
  readonly command: string;
  readonly runs: number;
  /** Median seconds per row (steps, claim → first connection, psql line). */
  readonly medians: Readonly<Record<string, number>>;
  readonly note?: string;
}
export type BenchRecords = Partial<Record<BenchVariant, BenchRecord>>;

const f1 = (s: number) => s.toFixed(1);

/** The table the bench prints for one variant. */
export function formatTable(rows: ReadonlyArray<{ row: string } & Spread>, last: BenchRecord | undefined): string {
  const lines = [
    `| step | median | min–max | vs last${last ? ` (${last.date}, ${last.load})` : ''} |`,
    '|---|---|---|---|',
    ...rows.map((r) => {
      const c = compare(r.median, last?.medians[r.row]);
      const vs = c
        ? `${c.ratio.toFixed(2)}× of ${f1(last!.medians[r.row]!)} s${c.regression ? ` ⚠ slower than ${REGRESSION_RATIO}×` : ''}`
        : last
          ? 'not in the last record'
          : 'no record';
      return `| ${r.row} | ${f1(r.median)} s | ${f1(r.min)}–${f1(r.max)} s (${r.n} run${r.n === 1 ? '' : 's'}) | ${vs} |`;
    }),
  ];
  return lines.join('\n');
}

/** The load averages of the runs as the records say it: "load average 1.2–3.4 (1-minute, before/after each run)". */
export function formatLoad(loads: readonly number[]): string {
  const s = spread(loads);
  return `load average ${s.min.toFixed(1)}–${s.max.toFixed(1)} (1-minute, before/after each run)`;
}

/** The record of one variant's runs. */
export function benchRecord(opts: {
  variant: BenchVariant;
  rows: ReadonlyArray<{ row: string } & Spread>;
  date: string;
  machine: string;
  load: string;
  runs: number;
}): BenchRecord {
  return {
    date: opts.date,
    machine: opts.machine,
    load: opts.load,
    command: `npm run bench:sandbox -- --variant ${opts.variant} --runs ${opts.runs} --record`,
    runs: opts.runs,
    medians: Object.fromEntries(opts.rows.map((r) => [r.row, Number(r.median.toFixed(1))])),
  };
}

/** The docs/figures.json figure of a variant's time to the psql line, from its rows; undefined without a psql row. */
export function psqlFigure(rec: BenchRecord, rows: ReadonlyArray<{ row: string } & Spread>, home: string): MeasuredFigure | undefined {
  const psql = rows.find((r) => r.row === PSQL_ROW);
  if (!psql) return undefined;
  const steps = rows.filter((r) => r.row !== PSQL_ROW).map((r) => `${r.row} ${f1(r.median)} s`);
  return {
    kind: 'measured',
    value: `${f1(psql.median)} s`,
    date: rec.date,
    machine: rec.machine,
    load: rec.load,
    command: rec.command,
    home,
    note: `Median of ${psql.n} runs (${f1(psql.min)}–${f1(psql.max)} s), warm. Step medians: ${steps.join(', ')}. docs/bench/sandbox.json holds the run; npm run bench:sandbox compares with it.`,
  };
}
