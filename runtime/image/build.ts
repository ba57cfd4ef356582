/**
 * `klutch-kit image build`: OCI images of the bind backend and the konnector, without Docker.
 *
 * One app layer, shared by both images and both platforms: `/app` holding what
 * `npm install klutch-kit` gives a user — the packed package (`npm pack`, exactly its `files`) — plus
 * the runtime's optional peer libraries (RUNTIME_PEERS, at the versions this package was tested
 * with), installed by `npm install --omit=dev --ignore-scripts` in a temporary folder. On top of a
 * base image named by digest (DEFAULT_BASE, a distroless Node.js 22), or the `local` base built from
 * registry packages (./base.ts). Two images, `backend` and `konnector`, because the Deployments of
 * constructs/runtime set only `args` and rely on the image's entrypoint; they differ only in
 * their config (entrypoint `node /app/node_modules/klutch-kit/lib/runtime/<name>/main.js`), so the
 * second image costs a config and a manifest. Each image is an index of linux/amd64 and linux/arm64.
 * User 65532:65532; the files are owned by root and read-only to it. No shell is used.
 *
 * Reproducible: tar entries sorted with mtime 0 and uid/gid 0, gzip without a timestamp, JSON in a
 * fixed key order, `created` the epoch. The same package tarball, the same resolved npm packages and
 * the same base give the same digests (with the same Node.js zlib; see docs/images.md). So a build is kept in the
 * cache under a key of exactly those inputs (./build-cache.ts) and the next build of the same inputs copies it.
 */
import { RUNTIME_NODE_FLAGS } from './node-flags.js';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { NODE_PATH, NONROOT_UID, localBase, localBaseKey } from './base.js';
import { fileSha256, imageBuildKey, restoreBuilt, storeBuilt, type ImageBuildInputs } from './build-cache.js';
import { recallPackKey, rememberPackKey, treeFingerprint } from './pack-memo.js';
import {
  compressedSize,
  imageIndex,
  layerFromEntries,
  platformImage,
  platformName,
  PLATFORMS,
  writeLayout,
  type ImageIndex,
  type Layer,
  type Platform,
} from './oci.js';
import { pullBase, type BaseImage } from './registry.js';
import { readTar, type TarEntry } from './tar.js';

const execFileAsync = promisify(execFile);

/**
 * The default base: Google's distroless Node.js 22 on Debian 12 (`:nonroot`), pinned by the digest of
 * its multi-platform index. Chosen how: the digest public projects pin for that tag (this machine has
 * no route to gcr.io, so it was not re-resolved here); refresh it with
 * `crane digest gcr.io/distroless/nodejs22-debian12:nonroot` and pass `--base <repo>@<digest>`.
 */
export const DEFAULT_BASE = 'gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e';
/** The peers the backend and the konnector import (optional peers of klutch-kit, so npm does not install them). */
export const RUNTIME_PEERS = ['@kubernetes/client-node', 'jose', 'openid-client', 'pino', 'prom-client'] as const;
/** Image name → entry module inside the package. */
export const RUNTIME_ENTRIES = { backend: 'lib/runtime/backend/main.js', konnector: 'lib/runtime/konnector/main.js' } as const;
export type RuntimeImageName = keyof typeof RUNTIME_ENTRIES;
/** Where the app lives in the image. */
export const APP_DIR = '/app';
export const PACKAGE_DIR = `${APP_DIR}/node_modules/klutch-kit`;

export interface ImageBuildOptions {
  /** The OCI image layout folder to write (replaced if it is one). */
  readonly output: string;
  /** An `npm pack` tarball of klutch-kit. @default packed from packageRoot */
  readonly packageTarball?: string;
  /** The klutch-kit package (a clone or an installed copy). @default the package this module belongs to */
  readonly packageRoot?: string;
  /** `local`, or `<registry>/<repository>[:<tag>]@sha256:<hex>`. @default DEFAULT_BASE */
  readonly base?: string;
  /** @default linux/amd64 and linux/arm64 */
  readonly platforms?: readonly Platform[];
  /** Downloads and cached layers. @default <klutch-kit cache>/image */
  readonly cacheDir?: string;
  /**
   * Reuse a build of the same inputs from `<cacheDir>/built/` (runtime/image/build-cache.ts), and keep this one there.
   * `false` builds from scratch and stores nothing (e.g. to check that two builds give the same digests).
   * @default true
   */
  readonly reuse?: boolean;
  /** Path of node in the base. @default the base's entrypoint when it is a node binary, else /nodejs/bin/node */
  readonly nodePath?: string;
  readonly log?: (line: string) => void;
}

