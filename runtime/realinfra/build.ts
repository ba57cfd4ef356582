// Builds kube-apiserver, kube-controller-manager and etcd — and, for the Crossplane harness, Crossplane core
// (2.3 and 1.20), function-patch-and-transform, provider-kubernetes and crane — from the Go wrapper modules in
// tools/ into a content-addressed cache outside the clone, e.g. ~/.cache/klutch-kit/realinfra/etcd-<sha256>/etcd.
// The cache key of each component is the sha256 of its wrapper module's go.mod + go.sum, the packages,
// the go build flags and the target platform, so editing a wrapper module rebuilds exactly that component.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  KLUTCHIO_SOURCE_FOLDERS,
  type KlutchioPin,
  PROVIDER_ANYNINES_SOURCE,
  PROVIDER_ANYNINES_V2_SOURCE,
  checkKlutchioSource,
  ensureKlutchioSource,
  klutchioSourceDir,
} from './klutchio.js';
import { defaultCacheRoot, withLock } from './_cache.js';
export { KLUTCHIO_SOURCE_FOLDERS, PROVIDER_ANYNINES_SOURCE, PROVIDER_ANYNINES_V2_SOURCE, checkKlutchioSource, klutchioSourceDir } from './klutchio.js';
export { defaultCacheRoot, withLock } from './_cache.js';
import { KUBECTL_TOOL, type PathTool, type ToolLookup, findPathTool, pathToolsEnabled, systemToolLookup } from './path-tools.js';

/** A Kubernetes control-plane binary this package builds from a Go wrapper module under `tools/`. */
export type KubeComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

/**
 * A binary of the harness's real node (`startCluster({ nodes: 1 })`): kubelet, kube-scheduler and kube-proxy
 * from the same wrapper module as kube-apiserver (`tools/kube`), and from `tools/pod` the pause binary of
 * the sandbox image and `pod-probe`, a small static HTTP server/client the node tests run in pods.
 */
export type NodeComponentName = 'kubelet' | 'kube-scheduler' | 'kube-proxy' | 'pause' | 'pod-probe';

/** A Crossplane-harness binary this package builds from a Go wrapper module under `tools/`. */
export type CrossplaneComponentName = 'crossplane-2.3' | 'crossplane-1.20' | 'function-patch-and-transform' | 'provider-kubernetes' | 'crane';

/**
 * A binary built from sources outside the repository: provider-anynines from the klutchio sources, fetched at the
 * pinned commit into the cache or taken from a mirror (klutchio.ts): `provider-anynines` from klutchio's release
 * (cluster-scoped managed resources; mirror `KLUTCH_KIT_KLUTCHIO_SRC`), `provider-anynines-v2` from Klutch's
 * Crossplane v2 branch (namespaced managed resources; mirror `KLUTCH_KIT_KLUTCHIO_V2_SRC`).
 */
export type A9sComponentName = 'provider-anynines' | 'provider-anynines-v2';

/**
 * A client built from the same wrapper module (and so the same Kubernetes release) as kube-apiserver: kubectl,
 * for the `kubectl …` lines the sandbox prints (Debian's kubectl package is far older than the clusters).
 */
export type ClientComponentName = 'kubectl';

/** Dex, the OIDC provider the topology deploys (the seeds' default issuer), built from `tools/dex`; its image: runtime/image/dex.ts. */
export type DexComponentName = 'dex';

/**
 * What Crossplane as pods needs beyond the Crossplane binaries (runtime/realinfra/crossplane-pods.ts): helm, to
 * render Crossplane's chart through CrossplaneInstall's `InstallMethod.helmTemplate()`, and CoreDNS, the node's
 * cluster DNS (the package runtime names a function by its Service's DNS name).
 */
export type PodsComponentName = 'helm' | 'coredns';

/** A binary this package builds from a Go wrapper module under `tools/` (or, for provider-anynines, the klutchio sources). */
export type ComponentName =
  KubeComponentName | ClientComponentName | NodeComponentName | CrossplaneComponentName | A9sComponentName | DexComponentName | PodsComponentName;

/** The Kubernetes control plane (what `ensureBinaries()` builds by default). */
export const COMPONENTS: readonly KubeComponentName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager'];

/** The clients (kubectl; `ensureKubectl()`). */
export const CLIENT_COMPONENTS: readonly ClientComponentName[] = ['kubectl'];

/** The real node's binaries (what `ensureNodeBinaries()` builds). */
export const NODE_COMPONENTS: readonly NodeComponentName[] = ['kubelet', 'kube-scheduler', 'kube-proxy', 'pause', 'pod-probe'];

/** The Crossplane harness's binaries. */
export const CROSSPLANE_COMPONENTS: readonly CrossplaneComponentName[] = [
  'crane',
  'function-patch-and-transform',
  'provider-kubernetes',
  'crossplane-2.3',
  'crossplane-1.20',
];

/** The a9s harness's binaries (built from the klutchio sources, not from a wrapper module). */
export const A9S_COMPONENTS: readonly A9sComponentName[] = ['provider-anynines', 'provider-anynines-v2'];

/** True for the components built from klutchio sources (A9S_COMPONENTS). */
export function isA9sComponent(name: string): name is A9sComponentName {
  return (A9S_COMPONENTS as readonly string[]).includes(name);
}

