// The klutchio sources provider-anynines is built from (build.ts), pinned to one commit of klutchio's public
// repository (PROVIDER_ANYNINES_SOURCE; PROVIDER_ANYNINES_V2_SOURCE for Klutch's Crossplane v2 branch): fetched with
// the git command into the cache, <cache>/klutchio/<commit>/, and checked against that commit id. Without network
// access, the pin's variable (KLUTCH_KIT_KLUTCHIO_SRC, KLUTCH_KIT_KLUTCHIO_V2_SRC) names a mirror instead: a git
// repository that holds the commit (fetched and checked the same way) or a plain folder of the sources, which is
// checked against the git tree ids of the three folders at the pinned commit (computed here, no git needed).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultCacheRoot, withLock } from './_cache.js';

/** The environment variable naming an offline mirror of klutchio: a git repository (URL or folder) or a plain folder of the sources. */
export const KLUTCHIO_SOURCE_ENV = 'KLUTCH_KIT_KLUTCHIO_SRC';
/** The same for the sources of Klutch's Crossplane v2 branch (provider-anynines with namespaced managed resources). */
export const KLUTCHIO_V2_SOURCE_ENV = 'KLUTCH_KIT_KLUTCHIO_V2_SRC';

/** What the sources must be: a commit of a repository, and the git tree ids of the folders the build reads at that commit. */
export interface KlutchioPin {
  /** The component built from them (build.ts). */
  readonly component: 'provider-anynines' | 'provider-anynines-v2';
  /** What the commit is, for messages (`v1.5.0`, `branch migration-crossplane-v2`). */
  readonly label: string;
  /** The tag of the provider package the constructs name for this build. */
  readonly version: string;
  /** The environment variable naming a mirror of these sources. */
  readonly env: string;
  /** The repository fetched when no mirror is set. */
  readonly repository: string;
  /** The full commit id (40 hex digits). */
  readonly commit: string;
  /** `git rev-parse <commit>:<folder>` of each folder the build reads (the keys: KLUTCHIO_SOURCE_FOLDERS). */
  readonly trees: Readonly<Record<string, string>>;
  /**
   * Submodules inside those folders, path → the commit the tree records. A plain copy carries none (a checkout
   * without `--recurse-submodules` leaves an empty folder), so the check takes their entries from here.
   */
  readonly submodules: Readonly<Record<string, string>>;
}

/**
 * The klutchio release whose provider-anynines the harness builds, pinned once: the sources are this commit of
 * klutchio's public repository (fetched and checked by klutchio.ts; a plain folder of them is checked against the
 * trees: `git rev-parse <commit>:<folder>`), and the constructs' `PROVIDER_ANYNINES_PACKAGE` carries this version
 * (a unit test ties the two). `provider-anynines/build` is a submodule (crossplane/build, its Makefile's harness)
 * the Go build does not read. Its managed resources are cluster-scoped (`AnyninesProviderFlavour.CLUSTER_SCOPED`).
 */
export const PROVIDER_ANYNINES_SOURCE: KlutchioPin = {
  component: 'provider-anynines',
  label: 'v1.5.0',
  version: 'v1.5.0',
  env: 'KLUTCH_KIT_KLUTCHIO_SRC',
  repository: 'https://github.com/anynines/klutchio.git',
  commit: '0b4539e812e01710b8fd0ef20db347d230b1dbbb',
  trees: {
    'provider-anynines': 'a8cad59287925352b81a8fa534b8dfd15a399dda',
    'clients/a9s-open-service-broker': '6efb4e7c3acd9aeb589b9b04bead0646e69e6d6b',
    'clients/a9s-backup-manager': 'c99d7281001e4b735611a4f7c887938bd6adb6a4',
  },
  submodules: { 'provider-anynines/build': '3cf6663fafcf22f5cb3e7b90cf21d981faa52230' },
};

/**
 * provider-anynines from Klutch's Crossplane v2 branch (`migration-crossplane-v2`, tip 51671bc, unreleased): the same
 * group, its ServiceInstance, ServiceBinding, Backup and Restore namespaced (`AnyninesProviderFlavour.NAMESPACED`),
 * the ServiceBinding's connection Secret in the managed resource's namespace. Pinned and checked like
 * PROVIDER_ANYNINES_SOURCE; `version` is the tag of the package Klutch's branch installs (the constructs'
 * `PROVIDER_ANYNINES_NAMESPACED_PACKAGE`, a unit test ties the two).
 */