export interface BuiltImage {
  /** Digest of the multi-platform index. */
  readonly digest: string;
  readonly platforms: ReadonlyArray<{ readonly platform: string; readonly digest: string; readonly compressedSize: number }>;
}

export interface ImageBuildResult {
  readonly layout: string;
  readonly version: string;
  readonly base: string;
  readonly images: Readonly<Record<RuntimeImageName, BuiltImage>>;
  readonly appLayer: { readonly digest: string; readonly size: number };
  /** The peer versions installed (`name@version`). */
  readonly peers: readonly string[];
  /** True when the layout was copied from an earlier build of the same inputs (`<cacheDir>/built/<key>`). */
  readonly reused: boolean;
}

/** The cache root: `KLUTCH_KIT_CACHE`, else `$XDG_CACHE_HOME/klutch-kit`, else `~/.cache/klutch-kit` (as runtime/realinfra). */
export function defaultImageCache(): string {
  const root = process.env['KLUTCH_KIT_CACHE'] || join(process.env['XDG_CACHE_HOME'] || join(process.env['HOME'] || tmpdir(), '.cache'), 'klutch-kit');
  return join(root, 'image');
}

/** The klutch-kit package folder this module belongs to (source tree or lib/). */
export function findPackageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const f = join(dir, 'package.json');
    if (existsSync(f) && (JSON.parse(readFileSync(f, 'utf8')) as { name?: string }).name === 'klutch-kit') return dir;
    if (dirname(dir) === dir) throw new Error(`image build: no klutch-kit package.json above ${from}; pass --from <klutch-kit-x.y.z.tgz>`);
  }
}

async function run(cmd: string, args: string[], cwd: string, what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, args, {
      cwd,
      maxBuffer: 1 << 28,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
    });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`image build: ${what}: ${cmd} ${args.join(' ')} failed: ${(err.stderr || err.message).trim().split('\n').slice(-4).join(' | ')}`, {
      cause: e,
    });
  }
}

/**
 * `npm pack` of the package at `root` into `dest`. In a clone (tsconfig.build.json present) lib/ is
 * compiled into a staging copy first, so the working tree's lib/ is left alone; an installed copy
 * already holds exactly the packed files and is packed as it is.
 *
 * A clone's tarball is kept in `<cacheDir>/pack/` under a key of everything that goes into it (see
 * {@link packCacheKey}), so the next image build of the same tree skips the compile: the compile is most
 * of an image build's CPU, and the integration suites and `pulumi up` of the pods topology each build images.
 * The newest {@link PACK_CACHE_KEEP} tarballs are kept. `cacheDir: false` packs without the cache. The key itself is
 * remembered by the metadata of the files it came from (./pack-memo.ts): while none of them moved, the tarball is
 * found without listing or hashing anything.
 */
export async function packPackage(root: string, dest: string, log?: (l: string) => void, cacheDir: string | false = defaultImageCache()): Promise<string> {
  if (existsSync(join(root, 'tsconfig.build.json'))) {
    const memo = cacheDir !== false ? recallPackKey(cacheDir, root) : undefined;
    if (memo && cacheDir !== false && existsSync(join(cacheDir, 'pack', memo.key, memo.filename))) {
      log?.(`image build: the packed package of this tree is cached (${join(cacheDir, 'pack', memo.key, memo.filename)}; no file changed since)`);
      return reusePacked(join(cacheDir, 'pack', memo.key, memo.filename), dest);
    }
    const listed = JSON.parse(await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root, 'list the packed files')) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const packed = listed[0]!.files.map((f) => f.path).filter((f) => !f.startsWith('lib/'));
    let cached: string | undefined;
    if (cacheDir !== false) {
      const { key, files, before } = await packKeyAndInputs(root, packed);
      rememberPackKey(cacheDir, root, { key, filename: listed[0]!.filename, files }, before);
      cached = join(cacheDir, 'pack', key, listed[0]!.filename);
      if (existsSync(cached)) {
        log?.(`image build: the packed package of this tree is cached (${cached})`);
        return reusePacked(cached, dest);
      }
    }
    const stage = join(dest, 'stage');
    log?.(`image build: compiling ${root} into a staging copy`);
    for (const f of packed) {
      mkdirSync(dirname(join(stage, f)), { recursive: true });
      copyFileSync(join(root, f), join(stage, f));
    }
    await run(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', join(stage, 'lib')],
      root,
      'compile lib/',
    );
    const tarball = await npmPack(stage, dest, log);
    if (cached) storePacked(tarball, cached);
    return tarball;
  }
  return npmPack(root, dest, log);
}

