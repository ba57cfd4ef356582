// Rootless network namespaces for the Crossplane harness (crossplane.ts). Crossplane core, the function SDK and
// provider-kubernetes bind metrics, health and webhook ports on all interfaces, and none of them has a flag for every
// one of those ports. Inside a network namespace of their own, "all interfaces" is that namespace's loopback only.
// An ordinary user may make one: `unshare --user --map-root-user --net` creates a user namespace (in which the user is
// root, and which owns the new network namespace), so no privilege of the host is needed — unlike `ip netns add` and
// a veth pair, which need root. Processes started later join it with `nsenter --target <pid> --user --net`.
//
// Traffic crosses between the host's loopback and the namespace's through path-based unix sockets (a socket file
// works across network namespaces): a forwarder on each side (FORWARDER_JS of _harness.ts, one on the host and one
// inside the namespace, the latter also keeping the namespace alive) turns TCP on one side into a unix socket and back
// into TCP on the other. The namespaces end with their last process: nothing to clean up on the host.
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import * as net from 'node:net';

/** The longest path of a unix socket (sun_path is 108 bytes with its terminating NUL). */
export const UNIX_PATH_MAX = 107;

/**
 * argv of a command run in a new user + network namespace (`unshare`), with the namespace's loopback up when `loopback`
 * (a fresh network namespace's `lo` is down; processes that talk to each other inside need it). The command's PID is the
 * process's: unshare and sh exec it.
 */
export function unshareArgv(argv: readonly string[], opts: { loopback?: boolean } = {}): { command: string; args: string[] } {
  const inner = opts.loopback ? ['sh', '-c', 'ip link set lo up && exec "$0" "$@"', ...argv] : [...argv];
  return { command: 'unshare', args: ['--user', '--map-root-user', '--net', '--', ...inner] };
}

/**
 * argv of a command run in the user and network namespaces of process `pid` (`nsenter`; root of that user namespace, as
 * the process that made it, with all capabilities there and none on the host). With `privateRun`, in a mount namespace of its own with a tmpfs on /run and `runFiles`'
 * files copied to `runDir` (`/run/...`), where client-go's in-cluster configuration reads a service account's token.
 */
export function nsenterArgv(
  pid: number,
  argv: readonly string[],
  privateRun?: { readonly from: string; readonly runDir: string; readonly files: readonly string[] },
): { command: string; args: string[] } {
  // --preserve-credentials: the user namespace denies setgroups (unshare --map-root-user), which nsenter would call to
  // become root in it; this process's uid is already the one mapped to root there.
  const join = ['--target', String(pid), '--user', '--net', '--preserve-credentials', '--'];
  if (!privateRun) return { command: 'nsenter', args: [...join, ...argv] };
  if (!privateRun.runDir.startsWith('/run/')) throw new Error(`nsenterArgv: runDir ${JSON.stringify(privateRun.runDir)} must be under /run/`);
  // $0: the folder to copy from, $1: the target folder; then the files; "--" ends them, the command follows.
  const script =
    'set -e; mount -t tmpfs -o size=1m,mode=0755 tmpfs /run; src=$0; dst=$1; shift; mkdir -p "$dst"; ' +
    'while [ "$1" != "--" ]; do cp "$src/$1" "$dst/"; shift; done; shift; exec "$@"';
  return {
    command: 'nsenter',
    args: [
      ...join,
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      script,
      privateRun.from,
      privateRun.runDir,
      ...privateRun.files,
      '--',
      ...argv,
    ],
  };
}

/**
 * Why this user may not make a user + network namespace here, or undefined when it may (tried: `unshare -rn true`).
 * Root may always; an ordinary user may where the kernel allows unprivileged user namespaces.
 */
export function userNamespaceProblem(
  run: (command: string, args: string[]) => void = (c, a) => void execFileSync(c, a, { stdio: 'pipe', timeout: 10_000 }),
): string | undefined {
  try {
    run('unshare', ['--user', '--map-root-user', '--net', '--', 'true']);
    return undefined;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer | string };
    if (err.code === 'ENOENT') return 'the "unshare" command (util-linux) was not found on PATH';
    const detail = String(err.stderr ?? err.message).trim();
    return (
      `"unshare --user --map-root-user --net true" failed (${detail}): this kernel does not let an ordinary user make a user namespace. ` +
      'Allow it (as root: sysctl -w kernel.unprivileged_userns_clone=1 on Debian kernels that have it; ' +
      'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu >= 23.10; user.max_user_namespaces must be > 0), or run as root'
    );
  }
}

/** Whether nothing listens on `host:port` (bound for a moment). */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * A loopback address of 127.231.0.0/16 on which every port of `ports` is free: where the host reaches ports of a
 * namespace (each harness its own address, so that two harnesses both offer e.g. 9443, the port Crossplane gives a
 * provider's conversion webhook). Linux routes all of 127.0.0.0/8 to the loopback interface: binding any of it needs
 * no privilege, and it is reachable from this host only.
 */
export async function pickLoopbackAddress(ports: readonly number[], random: (min: number, max: number) => number = randomInt): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const address = `127.231.${random(0, 256)}.${random(1, 255)}`;
    let free = true;
    for (const p of ports) if (!(free = await portFree(address, p))) break;
    if (free) return address;
  }
  throw new Error(`realinfra: no address of 127.231.0.0/16 with ports ${ports.join(', ')} free after 20 tries`);
}