export const PROVIDER_ANYNINES_V2_SOURCE: KlutchioPin = {
  component: 'provider-anynines-v2',
  label: 'branch migration-crossplane-v2',
  version: 'KLT-877',
  env: 'KLUTCH_KIT_KLUTCHIO_V2_SRC',
  repository: 'https://github.com/anynines/klutchio.git',
  commit: '51671bc5753c8ad246a22969d67419dda9646a02',
  trees: {
    'provider-anynines': '24499cc2f0cf0935d7b3fa7247ba61f96f2f23ff',
    'clients/a9s-open-service-broker': '6efb4e7c3acd9aeb589b9b04bead0646e69e6d6b',
    'clients/a9s-backup-manager': 'c99d7281001e4b735611a4f7c887938bd6adb6a4',
  },
  submodules: { 'provider-anynines/build': '3cf6663fafcf22f5cb3e7b90cf21d981faa52230' },
};

/** The folders of the klutchio sources provider-anynines is built from (its go.mod replaces the two clients). */
export const KLUTCHIO_SOURCE_FOLDERS: readonly string[] = ['provider-anynines', 'clients/a9s-open-service-broker', 'clients/a9s-backup-manager'];

/**
 * Where the klutchio sources of a pin are (or will be, once `ensureKlutchioSource()` of klutchio.ts fetched them): the
 * plain folder its variable (`KLUTCH_KIT_KLUTCHIO_SRC`, `KLUTCH_KIT_KLUTCHIO_V2_SRC`) names, else the pinned commit's
 * checkout in the cache, `<cache>/klutchio/<commit>`.
 */
export function klutchioSourceDir(opts: { cacheRoot?: string; pin?: KlutchioPin } = {}): string {
  const pin = opts.pin ?? PROVIDER_ANYNINES_SOURCE;
  const env = process.env[pin.env];
  if (env && env.trim() !== '') {
    const kind = klutchioSourceKind(env.trim(), pin);
    if (kind.kind === 'folder') return kind.dir;
  }
  return klutchioCheckoutDir({ cacheRoot: opts.cacheRoot, pin });
}

/** Throws an error naming every missing part of the klutchio sources of `pin` in `dir`. */
export function checkKlutchioSource(dir: string, pin: KlutchioPin = PROVIDER_ANYNINES_SOURCE): void {
  const missing = [
    ...KLUTCHIO_SOURCE_FOLDERS.flatMap((f) => ['go.mod', 'go.sum'].map((g) => path.join(dir, f, g))),
    path.join(dir, 'provider-anynines', 'cmd', 'provider', 'main.go'),
    path.join(dir, 'provider-anynines', 'package', 'crossplane.yaml'),
  ].filter((f) => !fs.existsSync(f));
  if (missing.length > 0) {
    throw new Error(
      `realinfra: ${pin.component}: the klutchio sources are incomplete or absent in ${dir}; missing: ${missing.join(', ')}. ` +
        `ensureComponent('${pin.component}') fetches klutchio ${pin.label} (commit ${pin.commit}) from ` +
        `${pin.repository} into the cache, or set ${pin.env} to a mirror: a git repository that holds the commit, or a folder ` +
        `of its provider-anynines/, clients/a9s-open-service-broker/ and clients/a9s-backup-manager/`,
    );
  }
}

/** How the klutchio sources are found: the git command, the cache, progress. */
export interface KlutchioSourceOptions {
  /** The mirror (a git URL, a git repository's folder or a plain folder of the sources). @default $KLUTCH_KIT_KLUTCHIO_SRC, else pin.repository */
  readonly source?: string;
  /** @default defaultCacheRoot() of ./_cache.ts */
  readonly cacheRoot?: string;
  /** The git command. @default `git` from PATH */
  readonly git?: string;
  /** Progress lines (fetch start, heartbeat, end). @default none */
  readonly log?: (line: string) => void;
  /** Seconds between "still fetching" lines. @default 30 */
  readonly heartbeatSeconds?: number;
  /** @default PROVIDER_ANYNINES_SOURCE */
  readonly pin?: KlutchioPin;
}

/** Where a source is: a git repository to fetch the commit from, or a plain folder to check in place. */
export type KlutchioSourceKind = { readonly kind: 'git'; readonly url: string } | { readonly kind: 'folder'; readonly dir: string };

const envSource = (pin: KlutchioPin): string | undefined => {
  const v = process.env[pin.env];
  return v && v.trim() !== '' ? v.trim() : undefined;
};

/**
 * A URL (`https://…`, `file://…`, `ssh://…`, `git@host:path`) or the folder of a git repository (a work tree with
 * `.git`, or a bare repository) is fetched from; any other existing folder is a plain copy of the sources.
 */
