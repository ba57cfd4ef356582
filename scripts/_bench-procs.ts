/**
 * What the benchmarks share about the programs they run as child processes: an esbuild bundle of a
 * runtime entry point (one ESM file with the packages external, as a container image ships it, so RSS
 * is the program's and not the TypeScript loader's), and /proc readings of CPU time and memory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = fileURLToPath(new URL('../', import.meta.url));

/**
 * Bundles `entry` (a path relative to a checkout, e.g. `runtime/konnector/main.ts`) of the checkout `from`
 * (default: this one) to `.cache/bench/outName` of this checkout (git-ignored): per checkout, so two
 * worktrees sharing one node_modules (a symlink) never overwrite each other's bundle. The packages stay
 * external and resolve from this checkout's node_modules, so another checkout's sources (an earlier
 * commit, for a before/after in one run) run on the same packages.
 */
export async function bundleProgram(entry: string, outName: string, from: string = repo): Promise<string> {
  const { build } = await import('esbuild');
  const source = resolve(from, entry);
  if (!existsSync(source)) throw new Error(`bundleProgram: ${source} does not exist; pass a checkout of klutch-kit (a folder with ${entry})`);
  const outfile = join(repo, '.cache', 'bench', outName);
  await build({ entryPoints: [source], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile, logLevel: 'warning' });
  return outfile;
}

/** CPU seconds (user + system) a process has used so far; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

function cpuSecondsOf(statFile: string): number {
  try {
    const f = readFileSync(statFile, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds of a process's main thread (its JavaScript, the event loop), the rest of its CPU being its
 * other threads' (V8's optimizing compiler and GC helpers, libuv's pool); NaN once it is gone.
 */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Resident memory now, MB (NaN once the process is gone). */
export const rssMb = (pid: number): number => statusKb(pid, 'VmRSS') / 1024;
/** Highest resident memory so far, MB. */
export const peakRssMb = (pid: number): number => statusKb(pid, 'VmHWM') / 1024;

/** A TCP port on 127.0.0.1 that was free a moment ago (for a child's --health-address). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Sum of the samples of one metric in a Prometheus text exposition (all label sets). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The p-th percentile (nearest rank) of `xs`; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** The median of `xs` (the mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A konnector's CPU for one phase of N objects, per object, in milliseconds. */
export interface CpuPerObject {
  /** From the baseline taken with the konnector started and idle (informers synced), before the objects. */
  readonly fromIdleMs: number;
  /** The same with the konnector's start-up CPU (process start until idle) added: what one run of N costs. */
  readonly withStartUpMs: number;
}

/**
 * Per-object CPU of a phase: `phaseSeconds` is the konnector's CPU during the phase (from its idle
 * baseline), `startUpSeconds` its CPU from process start until idle, `n` the objects synced.
 */
export function cpuPerObject(phaseSeconds: number, startUpSeconds: number, n: number): CpuPerObject {
  if (!Number.isInteger(n) || n < 1) throw new Error(`cpuPerObject: n is ${n}; pass the number of objects synced (an integer >= 1)`);
  for (const [name, v] of [
    ['phaseSeconds', phaseSeconds],
    ['startUpSeconds', startUpSeconds],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) throw new Error(`cpuPerObject: ${name} is ${v}; pass CPU seconds >= 0 (a difference of two readings)`);
  }
  return { fromIdleMs: (1000 * phaseSeconds) / n, withStartUpMs: (1000 * (phaseSeconds + startUpSeconds)) / n };
}