/** A copy of the cached tarball `cached` in `dest`; its key is marked the newest. */
function reusePacked(cached: string, dest: string): string {
  const out = join(dest, basename(cached));
  copyFileSync(cached, out);
  const now = new Date();
  utimesSync(dirname(cached), now, now); // the newest keys are kept
  return out;
}

/** How many packed tarballs `<cacheDir>/pack/` keeps (the newest). */
export const PACK_CACHE_KEEP = 4;

async function npmPack(from: string, dest: string, log?: (l: string) => void): Promise<string> {
  log?.(`image build: npm pack ${from}`);
  const out = JSON.parse(await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], from, 'npm pack')) as Array<{ filename: string }>;
  return join(dest, out[0]!.filename);
}

/**
 * The cache key of a clone's packed tarball: the TypeScript version, and the path and content of every file the
 * compile reads (`tsc --listFilesOnly`: the sources, their imports and the declaration files from node_modules)
 * and of every other packed file. The tsconfig files are among what is hashed, so a changed compiler option is a
 * new key too.
 */
export async function packCacheKey(root: string, packedFiles: readonly string[]): Promise<string> {
  return (await packKeyAndInputs(root, packedFiles)).key;
}

/** {@link packCacheKey}, the files it read, and their metadata fingerprint taken before they were read. */
async function packKeyAndInputs(root: string, packedFiles: readonly string[]): Promise<{ key: string; files: string[]; before: string }> {
  const tscJs = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const inputs = (await run(process.execPath, [tscJs, '-p', 'tsconfig.build.json', '--listFilesOnly'], root, 'list the compiled files'))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const tsVersion = (JSON.parse(readFileSync(join(root, 'node_modules', 'typescript', 'package.json'), 'utf8')) as PackageJson).version;
  const hash = createHash('sha256').update(`klutch-kit-pack-v1\0typescript ${tsVersion}\0`);
  const files = [
    ...new Set([...inputs.map((f) => resolve(root, f)), ...['tsconfig.json', 'tsconfig.build.json', ...packedFiles].map((f) => resolve(root, f))]),
  ].sort();
  const watched = [...files, join(root, 'node_modules', 'typescript', 'package.json')];
  const before = treeFingerprint(root, watched);
  for (const f of files) hash.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  return { key: hash.digest('hex'), files: watched, before };
}

/** Puts `tarball` at `cached` (whole, by rename) and keeps the newest {@link PACK_CACHE_KEEP} keys. */
function storePacked(tarball: string, cached: string): void {
  try {
    const keyDir = dirname(cached);
    mkdirSync(keyDir, { recursive: true });
    const tmp = `${cached}.tmp-${process.pid}`;
    copyFileSync(tarball, tmp);
    renameSync(tmp, cached);
    const packDir = dirname(keyDir);
    const keys = readdirSync(packDir)
      .map((k) => ({ k, t: statSync(join(packDir, k)).mtimeMs }))
      .sort((a, b) => b.t - a.t);
    for (const { k } of keys.slice(PACK_CACHE_KEEP)) rmSync(join(packDir, k), { recursive: true, force: true });
  } catch {
    // a cache that cannot be written only costs the next build its compile
  }
}

interface PackageJson {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
}

/** The version of a peer this package was tested with (its node_modules), else the peer range. */
function peerSpec(root: string, pkg: PackageJson, peer: string): string {
  for (let dir = root; ; dir = dirname(dir)) {
    const f = join(dir, 'node_modules', peer, 'package.json');
    if (existsSync(f)) return (JSON.parse(readFileSync(f, 'utf8')) as PackageJson).version;
    if (dirname(dir) === dir) break;
  }
  const range = pkg.peerDependencies?.[peer];
  if (!range) throw new Error(`image build: klutch-kit ${pkg.version} has no peer dependency ${peer}`);
  return range;
}

/**
 * Every file, folder and symlink under `dir`, as entries under `prefix`, in name order. Only content,
 * the execute bit and link targets are kept (writeTar drops times and owners), so two copies of a
 * tree give the same layer whatever their mtimes, umask or creation order.
 */
export function walk(dir: string, prefix: string): TarEntry[] {
  const out: TarEntry[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const rel = `${prefix}/${name}`;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out.push({ type: 'symlink', path: rel, target: readlinkSync(p) });
    else if (st.isDirectory()) {
      out.push({ type: 'dir', path: rel });
      out.push(...walk(p, rel));
    } else if (st.isFile()) out.push({ type: 'file', path: rel, data: readFileSync(p), mode: st.mode });
  }
  return out;
}

