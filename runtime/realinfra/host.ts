// Host-wide state of the harness's real node (node.ts). kubelet, kube-proxy, containerd and the CNI bridge
// change things that belong to the whole machine: sysctls, iptables chains, /var/lib/kubelet and other
// fixed folders, the kubepods cgroups, the bridge and its addresses. So one node runs per host at a time,
// under a lock file that also records the state found before the node started; restoreHost() puts every
// one of those things back. A lock whose holder died is restored from its record and then taken over.
// Synchronous on purpose: the exit hook runs it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The lock file: `$KLUTCH_KIT_NODE_LOCK`, else `/run/klutch-kit-realinfra-node.lock`. */
export function nodeLockFile(): string {
  return process.env['KLUTCH_KIT_NODE_LOCK'] ?? '/run/klutch-kit-realinfra-node.lock';
}

/** Sysctls a node changes (kubelet: the first six; the bridge plugin: ip_forward; kube-proxy may touch the rest). */
export const NODE_SYSCTLS: readonly string[] = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'net.netfilter.nf_conntrack_max',
  'net.netfilter.nf_conntrack_tcp_timeout_established',
  'net.netfilter.nf_conntrack_tcp_timeout_close_wait',
];

/** Fixed folders kubelet, containerd and libcni create whatever their configured roots are. */
export const NODE_HOST_PATHS: readonly string[] = [
  '/var/lib/kubelet',
  '/var/log/pods',
  '/var/log/containers',
  '/var/lib/cni',
  '/run/containerd',
  '/opt/containerd',
];

/** The iptables tables a node writes to (filter: KUBE-FIREWALL & co, nat: Services, mangle: the hint chain). */
const TABLES = ['filter', 'nat', 'mangle'] as const;
const CHAIN_RE = /^(KUBE|CNI)-/;

/** What the host looked like before the node started, and what the node owns. Written into the lock file. */
export interface HostRecord {
  readonly pid: number;
  readonly cluster: string;
  readonly dir: string;
  readonly startedAt: string;
  /** The node's bridge (also the node IP's link). */
  readonly bridge: string;
  /** containerd's socket: shims started by this containerd carry it in their command line. */
  readonly containerdSocket: string;
  readonly sysctls: Readonly<Record<string, string>>;
  /** Which of NODE_HOST_PATHS existed. */
  readonly paths: Readonly<Record<string, boolean>>;
  /** cgroup v1/v2 hierarchies (folders under /sys/fs/cgroup) that had a `kubepods` cgroup. */
  readonly kubepodsBefore: readonly string[];
  /** `KUBE-*`/`CNI-*` chains per `iptables`/`ip6tables` and table that existed. */
  readonly chainsBefore: Readonly<Record<string, readonly string[]>>;
  /**
   * nf_tables tables (`nft list tables`: "ip filter", "ip6 nat", …) that existed, or undefined without the
   * `nft` command. iptables-nft creates a table on first use; tables the node created are deleted again.
   */
  readonly nftTablesBefore?: readonly string[];
}

function readSysctl(name: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function writeSysctl(name: string, value: string): void {
  try {
    fs.writeFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, value);
  } catch {
    // not writable here (or gone): nothing to restore
  }
}

/** cgroup hierarchies: /sys/fs/cgroup/<name> for v1 (and the v2 `unified` mount), or /sys/fs/cgroup itself on pure v2. */
export function cgroupRoots(): string[] {
  const base = '/sys/fs/cgroup';
  if (fs.existsSync(path.join(base, 'cgroup.controllers'))) return [base];
  try {
    return fs
      .readdirSync(base, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => path.join(base, e.name))
      .filter((d) => fs.existsSync(path.join(d, 'cgroup.procs')))
      .filter((d, i, all) => all.findIndex((o) => fs.realpathSync(o) === fs.realpathSync(d)) === i);
  } catch {
    return [];
  }
}

