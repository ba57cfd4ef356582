/**
 * What `npm run sandbox` needs on the machine, checked before anything is built or started, so that
 * a fresh machine learns every missing piece at once (with the command that installs it) instead of
 * after the Go builds: openssl (cluster certificates, runtime/realinfra/pki.ts), Debian's PostgreSQL
 * server binaries (the local a8s operator, sandbox/a8s-operator/local-postgres.ts), `ip`, `unshare` and
 * `nsenter` and, for an ordinary user, user namespaces (the Crossplane harness's network namespaces,
 * runtime/realinfra/userns.ts), root for the flag that still needs it (`--pods`) and, while any
 * Go-built binary is not in the cache yet, Go >= 1.26 (runtime/realinfra/build.ts). The default sandbox needs no root.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/** Go-built components the sandbox runs: the clusters, Crossplane 2.3 (SANDBOX_CROSSPLANE) with its function and provider, the Pulumi toolchain. */
export const SANDBOX_GO_COMPONENTS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'crane',
  'function-patch-and-transform',
  'provider-kubernetes',
  'crossplane-2.3',
  'pulumi-cli',
  'pulumi-resource-kubernetes',
] as const;

/** The minimum Go release of the wrapper modules in tools/. */
export const MIN_GO = [1, 26] as const;

/** How the check looks at the machine (injectable for tests). */
export interface PrerequisiteLookup {
  /** The path of an executable command (on PATH, or the path itself), or undefined. */
  which(command: string): string | undefined;
  /** What `<go> version` prints, or undefined when it does not run. */
  goVersion(go: string): string | undefined;
  /** Whether Debian's PostgreSQL server binaries (`/usr/lib/postgresql/<major>/bin/{postgres,initdb}`) are installed. */
  postgres(): boolean;
  /** The components of {@link SANDBOX_GO_COMPONENTS} not in the build cache yet. */
  uncached(): string[];
  /** The kubectl `npm run setup` builds from tools/kube (the clusters' release), when it is in the cache. */
  builtKubectl?(): string | undefined;
  /** This process's user id (0: root). */
  uid(): number;
  /** Why this user may not make a user + network namespace, or undefined when it may (runtime/realinfra/userns.ts). */
  userNamespaceProblem(): string | undefined;
}

/** The sandbox's flags that change what it needs (sandbox/args.ts). */
export interface PrerequisiteFlags {
  /** `--pods`: a real node. */
  readonly pods?: boolean;
  /** `--a9s`: provider-anynines and the a9s broker stand-in. */
  readonly a9s?: boolean;
}

/** One missing prerequisite: what, what for, and how to get it. */
export interface MissingPrerequisite {
  readonly what: string;
  readonly why: string;
  readonly install: string;
}

const APT = (pkg: string) => `apt-get install -y ${pkg}   (Debian/Ubuntu, as root; .ci/apt-packages.txt lists what CI installs)`;

/** Why each flag that needs root needs it (`--a9s` does not: provider-anynines runs in a user's namespace too). */
const ROOT_FOR: Readonly<Partial<Record<keyof PrerequisiteFlags, string>>> = {
  pods: '--pods runs a real node: containerd, kubelet and kube-proxy change the host’s network (a CNI bridge, iptables rules) and cgroups',
};

