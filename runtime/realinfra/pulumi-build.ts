// Builds the Pulumi toolchain used by the real `pulumi up` suites from the Go wrapper modules in
// tools/pulumi/, into the same content-addressed cache as the kube binaries (see ./build.ts):
//
//   <cache>/realinfra/pulumi-cli-<sha256>/bin/{pulumi, pulumi-language-nodejs}
//   <cache>/realinfra/pulumi-resource-kubernetes-<sha256>/bin/pulumi-resource-kubernetes
//
// - tools/pulumi/cli: the Pulumi CLI (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi at v3.248.0, the version of
//   the @pulumi/pulumi npm SDK) and klutch-kit's own Node.js language host (tools/pulumi/cli/pulumi-language-nodejs;
//   upstream's host module is not served by the module proxy, see docs/pulumi.md).
// - tools/pulumi/kubernetes: pulumi-resource-kubernetes from github.com/pulumi/pulumi-kubernetes/provider/v4 with
//   our own main.go. Upstream's main go:embeds files that `go generate` produces and that are not in the module
//   zip, so the build copies the module's schema.json (with "version" set) and terraform-mapping.json into a
//   temporary copy of the wrapper module and builds there.
//
// The cache key of each component is the sha256 of its wrapper module's go.mod, go.sum and .go files, the build
// arguments, the environment and the platform. Warm: a few stat calls.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  GO_BUILD_FLAGS,
  assertNotBuiltLater,
  cpuSecondsOf,
  goBuildGcEnv,
  goWithCpuTimes,
  defaultCacheRoot,
  defaultToolsDir,
  publishBuildDir,
  requiredVersion,
  withLock,
} from './build.js';
import { type PathPulumi, type ToolLookup, findPathPulumi, pathToolsEnabled, systemToolLookup } from './path-tools.js';

export type PulumiComponentName = 'pulumi-cli' | 'pulumi-resource-kubernetes';
export const PULUMI_COMPONENTS: readonly PulumiComponentName[] = ['pulumi-cli', 'pulumi-resource-kubernetes'];

/** Paths of the built Pulumi toolchain. */
export interface PulumiBinaries {
  /** `<dir>/bin/pulumi`; `<dir>` is what `PulumiCommand.get({ root })` of the Automation API expects. */
  readonly pulumiRoot: string;
  readonly pulumi: string;
  readonly languageNodejs: string;
  readonly kubernetesProvider: string;
  /** Folders to put in front of PATH (the CLI with its language host, and the provider). */
  readonly pathDirs: readonly string[];
  /** Version stamped into the CLI (`v3.248.0`). */
  readonly cliVersion: string;
  /** Version of the kubernetes provider (`4.25.0`). */
  readonly kubernetesVersion: string;
  /** Where the CLI comes from: a compatible `pulumi` on PATH (path-tools.ts), or built from tools/pulumi/cli. */
  readonly cliFrom: 'path' | 'built';
}

export interface EnsurePulumiOptions {
  /** @default defaultCacheRoot() of ./_cache.ts */
  readonly cacheRoot?: string;
  /** @default the `tools/` folder of this package */
  readonly toolsDir?: string;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /** @default $KLUTCH_KIT_GO, else `go` */
  readonly goBinary?: string;
  /** Seconds between "still building" lines. @default 30 */
  readonly heartbeatSeconds?: number;
  /** Components to ensure. @default both */
  readonly components?: readonly PulumiComponentName[];
  /**
   * Use a compatible `pulumi` on PATH (same major release, the pinned minor release or later, its language host beside
   * it) instead of building the CLI; the choice goes to `log`. @default true unless KLUTCH_KIT_USE_PATH_TOOLS=0
   */
  readonly pathTools?: boolean;
  /** How PATH is looked at. @default systemToolLookup() of ./path-tools.ts */
  readonly lookup?: ToolLookup;
}

/**
 * Modules the public checksum database does not list (the proxy serves them, sum.golang.org answers 404).
 * go.sum pins their hashes (recorded at the first download), so builds from the committed go.sum never ask
 * the checksum database about them; the setting only matters when go.sum is regenerated.
 */
export const PULUMI_GONOSUMDB = 'github.com/pulumi';

const BUILD_ENV = { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GONOSUMDB: PULUMI_GONOSUMDB } as const;

const CLI_MODULE = 'github.com/pulumi/pulumi/pkg/v3';
const K8S_MODULE = 'github.com/pulumi/pulumi-kubernetes/provider/v4';
/** Release of the pinned provider pseudo-version (the commit upstream tagged v4.25.0). */
const K8S_PSEUDO_TO_RELEASE: Readonly<Record<string, string>> = {
  'v4.0.0-20260115033456-f47bc2d6f199': '4.25.0',
};

