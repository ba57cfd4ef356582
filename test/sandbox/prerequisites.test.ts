/**
 * `npm run sandbox` checks what it needs before building anything: each missing prerequisite is named
 * with the command that installs it (sandbox/prerequisites.ts, with an injected lookup).
 */
import { describe, expect, it } from '@jest/globals';
import { formatMissing, kubectlNote, missingPrerequisites, SANDBOX_GO_COMPONENTS, type PrerequisiteLookup } from '../../sandbox/prerequisites.js';

/** The commands of the Crossplane harness's network namespaces (iproute2, util-linux), there on any Debian system. */
const NS = { ip: '', unshare: '', nsenter: '' };

/**
 * A machine with these commands (name → `go version` output or ''), PostgreSQL or not, these components not built yet,
 * run by this user (0: root) where user namespaces are allowed or not (the reason).
 */
function machine(
  commands: Record<string, string>,
  postgres: boolean,
  uncached: string[] = [],
  user: { uid?: number; userns?: string } = {},
): PrerequisiteLookup {
  return {
    which: (c) => (c in commands ? `/usr/bin/${c.split('/').pop()}` : undefined),
    goVersion: (go) => Object.entries(commands).find(([c]) => go.endsWith(c.split('/').pop()!))?.[1],
    postgres: () => postgres,
    uncached: () => uncached,
    uid: () => user.uid ?? 1000,
    userNamespaceProblem: () => user.userns,
  };
}
const GO = 'go version go1.26.8 linux/amd64\n';