/** The missing prerequisites, in the order to install them (none: ready). */
export function missingPrerequisites(look: PrerequisiteLookup, env: NodeJS.ProcessEnv = process.env, flags: PrerequisiteFlags = {}): MissingPrerequisite[] {
  const missing: MissingPrerequisite[] = [];
  const root = look.uid() === 0;
  const needRoot = (Object.keys(ROOT_FOR) as (keyof PrerequisiteFlags)[]).filter((f) => flags[f]);
  if (!root && needRoot.length > 0)
    missing.push({
      what: `root (${needRoot.map((f) => `--${f}`).join(', ')})`,
      why: needRoot.map((f) => ROOT_FOR[f]).join('; '),
      install: `run it as root (sudo npm run sandbox -- ${needRoot.map((f) => `--${f}`).join(' ')}), or leave ${needRoot.length > 1 ? 'those flags' : 'the flag'} out: the default sandbox needs no root`,
    });
  if (!look.which('openssl')) missing.push({ what: 'openssl', why: 'makes the clusters’ certificates', install: APT('openssl') });
  if (!look.postgres())
    missing.push({
      what: 'PostgreSQL server (postgres, initdb under /usr/lib/postgresql/<major>/bin)',
      why: 'the local a8s operator runs a real PostgreSQL server per claim',
      install: APT('postgresql'),
    });
  // The Crossplane harness: its processes run in network namespaces of their own (every port they open stays on their
  // loopback); `ip` brings a namespace's loopback up; an ordinary user makes them through a user namespace.
  if (!look.which('ip'))
    missing.push({ what: 'ip (iproute2)', why: 'brings up the loopback of the Crossplane harness’s network namespaces', install: APT('iproute2') });
  const nsTools = ['unshare', 'nsenter'].filter((c) => !look.which(c));
  if (nsTools.length > 0)
    missing.push({
      what: `${nsTools.join(' and ')} (util-linux)`,
      why: 'make and join the Crossplane harness’s network namespaces',
      install: APT('util-linux'),
    });
  else if (!root) {
    const problem = look.userNamespaceProblem();
    if (problem)
      missing.push({
        what: 'user namespaces for this user',
        why: 'the Crossplane harness runs Crossplane, its function and provider in network namespaces an ordinary user makes through a user namespace, so that every port they open stays on loopback',
        install: problem,
      });
  }
  const uncached = look.uncached();
  if (uncached.length > 0) {
    const go = env.KLUTCH_KIT_GO || 'go';
    const found = look.which(go);
    const version = found ? look.goVersion(found) : undefined;
    const m = version ? /go(\d+)\.(\d+)/.exec(version) : null;
    const why = `builds ${uncached.length} binaries not in the cache yet (${uncached.join(', ')}); the first build took 1,227 s on a fresh 2-core machine (measured 2026-11)`;
    const install = 'Go >= 1.26 from https://go.dev/doc/install (Debian’s golang package is older), on PATH or as KLUTCH_KIT_GO=/path/to/go';
    if (!found) missing.push({ what: `Go (the "${go}" command)`, why, install });
    else if (!m || Number(m[1]) < MIN_GO[0] || (Number(m[1]) === MIN_GO[0] && Number(m[2]) < MIN_GO[1]))
      missing.push({ what: `Go >= ${MIN_GO.join('.')} (${found} is ${version?.trim() || 'not runnable'})`, why, install });
  }
  return missing;
}

/**
 * The note above the `kubectl …` lines the sandbox prints: which kubectl to run them with. The one `npm run setup`
 * builds is the clusters' own release; a kubectl on PATH may be much older (Debian's package is 1.20).
 */
export function kubectlNote(look: Pick<PrerequisiteLookup, 'which' | 'builtKubectl'>): string {
  const built = look.builtKubectl?.();
  if (built) return `run the kubectl lines with the clusters' release (built by npm run setup): alias kubectl=${built}`;
  const build = 'npm run setup builds the clusters’ release (or only it: npm run realinfra -- kubectl, about a minute once the clusters are built)';
  if (look.which('kubectl')) return `the kubectl on PATH may be older than the clusters; ${build}`;
  return `no kubectl on PATH for the lines below: ${build}, or install one (>= 1.34, within one minor version of the clusters' 1.35) from https://kubernetes.io/docs/tasks/tools/`;
}

/** The message for missing prerequisites: one block per item. */
export function formatMissing(missing: readonly MissingPrerequisite[]): string {
  return [
    `sandbox: ${missing.length} prerequisite(s) missing; nothing was built or started:`,
    ...missing.map((m) => `  - ${m.what}: ${m.why}\n      install: ${m.install}`),
  ].join('\n');
}

/** The lookup of this machine. */
export async function systemLookup(): Promise<PrerequisiteLookup> {
  const [{ findPostgresBinaries }, { isCached, planComponent }, { isPulumiCached, pathPulumi, planPulumiComponent }, { userNamespaceProblem }] =
    await Promise.all([
      import('./a8s-operator/local-postgres.js'),
      import('../runtime/realinfra/build.js'),
      import('../runtime/realinfra/pulumi-build.js'),
      import('../runtime/realinfra/userns.js'),
    ]);
  const executable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  return {
    which: (command) =>
      command.includes('/')
        ? executable(command)
          ? resolve(command)
          : undefined
        : (process.env.PATH ?? '')
            .split(delimiter)
            .filter(Boolean)
            .map((d) => join(d, command))
            .find(executable),
    goVersion: (go) => {
      try {
        return execFileSync(go, ['version'], { encoding: 'utf8', timeout: 10_000 });
      } catch {
        return undefined;
      }
    },
    postgres: () => {
      try {
        findPostgresBinaries();
        return true;
      } catch {
        return false;
      }
    },
    builtKubectl: () => {
      const plan = planComponent('kubectl');
      return isCached(plan) ? plan.binary : undefined;
    },
    uid: () => (typeof process.getuid === 'function' ? process.getuid() : -1),
    userNamespaceProblem: () => userNamespaceProblem(),
    uncached: () =>
      SANDBOX_GO_COMPONENTS.filter((c) =>
        c === 'pulumi-cli'
          ? !isPulumiCached(planPulumiComponent(c)) && pathPulumi() === undefined // a compatible pulumi on PATH is used instead
          : c === 'pulumi-resource-kubernetes'
            ? !isPulumiCached(planPulumiComponent(c))
            : !isCached(planComponent(c)),
      ),
  };
}
