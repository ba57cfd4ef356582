// Network namespaces for processes that cannot be told to listen on loopback only (Crossplane core, the
// function SDK and provider-kubernetes bind metrics, health and webhook ports on all interfaces). Inside
// a namespace of its own, "all interfaces" is that namespace's loopback plus, where the process must talk
// to the host, one end of a veth pair whose other end is on the host: a private link between the host and
// the namespace, reachable from nowhere else. TCP forwarders (a small process of the harness) join a host
// loopback port to the veth and back. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and the `ip` command.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs `ip <args>`; errors name the command and carry ip's message. */
export async function ip(args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('ip', [...args], { timeout: 15_000 });
    return stdout;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') {
      throw new Error('realinfra: the "ip" command (iproute2) is needed for the Crossplane harness\'s network namespaces but was not found on PATH', {
        cause: e,
      });
    }
    throw new Error(`realinfra: "ip ${args.join(' ')}" failed: ${(err.stderr ?? err.message).trim()}`, { cause: e });
  }
}

/** A network namespace made by the harness, optionally joined to the host by a veth pair. */
export interface Netns {
  readonly name: string;
  /** Host-side veth interface, when the namespace has a link to the host. */
  readonly hostIf?: string;
  /** Address of the host end of the veth (reachable from inside the namespace). */
  readonly hostIp?: string;
  /** Address of the namespace end of the veth (reachable from the host). */
  readonly nsIp?: string;
}

/** `/etc/netns/<name>`: `ip netns exec` bind-mounts the files in it over `/etc` (e.g. `hosts`). */
export function netnsEtcDir(name: string): string {
  return `/etc/netns/${name}`;
}

/** A short random id for namespace and interface names (interface names are limited to 15 characters). */
export function netnsId(): string {
  return randomBytes(3).toString('hex');
}

async function usedSubnets(): Promise<Set<number>> {
  const out = await ip(['-4', '-o', 'addr', 'show']);
  const used = new Set<number>();
  for (const m of out.matchAll(/inet 10\.231\.(\d+)\./g)) used.add(Number(m[1]));
  return used;
}

/**
 * Creates namespace `name` with its loopback up. With `veth`, also a veth pair `<veth>h` (host) /
 * `<veth>n` (namespace) on a free /30 in 10.231.0.0/16 and, with `hosts`, an `/etc/netns/<name>/hosts`.
 */
export async function createNetns(name: string, opts: { veth?: string; hosts?: (n: { hostIp: string; nsIp: string }) => string } = {}): Promise<Netns> {
  if (fs.existsSync(`/run/netns/${name}`)) throw new Error(`realinfra: network namespace "${name}" already exists`);
  await ip(['netns', 'add', name]);
  try {
    await ip(['-n', name, 'link', 'set', 'lo', 'up']);
    if (!opts.veth) return { name };
    const hostIf = `${opts.veth}h`;
    const nsIf = `${opts.veth}n`;
    const used = await usedSubnets();
    let n = -1;
    for (let i = 0; i < 256; i++) {
      const c = (randomBytes(1)[0]! + i) % 256;
      if (!used.has(c)) {
        n = c;
        break;
      }
    }
    if (n < 0) throw new Error('realinfra: no free /30 left in 10.231.0.0/16 for a veth pair');
    const hostIp = `10.231.${n}.1`;
    const nsIp = `10.231.${n}.2`;
    await ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', name]);
    await ip(['addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
    await ip(['link', 'set', hostIf, 'up']);
    await ip(['-n', name, 'addr', 'add', `${nsIp}/30`, 'dev', nsIf]);
    await ip(['-n', name, 'link', 'set', nsIf, 'up']);
    if (opts.hosts) {
      fs.mkdirSync(netnsEtcDir(name), { recursive: true });
      fs.writeFileSync(`${netnsEtcDir(name)}/hosts`, opts.hosts({ hostIp, nsIp }));
    }
    return { name, hostIf, hostIp, nsIp };
  } catch (e) {
    deleteNetnsSync({ name, hostIf: opts.veth ? `${opts.veth}h` : undefined });
    throw e;
  }
}

/** Removes the namespace (its processes must have ended), its veth pair and `/etc/netns/<name>`. Never throws. */
export function deleteNetnsSync(ns: { name: string; hostIf?: string }): void {
  const quiet = (args: string[]) => {
    try {
      execFileSync('ip', args, { stdio: 'ignore', timeout: 15_000 });
    } catch {
      // already gone
    }
  };
  // Deleting either end of a veth pair deletes both; the namespace end also goes with the namespace.
  if (ns.hostIf) quiet(['link', 'del', ns.hostIf]);
  if (fs.existsSync(`/run/netns/${ns.name}`)) quiet(['netns', 'del', ns.name]);
  fs.rmSync(netnsEtcDir(ns.name), { recursive: true, force: true });
  try {
    fs.rmdirSync('/etc/netns'); // only when empty: other namespaces' folders stay
  } catch {
    // not empty, or not there
  }
}

/** True when `ip link show <ifname>` finds the interface. */
export function linkExists(ifname: string): boolean {
  try {
    execFileSync('ip', ['link', 'show', ifname], { stdio: 'ignore', timeout: 15_000 });
    return true;
  } catch {
    return false;
  }
}
