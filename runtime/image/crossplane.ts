/**
 * Images for Crossplane as pods on the harness's real node (runtime/realinfra/crossplane-pods.ts), written
 * with this folder's deterministic tar and OCI writer from the static binaries the harness builds
 * (runtime/realinfra/build.ts): no Docker, no base image to pull.
 *
 *  - Crossplane core: the `crossplane` binary at `/usr/local/bin/crossplane` (entrypoint `crossplane`, as
 *    upstream's image, so the chart's `core init` / `core start` / `rbac start` args run it), the CRDs at `/crds`
 *    and the webhook configurations at `/webhookconfigurations` (where `crossplane core init` reads them).
 *  - Package images that are also their runtime image (what `crossplane xpkg build --embed-runtime-image` makes):
 *    a layer with `package.yaml` (the package's `crossplane.yaml` and objects) and a layer with the binary as
 *    entrypoint. Crossplane's package manager reads `package.yaml` from the flattened image (the xpkg spec's
 *    rule for an image without an annotated package layer); its default package runtime runs the same image
 *    in the Deployment it creates.
 *
 * Every image is distroless-style: `/etc/passwd` and `/etc/group` naming the non-root user 65532, `/tmp`, no
 * shell. Equal inputs give equal digests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NONROOT_UID } from './base.js';
import { hostPlatform } from './dex.js';
import { type ImageIndex, type Platform, compressedSize, imageIndex, layerFromEntries, platformImage } from './oci.js';
import type { TarEntry } from './tar.js';

/** Where the Crossplane binary is in the core image (upstream's path; the image's entrypoint is `crossplane`). */
export const CROSSPLANE_BINARY_PATH = '/usr/local/bin/crossplane';

/** The files every image of this module has besides its binary. */
function nonrootEntries(): TarEntry[] {
  const id = NONROOT_UID;
  return [
    { type: 'file', path: 'etc/passwd', data: Buffer.from(`root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${id}:${id}:nonroot:/home/nonroot:/sbin/nologin\n`) },
    { type: 'file', path: 'etc/group', data: Buffer.from(`root:x:0:\nnonroot:x:${id}:\n`) },
    { type: 'dir', path: 'home/nonroot', mode: 0o700, uid: id, gid: id },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
  ];
}

/** Reads a static binary; throws naming `what` and the path when it is missing or not an ELF executable. */
function readBinary(what: string, file: string): Buffer {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st?.isFile()) throw new Error(`${what} image: binary ${JSON.stringify(file)} does not exist; build it with npm run realinfra -- --crossplane`);
  const bin = fs.readFileSync(file);
  if (bin.subarray(0, 4).toString('latin1') !== '\x7fELF') throw new Error(`${what} image: ${JSON.stringify(file)} is not an ELF executable`);
  return bin;
}

/** The `*.yaml` files of a folder (not recursive), sorted, as entries under `inImage`. */
function yamlFolder(what: string, dir: string, inImage: string): TarEntry[] {
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${what} image: folder ${JSON.stringify(dir)} does not exist`);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ type: 'file' as const, path: `${inImage}/${f}`, data: fs.readFileSync(path.join(dir, f)) }));
}

export interface CrossplaneCoreImageOptions {
  /** The static `crossplane` binary (`ensureCrossplaneBinaries()`), built for `platform`. */
  readonly binary: string;
  /** Crossplane's `cluster/crds` folder of the same release (the module source). */
  readonly crdsDir: string;
  /** Crossplane's `cluster/webhookconfigurations` folder of the same release. */
  readonly webhookConfigurationsDir: string;
  /** The release, e.g. `v2.3.4` (image label). */
  readonly version: string;
  /** @default the host's platform */
  readonly platform?: Platform;
}

/** The Crossplane core image (one platform, in an index). */
export function crossplaneCoreImage(opts: CrossplaneCoreImageOptions): ImageIndex {
  const bin = readBinary('crossplane', opts.binary);
  const crds = yamlFolder('crossplane', opts.crdsDir, 'crds');
  if (crds.length === 0) throw new Error(`crossplane image: ${JSON.stringify(opts.crdsDir)} holds no *.yaml CRDs`);
  const layer = layerFromEntries([
    ...nonrootEntries(),
    { type: 'file', path: CROSSPLANE_BINARY_PATH.slice(1), data: bin, mode: 0o755 },
    ...crds,
    { type: 'dir', path: 'webhookconfigurations' },
    ...yamlFolder('crossplane', opts.webhookConfigurationsDir, 'webhookconfigurations'),
  ]);
  const image = platformImage(opts.platform ?? hostPlatform(), [layer], {
    User: `${NONROOT_UID}:${NONROOT_UID}`,
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin'],
    Entrypoint: ['crossplane'],
    WorkingDir: '/home/nonroot',
    Labels: { 'org.opencontainers.image.title': 'crossplane', 'org.opencontainers.image.version': opts.version },
  });
  return imageIndex([image]);
}

export interface PackageRuntimeImageOptions {
  /** Image label `org.opencontainers.image.title`, e.g. `function-patch-and-transform`. */
  readonly title: string;
  /** The release, e.g. `v0.10.8`. */
  readonly version: string;
  /** The package's `package.yaml` (`crossplane.yaml` followed by its objects). */
  readonly packageYaml: string;
  /** The static runtime binary, built for `platform`. */
  readonly binary: string;
  /** Where the binary goes in the image; the entrypoint. E.g. `/function` (function SDK images) or `/usr/local/bin/provider`. */
  readonly binaryPath: string;
  /** @default the host's platform */
  readonly platform?: Platform;
}

/** A package image that is its own runtime image (package layer + binary layer). */
export function packageRuntimeImage(opts: PackageRuntimeImageOptions): ImageIndex {
  if (!opts.binaryPath.startsWith('/') || opts.binaryPath.endsWith('/'))
    throw new Error(`${opts.title} image: binaryPath ${JSON.stringify(opts.binaryPath)} must be an absolute file path such as "/function"`);
  if (!/^\s*apiVersion:\s*meta\.pkg\.crossplane\.io\//m.test(opts.packageYaml))
    throw new Error(`${opts.title} image: packageYaml has no meta.pkg.crossplane.io object (the package's crossplane.yaml)`);
  const bin = readBinary(opts.title, opts.binary);
  const pkgLayer = layerFromEntries([{ type: 'file', path: 'package.yaml', data: Buffer.from(opts.packageYaml) }]);
  const runtimeLayer = layerFromEntries([...nonrootEntries(), { type: 'file', path: opts.binaryPath.slice(1), data: bin, mode: 0o755 }]);
  const image = platformImage(opts.platform ?? hostPlatform(), [pkgLayer, runtimeLayer], {
    User: `${NONROOT_UID}:${NONROOT_UID}`,
    Entrypoint: [opts.binaryPath],
    WorkingDir: '/home/nonroot',
    Labels: { 'org.opencontainers.image.title': opts.title, 'org.opencontainers.image.version': opts.version },
  });
  return imageIndex([image]);
}

/** Compressed size (what a pull downloads) of the single platform image of an index. */
export const pullSize = (idx: ImageIndex): number => compressedSize(idx.images[0]!);