function run(cmd: string, args: readonly string[], input?: string): string | undefined {
  try {
    return execFileSync(cmd, [...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000, ...(input !== undefined ? { input } : {}) });
  } catch {
    return undefined;
  }
}

function save(cmd: 'iptables' | 'ip6tables', table: string): string | undefined {
  return run(`${cmd}-save`, ['-t', table]);
}

function nftTables(): string[] | undefined {
  const out = run('nft', ['list', 'tables']);
  if (out === undefined) return undefined;
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('table '))
    .map((l) => l.slice('table '.length));
}

function chainsOf(dump: string | undefined): string[] {
  return (dump ?? '')
    .split('\n')
    .filter((l) => l.startsWith(':'))
    .map((l) => l.slice(1).split(' ')[0]!)
    .filter((c) => CHAIN_RE.test(c));
}

/** Reads the state a node is about to change. */
export function captureHostRecord(init: Pick<HostRecord, 'cluster' | 'dir' | 'bridge' | 'containerdSocket'>): HostRecord {
  const sysctls: Record<string, string> = {};
  for (const s of NODE_SYSCTLS) {
    const v = readSysctl(s);
    if (v !== undefined) sysctls[s] = v;
  }
  const paths: Record<string, boolean> = {};
  for (const p of NODE_HOST_PATHS) paths[p] = fs.existsSync(p);
  const chainsBefore: Record<string, string[]> = {};
  for (const cmd of ['iptables', 'ip6tables'] as const) for (const t of TABLES) chainsBefore[`${cmd}/${t}`] = chainsOf(save(cmd, t));
  return {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    ...init,
    sysctls,
    paths,
    kubepodsBefore: cgroupRoots().filter((r) => fs.existsSync(path.join(r, 'kubepods'))),
    chainsBefore,
    nftTablesBefore: nftTables(),
  };
}

/** Thrown when another live process holds the node lock. */
export class NodeLockError extends Error {
  constructor(
    readonly lockFile: string,
    readonly holder: Partial<HostRecord>,
  ) {
    super(
      `realinfra: a real node already runs on this host: ${lockFile} is held by pid ${holder.pid ?? '?'} ` +
        `(cluster "${holder.cluster ?? '?'}" in ${holder.dir ?? '?'}, since ${holder.startedAt ?? '?'}). A node changes host-wide ` +
        `state (iptables, sysctls, /var/lib/kubelet, cgroups), so only one runs at a time: stop that cluster, or run the suites that need a node one after another`,
    );
    this.name = 'NodeLockError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the host-wide node lock, writing `record` into it. A lock of a dead holder is restored from its
 * record first (`log` says so). Throws NodeLockError when a live process holds it.
 */
export function acquireNodeLock(record: HostRecord, log: (l: string) => void = () => {}): void {
  const file = nodeLockFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(record, null, 2), { flag: 'wx', mode: 0o644 });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let holder: Partial<HostRecord> = {};
    try {
      holder = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<HostRecord>;
    } catch {
      // being written: look again
    }
    if (typeof holder.pid === 'number' && alive(holder.pid)) throw new NodeLockError(file, holder);
    if (typeof holder.pid === 'number') {
      log(`node lock ${file}: its holder (pid ${holder.pid}, cluster "${holder.cluster}") is gone; restoring the host state it recorded`);
      restoreHost(holder as HostRecord, log);
    } else {
      sleepSync(200);
    }
  }
  throw new Error(`realinfra: could not take the node lock ${file}`);
}

/** Replaces the record in the node lock this process holds (after sweepHostLeftovers() changed the host). */
export function rewriteNodeLock(record: HostRecord): void {
  const file = nodeLockFile();
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(record, null, 2), { mode: 0o644 });
  fs.renameSync(tmp, file);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function procCmdlines(): Array<{ pid: number; argv: string[] }> {
  const out: Array<{ pid: number; argv: string[] }> = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      out.push({ pid: Number(e), argv: fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').filter(Boolean) });
    } catch {
      // gone
    }
  }
  return out;
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Every cgroup folder under `dir`, deepest first. */
function cgroupTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(d, e.name));
    out.push(d);
  };
  walk(dir);
  return out;
}