export interface PulumiComponentPlan {
  readonly name: PulumiComponentName;
  readonly moduleDir: string;
  readonly key: string;
  readonly dir: string;
  readonly binDir: string;
  readonly version: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Binaries this component produces, by file name. */
  readonly outputs: readonly string[];
}

function moduleSources(moduleDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.go') || e.name === 'go.mod' || e.name === 'go.sum') out.push(p);
    }
  };
  walk(moduleDir);
  return out;
}

/** Computes the cache key and paths of a component without building anything. */
export function planPulumiComponent(name: PulumiComponentName, opts: { cacheRoot?: string; toolsDir?: string } = {}): PulumiComponentPlan {
  const toolsDir = opts.toolsDir ?? defaultToolsDir();
  const moduleDir = path.join(toolsDir, 'pulumi', name === 'pulumi-cli' ? 'cli' : 'kubernetes');
  for (const f of ['go.mod', 'go.sum']) {
    if (!fs.existsSync(path.join(moduleDir, f))) {
      throw new Error(`pulumi-build: ${name}: ${path.join(moduleDir, f)} is missing; the wrapper module must have a committed go.mod and go.sum`);
    }
  }
  const goMod = fs.readFileSync(path.join(moduleDir, 'go.mod'), 'utf8');
  let args: string[];
  let version: string;
  let outputs: string[];
  if (name === 'pulumi-cli') {
    version = requiredVersion(goMod, CLI_MODULE, 'tools/pulumi/cli/go.mod');
    outputs = ['pulumi', 'pulumi-language-nodejs'];
    args = [
      'build',
      ...GO_BUILD_FLAGS,
      '-tags',
      'osusergo,grpcnotrace',
      '-ldflags',
      `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${version}`,
      '-o',
      '<out>/',
      `${CLI_MODULE}/cmd/pulumi`,
      './pulumi-language-nodejs',
    ];
  } else {
    const pseudo = requiredVersion(goMod, K8S_MODULE, 'tools/pulumi/kubernetes/go.mod');
    const release = K8S_PSEUDO_TO_RELEASE[pseudo];
    if (!release) {
      throw new Error(
        `tools/pulumi/kubernetes/go.mod: ${K8S_MODULE} ${pseudo} is not a known release commit; ` +
          `add it to K8S_PSEUDO_TO_RELEASE in runtime/realinfra/pulumi-build.ts with the release it was tagged as`,
      );
    }
    version = release;
    outputs = ['pulumi-resource-kubernetes'];
    args = [
      'build',
      ...GO_BUILD_FLAGS,
      '-ldflags',
      `-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=${release}`,
      '-o',
      '<out>/pulumi-resource-kubernetes',
      '.',
    ];
  }
  const hash = createHash('sha256');
  hash.update('klutch-kit-pulumi-v1\0').update(name).update('\0');
  for (const f of moduleSources(moduleDir)) {
    hash.update(path.relative(moduleDir, f)).update('\0').update(fs.readFileSync(f)).update('\0');
  }
  hash.update(JSON.stringify(args)).update(JSON.stringify(BUILD_ENV)).update(`${process.platform}/${process.arch}`);
  const key = hash.digest('hex');
  const dir = path.join(opts.cacheRoot ?? defaultCacheRoot(), 'realinfra', `${name}-${key}`);
  return { name, moduleDir, key, dir, binDir: path.join(dir, 'bin'), version, args, env: BUILD_ENV, outputs };
}

export function isPulumiCached(plan: PulumiComponentPlan): boolean {
  return fs.existsSync(path.join(plan.dir, '.complete')) && plan.outputs.every((o) => fs.existsSync(path.join(plan.binDir, o)));
}