export function klutchioSourceKind(source: string, pin: KlutchioPin = PROVIDER_ANYNINES_SOURCE): KlutchioSourceKind {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^[^/\s]+@[^/\s:]+:/.test(source)) return { kind: 'git', url: source };
  const dir = path.resolve(source);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(
      `realinfra: ${pin.component}: ${pin.env}=${source}: ${dir} is not a folder. Set it to a git repository that holds klutchio ` +
        `commit ${pin.commit} (a URL or a folder) or to a folder of the sources at that commit, or unset it to fetch ${pin.repository}`,
    );
  }
  const gitRepo = fs.existsSync(path.join(dir, '.git')) || (fs.existsSync(path.join(dir, 'HEAD')) && fs.existsSync(path.join(dir, 'objects')));
  return gitRepo ? { kind: 'git', url: dir } : { kind: 'folder', dir };
}

/** The folder of the pinned commit's checkout in the cache. */
export function klutchioCheckoutDir(opts: { cacheRoot?: string; pin?: KlutchioPin } = {}): string {
  return path.join(opts.cacheRoot ?? defaultCacheRoot(), 'klutchio', (opts.pin ?? PROVIDER_ANYNINES_SOURCE).commit);
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The git tree id of folder `rel` under `root`, as `git write-tree` would record it: blobs of regular files (mode
 * 100755 when the owner may execute, else 100644) and symbolic links (120000), sub-trees (40000; an empty folder is
 * no entry), the submodule entries of `submodules` (160000) whatever their folder holds; entries in git's order
 * (byte order of the names, a folder's name compared as if it ended in "/"). Undefined for a tree without entries.
 */
export function gitTreeId(root: string, rel: string, submodules: Readonly<Record<string, string>> = {}): string | undefined {
  const abs = path.join(root, rel);
  const entries: { name: string; sortName: string; mode: string; id: string }[] = [];
  const gitlinks = Object.entries(submodules).filter(([p]) => path.posix.dirname(p) === rel);
  for (const [p, id] of gitlinks) {
    const name = path.posix.basename(p);
    entries.push({ name, sortName: name, mode: '160000', id });
  }
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (gitlinks.some(([p]) => path.posix.basename(p) === e.name)) continue;
    const r = `${rel}/${e.name}`;
    const p = path.join(abs, e.name);
    if (e.isDirectory()) {
      const id = gitTreeId(root, r, submodules);
      if (id !== undefined) entries.push({ name: e.name, sortName: `${e.name}/`, mode: '40000', id });
    } else if (e.isSymbolicLink()) {
      entries.push({ name: e.name, sortName: e.name, mode: '120000', id: gitObjectId('blob', Buffer.from(fs.readlinkSync(p))) });
    } else if (e.isFile()) {
      const mode = fs.statSync(p).mode & 0o100 ? '100755' : '100644';
      entries.push({ name: e.name, sortName: e.name, mode, id: gitObjectId('blob', fs.readFileSync(p)) });
    }
  }
  if (entries.length === 0) return undefined;
  entries.sort((a, b) => byteOrder(a.sortName, b.sortName));
  return gitObjectId('tree', Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.id, 'hex')])));
}