function pidsIn(cgroup: string): number[] {
  try {
    return fs.readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Ends the processes in the cgroup tree under `top` (never this process) and removes its cgroups, deepest first,
 * for up to 5 s while they exit. Whether `top` is gone.
 */
function removeCgroupTree(top: string): boolean {
  for (let i = 0; i < 20 && fs.existsSync(top); i++) {
    for (const cg of cgroupTree(top)) {
      for (const p of pidsIn(cg)) if (p !== process.pid) kill(p);
      try {
        fs.rmdirSync(cg);
      } catch {
        // busy: processes still exiting
      }
    }
    if (fs.existsSync(top)) sleepSync(250);
  }
  return !fs.existsSync(top);
}

/** Processes of the node's pods (in its kubepods cgroups) and containerd shims started by its containerd. */
export function nodeProcesses(record: Pick<HostRecord, 'containerdSocket' | 'kubepodsBefore'>): number[] {
  const pids = new Set<number>();
  for (const root of cgroupRoots()) {
    if (record.kubepodsBefore.includes(root)) continue;
    for (const cg of cgroupTree(path.join(root, 'kubepods'))) for (const p of pidsIn(cg)) pids.add(p);
  }
  for (const { pid, argv } of procCmdlines()) {
    if (argv.some((a) => a === record.containerdSocket) && path.basename(argv[0] ?? '').startsWith('containerd-shim')) pids.add(pid);
  }
  pids.delete(process.pid);
  return [...pids];
}

/** Mount points under any of `prefixes`, deepest first (from /proc/self/mountinfo, octal escapes decoded). */
export function mountsUnder(prefixes: readonly string[]): string[] {
  let info: string;
  try {
    info = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const points = info
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => prefixes.some((p) => m === p || m.startsWith(`${p}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/**
 * The `iptables-restore --noflush` script that removes, from one table's `iptables-save` dump, the
 * `KUBE-*`/`CNI-*` chains not in `chainsBefore` and every rule elsewhere that jumps to them; undefined when
 * there is nothing to remove.
 */
export function iptablesCleanupScript(
  table: string,
  dump: string,
  chainsBefore: readonly string[],
): { script: string; deletes: string[]; added: string[] } | undefined {
  const before = new Set(chainsBefore);
  const added = chainsOf(dump).filter((c) => !before.has(c));
  if (added.length === 0) return undefined;
  const isAdded = new Set(added);
  const deletes = dump
    .split('\n')
    .filter((l) => l.startsWith('-A '))
    .filter((l) => {
      const chain = l.split(' ')[1]!;
      const target = / -[jg] (\S+)/.exec(l)?.[1];
      return !isAdded.has(chain) && target !== undefined && isAdded.has(target);
    })
    .map((l) => `-D ${l.slice(3)}`);
  const script = [`*${table}`, ...deletes, ...added.map((c) => `-F ${c}`), ...added.map((c) => `-X ${c}`), 'COMMIT', ''].join('\n');
  return { script, deletes, added };
}

/** Removes the `KUBE-*`/`CNI-*` chains that were not there before, and every rule that jumps to them. */
function restoreIptables(record: HostRecord): void {
  for (const cmd of ['iptables', 'ip6tables'] as const) {
    for (const table of TABLES) {
      const dump = save(cmd, table);
      if (dump === undefined) continue;
      const plan = iptablesCleanupScript(table, dump, record.chainsBefore[`${cmd}/${table}`] ?? []);
      if (plan) removeChains(cmd, table, plan);
    }
  }
}

/** Applies an iptablesCleanupScript() plan: in one restore, else rule by rule. */
function removeChains(cmd: 'iptables' | 'ip6tables', table: string, plan: { script: string; deletes: string[]; added: string[] }): void {
  if (run(`${cmd}-restore`, ['--noflush'], plan.script) !== undefined) return;
  // One by one, so that one odd rule does not keep the others.
  for (const d of plan.deletes) run(cmd, ['-t', table, ...splitRule(d)]);
  for (const c of plan.added) run(cmd, ['-t', table, '-F', c]);
  for (const c of plan.added) run(cmd, ['-t', table, '-X', c]);
}

/** Splits an iptables-save rule into argv (double-quoted words stay whole). */
function splitRule(rule: string): string[] {
  return (rule.match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"(.*)"$/, '$1'));
}

/**
 * Puts the host back as `record` found it: ends the pods' processes and the shims, unmounts what the node
 * mounted, removes its iptables chains and rules, the bridge (with its addresses, routes and veths), the
 * kubepods cgroups and the folders it created, restores the sysctls, and removes the lock file if it is
 * this record's. Never throws.
 */
export function restoreHost(record: HostRecord, log: (l: string) => void = () => {}): void {
  const problems: string[] = [];
  // 1. processes: pods and shims (the node's own processes are stopped by their owner before this)
  for (let i = 0; i < 3; i++) {
    const pids = nodeProcesses(record);
    if (pids.length === 0) break;
    for (const p of pids) kill(p);
    sleepSync(300);
  }
  // 2. mounts: volumes and rootfs under the node's folder and the fixed paths
  const prefixes = [record.dir, ...NODE_HOST_PATHS.filter((p) => !record.paths[p])];
  // Several passes: a path can carry stacked mounts (kubelet bind-mounts its root folder onto itself).
  for (let pass = 0; pass < 4; pass++) {
    const mounts = mountsUnder(prefixes);
    if (mounts.length === 0) break;
    for (const m of mounts) if (run('umount', [m]) === undefined && pass >= 2) run('umount', ['-l', m]);
  }
  for (const m of mountsUnder(prefixes)) problems.push(`could not unmount ${m}`);
  // 3. iptables
  restoreIptables(record);
  // nf_tables tables that iptables-nft created for the node (now without rules): gone again, as before.
  if (record.nftTablesBefore) {
    const before = new Set(record.nftTablesBefore);
    for (const t of nftTables() ?? []) {
      if (!before.has(t) && /^(ip|ip6) (filter|nat|mangle|raw|security)$/.test(t)) run('nft', ['delete', 'table', ...t.split(' ')]);
    }
  } else if (run('iptables-save', []) !== undefined) {
    problems.push('empty iptables tables the node created are left (install nftables for the nft command to remove them)');
  }
  // 4. links: veths on the bridge, then the bridge (its addresses and routes go with it)
  const ports = run('ip', ['-o', 'link', 'show', 'master', record.bridge]) ?? '';
  for (const m of ports.matchAll(/^\d+: ([^:@\s]+)/gm)) run('ip', ['link', 'del', m[1]!]);
  if (run('ip', ['link', 'show', record.bridge]) !== undefined) run('ip', ['link', 'del', record.bridge]);
  // 5. cgroups
  for (const root of cgroupRoots()) {
    if (record.kubepodsBefore.includes(root)) continue;
    const top = path.join(root, 'kubepods');
    if (fs.existsSync(top) && !removeCgroupTree(top)) problems.push(`could not remove cgroup ${top}`);
  }
  // 6. folders the node created
  for (const p of NODE_HOST_PATHS) {
    if (record.paths[p] === false) {
      try {
        fs.rmSync(p, { recursive: true, force: true });
      } catch (e) {
        problems.push(`could not remove ${p}: ${(e as Error).message}`);
      }
    }
  }
  // 7. sysctls
  for (const [k, v] of Object.entries(record.sysctls)) if (readSysctl(k) !== v) writeSysctl(k, v);
  // 8. the lock, if it is ours
  const file = nodeLockFile();
  try {
    const held = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<HostRecord>;
    if (held.pid === record.pid && held.dir === record.dir) fs.rmSync(file, { force: true });
  } catch {
    // no lock file
  }
  if (problems.length > 0) log(`host state of node "${record.cluster}" not fully restored: ${problems.join('; ')}`);
}

/** Whether a process whose program is one of `names` runs on the host (any user). */
function running(names: readonly string[]): boolean {
  return procCmdlines().some(({ argv }) => names.includes(path.basename(argv[0] ?? '')));
}

/**
 * Sweeps what a node left on the host without a lock record to restore it from: a run killed after its
 * lock file went, or a restore that could not finish (a cgroup still busy, a chain still referenced). Left
 * alone, these leftovers look like state that was "there before" to the next node, whose restore then keeps
 * them, and with them the next node's own pods. Call it holding the node lock and before capturing the
 * record. Only when no kubelet or kube-proxy runs on the host (a host that is a real Kubernetes node keeps
 * everything): the processes in `kubepods` cgroups (pods without a kubelet) are ended and the cgroups
 * removed; `KUBE-*`/`CNI-*` chains, and the rules that jump to them, are removed. Returns one line per thing
 * removed (empty when the host was clean). Never throws.
 */
export function sweepHostLeftovers(): string[] {
  if (running(['kubelet', 'kube-proxy'])) return [];
  const swept: string[] = [];
  for (const root of cgroupRoots()) {
    const top = path.join(root, 'kubepods');
    if (!fs.existsSync(top)) continue;
    const pids = new Set(cgroupTree(top).flatMap(pidsIn));
    pids.delete(process.pid);
    const removed = removeCgroupTree(top);
    swept.push(`cgroup ${top}${pids.size ? ` (ended ${pids.size} process(es) of pods without a kubelet)` : ''}${removed ? '' : ': still busy'}`);
  }
  for (const cmd of ['iptables', 'ip6tables'] as const) {
    for (const table of TABLES) {
      const dump = save(cmd, table);
      if (dump === undefined) continue;
      const plan = iptablesCleanupScript(table, dump, []);
      if (!plan) continue;
      removeChains(cmd, table, plan);
      swept.push(`${cmd} ${table}: ${plan.added.length} chain(s) ${plan.added.slice(0, 3).join(', ')}${plan.added.length > 3 ? ', …' : ''}`);
    }
  }
  return swept;
}

/**
 * Restores the host from the node lock's record when its holder is gone (or, with `ownProcess`, is this
 * process: a jest global teardown after every test has ended). Returns the record restored, if any.
 * Call it after the holder's processes are ended (killLeftovers()).
 */
export function restoreAbandonedNode(opts: { ownProcess?: boolean; log?: (l: string) => void } = {}): HostRecord | undefined {
  let holder: HostRecord;
  try {
    holder = JSON.parse(fs.readFileSync(nodeLockFile(), 'utf8')) as HostRecord;
  } catch {
    return undefined;
  }
  if (typeof holder.pid !== 'number') return undefined;
  if (alive(holder.pid) && !(opts.ownProcess && holder.pid === process.pid)) return undefined;
  restoreHost(holder, opts.log);
  return holder;
}

/**
 * Restores the host from the node lock's record when the lock belongs to `ownerPid` (a process whose
 * cluster killLeftovers() is ending). Returns the record restored, if any.
 */
export function restoreNodeOf(ownerPid: number, log?: (l: string) => void): HostRecord | undefined {
  let holder: HostRecord;
  try {
    holder = JSON.parse(fs.readFileSync(nodeLockFile(), 'utf8')) as HostRecord;
  } catch {
    return undefined;
  }
  if (holder.pid !== ownerPid) return undefined;
  restoreHost(holder, log);
  return holder;
}