/** The package.json inside a klutch-kit tarball; throws naming the file when it is not one. */
function packedPackageJson(tarball: string): PackageJson {
  const packed = readTar(gunzipSync(readFileSync(tarball)), tarball).find((e) => e.path === 'package/package.json');
  if (!packed || packed.type !== 'file') throw new Error(`image build: ${tarball} is not an npm package tarball (no package/package.json)`);
  const pkg = JSON.parse(packed.data.toString('utf8')) as PackageJson;
  if (pkg.name !== 'klutch-kit') throw new Error(`image build: ${tarball} is the package ${JSON.stringify(pkg.name)}, not klutch-kit`);
  return pkg;
}

/** The app layer: `/app` with klutch-kit and the runtime peers installed from the tarball. */
async function appLayer(tarball: string, root: string, work: string, log?: (l: string) => void): Promise<{ layer: Layer; pkg: PackageJson; peers: string[] }> {
  const pkg = packedPackageJson(tarball);
  const file = `klutch-kit-${pkg.version}.tgz`;
  if (resolve(tarball) !== join(work, file)) copyFileSync(tarball, join(work, file));
  const peers = RUNTIME_PEERS.map((p) => `${p}@${peerSpec(root, pkg, p)}`);
  const app = join(work, 'app');
  mkdirSync(app);
  const dependencies: Record<string, string> = { 'klutch-kit': `file:../${file}` };
  for (const p of RUNTIME_PEERS) dependencies[p] = peerSpec(root, pkg, p);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'klutch-kit-runtime', version: pkg.version, private: true, type: 'module', dependencies }, null, 2) + '\n',
  );
  log?.(`image build: npm install --omit=dev klutch-kit@${pkg.version} ${peers.join(' ')}`);
  // --legacy-peer-deps: the construct-side peers (cdk8s, constructs) stay out; the runtime peers are listed.
  await run(
    'npm',
    ['install', '--omit=dev', '--ignore-scripts', '--legacy-peer-deps', '--prefer-offline', '--no-audit', '--no-fund'],
    app,
    'install the package',
  );
  const entries = walk(app, APP_DIR.slice(1));
  const native = entries.filter((e) => e.type === 'file' && e.path.endsWith('.node')).map((e) => e.path);
  if (native.length > 0) throw new Error(`image build: native addons in the app (${native.join(', ')}) would tie the shared app layer to one platform`);
  return { layer: layerFromEntries(entries), pkg, peers };
}

/** node inside the base: the base's entrypoint when it is a node binary, else /nodejs/bin/node. */
function nodeIn(base: BaseImage, given?: string): string {
  if (given) return given;
  const ep = base.config.config.Entrypoint?.[0];
  return ep && /\/node$/.test(ep) ? ep : NODE_PATH;
}

/**
 * What decides the bytes of a build from `tarball` ({@link ImageBuildInputs}): read from the tarball, the package's
 * node_modules and lock file, and for the `local` base its downloaded inputs (fetched when missing).
 */
export async function imageBuildInputs(
  tarball: string,
  root: string,
  o: {
    readonly base: string;
    readonly platforms: readonly Platform[];
    readonly nodePath?: string;
    readonly cacheDir: string;
    readonly log?: (l: string) => void;
  },
): Promise<ImageBuildInputs> {
  const pkg = packedPackageJson(tarball);
  const lock = join(root, 'package-lock.json');
  const localKeys =
    o.base === 'local' ? await Promise.all(o.platforms.map((p) => localBaseKey(p, { cacheDir: o.cacheDir, ...(o.log ? { log: o.log } : {}) }))) : [];
  return {
    packageSha256: fileSha256(tarball),
    peers: RUNTIME_PEERS.map((p) => `${p}@${peerSpec(root, pkg, p)}`),
    lockSha256: existsSync(lock) ? fileSha256(lock) : null,
    base: o.base === 'local' ? ['local', ...localKeys].join(' ') : o.base,
    platforms: o.platforms.map(platformName),
    nodePath: o.nodePath ?? null,
    zlib: process.versions.zlib ?? '',
  };
}

/**
 * Builds both runtime images into an OCI layout; with `reuse` (the default) a build of the same inputs
 * ({@link imageBuildInputs}) is copied from the cache instead, and a new build is stored there.
 */