describe('sandbox prerequisites', () => {
  it('none missing on a ready machine (Go not needed once everything is built)', () => {
    expect(missingPrerequisites(machine({ openssl: '', go: GO, ...NS }, true, ['etcd']), {})).toEqual([]);
    expect(missingPrerequisites(machine({ openssl: '', ...NS }, true, []), {})).toEqual([]);
  });

  it('a fresh machine: every missing piece at once, each with its install command', () => {
    const missing = missingPrerequisites(machine({}, false, ['etcd', 'kube-apiserver']), {});
    expect(missing.map((m) => m.what)).toEqual([
      'openssl',
      'PostgreSQL server (postgres, initdb under /usr/lib/postgresql/<major>/bin)',
      'ip (iproute2)',
      'unshare and nsenter (util-linux)',
      'Go (the "go" command)',
    ]);
    expect(missing[0].install).toMatch(/^apt-get install -y openssl /);
    expect(missing[1].install).toMatch(/^apt-get install -y postgresql /);
    expect(missing[2].install).toMatch(/^apt-get install -y iproute2 /);
    expect(missing[3].install).toMatch(/^apt-get install -y util-linux /);
    expect(missing[4].install).toContain('Go >= 1.26 from https://go.dev/doc/install');
    expect(missing[4].why).toContain('builds 2 binaries not in the cache yet (etcd, kube-apiserver); the first build took');
    const text = formatMissing(missing);
    expect(text.split('\n')[0]).toBe('sandbox: 5 prerequisite(s) missing; nothing was built or started:');
    expect(text).toContain('  - openssl: makes the clusters’ certificates\n      install: apt-get install -y openssl');
  });

  it('a Go that is too old, or KLUTCH_KIT_GO', () => {
    const old = missingPrerequisites(machine({ openssl: '', go: 'go version go1.22.2 linux/amd64', ...NS }, true, ['etcd']), {});
    expect(old.map((m) => m.what)).toEqual(['Go >= 1.26 (/usr/bin/go is go version go1.22.2 linux/amd64)']);
    expect(missingPrerequisites(machine({ openssl: '', '/opt/go/bin/go': GO, ...NS }, true, ['etcd']), { KLUTCH_KIT_GO: '/opt/go/bin/go' })).toEqual([]);
    expect(missingPrerequisites(machine({ openssl: '', go: 'go version go2.0 x', ...NS }, true, ['etcd']), {})).toEqual([]);
  });

  it('the default sandbox needs no root: an ordinary user where user namespaces are allowed has everything', () => {
    expect(missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 1000 }), {}, { pods: false, a9s: false })).toEqual([]);
  });

  it('an ordinary user where the kernel forbids user namespaces: named with the reason and how to allow them (root is not asked)', () => {
    const reason = '"unshare --user --map-root-user --net true" failed (unshare: write failed /proc/self/uid_map: Operation not permitted): …';
    const missing = missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 1000, userns: reason }), {});
    expect(missing).toEqual([
      {
        what: 'user namespaces for this user',
        why: 'the Crossplane harness runs Crossplane, its function and provider in network namespaces an ordinary user makes through a user namespace, so that every port they open stays on loopback',
        install: reason,
      },
    ]);
    // root makes them whatever the kernel allows users
    expect(missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 0, userns: reason }), {})).toEqual([]);
  });

  it('--pods still needs root: said up front with why, the command as root, and that the default needs none; --a9s does not', () => {
    const pods = missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 1000 }), {}, { pods: true });
    expect(pods).toEqual([
      {
        what: 'root (--pods)',
        why: '--pods runs a real node: containerd, kubelet and kube-proxy change the host’s network (a CNI bridge, iptables rules) and cgroups',
        install: 'run it as root (sudo npm run sandbox -- --pods), or leave the flag out: the default sandbox needs no root',
      },
    ]);
    expect(missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 0 }), {}, { pods: true })).toEqual([]);
    expect(missingPrerequisites(machine({ openssl: '', ...NS }, true, [], { uid: 1000 }), {}, { a9s: true })).toEqual([]);
  });

  it('root first, then every other missing piece, before any build', () => {
    const missing = missingPrerequisites(machine({}, false, ['etcd'], { uid: 1000 }), {}, { pods: true });
    expect(missing.map((m) => m.what)).toEqual([
      'root (--pods)',
      'openssl',
      'PostgreSQL server (postgres, initdb under /usr/lib/postgresql/<major>/bin)',
      'ip (iproute2)',
      'unshare and nsenter (util-linux)',
      'Go (the "go" command)',
    ]);
  });

  it('the Go components are what the sandbox runs (Crossplane SANDBOX_CROSSPLANE)', async () => {
    const { SANDBOX_CROSSPLANE } = await import('../../sandbox/sandbox.js');
    expect(SANDBOX_GO_COMPONENTS).toContain(`crossplane-${SANDBOX_CROSSPLANE}`);
  });

  it('names the kubectl to run the lines it prints with: the built one, else how to get it', () => {
    const built = '/cache/realinfra/kubectl-abc/kubectl';
    expect(kubectlNote({ ...machine({ kubectl: '' }, true), builtKubectl: () => built })).toBe(
      `run the kubectl lines with the clusters' release (built by npm run setup): alias kubectl=${built}`,
    );
    expect(kubectlNote(machine({ kubectl: '' }, true))).toMatch(/^the kubectl on PATH may be older than the clusters; npm run setup builds/);
    const none = kubectlNote({ ...machine({}, true), builtKubectl: () => undefined });
    expect(none).toContain('npm run realinfra -- kubectl');
    expect(none).toContain('https://kubernetes.io/docs/tasks/tools/');
  });
});

describe('sandboxA8sDataDir', () => {
  it('gives run folders the servers cannot enter a data folder of their own, also when their base names are equal', async () => {
    const { sandboxA8sDataDir } = await import('../../sandbox/sandbox.js');
    // folders that do not exist: the servers' user cannot enter them, so both fall back to the temporary folder
    const a = sandboxA8sDataDir('/nonexistent-klutch-kit/a/run');
    const b = sandboxA8sDataDir('/nonexistent-klutch-kit/b/run');
    expect(a).not.toBe(b);
    expect([a, b].every((d) => d.includes('klutch-kit-sandbox-a8s-run-'))).toBe(true);
    expect(sandboxA8sDataDir('/nonexistent-klutch-kit/a/run')).toBe(a); // the same run folder, the same data folder
  });
});
