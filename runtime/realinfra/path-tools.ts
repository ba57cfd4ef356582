// A kubectl or Pulumi CLI the user already has on PATH, used instead of building one (build.ts, pulumi-build.ts)
// when its version is compatible with the pinned release; the choice is printed, and an incompatible one is
// reported with its version and ignored. KLUTCH_KIT_USE_PATH_TOOLS=0 turns the lookup off: CI (.ci/run) builds
// the pinned releases so that its runs do not depend on the machine's tools.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** `0` builds kubectl and the Pulumi CLI of the pinned releases even when a compatible one is on PATH; `1` (the default) uses it. */
export const USE_PATH_TOOLS_ENV = 'KLUTCH_KIT_USE_PATH_TOOLS';

/** Whether a compatible tool on PATH is used: `KLUTCH_KIT_USE_PATH_TOOLS` unset or `1` (the default), not when `0`. */
export function pathToolsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env[USE_PATH_TOOLS_ENV] ?? '').trim();
  if (v === '' || v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  throw new Error(
    `${USE_PATH_TOOLS_ENV}=${v} is neither 1 nor 0: set 1 (or leave it unset) to use a compatible kubectl or pulumi on PATH, 0 to always build the pinned releases`,
  );
}

/** How the lookup sees the machine (injectable for tests). */
export interface ToolLookup {
  /** The real path (symbolic links resolved) of an executable `command` on PATH, or undefined. */
  which(command: string): string | undefined;
  /** Whether `file` is an executable file. */
  executable(file: string): boolean;
  /** What `<binary> <args>` prints on stdout, or undefined when it does not run or fails. */
  run(binary: string, args: readonly string[]): string | undefined;
}

