/**
 * Resident memory of child processes for `npm run bench:soak`: reads `VmRSS` from /proc/<pid>/status,
 * keeps every sample, and summarises each process as start / peak / end. "Start" is the sample taken
 * by `markStart()` (the soak takes it once the initial sync has converged), so the growth ratio
 * end/start ignores the memory a process needs to load its code and fill its caches.
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

  constructor(private readonly readStatus: (pid: number) => string = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8')) {}

  /** Follows `pid` under `name` from the next sample on. */
  track(name: string, pid: number): void {
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`RssSampler.track: pid of ${name} is ${pid}, not a process id`);
    this.procs.push({ name, pid, samples: [] });
  }

  /** Reads every tracked process once; returns MiB by name (NaN for a process that is gone). */
  sample(at = Date.now()): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.procs) {
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

  /** Takes a sample now and marks it as the start of every process (the baseline of the growth check). */
  markStart(at = Date.now()): void {
    this.sample(at);
    for (const p of this.procs) if (p.samples.length > 0 && p.samples.at(-1)!.at === at) p.startIndex = p.samples.length - 1;
  }

  summary(): RssSummary[] {
    return this.procs.map((p) => {
      const mb = p.samples.map((s) => s.kb / 1024);
      const startMb = p.startIndex === undefined ? NaN : mb[p.startIndex]!;
      const endMb = mb.at(-1) ?? NaN;
      return { name: p.name, pid: p.pid, startMb, peakMb: mb.length ? Math.max(...mb) : NaN, endMb, ratio: endMb / startMb, samples: mb.length };
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
