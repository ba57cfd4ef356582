/**
 * The cache of built runtime images (runtime/image/build-cache.ts): the key changes when an input of the build changes
 * (the packed package, a peer's version, the lock file, the base, the platforms, node's path, zlib) and not otherwise
 * (file times, files the build does not read); a build of cached inputs copies the stored layout and runs no install;
 * the newest builds are kept. On a small package tree in a temporary folder, base pinned by digest (nothing is pulled).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { buildRuntimeImages, imageBuildInputs, RUNTIME_PEERS, type ImageBuildResult } from '../../runtime/image/build.js';
import { BUILT_CACHE_KEEP, IMAGE_BUILD_FORMAT, imageBuildKey, restoreBuilt, storeBuilt, type ImageBuildInputs } from '../../runtime/image/build-cache.js';
import { PLATFORMS, type Platform } from '../../runtime/image/oci.js';
import { writeTar } from '../../runtime/image/tar.js';
import { writeUnder } from './_tree.js';

const BASE = `registry.example.com/node@sha256:${'a'.repeat(64)}`;
const AMD64: Platform = { os: 'linux', architecture: 'amd64' };

let dir: string;
let root: string;
let cache: string;
const write = (rel: string, text: string) => writeUnder(root, rel, text);

/** An npm-pack-shaped tarball of klutch-kit whose lib/ holds `code`. */
function tarball(code: string, name = 'pkg.tgz'): string {
  const f = join(dir, name);
  const pkg = JSON.stringify({ name: 'klutch-kit', version: '0.0.1' });
  writeFileSync(
    f,
    gzipSync(
      writeTar([
        { type: 'file', path: 'package/package.json', data: Buffer.from(pkg) },
        { type: 'file', path: 'package/lib/a.js', data: Buffer.from(code) },
      ]),
    ),
  );
  return f;
}

const key = async (tgz: string, o: { base?: string; platforms?: readonly Platform[]; nodePath?: string } = {}) =>
  imageBuildKey(await imageBuildInputs(tgz, root, { base: o.base ?? BASE, platforms: o.platforms ?? PLATFORMS, cacheDir: cache, ...o }));

