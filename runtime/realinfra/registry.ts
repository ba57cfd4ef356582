// A registry of the processes started by startCluster(), in files under the OS temp folder, so that a
// jest globalTeardown (or the next run) can end processes that a crashed or failed test left behind.
//
// One JSON file per cluster: { ownerPid, runId, name, dir, processes: [{ component, pid, binary }] }.
// killLeftovers() ends the processes of an entry when its owner process is gone, or when the entry
// belongs to the given run id; entries owned by other live processes (another test run, a
// `klutch-kit cluster start` in another terminal) are left alone.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { restoreNodeOf } from './host.js';
import { pidAlive } from './_harness.js';

/** Env var naming the current test run; set by the jest globalSetup and inherited by workers. */
export const RUN_ID_ENV = 'KLUTCH_KIT_REALINFRA_RUN_ID';

export interface RegisteredProcess {
  readonly component: string;
  readonly pid: number;
  readonly binary: string;
}

export interface RegistryEntry {
  readonly ownerPid: number;
  readonly runId?: string;
  readonly name: string;
  readonly dir: string;
  readonly processes: RegisteredProcess[];
  /** The entry of a real node (node.ts): once its processes are ended, the host is restored from the node lock's record. */
  readonly node?: boolean;
}

/** The registry folder: `$KLUTCH_KIT_REALINFRA_REGISTRY` or `<os tmp>/klutch-kit-realinfra-registry`. */
export function registryDir(): string {
  return process.env['KLUTCH_KIT_REALINFRA_REGISTRY'] ?? path.join(os.tmpdir(), 'klutch-kit-realinfra-registry');
}

export function writeEntry(file: string, entry: RegistryEntry): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(entry, null, 2));
  fs.renameSync(tmp, file);
}

export function removeEntry(file: string): void {
  fs.rmSync(file, { force: true });
}

export { pidAlive };

/**
 * True when `pid` is alive and still runs `binary` (guards against PID reuse). Where /proc is not
 * available the command line cannot be checked and liveness alone decides.
 */
export function pidRuns(pid: number, binary: string): boolean {
  if (!pidAlive(pid)) return false;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.split('\0')[0] === binary;
  } catch {
    return process.platform !== 'linux';
  }
}

/** SIGKILLs a registered process if it still runs its binary. Returns true when a signal was sent. */
export function killRegistered(p: RegisteredProcess): boolean {
  if (!pidRuns(p.pid, p.binary)) return false;
  try {
    process.kill(p.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

export interface KillLeftoversOptions {
  /** Also end entries of this run id even though their owner is alive. @default process.env[RUN_ID_ENV] */
  readonly runId?: string;
  /** Only look at entries whose owner is dead or that match runId (default). `all` ends every entry. */
  readonly scope?: 'dead-or-run' | 'all';
  /** Registry folder. @default registryDir() */
  readonly registryDir?: string;
}

export interface KilledLeftover {
  readonly name: string;
  readonly dir: string;
  readonly killed: RegisteredProcess[];
}

/** Ends leftover cluster processes and removes their folders. Synchronous so it works in exit hooks. */
export function killLeftovers(opts: KillLeftoversOptions = {}): KilledLeftover[] {
  const dir = opts.registryDir ?? registryDir();
  const runId = opts.runId ?? process.env[RUN_ID_ENV];
  let files: string[];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const out: KilledLeftover[] = [];
  for (const f of files) {
    const file = path.join(dir, f);
    let entry: RegistryEntry;
    try {
      entry = JSON.parse(fs.readFileSync(file, 'utf8')) as RegistryEntry;
    } catch {
      continue; // being written or already removed
    }
    const ownerGone = !pidAlive(entry.ownerPid) || entry.ownerPid === undefined;
    const sameRun = runId !== undefined && entry.runId === runId;
    if (opts.scope !== 'all' && !ownerGone && !sameRun) continue;
    const killed = entry.processes.filter((p) => killRegistered(p));
    // A node's pods, mounts, iptables chains, bridge, cgroups and sysctls (needs its processes ended first).
    if (entry.node) restoreNodeOf(entry.ownerPid);
    try {
      if (entry.dir && path.basename(entry.dir).startsWith('klutch-kit-')) fs.rmSync(entry.dir, { recursive: true, force: true });
    } catch {
      // something still mounted or busy; the folder is in the temp folder
    }
    removeEntry(file);
    out.push({ name: entry.name, dir: entry.dir, killed });
  }
  return out;
}
