/**
 * Resident memory of child processes for `npm run bench:soak`: reads `VmRSS` from /proc/<pid>/status,
 * keeps every sample, and summarises each process as start / peak / end. "Start" is the sample taken
 * by `markStart()` (the soak takes it once the initial sync has converged), so the growth ratio
 * end/start ignores the memory a process needs to load its code and fill its caches. A process the
 * soak restarts is tracked once per incarnation (its own name); `rssChecks` decides which incarnations
 * the growth check can judge.
 */
import { readFileSync } from 'node:fs';

/** `VmRSS` in kB from the text of /proc/<pid>/status; NaN when the line is missing (e.g. a zombie). */
export function vmRssKb(statusText: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(statusText);
  return m ? Number(m[1]) : NaN;
}

export interface RssSummary {
  name: string;
  pid: number;
  /** MiB at the sample marked as start (NaN when `markStart` was not called or the process was gone). */
  startMb: number;
  /** Highest MiB of all samples, also those before the start mark. */
  peakMb: number;
  /** MiB of the last sample. */
  endMb: number;
  /** time (ms) of the start sample, NaN without one */
  startAt: number;
  /** time (ms) of the last sample, NaN without samples */
  endAt: number;
  /** endMb / startMb. */
  ratio: number;
  samples: number;
}

interface Tracked {
  name: string;
  pid: number;
  samples: Array<{ at: number; kb: number }>;
  startIndex?: number;
}

export class RssSampler {
  private readonly procs: Tracked[] = [];
  private readonly retired = new Set<string>();

  constructor(private readonly readStatus: (pid: number) => string = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8')) {}

  /** Follows `pid` under `name` from the next sample on. */
  track(name: string, pid: number): void {
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`RssSampler.track: pid of ${name} is ${pid}, not a process id`);
    if (this.procs.some((p) => p.name === name)) throw new Error(`RssSampler.track: ${name} is tracked already (name each incarnation)`);
    this.procs.push({ name, pid, samples: [] });
  }

  /** Stops reading `name` (a killed process: its pid may be reused); its samples stay in the summary. */
  retire(name: string): void {
    if (!this.procs.some((p) => p.name === name)) throw new Error(`RssSampler.retire: ${name} is not tracked`);
    this.retired.add(name);
  }

  /** Reads every tracked process that is not retired once; returns MiB by name (NaN for a process that is gone). */
  sample(at = Date.now()): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.procs) {
      if (this.retired.has(p.name)) continue;
      let kb = NaN;
      try {
        kb = vmRssKb(this.readStatus(p.pid));
      } catch {
        /* exited */
      }
      if (Number.isFinite(kb)) p.samples.push({ at, kb });
      out[p.name] = kb / 1024;
    }
    return out;
  }

  /**
   * Takes a sample now and marks it as the start (the baseline of the growth check) of every process,
   * or only of those named in `names` (a restarted incarnation once it has synced).
   */
  markStart(at = Date.now(), names?: readonly string[]): void {
    this.sample(at);
    for (const p of this.procs)
      if ((!names || names.includes(p.name)) && p.samples.length > 0 && p.samples.at(-1)!.at === at) p.startIndex = p.samples.length - 1;
  }

  summary(): RssSummary[] {
    return this.procs.map((p) => {
      const mb = p.samples.map((s) => s.kb / 1024);
      const startMb = p.startIndex === undefined ? NaN : mb[p.startIndex]!;
      const endMb = mb.at(-1) ?? NaN;
      const startAt = p.startIndex === undefined ? NaN : p.samples[p.startIndex]!.at;
      const endAt = p.samples.at(-1)?.at ?? NaN;
      return {
        name: p.name,
        pid: p.pid,
        startMb,
        peakMb: mb.length ? Math.max(...mb) : NaN,
        endMb,
        startAt,
        endAt,
        ratio: endMb / startMb,
        samples: mb.length,
      };
    });
  }
}

/**
 * Processes whose end RSS is more than `maxGrowth` (0.10 = 10 %) above their start, or that have no
 * start or end sample: one line each, naming the process and both figures.
 */
export function rssGrowthProblems(rows: readonly RssSummary[], maxGrowth = 0.1): string[] {
  const out: string[] = [];
  for (const r of rows) {
    if (!Number.isFinite(r.startMb) || !Number.isFinite(r.endMb)) {
      out.push(`${r.name} (pid ${r.pid}): no ${Number.isFinite(r.startMb) ? 'end' : 'start'} sample (process gone?)`);
    } else if (r.endMb > r.startMb * (1 + maxGrowth)) {
      out.push(
        `${r.name} (pid ${r.pid}): RSS grew from ${r.startMb.toFixed(1)} MiB to ${r.endMb.toFixed(1)} MiB (×${r.ratio.toFixed(2)}, limit ×${(1 + maxGrowth).toFixed(2)})`,
      );
    }
  }
  return out;
}

/**
 * Which incarnations the growth check judges. A process that ran from the initial sync to the end
 * with the same work is always judged (without a start or end sample it stays in `checked`, so
 * `rssGrowthProblems` reports it). A killed incarnation (`killed`: its series ends at the kill) and
 * one whose start sample was taken again during the run (`rebased`, with why: restarted, or a backend
 * replica that became the leader and started its controllers) are judged only when their start sample
 * lies at least `minSpanMs` before their last sample; otherwise they are excluded with the reason (a
 * series too short for a growth trend to mean anything, or a start sample that was not due yet).
 */
export function rssChecks(
  rows: readonly RssSummary[],
  o: { killed: ReadonlySet<string>; rebased: ReadonlyMap<string, string>; minSpanMs: number },
): { checked: RssSummary[]; excluded: Array<{ row: RssSummary; reason: string }> } {
  const checked: RssSummary[] = [];
  const excluded: Array<{ row: RssSummary; reason: string }> = [];
  for (const r of rows) {
    const killed = o.killed.has(r.name);
    const why = o.rebased.get(r.name);
    if (!killed && why === undefined) {
      checked.push(r);
      continue;
    }
    const what = [why, killed ? 'killed (kill -9) by the restart schedule' : undefined].filter(Boolean).join(', ');
    const span = r.endAt - r.startAt;
    if (!Number.isFinite(r.startAt)) excluded.push({ row: r, reason: `${what}; no start sample before its last sample` });
    else if (!(span >= o.minSpanMs))
      excluded.push({
        row: r,
        reason: `${what}; ${(span / 1000).toFixed(0)} s from its start sample to its last, less than the ${(o.minSpanMs / 1000).toFixed(0)} s a growth verdict needs`,
      });
    else checked.push(r);
  }
  return { checked, excluded };
}