/** A stand-in layout (what storeBuilt copies) and the result stored beside it. */
function fakeLayout(name: string): { layout: string; result: ImageBuildResult } {
  const layout = join(dir, name);
  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(join(layout, 'index.json'), JSON.stringify({ name }));
  const img = { digest: `sha256:${'1'.repeat(64)}`, platforms: [{ platform: 'linux/amd64', digest: `sha256:${'2'.repeat(64)}`, compressedSize: 3 }] };
  return {
    layout,
    result: {
      layout,
      version: '0.0.1',
      base: BASE,
      images: { backend: img, konnector: img },
      appLayer: { digest: `sha256:${'3'.repeat(64)}`, size: 3 },
      peers: [],
      reused: false,
    },
  };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-build-cache-'));
  root = join(dir, 'pkg');
  cache = join(dir, 'cache');
  write('package.json', JSON.stringify({ name: 'klutch-kit', version: '0.0.1' }));
  write('package-lock.json', JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/pino': { version: '9.0.0' } } }));
  for (const p of RUNTIME_PEERS) write(`node_modules/${p}/package.json`, JSON.stringify({ name: p, version: '1.0.0' }));
  write('README.md', 'one\n');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('imageBuildKey', () => {
  const inputs: ImageBuildInputs = {
    packageSha256: 'a'.repeat(64),
    peers: ['pino@9.0.0'],
    lockSha256: 'b'.repeat(64),
    base: BASE,
    platforms: ['linux/amd64', 'linux/arm64'],
    nodePath: null,
    zlib: '1.3.1',
  };

  it('is the same for the same inputs and differs when any one of them changes', () => {
    expect(imageBuildKey({ ...inputs, peers: [...inputs.peers] })).toBe(imageBuildKey(inputs));
    expect(imageBuildKey(inputs)).toMatch(/^[0-9a-f]{64}$/);
    const changed: ImageBuildInputs[] = [
      { ...inputs, packageSha256: 'c'.repeat(64) },
      { ...inputs, peers: ['pino@9.0.1'] },
      { ...inputs, lockSha256: null },
      { ...inputs, base: 'local 0123' },
      { ...inputs, platforms: ['linux/amd64'] },
      { ...inputs, platforms: ['linux/arm64', 'linux/amd64'] },
      { ...inputs, nodePath: '/usr/bin/node' },
      { ...inputs, zlib: '1.3.2' },
    ];
    const keys = new Set([inputs, ...changed].map(imageBuildKey));
    expect(keys.size).toBe(changed.length + 1);
    expect(IMAGE_BUILD_FORMAT).toBeGreaterThanOrEqual(1);
  });
});

describe('imageBuildInputs', () => {
  it('changes the key with the packed package, a peer version, the lock file, the base, the platforms and node path', async () => {
    const tgz = tarball('export const a = 1;\n');
    const first = await key(tgz);
    expect(await key(tgz)).toBe(first);

    expect(await key(tarball('export const a = 2;\n', 'pkg-2.tgz'))).not.toBe(first);
    expect(await key(tgz, { platforms: [AMD64] })).not.toBe(first);
    expect(await key(tgz, { base: `registry.example.com/node@sha256:${'b'.repeat(64)}` })).not.toBe(first);
    expect(await key(tgz, { nodePath: '/usr/local/bin/node' })).not.toBe(first);

    write('node_modules/pino/package.json', JSON.stringify({ name: 'pino', version: '1.0.1' }));
    const peerChanged = await key(tgz);
    expect(peerChanged).not.toBe(first);
    write('package-lock.json', JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/pino': { version: '9.0.1' } } }));
    expect(await key(tgz)).not.toBe(peerChanged);
  });

  it('keeps the key when only file times or files the build does not read change', async () => {
    const tgz = tarball('export const a = 1;\n');
    const first = await key(tgz);
    const later = new Date(Date.now() + 60_000);
    for (const f of [tgz, join(root, 'package-lock.json'), join(root, 'node_modules', 'pino', 'package.json')]) utimesSync(f, later, later);
    write('README.md', 'two\n');
    write('node_modules/unrelated/package.json', JSON.stringify({ name: 'unrelated', version: '2.0.0' }));
    expect(await key(tgz)).toBe(first);
    // the same bytes under another file name are the same package
    expect(await key(tarball('export const a = 1;\n', 'copy.tgz'))).toBe(first);
  });
});

describe('the built-image cache', () => {
  it('a build of cached inputs copies the stored layout and installs nothing', async () => {
    const tgz = tarball('export const a = 1;\n');
    const k = await key(tgz, { platforms: [AMD64] });
    const { layout, result } = fakeLayout('stored');
    storeBuilt(cache, k, layout, result);
    const lines: string[] = [];
    const output = join(dir, 'out');
    const r = await buildRuntimeImages({
      output,
      packageTarball: tgz,
      packageRoot: root,
      base: BASE,
      platforms: [AMD64],
      cacheDir: cache,
      log: (l) => lines.push(l),
    });
    expect(r).toEqual({ ...result, layout: output, reused: true });
    expect(JSON.parse(readFileSync(join(output, 'index.json'), 'utf8'))).toEqual({ name: 'stored' });
    expect(lines.some((l) => l.includes('are cached'))).toBe(true);
    expect(lines.some((l) => l.includes('npm install'))).toBe(false);
  });

  it('misses on other inputs; keeps the newest builds; refuses to replace a folder that is not a layout', () => {
    const { layout, result } = fakeLayout('a');
    expect(restoreBuilt(cache, 'k0', join(dir, 'out'))).toBeUndefined();
    for (let i = 0; i < BUILT_CACHE_KEEP + 2; i++) {
      storeBuilt(cache, `k${i}`, layout, result);
      const t = new Date(Date.now() - 100_000 + i * 1000); // in store order, all older than the next store
      utimesSync(join(cache, 'built', `k${i}`), t, t);
    }
    expect(readdirSync(join(cache, 'built')).sort()).toEqual(Array.from({ length: BUILT_CACHE_KEEP }, (_, i) => `k${i + 2}`).sort());
    const out = join(dir, 'out');
    expect(restoreBuilt(cache, `k${BUILT_CACHE_KEEP + 1}`, out)).toEqual({ ...result, layout: out });
    expect(existsSync(join(out, 'oci-layout'))).toBe(true);
    const notLayout = join(dir, 'notes');
    mkdirSync(notLayout);
    expect(() => restoreBuilt(cache, `k${BUILT_CACHE_KEEP + 1}`, notLayout)).toThrow('is not an OCI image layout');
  });
});
