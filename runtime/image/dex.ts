/**
 * The Dex image the harness runs (the pod topology's OIDC provider, constructs/runtime/dex.ts): the static `dex`
 * binary built from `tools/dex` (runtime/realinfra/build.ts, CGO_ENABLED=0) on an empty base, written with this
 * folder's deterministic tar and OCI writer — no Docker, no base image to pull. Distroless-style: the binary at
 * the path the Dex construct runs (`/usr/local/bin/dex`, as upstream's image), `/etc/passwd` and `/etc/group`
 * naming the non-root user 65532, its home, and `/tmp`; no shell, no package manager.
 *
 * Not included: a CA bundle. Dex's connectors to public identity providers (GitHub, Google, an upstream OIDC
 * issuer) verify those over TLS and need one (upstream's distroless image has it); the harness's connectors
 * (`mockCallback`, static passwords) do not.
 */
import * as fs from 'node:fs';
import { imageIndex, layerFromEntries, platformImage, type ImageIndex, type Platform, writeLayout } from './oci.js';
import type { TarEntry } from './tar.js';
import { NONROOT_UID } from './base.js';

/** Where the binary is in the image: the path `Dex` (constructs/runtime/dex.ts) runs. */
export const DEX_BINARY_PATH = '/usr/local/bin/dex';

/** The name of the image in the layout `buildDexImage` writes. */
export const DEX_IMAGE_NAME = 'dex';

export interface DexImageOptions {
  /** The static dex binary (`ensureDexBinary()`); it must be built for `platform`. */
  readonly binary: string;
  /** The binary's platform. @default the host's (linux/amd64 or linux/arm64) */
  readonly platform?: Platform;
  /** Dex release the binary is, for the image label. */
  readonly version: string;
}

/** The host's platform as an OCI platform; throws naming the value on another OS or CPU. */
export function hostPlatform(): Platform {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : undefined;
  if (process.platform !== 'linux' || !arch) throw new Error(`dex image: host platform ${process.platform}/${process.arch} is not linux/amd64 or linux/arm64`);
  return { os: 'linux', architecture: arch };
}

/** The files of the image (one layer). */
export function dexImageEntries(binary: Buffer): TarEntry[] {
  const id = NONROOT_UID;
  return [
    { type: 'file', path: DEX_BINARY_PATH.slice(1), data: binary, mode: 0o755 },
    { type: 'file', path: 'etc/passwd', data: Buffer.from(`root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${id}:${id}:nonroot:/home/nonroot:/sbin/nologin\n`) },
    { type: 'file', path: 'etc/group', data: Buffer.from(`root:x:0:\nnonroot:x:${id}:\n`) },
    { type: 'dir', path: 'home/nonroot', mode: 0o700, uid: id, gid: id },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
  ];
}

/** Builds the Dex image (one platform, in an index) from the binary; equal binaries give equal digests. */
export function dexImage(opts: DexImageOptions): ImageIndex {
  const st = fs.statSync(opts.binary, { throwIfNoEntry: false });
  if (!st?.isFile()) throw new Error(`dex image: binary ${JSON.stringify(opts.binary)} does not exist; build it with npm run realinfra -- dex`);
  const bin = fs.readFileSync(opts.binary);
  // ELF magic: a shell script or a binary of another OS would only fail once the pod starts.
  if (bin.subarray(0, 4).toString('latin1') !== '\x7fELF') throw new Error(`dex image: ${JSON.stringify(opts.binary)} is not an ELF executable`);
  const platform = opts.platform ?? hostPlatform();
  const image = platformImage(platform, [layerFromEntries(dexImageEntries(bin))], {
    User: `${NONROOT_UID}:${NONROOT_UID}`,
    Entrypoint: [DEX_BINARY_PATH],
    Cmd: ['serve', '/etc/dex/config.yaml'],
    WorkingDir: '/home/nonroot',
    Labels: { 'org.opencontainers.image.title': 'dex', 'org.opencontainers.image.version': opts.version },
  });
  return imageIndex([image]);
}

/** Builds the Dex image into the OCI layout `output` (image name {@link DEX_IMAGE_NAME}); returns the index. */
export function buildDexImage(output: string, opts: DexImageOptions): ImageIndex {
  const idx = dexImage(opts);
  writeLayout(output, { [DEX_IMAGE_NAME]: idx });
  return idx;
}