/** The OIDC provider of the pod topology. */
export const DEX_COMPONENTS: readonly DexComponentName[] = ['dex'];

/** Crossplane as pods (helm for the chart, CoreDNS for the node). */
export const PODS_COMPONENTS: readonly PodsComponentName[] = ['helm', 'coredns'];

/**
 * The Dex release `tools/dex` builds: Dex tags v2.x on a module path without /v2, so the wrapper requires the
 * pseudo-version of the tag's commit; the build stamps the release name (as Dex's Makefile does, `main.version`).
 */
export const DEX_SOURCE = { version: 'v2.45.1', pseudoVersion: 'v0.0.0-20260303133905-11d2eeb52b42' } as const;

/**
 * The function-patch-and-transform release `tools/crossplane/function-patch-and-transform` builds. v0.10.8 changed
 * only go.mod and go.sum against v0.10.7 (dependency updates: grpc, otel, golang.org/x); the Go module proxy serves
 * v0.10.7 and refuses v0.10.8, so the wrapper requires v0.10.7 (`module`) with v0.10.8's dependency versions, which
 * links the same program from the same sources. The harness names it by its release (`version`): the package tag it
 * pushes and reports, the one the constructs' default Function package names.
 */
export const PATCH_AND_TRANSFORM_SOURCE = { version: 'v0.10.8', module: 'v0.10.7' } as const;

/** Every component `npm run realinfra` builds, in build order. */
export const ALL_COMPONENTS: readonly ComponentName[] = [
  ...COMPONENTS,
  ...CLIENT_COMPONENTS,
  ...NODE_COMPONENTS,
  ...CROSSPLANE_COMPONENTS,
  ...DEX_COMPONENTS,
  ...PODS_COMPONENTS,
  ...A9S_COMPONENTS,
];

/**
 * What only the late suites need (the real node's binaries, Crossplane 1.20, Dex, helm and CoreDNS,
 * provider-anynines): `npm run realinfra -- --late` builds them, and CI runs that in the background while the
 * other suites run (`npm run test:integration` runs the late suites once they are built; scripts/_lanes.ts).
 */
export const LATE_COMPONENTS: readonly ComponentName[] = [...NODE_COMPONENTS, 'crossplane-1.20', ...DEX_COMPONENTS, ...PODS_COMPONENTS, ...A9S_COMPONENTS];

/**
 * What the suites that run Crossplane 2.3 need beyond the early components: `npm run realinfra -- --mid` builds them,
 * and CI runs that in the background from the start (`npm run test:integration` runs those suites once they are built).
 */
export const MID_COMPONENTS: readonly ComponentName[] = ['function-patch-and-transform', 'provider-kubernetes', 'crossplane-2.3'];

/** Everything else: what every integration suite may need (`npm run realinfra -- --early`): the Kubernetes control plane, kubectl, crane. */
export const EARLY_COMPONENTS: readonly ComponentName[] = ALL_COMPONENTS.filter((c) => !LATE_COMPONENTS.includes(c) && !MID_COMPONENTS.includes(c));

/**
 * The environment variable through which `npm run test:integration` tells a jest run which components (and Pulumi
 * components) are built for a later stage of the run: a suite that asks for one fails at once, naming the tag it
 * lacks, instead of waiting for the build inside a jest hook (scripts/_lanes.ts).
 */
export const BUILDS_LATER_ENV = 'KLUTCH_KIT_BUILDS_LATER';

/** Throws when `name` is listed in {@link BUILDS_LATER_ENV}: this stage of test:integration must not ask for it. */
export function assertNotBuiltLater(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const later = (env[BUILDS_LATER_ENV] ?? '').split(',').filter(Boolean);
  if (!later.includes(name)) return;
  throw new Error(
    `realinfra: ${name} is built for a later stage of npm run test:integration (${BUILDS_LATER_ENV}), so a suite of this stage must not ask for it: ` +
      `mark the suite with a "// @realinfra crossplane" comment (Crossplane 2.3, function-patch-and-transform, provider-kubernetes) or ` +
      `"// @realinfra late" (the real node, Crossplane 1.20, Dex, helm, CoreDNS, provider-anynines) or "// @realinfra pulumi" (the Pulumi toolchain), and the lane runs it once ${name} is built (scripts/_lanes.ts suiteStage)`,
  );
}

/** The klutchio sources each a9s component is built from. */
export const KLUTCHIO_PINS: Readonly<Record<A9sComponentName, KlutchioPin>> = {
  'provider-anynines': PROVIDER_ANYNINES_SOURCE,
  'provider-anynines-v2': PROVIDER_ANYNINES_V2_SOURCE,
};

/** sha256 over every file (relative path + content) of the klutchio source folders, in path order. */
function hashKlutchioSource(dir: string, hash: ReturnType<typeof createHash>): void {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  for (const f of KLUTCHIO_SOURCE_FOLDERS) walk(path.join(dir, f));
  for (const f of files) hash.update(path.relative(dir, f)).update('\0').update(fs.readFileSync(f)).update('\0');
}