export async function buildRuntimeImages(opts: ImageBuildOptions): Promise<ImageBuildResult> {
  const log = opts.log;
  const platforms = opts.platforms ?? PLATFORMS;
  if (platforms.length === 0) throw new Error('image build: no platform given');
  const baseRef = opts.base ?? DEFAULT_BASE;
  const cacheDir = opts.cacheDir ?? defaultImageCache();
  const root = opts.packageRoot ?? findPackageRoot();
  const output = resolve(opts.output);
  const work = mkdtempSync(join(tmpdir(), 'klutch-image-'));
  try {
    const tarball = opts.packageTarball ? resolve(opts.packageTarball) : await packPackage(root, work, log, cacheDir);
    if (opts.reuse === false) return await buildLayout(tarball, root, work, output, { ...opts, platforms, base: baseRef, cacheDir });
    const key = imageBuildKey(
      await imageBuildInputs(tarball, root, {
        base: baseRef,
        platforms,
        cacheDir,
        ...(opts.nodePath ? { nodePath: opts.nodePath } : {}),
        ...(log ? { log } : {}),
      }),
    );
    const cached = restoreBuilt<ImageBuildResult>(cacheDir, key, output);
    if (cached) {
      log?.(`image build: the images of these inputs are cached (${join(cacheDir, 'built', key)}); copied to ${output}`);
      return { ...cached, reused: true };
    }
    const built = await buildLayout(tarball, root, work, output, { ...opts, platforms, base: baseRef, cacheDir });
    storeBuilt(cacheDir, key, output, built);
    return built;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The build itself: bases, the app layer, both images for every platform, written to `output`. */
async function buildLayout(
  tarball: string,
  root: string,
  work: string,
  output: string,
  opts: ImageBuildOptions & { readonly platforms: readonly Platform[]; readonly base: string; readonly cacheDir: string },
): Promise<ImageBuildResult> {
  const { log, platforms, base: baseRef, cacheDir } = opts;
  const bases = new Map<string, BaseImage>();
  if (baseRef === 'local') for (const p of platforms) bases.set(p.architecture, await localBase(p, { cacheDir, ...(log ? { log } : {}) }));
  else for (const [k, v] of await pullBase(baseRef, platforms, { cacheDir: join(cacheDir, 'blobs'), ...(log ? { log } : {}) })) bases.set(k, v);
  const { layer, pkg, peers } = await appLayer(tarball, root, work, log);
  log?.(`image build: app layer ${layer.descriptor.digest} (${layer.descriptor.size} bytes)`);
  const indexes = {} as Record<RuntimeImageName, ImageIndex>;
  for (const [name, entry] of Object.entries(RUNTIME_ENTRIES) as Array<[RuntimeImageName, string]>) {
    const images = platforms.map((p) => {
      const base = bases.get(p.architecture)!;
      const env = (base.config.config.Env ?? []).filter((e) => !e.startsWith('NODE_ENV='));
      const labels: Record<string, string> = {
        ...(base.config.config.Labels ?? {}),
        'org.opencontainers.image.title': `klutch-kit ${name}`,
        'org.opencontainers.image.version': pkg.version,
        'org.opencontainers.image.licenses': 'Apache-2.0',
        'dev.klutch-kit.peers': peers.join(' '),
        ...(baseRef === 'local'
          ? {}
          : { 'org.opencontainers.image.base.name': baseRef.replace(/@sha256:.*$/, ''), 'org.opencontainers.image.base.digest': base.manifestDigest }),
      };
      const history = [
        ...(base.config.history ?? base.layers.map(() => ({ created: '1970-01-01T00:00:00Z', created_by: `base ${baseRef}` }))),
        { created: '1970-01-01T00:00:00Z', created_by: `klutch-kit image build: ${APP_DIR} (klutch-kit@${pkg.version} ${peers.join(' ')})` },
      ];
      return platformImage(
        p,
        [...base.layers, layer],
        {
          User: `${NONROOT_UID}:${NONROOT_UID}`,
          Env: [...env, 'NODE_ENV=production'],
          Entrypoint: [nodeIn(base, opts.nodePath), ...RUNTIME_NODE_FLAGS[name], `${PACKAGE_DIR}/${entry}`],
          WorkingDir: APP_DIR,
          Labels: labels,
        },
        history,
      );
    });
    indexes[name] = imageIndex(images);
  }
  writeLayout(output, indexes);
  const images = Object.fromEntries(
    Object.entries(indexes).map(([name, idx]) => [
      name,
      {
        digest: idx.descriptor.digest,
        platforms: idx.images.map((i) => ({ platform: platformName(i.platform), digest: i.descriptor.digest, compressedSize: compressedSize(i) })),
      },
    ]),
  ) as unknown as Record<RuntimeImageName, BuiltImage>;
  return {
    layout: output,
    version: pkg.version,
    base: baseRef,
    images,
    appLayer: { digest: layer.descriptor.digest, size: layer.descriptor.size },
    peers,
    reused: false,
  };
}
