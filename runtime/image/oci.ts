/**
 * OCI images as plain data: layers (gzip of a deterministic tar), configs, per-platform manifests,
 * multi-platform indexes, and the OCI image layout folder (`oci-layout`, `index.json`,
 * `blobs/sha256/…`) that `crane`, `skopeo` and containerd read. JSON is written with a fixed key
 * order and no `created` time other than the epoch, so equal inputs give equal digests.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeTar, type TarEntry } from './tar.js';

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';
/** The annotation naming an image in a layout's index.json. */
export const REF_NAME = 'org.opencontainers.image.ref.name';
/** The time written into configs: the epoch, so builds do not depend on the clock. */
export const EPOCH = '1970-01-01T00:00:00Z';

export const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const hex = (digest: string) => digest.replace(/^sha256:/, '');

export interface Platform {
  readonly os: 'linux';
  /** OCI / Go names: `amd64`, `arm64`. */
  readonly architecture: 'amd64' | 'arm64';
}
export const PLATFORMS: readonly Platform[] = [
  { os: 'linux', architecture: 'amd64' },
  { os: 'linux', architecture: 'arm64' },
];
export const platformName = (p: Platform) => `${p.os}/${p.architecture}`;

/** The platform of this host (a local cluster's node runs it); throws naming the architecture when it is neither. */
export function hostPlatform(arch: string = process.arch): Platform {
  if (arch === 'x64') return { os: 'linux', architecture: 'amd64' };
  if (arch === 'arm64') return { os: 'linux', architecture: 'arm64' };
  throw new Error(`this host's architecture ${JSON.stringify(arch)} is not one the images are built for (${PLATFORMS.map(platformName).join(', ')})`);
}

/** `linux/amd64` → Platform; throws naming the value. */
export function parsePlatform(s: string): Platform {
  const m = /^linux\/(amd64|arm64)$/.exec(s.trim());
  if (!m) throw new Error(`platform ${JSON.stringify(s)} is not one of ${PLATFORMS.map(platformName).join(', ')}`);
  return { os: 'linux', architecture: m[1] as Platform['architecture'] };
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: Platform;
  readonly annotations?: Record<string, string>;
}

/** A layer: compressed bytes, their descriptor and the uncompressed digest (the config's diff_id). */
export interface Layer {
  readonly blob: Buffer;
  readonly descriptor: Descriptor;
  readonly diffId: string;
}

/** Gzip with a zeroed header time (node's zlib writes mtime 0 and OS 3): equal tars → equal blobs. */
export function layerFromTar(tar: Buffer, level = 6): Layer {
  const blob = gzipSync(tar, { level });
  return { blob, descriptor: { mediaType: OCI_LAYER_GZIP, digest: sha256(blob), size: blob.length }, diffId: sha256(tar) };
}

export const layerFromEntries = (entries: Iterable<TarEntry>, level?: number): Layer => layerFromTar(writeTar(entries), level);

/** The parts of an image config this module writes (the OCI config's `config` object). */
export interface RunConfig {
  readonly User?: string;
  readonly Env?: readonly string[];
  readonly Entrypoint?: readonly string[];
  readonly Cmd?: readonly string[];
  readonly WorkingDir?: string;
  readonly Labels?: Record<string, string>;
}

export interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly config: RunConfig;
  readonly rootfs: { readonly type: 'layers'; readonly diff_ids: readonly string[] };
  readonly history?: ReadonlyArray<Record<string, unknown>>;
  readonly created?: string;
}

/** A built single-platform image: every blob it needs (config and layers) and its manifest. */
export interface PlatformImage {
  readonly platform: Platform;
  readonly config: Buffer;
  readonly layers: readonly Layer[];
  readonly manifest: Buffer;
  readonly descriptor: Descriptor;
}

const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

