/**
 * Helpers the pod suites share (test/integration/pods/*.test.ts): a test CA and serving certificate (test/support/tls.ts), and what the
 * host sees of a pod's processes through its cgroups and /proc (the node runs the cgroupfs driver on cgroup v1:
 * `/sys/fs/cgroup/<hierarchy>/kubepods[/<qos>]/pod<uid>`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export { makeTls } from '../../support/tls.js';

/** The cgroup folder of a pod in one v1 hierarchy (cgroupfs driver: kubepods[/<qos>]/pod<uid>). */
export function podCgroup(hierarchy: string, uid: string): string | undefined {
  const want = `pod${uid}`;
  const walk = (d: string, depth: number): string | undefined => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      if (e.name === want) return path.join(d, e.name);
      if (depth < 2) {
        const f = walk(path.join(d, e.name), depth + 1);
        if (f) return f;
      }
    }
    return undefined;
  };
  return walk(path.join('/sys/fs/cgroup', hierarchy, 'kubepods'), 0);
}

/** A process of a pod as /proc shows it. */
export interface PodProcess {
  readonly pid: number;
  /** `/proc/<pid>/comm`. */
  readonly comm: string;
  /** Real, effective, saved and filesystem uid (`Uid:` of /proc/<pid>/status). */
  readonly uids: readonly string[];
  /** `CapEff:` of /proc/<pid>/status (hex). */
  readonly capEff: string;
  /** `VmRSS:` in KiB (0 for kernel-less entries). */
  readonly rssKiB: number;
}

/** The processes of a pod (the pause process included), from its cgroup; processes that exit meanwhile are left out. */
export function podProcesses(uid: string): PodProcess[] {
  const dir = podCgroup('pids', uid) ?? podCgroup('memory', uid) ?? podCgroup('', uid);
  if (!dir) throw new Error(`no cgroup of pod ${uid} under /sys/fs/cgroup/*/kubepods`);
  const out: PodProcess[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    for (const p of fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
        out.push({
          pid: Number(p),
          comm: fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim(),
          uids: (/^Uid:\s+(.*)$/m.exec(status)?.[1] ?? '').trim().split(/\s+/),
          capEff: /^CapEff:\s+(\S+)/m.exec(status)?.[1] ?? '',
          rssKiB: Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0),
        });
      } catch {
        // exited meanwhile
      }
    }
  };
  walk(dir);
  return out;
}

/** PIDs of a pod's processes, or of those whose command is `comm` (the pause process is excluded that way). */
export function podPids(uid: string, comm?: string): number[] {
  return podProcesses(uid)
    .filter((p) => comm === undefined || p.comm === comm)
    .map((p) => p.pid);
}

/** `Uid` and `CapEff` of the pod's process whose command is `comm`. */
export function processOf(uid: string, comm: string): { uids: string[]; capEff: string } {
  const p = podProcesses(uid).find((x) => x.comm === comm);
  if (!p) throw new Error(`pod ${uid} has no process "${comm}"`);
  return { uids: [...p.uids], capEff: p.capEff };
}

/**
 * Resident memory of a pod: the sum of VmRSS of its processes (pause included), in MiB. This host's memory cgroups
 * are emulated and report 0 for pod cgroups, so the kernel's per-process figure is used.
 */
export function podMemoryMiB(uid: string): number {
  return podProcesses(uid).reduce((n, p) => n + p.rssKiB, 0) / 1024;
}