function gitObjectId(type: 'blob' | 'tree', content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/**
 * Throws unless every folder the build reads (KLUTCHIO_SOURCE_FOLDERS) has the pinned tree id: names each folder
 * that differs with both ids. `what` says where the sources came from.
 */
export function checkKlutchioTrees(dir: string, pin: KlutchioPin, what: string): void {
  checkKlutchioSource(dir, pin);
  const wrong = KLUTCHIO_SOURCE_FOLDERS.map((f) => ({ f, want: pin.trees[f], got: gitTreeId(dir, f, pin.submodules) ?? '(empty)' })).filter(
    (t) => t.got !== t.want,
  );
  if (wrong.length > 0) {
    throw new Error(
      `realinfra: ${pin.component}: the klutchio sources in ${dir} (${what}) are not commit ${pin.commit}: ` +
        wrong.map((t) => `${t.f}/ has tree ${t.got}, expected ${t.want}`).join('; ') +
        `. Put an unmodified copy of that commit there (git -C <klutchio clone> archive ${pin.commit} ${KLUTCHIO_SOURCE_FOLDERS.join(' ')} | tar -x -C <folder>), ` +
        `or point ${pin.env} at a git repository that holds the commit`,
    );
  }
}

const checkedFolders = new Set<string>();

/**
 * The folder of the klutchio sources at the pinned commit, fetched if need be: from the mirror of
 * `KLUTCH_KIT_KLUTCHIO_SRC` (`opts.source`) or from klutchio's public repository. A git source is fetched once
 * (`git init`, `git fetch --depth 1 <url> <commit>`, `git checkout FETCH_HEAD`) into <cache>/klutchio/<commit>/ and
 * checked (`git rev-parse HEAD` is the pinned commit, the folders' trees the pinned trees); a plain folder is
 * checked against the pinned trees and used in place. Warm: a few stat calls.
 */
export async function ensureKlutchioSource(opts: KlutchioSourceOptions = {}): Promise<string> {
  const pin = opts.pin ?? PROVIDER_ANYNINES_SOURCE;
  const log = opts.log ?? (() => {});
  const fromEnv = opts.source === undefined ? envSource(pin) : undefined;
  const source = opts.source ?? fromEnv ?? pin.repository;
  const kind = klutchioSourceKind(source, pin);
  if (kind.kind === 'folder') {
    if (!checkedFolders.has(`${kind.dir}\0${pin.commit}`)) {
      checkKlutchioTrees(kind.dir, pin, fromEnv !== undefined ? `${pin.env}` : 'the folder given');
      checkedFolders.add(`${kind.dir}\0${pin.commit}`);
      log(`klutchio: ${kind.dir} holds the trees of commit ${pin.commit}`);
    }
    return kind.dir;
  }
  const dir = klutchioCheckoutDir({ cacheRoot: opts.cacheRoot, pin });
  if (fs.existsSync(path.join(dir, '.git'))) return dir; // published only after the checks below
  return withLock(`${dir}.lock`, log, 'klutchio', async () => {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    const git = opts.git ?? 'git';
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    const started = Date.now();
    const hint =
      kind.url === pin.repository
        ? `Without network access, set ${pin.env} to a mirror: a git repository that holds the commit (a URL or a folder) or a folder of the sources at that commit`
        : `Check ${pin.env}=${kind.url}: it must be a git repository that holds the commit, or unset it to fetch ${pin.repository}`;
    try {
      log(`klutchio: fetching commit ${pin.commit} from ${kind.url} into ${dir} …`);
      await runGit(git, ['init', '-q'], tmp, log, pin, opts.heartbeatSeconds);
      try {
        await runGit(git, ['fetch', '-q', '--depth', '1', kind.url, pin.commit], tmp, log, pin, opts.heartbeatSeconds, 'still fetching');
      } catch (e) {
        if (e instanceof GitNotFoundError) throw e;
        throw new Error(`realinfra: ${pin.component}: cannot fetch klutchio commit ${pin.commit} from ${kind.url}: ${(e as Error).message}. ${hint}`, {
          cause: e,
        });
      }
      await runGit(git, ['-c', 'advice.detachedHead=false', 'checkout', '-q', 'FETCH_HEAD'], tmp, log, pin, opts.heartbeatSeconds);
      const head = (await runGit(git, ['rev-parse', 'HEAD'], tmp, log, pin, opts.heartbeatSeconds)).trim();
      if (head !== pin.commit) {
        throw new Error(`realinfra: ${pin.component}: ${kind.url} gave commit ${head} where ${pin.commit} was asked for; the sources are not used. ${hint}`);
      }
      checkKlutchioTrees(tmp, pin, `fetched from ${kind.url}`);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    log(`klutchio: commit ${pin.commit} checked out in ${((Date.now() - started) / 1000).toFixed(1)} s → ${dir}`);
    return dir;
  });
}

/** Thrown when the git command does not run: says what needs it and how to do without. */
export class GitNotFoundError extends Error {
  constructor(git: string, pin: KlutchioPin = PROVIDER_ANYNINES_SOURCE) {
    super(
      `realinfra: ${pin.component}: the git command "${git}" was not found; it fetches the klutchio sources once. ` +
        `Install git (Debian: apt-get install git), or set ${pin.env} to a folder of the sources at commit ${pin.commit}`,
    );
    this.name = 'GitNotFoundError';
  }
}

async function runGit(
  git: string,
  args: readonly string[],
  cwd: string,
  log: (l: string) => void,
  pin: KlutchioPin,
  heartbeatSeconds = 30,
  still?: string,
): Promise<string> {
  const started = Date.now();
  const child = spawn(git, args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const timer = still
    ? setInterval(() => log(`klutchio: ${still} (${((Date.now() - started) / 1000).toFixed(0)} s elapsed)`), heartbeatSeconds * 1000)
    : undefined;
  timer?.unref();
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? new GitNotFoundError(git, pin) : e));
      child.on('close', (c) => resolve(c));
    });
    if (code !== 0) {
      const tail = stderr.trim().split('\n').slice(-5).join(' / ');
      throw new Error(`git ${args.join(' ')} exited with ${code}${tail ? ` (${tail})` : ''}`);
    }
    return stdout;
  } finally {
    if (timer) clearInterval(timer);
  }
}