/** Thrown when a Pulumi toolchain build fails; carries the tail of go's output. */
export class PulumiBuildError extends Error {
  constructor(
    readonly component: PulumiComponentName,
    readonly outputTail: string,
    detail: string,
  ) {
    super(`pulumi-build: building ${component} failed (${detail}).\n--- last lines of go output ---\n${outputTail}`);
    this.name = 'PulumiBuildError';
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function runGo(
  component: PulumiComponentName,
  goBinary: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
  log: (l: string) => void,
  heartbeatSeconds: number,
  cpu?: { seconds?: number },
): Promise<string> {
  const started = Date.now();
  let output = '';
  const goNotFound = () => new PulumiBuildError(component, '', `the go command "${goBinary}" was not found; install Go >= 1.26 or set KLUTCH_KIT_GO`);
  // With `cpu`, through sh so that `times` adds the CPU time of go and its compilers to the output.
  const [command, argv] = cpu ? ['sh', goWithCpuTimes(goBinary, args)] : [goBinary, [...args]];
  const child = spawn(command, argv, { cwd, env: { ...process.env, ...goBuildGcEnv(), ...env, GOBIN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const onData = (b: Buffer) => {
    output += b.toString('utf8');
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setInterval(() => log(`${component}: still running go ${args[0]} (${secs(Date.now() - started)} elapsed)`), heartbeatSeconds * 1000);
  timer.unref();
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.on('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? goNotFound() : e));
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    });
    if (cpu) cpu.seconds = cpuSecondsOf(output);
    if (code === 127 && cpu && output.trim() === '') throw goNotFound(); // sh: `command -v` found no go
    if (code !== 0) {
      const tail = output.replace(/\s+$/, '').split('\n').slice(-40).join('\n');
      throw new PulumiBuildError(component, tail, `go ${args.join(' ')} in ${cwd} exited with ${code ?? `signal ${signal}`}`);
    }
    return output;
  } finally {
    clearInterval(timer);
  }
}

/** Copies the wrapper module and the provider's generated-at-release data files into `workDir`. */
async function prepareKubernetesModule(plan: PulumiComponentPlan, workDir: string, goBinary: string, log: (l: string) => void, hb: number): Promise<void> {
  for (const f of moduleSources(plan.moduleDir)) {
    const rel = path.relative(plan.moduleDir, f);
    fs.mkdirSync(path.dirname(path.join(workDir, rel)), { recursive: true });
    fs.copyFileSync(f, path.join(workDir, rel));
  }
  const goMod = fs.readFileSync(path.join(plan.moduleDir, 'go.mod'), 'utf8');
  const pseudo = requiredVersion(goMod, K8S_MODULE);
  const out = await runGo(plan.name, goBinary, ['mod', 'download', '-json', `${K8S_MODULE}@${pseudo}`], workDir, plan.env, log, hb);
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new PulumiBuildError(plan.name, out, `go mod download ${K8S_MODULE}@${pseudo} reported no Dir${info.Error ? `: ${info.Error}` : ''}`);
  const cmdDir = path.join(info.Dir, 'cmd', 'pulumi-resource-kubernetes');
  const schemaPath = path.join(cmdDir, 'schema.json');
  const mappingPath = path.join(cmdDir, 'terraform-mapping.json');
  for (const f of [schemaPath, mappingPath]) {
    if (!fs.existsSync(f)) {
      throw new PulumiBuildError(
        plan.name,
        '',
        `${f} is missing in the module; upstream changed its layout, update pulumi-build.ts and tools/pulumi/kubernetes/main.go`,
      );
    }
  }
  const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
  schema['version'] = plan.version;
  fs.writeFileSync(path.join(workDir, 'schema-embed.json'), JSON.stringify(schema));
  fs.writeFileSync(path.join(workDir, 'terraform-mapping-embed.json'), JSON.stringify(JSON.parse(fs.readFileSync(mappingPath, 'utf8'))));
}

/** Builds (or finds in the cache) one component; returns its plan. */
export async function ensurePulumiComponent(name: PulumiComponentName, opts: EnsurePulumiOptions = {}): Promise<PulumiComponentPlan> {
  const log = opts.log ?? (() => {});
  assertNotBuiltLater(name);
  const plan = planPulumiComponent(name, opts);
  if (isPulumiCached(plan)) return plan;
  const goBinary = opts.goBinary ?? process.env['KLUTCH_KIT_GO'] ?? 'go';
  const hb = opts.heartbeatSeconds ?? 30;
  return withLock(`${plan.dir}.lock`, log, name, async () => {
    if (isPulumiCached(plan)) return plan;
    const tmp = `${plan.dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(path.join(tmp, 'bin'), { recursive: true });
    const started = Date.now();
    log(`${name}: building ${plan.version} (module ${path.relative(process.cwd(), plan.moduleDir) || plan.moduleDir}) …`);
    let work: string | undefined;
    const cpu: { seconds?: number } = {};
    try {
      let cwd = plan.moduleDir;
      if (name === 'pulumi-resource-kubernetes') {
        work = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-pulumi-k8s-'));
        await prepareKubernetesModule(plan, work, goBinary, log, hb);
        cwd = work;
      }
      const args = plan.args.map((a) => a.replace('<out>', path.join(tmp, 'bin')));
      await runGo(name, goBinary, args, cwd, plan.env, log, hb, cpu);
      for (const o of plan.outputs) {
        if (!fs.existsSync(path.join(tmp, 'bin', o))) throw new PulumiBuildError(name, '', `go build succeeded but bin/${o} was not produced`);
      }
      publishBuildDir(tmp, plan.dir, {
        component: name,
        version: plan.version,
        args: plan.args,
        env: plan.env,
        key: plan.key,
        builtAt: new Date().toISOString(),
        seconds: (Date.now() - started) / 1000,
      });
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      log(`${name}: FAILED after ${secs(Date.now() - started)}`);
      throw e;
    } finally {
      if (work) fs.rmSync(work, { recursive: true, force: true });
    }
    log(`${name}: built in ${secs(Date.now() - started)}${cpu.seconds !== undefined ? ` (${secs(cpu.seconds * 1000)} CPU)` : ''} → ${plan.binDir}`);
    return plan;
  });
}

/**
 * A compatible Pulumi CLI on PATH, when the lookup is on (`opts.pathTools`, else KLUTCH_KIT_USE_PATH_TOOLS), else
 * undefined: the CLI is then built. Says which through `opts.log`. No build, no network.
 */
export function pathPulumi(opts: Pick<EnsurePulumiOptions, 'pathTools' | 'lookup' | 'log' | 'toolsDir' | 'cacheRoot'> = {}): PathPulumi | undefined {
  if (!(opts.pathTools ?? pathToolsEnabled())) return undefined;
  return findPathPulumi(planPulumiComponent('pulumi-cli', opts).version, opts.lookup ?? systemToolLookup(), opts.log ?? (() => {}));
}

/**
 * Builds (or finds in the cache) the Pulumi CLI, the Node.js language host and the kubernetes provider; the CLI and
 * its language host come from PATH instead when a compatible `pulumi` is there (see {@link pathPulumi}).
 */
export async function ensurePulumiBinaries(opts: EnsurePulumiOptions = {}): Promise<PulumiBinaries> {
  const wanted = opts.components ?? PULUMI_COMPONENTS;
  const fromPath = wanted.includes('pulumi-cli') ? pathPulumi(opts) : undefined;
  // One at a time: each go build already uses every core.
  const cli = wanted.includes('pulumi-cli') && !fromPath ? await ensurePulumiComponent('pulumi-cli', opts) : planPulumiComponent('pulumi-cli', opts);
  const k8s = wanted.includes('pulumi-resource-kubernetes')
    ? await ensurePulumiComponent('pulumi-resource-kubernetes', opts)
    : planPulumiComponent('pulumi-resource-kubernetes', opts);
  if (fromPath) {
    return {
      pulumiRoot: fromPath.root,
      pulumi: fromPath.path,
      languageNodejs: fromPath.languageNodejs,
      kubernetesProvider: path.join(k8s.binDir, 'pulumi-resource-kubernetes'),
      pathDirs: [path.dirname(fromPath.path), k8s.binDir],
      cliVersion: fromPath.version,
      kubernetesVersion: k8s.version,
      cliFrom: 'path',
    };
  }
  return {
    pulumiRoot: cli.dir,
    pulumi: path.join(cli.binDir, 'pulumi'),
    languageNodejs: path.join(cli.binDir, 'pulumi-language-nodejs'),
    kubernetesProvider: path.join(k8s.binDir, 'pulumi-resource-kubernetes'),
    pathDirs: [cli.binDir, k8s.binDir],
    cliVersion: cli.version,
    kubernetesVersion: k8s.version,
    cliFrom: 'built',
  };
}

export interface PulumiEnvOptions {
  /** PULUMI_HOME (plugin cache, credentials). */
  readonly home: string;
  /** Folder of the local file backend (`file://<dir>`). */
  readonly backendDir: string;
  /** Passphrase of the passphrase secrets provider. */
  readonly passphrase: string;
  /** KUBECONFIG for anything that falls back to it (nothing should: default providers are disabled). */
  readonly kubeconfig?: string;
}

/**
 * The environment for running the built CLI fully offline: local file backend, passphrase secrets, no update
 * check, no plugin downloads; the built language host and provider are found on PATH.
 */
export function pulumiEnv(bins: PulumiBinaries, o: PulumiEnvOptions): Record<string, string> {
  const env: Record<string, string> = {
    PATH: [...bins.pathDirs, process.env['PATH'] ?? ''].join(path.delimiter),
    PULUMI_HOME: o.home,
    PULUMI_BACKEND_URL: `file://${o.backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: o.passphrase,
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    PULUMI_DISABLE_REGISTRY_RESOLVE: 'true',
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: 'true',
    PULUMI_SKIP_CONFIRMATIONS: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'false',
    PULUMI_K8S_SUPPRESS_HELM_HOOK_WARNINGS: 'true',
    NO_COLOR: '1',
  };
  if (o.kubeconfig) env['KUBECONFIG'] = o.kubeconfig;
  return env;
}