const goVersions = new Map<string, string>();
/** `go env GOVERSION` of the go command (part of provider-anynines' cache key: its go.sum does not pin the toolchain). */
function goVersion(goBinary: string): string {
  let v = goVersions.get(goBinary);
  if (v === undefined) {
    try {
      v = execFileSync(goBinary, ['env', 'GOVERSION'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' }, timeout: 30_000 }).trim();
    } catch {
      v = 'go-not-found'; // the build then fails with the usual "go command not found" message
    }
    goVersions.set(goBinary, v);
  }
  return v;
}

/** Paths of the built binaries. */
export interface RealInfraBinaries {
  readonly etcd: string;
  readonly kubeApiServer: string;
  readonly kubeControllerManager: string;
}

export interface EnsureBinariesOptions {
  /**
   * Cache root. The binaries go to `<cacheRoot>/realinfra/<component>-<key>/`.
   * @default $KLUTCH_KIT_CACHE, else $XDG_CACHE_HOME/klutch-kit, else ~/.cache/klutch-kit
   */
  readonly cacheRoot?: string;
  /**
   * Folder that holds the wrapper modules (`kube/`, `etcd/`).
   * @default the `tools/` folder of this package
   */
  readonly toolsDir?: string;
  /** Progress lines (start / end / heartbeat of each build). @default no output */
  readonly log?: (line: string) => void;
  /** Components to ensure. @default the three of the Kubernetes control plane */
  readonly components?: readonly KubeComponentName[];
  /** The go command. @default $KLUTCH_KIT_GO, else `go` from PATH */
  readonly goBinary?: string;
  /** Seconds between "still building" progress lines. @default 30 */
  readonly heartbeatSeconds?: number;
  /** The klutchio sources (provider-anynines and provider-anynines-v2 only). @default ensureKlutchioSource() of klutchio.ts with the component's pin (fetched into the cache, or the mirror of its variable) */
  readonly klutchioDir?: string;
}

interface ComponentSpec {
  readonly name: ComponentName;
  /** The wrapper module's folder, relative to `tools/`. */
  readonly module: string;
  readonly pkg: string;
  /** The upstream module whose source (package metadata, CRDs) the harness reads, with its go.mod path. */
  readonly upstream?: string;
  /** -ldflags, derived from the pinned version in go.mod. */
  ldflags(goMod: string): string;
  /** The release the module version in go.mod builds, when they differ. @default the module version */
  release?(moduleVersion: string): string;
}

const KUBE_VERSION_PKGS = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'];

function kubeLdflags(goMod: string): string {
  const v = requiredVersion(goMod, 'k8s.io/kubernetes', 'tools/kube/go.mod');
  const m = /^v(\d+)\.(\d+)\.\d+/.exec(v);
  if (!m) throw new Error(`tools/kube/go.mod: k8s.io/kubernetes version "${v}" is not a release version vMAJOR.MINOR.PATCH`);
  const stamp = KUBE_VERSION_PKGS.flatMap((p) => [
    `-X ${p}.gitVersion=${v}`,
    `-X ${p}.gitMajor=${m[1]}`,
    `-X ${p}.gitMinor=${m[2]}`,
    `-X ${p}.gitTreeState=clean`,
  ]);
  return ['-s', '-w', ...stamp].join(' ');
}

/** `-s -w -X <variable>=<version of upstream in the wrapper's go.mod>`. */
function stampVersion(upstream: string, variable: string, file: string): (goMod: string) => string {
  return (goMod) => `-s -w -X ${variable}=${requiredVersion(goMod, upstream, file)}`;
}

const XP2 = 'github.com/crossplane/crossplane/v2';
const XP1 = 'github.com/crossplane/crossplane';
const PAT = 'github.com/crossplane-contrib/function-patch-and-transform';
const PK = 'github.com/crossplane-contrib/provider-kubernetes';
const GGCR = 'github.com/google/go-containerregistry';

const SPECS: Record<ComponentName, ComponentSpec> = {
  etcd: {
    name: 'etcd',
    module: 'etcd',
    pkg: 'go.etcd.io/etcd/server/v3',
    ldflags(goMod) {
      // etcd's version.Version is already the release string; stamp GitSHA (otherwise "Not provided").
      const v = requiredVersion(goMod, 'go.etcd.io/etcd/server/v3', 'tools/etcd/go.mod');
      return `-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-${v}`;
    },
  },
  'kube-apiserver': { name: 'kube-apiserver', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kube-apiserver', ldflags: kubeLdflags },
  'kube-controller-manager': {
    name: 'kube-controller-manager',
    module: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    ldflags: kubeLdflags,
  },
  kubectl: { name: 'kubectl', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kubectl', ldflags: kubeLdflags },
  kubelet: { name: 'kubelet', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kubelet', ldflags: kubeLdflags },
  'kube-scheduler': { name: 'kube-scheduler', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kube-scheduler', ldflags: kubeLdflags },
  'kube-proxy': { name: 'kube-proxy', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kube-proxy', ldflags: kubeLdflags },
  pause: { name: 'pause', module: 'pod', pkg: 'klutch-kit.invalid/tools/pod/pause', ldflags: () => '-s -w' },
  'pod-probe': { name: 'pod-probe', module: 'pod', pkg: 'klutch-kit.invalid/tools/pod/probe', ldflags: () => '-s -w' },
  // Crossplane checks package version constraints against its own version: an unstamped binary is "".
  'crossplane-2.3': {
    name: 'crossplane-2.3',
    module: 'crossplane/core-v2',
    pkg: `${XP2}/cmd/crossplane`,
    upstream: XP2,
    ldflags: stampVersion(XP2, 'github.com/crossplane/crossplane-runtime/v2/pkg/version.version', 'tools/crossplane/core-v2/go.mod'),
  },
  'crossplane-1.20': {
    name: 'crossplane-1.20',
    module: 'crossplane/core-v1',
    pkg: `${XP1}/cmd/crossplane`,
    upstream: XP1,
    ldflags: stampVersion(XP1, `${XP1}/internal/version.version`, 'tools/crossplane/core-v1/go.mod'),
  },
  'function-patch-and-transform': {
    name: 'function-patch-and-transform',
    module: 'crossplane/function-patch-and-transform',
    pkg: PAT,
    upstream: PAT,
    ldflags: () => '-s -w',
    release(v) {
      if (v !== PATCH_AND_TRANSFORM_SOURCE.module) {
        throw new Error(
          `tools/crossplane/function-patch-and-transform/go.mod: ${PAT} is ${v}, expected ${PATCH_AND_TRANSFORM_SOURCE.module} ` +
            `(release ${PATCH_AND_TRANSFORM_SOURCE.version}); update PATCH_AND_TRANSFORM_SOURCE with the module`,
        );
      }
      return PATCH_AND_TRANSFORM_SOURCE.version;
    },
  },
  'provider-kubernetes': {
    name: 'provider-kubernetes',
    module: 'crossplane/provider-kubernetes',
    pkg: `${PK}/cmd/provider`,
    upstream: PK,
    ldflags: stampVersion(PK, `${PK}/internal/version.Version`, 'tools/crossplane/provider-kubernetes/go.mod'),
  },
  // Not a wrapper module: built in the klutchio source folder itself (module.replace needs ../clients).
  'provider-anynines': {
    name: 'provider-anynines',
    module: '',
    pkg: './cmd/provider',
    ldflags: () => '-s -w',
  },
  'provider-anynines-v2': {
    name: 'provider-anynines-v2',
    module: '',
    pkg: './cmd/provider',
    ldflags: () => '-s -w',
  },
  dex: {
    name: 'dex',
    module: 'dex',
    pkg: 'github.com/dexidp/dex/cmd/dex',
    upstream: 'github.com/dexidp/dex',
    ldflags(goMod) {
      const v = requiredVersion(goMod, 'github.com/dexidp/dex', 'tools/dex/go.mod');
      if (v !== DEX_SOURCE.pseudoVersion) {
        throw new Error(
          `tools/dex/go.mod: github.com/dexidp/dex is ${v}, expected ${DEX_SOURCE.pseudoVersion} (Dex ${DEX_SOURCE.version}); update DEX_SOURCE with the module`,
        );
      }
      return `-s -w -X main.version=${DEX_SOURCE.version}`;
    },
  },
  // Built from the Pulumi Kubernetes provider's wrapper module, which links the same helm release: one build list,
  // so helm and the provider share every compiled package they have in common (tools/pulumi/kubernetes/tools.go).
  helm: {
    name: 'helm',
    module: 'pulumi/kubernetes',
    pkg: 'helm.sh/helm/v3/cmd/helm',
    upstream: 'helm.sh/helm/v3',
    ldflags: stampVersion('helm.sh/helm/v3', 'helm.sh/helm/v3/internal/version.version', 'tools/pulumi/kubernetes/go.mod'),
  },
  coredns: {
    name: 'coredns',
    module: 'coredns',
    pkg: 'klutch-kit.invalid/tools/coredns',
    upstream: 'github.com/coredns/coredns',
    ldflags: () => '-s -w',
  },
  crane: {
    name: 'crane',
    module: 'crane',
    pkg: `${GGCR}/cmd/crane`,
    upstream: GGCR,
    ldflags: stampVersion(GGCR, `${GGCR}/cmd/crane/cmd.Version`, 'tools/crane/go.mod'),
  },
};

/** The version a go.mod requires for `modulePath`, e.g. "v1.35.8". */
export function requiredVersion(goMod: string, modulePath: string, file = 'go.mod'): string {
  const esc = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = new RegExp(`^\\s*(?:require\\s+)?${esc}\\s+(v[^\\s]+)`, 'm').exec(goMod);
  if (!m) throw new Error(`${file}: no requirement on ${modulePath} found; the wrapper module must require it`);
  return m[1]!;
}

/** The `tools/` folder of this package (found by walking up from this file, so it works from lib/ too). */
export function defaultToolsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'tools', 'kube', 'go.mod')) && fs.existsSync(path.join(dir, 'package.json'))) {
      return path.join(dir, 'tools');
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`realinfra: cannot find tools/kube/go.mod above ${fileURLToPath(import.meta.url)}; pass toolsDir to ensureBinaries()`);
    }
    dir = parent;
  }
}

/** Where a component is (or will be) cached, and the key that names that folder. */
export interface ComponentPlan {
  readonly name: ComponentName;
  readonly moduleDir: string;
  readonly pkg: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly key: string;
  readonly dir: string;
  readonly binary: string;
}

const BUILD_ENV = { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' } as const;

/**
 * The `go build` flags every Go build of the harness shares (before `-ldflags`): no VCS stamp, no local paths, and no
 * DWARF from the compiler (`-gcflags=all=-dwarf=false`). Every binary is linked with `-s -w`, which drops DWARF at
 * link time, but the compiler still writes it for every package unless told not to: skipping it cut the CPU of a
 * cold crane build by 10 % (72.7 → 65.2 s), with the same binary behaviour.
 */
export const GO_BUILD_FLAGS: readonly string[] = ['-buildvcs=false', '-trimpath', '-gcflags=all=-dwarf=false'];

/**
 * The Go garbage collector's settings for a build's compilers: `GOGC=off` with a `GOMEMLIMIT`, i.e. a compiler collects
 * only when its heap nears the limit. Most packages never get there, so their compile does no GC work at all; the few
 * huge ones (Kubernetes' generated OpenAPI and API types) collect as usual near the limit. Measured on cold builds
 * (empty GOCACHE, modules downloaded, 2026-11-29): etcd 84.9 → 69.6 s CPU (user+sys, mean of two runs each, −18 %);
 * kube-apiserver + kube-controller-manager 509 s user (docs/realinfra.md) → 365 s user; the largest compile process
 * peaked at 1.7 GB. `GOGC=400` saved only 12 % on etcd. The limit is an eighth of the machine's memory, between
 * 512 MiB and 3 GiB, so a small machine collects earlier instead of running out of memory.
 *
 * Not part of any cache key: the settings change how much the compiler collects, never its output. A `GOGC` or
 * `GOMEMLIMIT` already in the environment wins (both are left as they are).
 */
export function goBuildGcEnv(env: NodeJS.ProcessEnv = process.env, totalMemoryBytes: number = os.totalmem()): Record<string, string> {
  if (env['GOGC'] !== undefined || env['GOMEMLIMIT'] !== undefined) return {};
  const MiB = 1024 * 1024;
  const limit = Math.min(3072, Math.max(512, Math.floor(totalMemoryBytes / 8 / MiB)));
  return { GOGC: 'off', GOMEMLIMIT: `${limit}MiB` };
}

/** Computes cache keys and paths without building anything. */
export function planComponent(
  name: ComponentName,
  opts: { cacheRoot?: string; toolsDir?: string; klutchioDir?: string; goBinary?: string } = {},
): ComponentPlan {
  const spec = SPECS[name];
  if (!spec) throw new Error(`realinfra: unknown component "${String(name)}"; expected one of ${ALL_COMPONENTS.join(', ')}`);
  if (isA9sComponent(name)) return planKlutchioComponent(name, opts);
  const toolsDir = opts.toolsDir ?? defaultToolsDir();
  const moduleDir = path.join(toolsDir, spec.module);
  const goModPath = path.join(moduleDir, 'go.mod');
  const goSumPath = path.join(moduleDir, 'go.sum');
  for (const f of [goModPath, goSumPath]) {
    if (!fs.existsSync(f)) throw new Error(`realinfra: ${name}: ${f} is missing; the wrapper module must have a committed go.mod and go.sum`);
  }
  const goMod = fs.readFileSync(goModPath, 'utf8');
  const goSum = fs.readFileSync(goSumPath, 'utf8');
  const binary = name;
  const args = ['build', ...GO_BUILD_FLAGS, '-ldflags', spec.ldflags(goMod), '-o', binary, spec.pkg];
  const hash = createHash('sha256');
  for (const part of ['klutch-kit-realinfra-v1', name, goMod, goSum, JSON.stringify(args), JSON.stringify(BUILD_ENV), `${process.platform}/${process.arch}`]) {
    hash.update(part).update('\0');
  }
  const key = hash.digest('hex');
  const dir = path.join(opts.cacheRoot ?? defaultCacheRoot(), 'realinfra', `${name}-${key}`);
  return { name, moduleDir, pkg: spec.pkg, args, env: BUILD_ENV, key, dir, binary: path.join(dir, binary) };
}

/**
 * provider-anynines (either pin): `go build ./cmd/provider` in `<klutchio>/provider-anynines` (read-only is fine: the
 * binary goes to the cache). Key: every file of the three source folders, the go version, the flags.
 */
function planKlutchioComponent(
  name: A9sComponentName,
  opts: { cacheRoot?: string; toolsDir?: string; klutchioDir?: string; goBinary?: string },
): ComponentPlan {
  const pin = KLUTCHIO_PINS[name];
  const src = opts.klutchioDir ?? klutchioSourceDir({ cacheRoot: opts.cacheRoot, pin });
  checkKlutchioSource(src, pin);
  const spec = SPECS[name];
  const args = ['build', ...GO_BUILD_FLAGS, '-ldflags', spec.ldflags(''), '-o', name, spec.pkg];
  const hash = createHash('sha256');
  for (const part of [
    'klutch-kit-realinfra-v1',
    name,
    goVersion(opts.goBinary ?? process.env['KLUTCH_KIT_GO'] ?? 'go'),
    JSON.stringify(args),
    JSON.stringify(BUILD_ENV),
    `${process.platform}/${process.arch}`,
  ]) {
    hash.update(part).update('\0');
  }
  hashKlutchioSource(src, hash);
  const key = hash.digest('hex');
  const dir = path.join(opts.cacheRoot ?? defaultCacheRoot(), 'realinfra', `${name}-${key}`);
  return { name, moduleDir: path.join(src, 'provider-anynines'), pkg: spec.pkg, args, env: BUILD_ENV, key, dir, binary: path.join(dir, name) };
}

/** True when the component's binary is complete in the cache. */
export function isCached(plan: ComponentPlan): boolean {
  return fs.existsSync(path.join(plan.dir, '.complete')) && fs.existsSync(plan.binary);
}

/** Thrown when `go build` of a component fails; names the component and carries go's output tail. */
export class RealInfraBuildError extends Error {
  constructor(
    readonly component: ComponentName,
    readonly exitCode: number | null,
    readonly outputTail: string,
    detail: string,
  ) {
    super(`realinfra: building ${component} failed (${detail}).\n--- last lines of go build output ---\n${outputTail}`);
    this.name = 'RealInfraBuildError';
  }
}

function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function tailLines(text: string, n: number): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  return lines.slice(-n).join('\n');
}

/**
 * Completes a build made in the temporary folder `tmp`: writes `build.json` (the given record) and the
 * `.complete` marker, then moves `tmp` to `dir` (replacing any incomplete `dir`). Call under withLock.
 * Shared with pulumi-build.ts.
 */
export function publishBuildDir(tmp: string, dir: string, record: Record<string, unknown>): void {
  fs.writeFileSync(path.join(tmp, 'build.json'), JSON.stringify(record, null, 2));
  fs.writeFileSync(path.join(tmp, '.complete'), '');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
}

/**
 * `sh` arguments that run `go <args>` and then print, with `times`, the CPU time of go and its compilers: a figure
 * that, unlike the wall time, does not depend on what else the machine runs. Exit 127: go not found.
 */
export function goWithCpuTimes(goBinary: string, args: readonly string[]): string[] {
  return ['-c', 'command -v "$0" >/dev/null 2>&1 || exit 127; "$0" "$@"; s=$?; times; exit $s', goBinary, ...args];
}

/** The children's CPU seconds from the `times` line that ends the output of {@link goWithCpuTimes}, if there. */
export function cpuSecondsOf(output: string): number | undefined {
  // `times` prints the shell's and then its children's user/system time, e.g. "12m3.400s 1m2.300s".
  const t = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(output);
  return t ? Number(t[1]) * 60 + Number(t[2]) + Number(t[3]) * 60 + Number(t[4]) : undefined;
}

async function runGoBuild(
  plan: ComponentPlan,
  outDir: string,
  goBinary: string,
  log: (l: string) => void,
  heartbeatSeconds: number,
  cpu: { seconds?: number } = {},
): Promise<void> {
  const started = Date.now();
  let output = '';
  const child = spawn('sh', goWithCpuTimes(goBinary, plan.args), {
    cwd: plan.moduleDir,
    env: { ...process.env, ...goBuildGcEnv(), ...plan.env, GOBIN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // `-o <name>` is relative to cwd; point it into outDir instead.
  const onData = (b: Buffer) => {
    output += b.toString('utf8');
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setInterval(() => log(`${plan.name}: still building (${fmtSeconds(Date.now() - started)} elapsed)`), heartbeatSeconds * 1000);
  timer.unref();
  try {
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') {
          reject(
            new RealInfraBuildError(
              plan.name,
              null,
              '',
              `the go command "${goBinary}" was not found. Install Go >= 1.26 (needed only for the real-cluster ` +
                `test suites) or set KLUTCH_KIT_GO to its path`,
            ),
          );
        } else reject(e);
      });
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
    if (result.code === 127 && output.trim() === '') {
      throw new RealInfraBuildError(
        plan.name,
        null,
        '',
        `the go command "${goBinary}" was not found. Install Go >= 1.26 (needed only for the real-cluster ` + `test suites) or set KLUTCH_KIT_GO to its path`,
      );
    }
    cpu.seconds = cpuSecondsOf(output);
    if (result.code !== 0) {
      throw new RealInfraBuildError(
        plan.name,
        result.code,
        tailLines(output, 40),
        `go ${plan.args.slice(0, 1).join(' ')} ${plan.pkg} in ${plan.moduleDir} exited with ${result.code ?? `signal ${result.signal}`}`,
      );
    }
    const produced = path.join(outDir, plan.name);
    if (!fs.existsSync(produced)) {
      throw new RealInfraBuildError(plan.name, 0, tailLines(output, 40), `go build succeeded but ${produced} does not exist`);
    }
  } finally {
    clearInterval(timer);
  }
}

/**
 * Makes sure one component is built and cached; returns the binary's path.
 * A warm cache costs two stat calls.
 */
export async function ensureComponent(name: ComponentName, opts: EnsureBinariesOptions = {}): Promise<string> {
  const log = opts.log ?? (() => {});
  assertNotBuiltLater(name);
  if (isA9sComponent(name) && opts.klutchioDir === undefined)
    opts = { ...opts, klutchioDir: await ensureKlutchioSource({ cacheRoot: opts.cacheRoot, log, pin: KLUTCHIO_PINS[name] }) };
  const plan = planComponent(name, opts);
  if (isCached(plan)) return plan.binary;
  return withLock(`${plan.dir}.lock`, log, name, async () => {
    if (isCached(plan)) {
      log(`${name}: built by another process → ${plan.binary}`);
      return plan.binary;
    }
    // Under the lock nobody else builds this component: any temporary folder of it is from a build that died.
    const parent = path.dirname(plan.dir);
    for (const f of fs.readdirSync(parent)) {
      if (f.startsWith(`${path.basename(plan.dir)}.tmp-`)) fs.rmSync(path.join(parent, f), { recursive: true, force: true });
    }
    const tmp = `${plan.dir}.tmp-${process.pid}`;
    fs.mkdirSync(tmp, { recursive: true });
    const cpu: { seconds?: number } = {};
    const args = plan.args.map((a, i) => (plan.args[i - 1] === '-o' ? path.join(tmp, a) : a));
    const started = Date.now();
    log(`${name}: building ${plan.pkg} (module ${path.relative(process.cwd(), plan.moduleDir) || plan.moduleDir}) …`);
    try {
      await runGoBuild({ ...plan, args }, tmp, opts.goBinary ?? process.env['KLUTCH_KIT_GO'] ?? 'go', log, opts.heartbeatSeconds ?? 30, cpu);
      publishBuildDir(tmp, plan.dir, {
        component: name,
        pkg: plan.pkg,
        args: plan.args,
        env: plan.env,
        key: plan.key,
        builtAt: new Date().toISOString(),
        seconds: (Date.now() - started) / 1000,
        cpuSeconds: cpu.seconds,
      });
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      log(`${name}: FAILED after ${fmtSeconds(Date.now() - started)}`);
      throw e;
    }
    log(`${name}: built in ${fmtSeconds(Date.now() - started)}${cpu.seconds !== undefined ? ` (${fmtSeconds(cpu.seconds * 1000)} CPU)` : ''} → ${plan.binary}`);
    return plan.binary;
  });
}

/**
 * Builds (or finds in the cache) etcd, kube-apiserver and kube-controller-manager.
 * Cold: a Go build of each (minutes). Warm: returns in milliseconds.
 */
export async function ensureBinaries(opts: EnsureBinariesOptions = {}): Promise<RealInfraBinaries> {
  const wanted = opts.components ?? COMPONENTS;
  const out: Partial<Record<ComponentName, string>> = {};
  // Sequential on purpose: go build already uses every core, and the kube components share most packages.
  for (const name of COMPONENTS) {
    if (!wanted.includes(name)) continue;
    out[name] = await ensureComponent(name, opts);
  }
  return {
    etcd: out.etcd ?? planComponent('etcd', opts).binary,
    kubeApiServer: out['kube-apiserver'] ?? planComponent('kube-apiserver', opts).binary,
    kubeControllerManager: out['kube-controller-manager'] ?? planComponent('kube-controller-manager', opts).binary,
  };
}

/** Builds (or finds in the cache) kubectl of the clusters' Kubernetes release (`tools/kube`); returns its path. */
export async function ensureKubectl(opts: Omit<EnsureBinariesOptions, 'components'> = {}): Promise<string> {
  return ensureComponent('kubectl', opts);
}

/** The Kubernetes release of the clusters (and of the kubectl built with them): `k8s.io/kubernetes` in tools/kube/go.mod. */
export function kubeRelease(toolsDir?: string): string {
  return requiredVersion(fs.readFileSync(path.join(toolsDir ?? defaultToolsDir(), 'kube', 'go.mod'), 'utf8'), 'k8s.io/kubernetes', 'tools/kube/go.mod');
}

/** How {@link pathKubectl} and {@link resolveKubectl} look at PATH. */
export interface PathToolOptions {
  /** Use a compatible kubectl on PATH. @default true unless KLUTCH_KIT_USE_PATH_TOOLS=0 */
  readonly pathTools?: boolean;
  /** @default systemToolLookup() of ./path-tools.ts */
  readonly lookup?: ToolLookup;
}

/**
 * A kubectl on PATH within one minor release of the clusters' (path-tools.ts `KUBECTL_TOOL`), when the lookup is on,
 * else undefined; says which through `opts.log`. No build.
 */
export function pathKubectl(opts: PathToolOptions & { toolsDir?: string; log?: (line: string) => void } = {}): PathTool | undefined {
  if (!(opts.pathTools ?? pathToolsEnabled())) return undefined;
  return findPathTool(KUBECTL_TOOL, kubeRelease(opts.toolsDir), opts.lookup ?? systemToolLookup(), opts.log ?? (() => {}));
}

/**
 * The kubectl to run against the clusters: a compatible one on PATH ({@link pathKubectl}), else the clusters' own
 * release, built on a cold cache ({@link ensureKubectl}). `ensureKubectl()` always gives the pinned release.
 */
export async function resolveKubectl(
  opts: Omit<EnsureBinariesOptions, 'components'> & PathToolOptions = {},
): Promise<{ readonly path: string; readonly version: string; readonly from: 'path' | 'built' }> {
  const found = pathKubectl(opts);
  if (found) return { ...found, from: 'path' };
  return { path: await ensureKubectl(opts), version: kubeRelease(opts.toolsDir), from: 'built' };
}

/** Paths of the real node's binaries. */
export interface NodeBinaries {
  readonly kubelet: string;
  readonly kubeScheduler: string;
  readonly kubeProxy: string;
  /** The sandbox image's only file. */
  readonly pause: string;
  /** The test workload's only file (`pod-probe serve|get|kube|sleep`). */
  readonly podProbe: string;
}

/** Builds (or finds in the cache) kubelet, kube-scheduler, kube-proxy, pause and pod-probe. */
export async function ensureNodeBinaries(opts: Omit<EnsureBinariesOptions, 'components'> = {}): Promise<NodeBinaries> {
  const out: Partial<Record<NodeComponentName, string>> = {};
  // Sequential on purpose, as ensureBinaries(): kubelet first, the others then reuse most of its packages.
  for (const name of NODE_COMPONENTS) out[name] = await ensureComponent(name, opts);
  return { kubelet: out.kubelet!, kubeScheduler: out['kube-scheduler']!, kubeProxy: out['kube-proxy']!, pause: out.pause!, podProbe: out['pod-probe']! };
}

/** Paths of what Crossplane as pods needs beyond the Crossplane binaries. */
export interface PodsBinaries {
  readonly helm: string;
  readonly coredns: string;
}

/** Builds (or finds in the cache) helm (from `tools/pulumi/kubernetes`) and CoreDNS (`tools/coredns`). */
export async function ensurePodsBinaries(opts: Omit<EnsureBinariesOptions, 'components'> = {}): Promise<PodsBinaries> {
  const helm = await ensureComponent('helm', opts);
  const coredns = await ensureComponent('coredns', opts);
  return { helm, coredns };
}

/** Builds (or finds in the cache) Dex (`tools/dex`); returns the binary's path. */
export async function ensureDexBinary(opts: Omit<EnsureBinariesOptions, 'components'> = {}): Promise<string> {
  return ensureComponent('dex', opts);
}

/** A Crossplane core release line the harness can run. */
export type CrossplaneVersion = '2.3' | '1.20';

export const CROSSPLANE_VERSIONS: readonly CrossplaneVersion[] = ['2.3', '1.20'];

/** Paths of the Crossplane harness's binaries. */
export interface CrossplaneBinaries {
  /** Crossplane core of the requested release line. */
  readonly crossplane: string;
  readonly functionPatchAndTransform: string;
  readonly providerKubernetes: string;
  readonly crane: string;
}

/** Builds (or finds in the cache) Crossplane core `version`, function-patch-and-transform, provider-kubernetes and crane. */
export async function ensureCrossplaneBinaries(version: CrossplaneVersion, opts: Omit<EnsureBinariesOptions, 'components'> = {}): Promise<CrossplaneBinaries> {
  if (!CROSSPLANE_VERSIONS.includes(version)) {
    throw new Error(`realinfra: crossplane version "${String(version)}" is not supported; expected one of ${CROSSPLANE_VERSIONS.join(', ')}`);
  }
  const crane = await ensureComponent('crane', opts);
  const fn = await ensureComponent('function-patch-and-transform', opts);
  const provider = await ensureComponent('provider-kubernetes', opts);
  const core = await ensureComponent(`crossplane-${version}`, opts);
  return { crossplane: core, functionPatchAndTransform: fn, providerKubernetes: provider, crane };
}

/** The upstream module a component is built from and the folder of its source in the Go module cache. */
export interface UpstreamSource {
  readonly module: string;
  /** The release the wrapper builds (for function-patch-and-transform see PATCH_AND_TRANSFORM_SOURCE). */
  readonly version: string;
  /** Read-only folder in GOMODCACHE, e.g. `…/github.com/crossplane/crossplane/v2@v2.3.4`. */
  readonly dir: string;
}

const sourceCache = new Map<string, UpstreamSource>();

/**
 * Where the source of a component's upstream module is (package metadata such as `package/crossplane.yaml`,
 * Crossplane's `cluster/crds`): `go mod download -json` in the wrapper module, verified against its go.sum.
 */
export async function upstreamSource(name: ComponentName, opts: { toolsDir?: string; goBinary?: string } = {}): Promise<UpstreamSource> {
  const spec = SPECS[name];
  if (!spec?.upstream) throw new Error(`realinfra: component "${String(name)}" has no upstream module source`);
  const moduleDir = path.join(opts.toolsDir ?? defaultToolsDir(), spec.module);
  const moduleVersion = requiredVersion(fs.readFileSync(path.join(moduleDir, 'go.mod'), 'utf8'), spec.upstream, `${moduleDir}/go.mod`);
  const version = spec.release?.(moduleVersion) ?? moduleVersion;
  const id = `${spec.upstream}@${moduleVersion}`;
  const hit = sourceCache.get(id);
  if (hit && fs.existsSync(hit.dir)) return hit;
  const goBinary = opts.goBinary ?? process.env['KLUTCH_KIT_GO'] ?? 'go';
  const out = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(goBinary, ['mod', 'download', '-json', id], {
      cwd: moduleDir,
      env: { ...process.env, ...BUILD_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', (e) => reject(new Error(`realinfra: ${name}: cannot run "${goBinary} mod download": ${e.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`realinfra: ${name}: go mod download ${id} exited with ${code}\n${tailLines(stdout + stderr, 20)}`)),
    );
  });
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir || info.Error) throw new Error(`realinfra: ${name}: go mod download ${id}: ${info.Error ?? 'no Dir in the output'}`);
  const src = { module: spec.upstream, version, dir: info.Dir };
  sourceCache.set(id, src);
  return src;
}