/** Config (fixed key order, `created` the epoch) + manifest of one platform's image. */
export function platformImage(
  platform: Platform,
  layers: readonly Layer[],
  run: RunConfig,
  history: ReadonlyArray<Record<string, unknown>> = [],
): PlatformImage {
  const cfg = {
    created: EPOCH,
    architecture: platform.architecture,
    os: platform.os,
    config: {
      ...(run.User !== undefined ? { User: run.User } : {}),
      ...(run.Env ? { Env: [...run.Env] } : {}),
      ...(run.Entrypoint ? { Entrypoint: [...run.Entrypoint] } : {}),
      ...(run.Cmd ? { Cmd: [...run.Cmd] } : {}),
      ...(run.WorkingDir !== undefined ? { WorkingDir: run.WorkingDir } : {}),
      ...(run.Labels ? { Labels: Object.fromEntries(Object.entries(run.Labels).sort(([a], [b]) => a.localeCompare(b))) } : {}),
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    history: history.length > 0 ? history : layers.map(() => ({ created: EPOCH, created_by: 'klutch-kit image build' })),
  };
  const config = json(cfg);
  const manifest = json({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, digest: sha256(config), size: config.length },
    layers: layers.map((l) => ({ mediaType: l.descriptor.mediaType, digest: l.descriptor.digest, size: l.descriptor.size })),
  });
  return { platform, config, layers, manifest, descriptor: { mediaType: OCI_MANIFEST, digest: sha256(manifest), size: manifest.length, platform } };
}

/** A multi-platform image: the index and its platform images. */
export interface ImageIndex {
  readonly images: readonly PlatformImage[];
  readonly index: Buffer;
  readonly descriptor: Descriptor;
}

export function imageIndex(images: readonly PlatformImage[], annotations?: Record<string, string>): ImageIndex {
  const index = json({
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: images.map((i) => ({
      mediaType: OCI_MANIFEST,
      digest: i.descriptor.digest,
      size: i.descriptor.size,
      platform: { architecture: i.platform.architecture, os: i.platform.os },
    })),
    ...(annotations ? { annotations } : {}),
  });
  return { images, index, descriptor: { mediaType: OCI_INDEX, digest: sha256(index), size: index.length } };
}

/** Compressed size of one platform image (config + layers + manifest): what a pull of it downloads. */
export const compressedSize = (i: PlatformImage): number => i.config.length + i.manifest.length + i.layers.reduce((n, l) => n + l.descriptor.size, 0);

/**
 * Writes an OCI image layout holding `named` (name → index) at `dir`, replacing a layout there
 * (a folder that is not an OCI layout is refused rather than deleted). Blobs shared by the images are written once.
 */
export function writeLayout(dir: string, named: Readonly<Record<string, ImageIndex>>): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st) {
    if (!statSync(join(dir, 'oci-layout'), { throwIfNoEntry: false })?.isFile()) {
      throw new Error(`image layout ${JSON.stringify(dir)} exists and is not an OCI image layout (no oci-layout file); choose another --output`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, 'blobs', 'sha256'), { recursive: true });
  const put = (digest: string, data: Buffer) => {
    const f = join(tmp, 'blobs', 'sha256', hex(digest));
    if (!statSync(f, { throwIfNoEntry: false })) writeFileSync(f, data);
  };
  const top: Descriptor[] = [];
  for (const [name, idx] of Object.entries(named)) {
    for (const img of idx.images) {
      for (const l of img.layers) put(l.descriptor.digest, l.blob);
      put(sha256(img.config), img.config);
      put(img.descriptor.digest, img.manifest);
    }
    put(idx.descriptor.digest, idx.index);
    top.push({ ...idx.descriptor, annotations: { [REF_NAME]: name } });
  }
  writeFileSync(join(tmp, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(join(tmp, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: top }, null, 2) + '\n');
  renameSync(tmp, dir);
}

/** A blob of a layout, checked against its digest. */
export function readLayoutBlob(dir: string, digest: string): Buffer {
  const data = readFileSync(join(dir, 'blobs', 'sha256', hex(digest)));
  if (sha256(data) !== digest) throw new Error(`image layout ${dir}: blob ${digest} does not match its digest`);
  return data;
}

/** The named indexes of a layout's index.json: name → descriptor. */
export function layoutIndex(dir: string): Record<string, Descriptor> {
  const f = join(dir, 'index.json');
  if (!statSync(f, { throwIfNoEntry: false }))
    throw new Error(`${JSON.stringify(dir)} is not an OCI image layout (no index.json); build one with klutch-kit image build`);
  const idx = JSON.parse(readFileSync(f, 'utf8')) as { manifests: Descriptor[] };
  return Object.fromEntries(idx.manifests.filter((d) => d.annotations?.[REF_NAME]).map((d) => [d.annotations![REF_NAME]!, d]));
}