/** The machine's PATH and processes (a version query may take up to 10 s). */
export function systemToolLookup(env: NodeJS.ProcessEnv = process.env): ToolLookup {
  const executable = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  return {
    executable,
    which(command) {
      for (const d of (env['PATH'] ?? '').split(path.delimiter).filter(Boolean)) {
        const p = path.join(d, command);
        if (executable(p)) return fs.realpathSync(p);
      }
      return undefined;
    },
    run(binary, args) {
      try {
        return execFileSync(binary, [...args], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
      } catch {
        return undefined;
      }
    },
  };
}

/** A release version `vMAJOR.MINOR.PATCH` (anything after the patch, `-rc.1`, `+k3s1`, is ignored). */
export interface ReleaseVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

export function parseReleaseVersion(text: string): ReleaseVersion | undefined {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

/** One tool this lookup knows: how to ask its version and which versions work with the pinned release. */
export interface PathToolSpec {
  /** The command on PATH. */
  readonly command: string;
  /** Arguments that print the version. */
  readonly versionArgs: readonly string[];
  /** The version in what those arguments print. */
  parseVersion(stdout: string): string | undefined;
  /** Why `found` does not work with `pinned` (undefined: it does). */
  incompatibility(found: ReleaseVersion, pinned: ReleaseVersion): string | undefined;
  /** The compatible range, for the lines printed. */
  range(pinned: ReleaseVersion): string;
}

/**
 * kubectl: within one minor release of the clusters' Kubernetes (tools/kube), older or newer — the version skew
 * Kubernetes supports between kubectl and kube-apiserver.
 */
export const KUBECTL_TOOL: PathToolSpec = {
  command: 'kubectl',
  versionArgs: ['version', '--client', '-o', 'json'],
  parseVersion(stdout) {
    try {
      const v = (JSON.parse(stdout) as { clientVersion?: { gitVersion?: unknown } }).clientVersion?.gitVersion;
      return typeof v === 'string' ? v : undefined;
    } catch {
      return undefined;
    }
  },
  incompatibility(found, pinned) {
    if (found.major !== pinned.major || Math.abs(found.minor - pinned.minor) > 1) return `not within one minor release of the clusters' ${show(pinned)}`;
    return undefined;
  },
  range: (p) => `${p.major}.${p.minor - 1}–${p.major}.${p.minor + 1}`,
};

/**
 * The Pulumi CLI: the pinned release's major version, at its minor release or a later one (the @pulumi/pulumi SDK
 * the stacks run with is the pinned release; an older CLI may lack what it asks for). Its Node.js language host
 * must be beside it (every Pulumi release ships `pulumi-language-nodejs` with the CLI).
 */
export const PULUMI_TOOL: PathToolSpec = {
  command: 'pulumi',
  versionArgs: ['version'],
  parseVersion: (stdout) => /^v?\d+\.\d+\.\d+\S*/m.exec(stdout.trim())?.[0],
  incompatibility(found, pinned) {
    if (found.major !== pinned.major || found.minor < pinned.minor) return `older than ${pinned.major}.${pinned.minor} or not ${pinned.major}.x`;
    return undefined;
  },
  range: (p) => `>= ${p.major}.${p.minor}, < ${p.major + 1}`,
};

const show = (v: ReleaseVersion) => `v${v.major}.${v.minor}.${v.patch}`;

/** A tool found on PATH whose version works with the pinned release. */
export interface PathTool {
  readonly path: string;
  readonly version: string;
}

/**
 * The tool on PATH when its version works with `pinnedVersion`, else undefined; says through `log` which it uses,
 * or why it does not (none on PATH, no version, incompatible version) and that the pinned release is built instead.
 * `check` adds a condition of its own (the reason when it fails).
 */
export function findPathTool(
  spec: PathToolSpec,
  pinnedVersion: string,
  look: ToolLookup,
  log: (line: string) => void,
  check?: (toolPath: string) => string | undefined,
): PathTool | undefined {
  const pinned = parseReleaseVersion(pinnedVersion);
  if (!pinned) throw new Error(`realinfra: ${spec.command}: the pinned version "${pinnedVersion}" is not vMAJOR.MINOR.PATCH`);
  const building = `building ${spec.command} ${show(pinned)} (${USE_PATH_TOOLS_ENV}=0 always builds it)`;
  const p = look.which(spec.command);
  if (!p) {
    log(`${spec.command}: none on PATH; ${building}`);
    return undefined;
  }
  const out = look.run(p, spec.versionArgs);
  const text = out === undefined ? undefined : spec.parseVersion(out);
  const found = text === undefined ? undefined : parseReleaseVersion(text);
  if (!found || text === undefined) {
    log(`${spec.command}: ${p} did not tell its version (${[spec.command, ...spec.versionArgs].join(' ')}); ignored, ${building}`);
    return undefined;
  }
  const why = spec.incompatibility(found, pinned) ?? check?.(p);
  if (why) {
    log(`${spec.command}: ${p} is ${text}, ${why} (compatible: ${spec.range(pinned)}); ignored, ${building}`);
    return undefined;
  }
  log(
    `${spec.command}: using ${p} (${text}; compatible with the pinned ${show(pinned)}: ${spec.range(pinned)}; ${USE_PATH_TOOLS_ENV}=0 builds the pinned release instead)`,
  );
  return { path: p, version: text };
}

/** A Pulumi CLI on PATH the Automation API can run: `<root>/bin/pulumi`, with its Node.js language host. */
export interface PathPulumi extends PathTool {
  /** What `PulumiCommand.get({ root })` expects: the folder above the CLI's `bin/`. */
  readonly root: string;
  readonly languageNodejs: string;
}

/** A compatible Pulumi CLI on PATH (see {@link PULUMI_TOOL}), with its language host beside it, in a `bin/` folder. */
export function findPathPulumi(pinnedVersion: string, look: ToolLookup, log: (line: string) => void): PathPulumi | undefined {
  const languageHost = (p: string) => path.join(path.dirname(p), 'pulumi-language-nodejs');
  const found = findPathTool(PULUMI_TOOL, pinnedVersion, look, log, (p) => {
    if (path.basename(path.dirname(p)) !== 'bin') return `not in a bin/ folder (the Automation API runs <root>/bin/pulumi)`;
    if (!look.executable(languageHost(p))) return `without its Node.js language host beside it (${languageHost(p)})`;
    return undefined;
  });
  return found && { ...found, root: path.dirname(path.dirname(found.path)), languageNodejs: languageHost(found.path) };
}
