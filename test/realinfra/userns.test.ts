/**
 * runtime/realinfra/userns.ts: how the Crossplane harness starts processes in network namespaces an ordinary user may
 * make (the argv it spawns), what it says when the kernel forbids that, and the loopback address it offers a
 * namespace's ports on.
 */
import { describe, expect, it } from '@jest/globals';
import * as net from 'node:net';
import { nsenterArgv, pickLoopbackAddress, unshareArgv, userNamespaceProblem } from '../../runtime/realinfra/userns.js';

describe('unshareArgv / nsenterArgv', () => {
  it('a new user + network namespace, with its loopback up when asked; the command is exec’d (its PID is the process’s)', () => {
    expect(unshareArgv(['/bin/fn', '--network=unix'])).toEqual({
      command: 'unshare',
      args: ['--user', '--map-root-user', '--net', '--', '/bin/fn', '--network=unix'],
    });
    expect(unshareArgv(['/usr/bin/node', '-e', 'x'], { loopback: true })).toEqual({
      command: 'unshare',
      args: ['--user', '--map-root-user', '--net', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', '/usr/bin/node', '-e', 'x'],
    });
  });

  it('joins by PID, keeping this uid (setgroups is denied in the namespace)', () => {
    expect(nsenterArgv(4242, ['/bin/crossplane', 'core', 'start'])).toEqual({
      command: 'nsenter',
      args: ['--target', '4242', '--user', '--net', '--preserve-credentials', '--', '/bin/crossplane', 'core', 'start'],
    });
  });

  it('with a private /run holding the named files (the service account a provider reads in-cluster)', () => {
    const { command, args } = nsenterArgv(7, ['/bin/provider', '--poll=10s'], {
      from: '/tmp/sa',
      runDir: '/run/secrets/kubernetes.io/serviceaccount',
      files: ['token', 'ca.crt'],
    });
    expect(command).toBe('nsenter');
    expect(args.slice(0, 12)).toEqual([
      '--target',
      '7',
      '--user',
      '--net',
      '--preserve-credentials',
      '--',
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
    ]);
    expect(args[13]).toContain('mount -t tmpfs -o size=1m,mode=0755 tmpfs /run');
    expect(args.slice(14)).toEqual(['/tmp/sa', '/run/secrets/kubernetes.io/serviceaccount', 'token', 'ca.crt', '--', '/bin/provider', '--poll=10s']);
    expect(() => nsenterArgv(7, ['/bin/p'], { from: '/tmp/sa', runDir: '/var/run/x', files: [] })).toThrow(
      'nsenterArgv: runDir "/var/run/x" must be under /run/',
    );
  });
});

describe('userNamespaceProblem', () => {
  it('none when unshare -rn runs', () => {
    const calls: string[][] = [];
    expect(userNamespaceProblem((c, a) => void calls.push([c, ...a]))).toBeUndefined();
    expect(calls).toEqual([['unshare', '--user', '--map-root-user', '--net', '--', 'true']]);
  });

  it('a kernel that forbids it: unshare’s message and the settings that allow it, or root', () => {
    const problem = userNamespaceProblem(() => {
      throw Object.assign(new Error('Command failed'), { stderr: 'unshare: write failed /proc/self/uid_map: Operation not permitted\n' });
    });
    expect(problem).toContain('failed (unshare: write failed /proc/self/uid_map: Operation not permitted)');
    expect(problem).toContain('kernel.unprivileged_userns_clone=1');
    expect(problem).toContain('kernel.apparmor_restrict_unprivileged_userns=0');
    expect(problem).toMatch(/or run as root$/);
  });

  it('no unshare at all: says which package', () => {
    expect(
      userNamespaceProblem(() => {
        throw Object.assign(new Error('spawnSync unshare ENOENT'), { code: 'ENOENT' });
      }),
    ).toBe('the "unshare" command (util-linux) was not found on PATH');
  });
});

describe('pickLoopbackAddress', () => {
  it('skips an address where one of the ports is taken', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.231.7.7', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const draws = [7, 7, 7, 8];
      const address = await pickLoopbackAddress([port], () => draws.shift()!);
      expect(address).toBe('127.231.7.8');
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('gives up after 20 tries, naming the ports', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.231.9.9', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      await expect(pickLoopbackAddress([port], () => 9)).rejects.toThrow(`realinfra: no address of 127.231.0.0/16 with ports ${port} free after 20 tries`);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
