/**
 * Runtime images (runtime/image): the deterministic tar (read back by GNU tar), the OCI layout, and
 * reproducibility — two copies of a tree made in a different order, with different mtimes and
 * permission bits, give the same layer, the same image and the same index digests.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { walk } from '../../runtime/image/build.js';
import { pushRefs, runImageBuild } from '../../runtime/cli/image.js';
import { UsageError } from '../../runtime/cli/errors.js';
import {
  hostPlatform,
  imageIndex,
  layerFromEntries,
  layoutIndex,
  OCI_INDEX,
  parsePlatform,
  PLATFORMS,
  platformImage,
  readLayoutBlob,
  sha256,
  writeLayout,
  type ImageIndex,
} from '../../runtime/image/oci.js';
import { parseDigestRef } from '../../runtime/image/registry.js';
import { readTar, writeTar, type TarEntry } from '../../runtime/image/tar.js';

const dir = mkdtempSync(join(tmpdir(), 'klutch-image-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const longDir = `node_modules/${'@scope-with-a-long-name/'.repeat(4)}package-with-a-very-long-name-that-does-not-fit-in-ustar-fields-at-all`;
const long = `${longDir}/${'x'.repeat(120)}.js`;

/** The same tree, written in `order`, with the given mtime and file modes. */
function makeTree(root: string, order: 'forward' | 'reverse', mtime: number, mode: number): string {
  const files: Array<[string, string]> = [
    ['package.json', '{"name":"app"}\n'],
    ['node_modules/a/index.js', 'export const a = 1;\n'],
    ['node_modules/b/lib/b.js', 'export const b = 2;\n'],
    [long, 'long\n'],
  ];
  if (order === 'reverse') files.reverse();
  for (const [p, text] of files) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
    chmodSync(join(root, p), mode);
  }
  mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(root, 'node_modules', 'b', 'cli.js'), '#!/usr/bin/env node\n');
  chmodSync(join(root, 'node_modules', 'b', 'cli.js'), 0o775);
  symlinkSync('../b/cli.js', join(root, 'node_modules', '.bin', 'b'));
  const touch = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) touch(join(d, e.name));
      utimesSync(join(d, e.name), mtime, mtime);
    }
  };
  touch(root);
  return root;
}

function image(root: string): ImageIndex {
  const app = layerFromEntries(walk(root, 'app'));
  const base = layerFromEntries([{ type: 'file', path: 'nodejs/bin/node', data: Buffer.from('not really node'), mode: 0o755 }]);
  return imageIndex(
    PLATFORMS.map((p) => platformImage(p, [base, app], { User: '65532:65532', Entrypoint: ['/nodejs/bin/node', '/app/main.js'], WorkingDir: '/app' })),
  );
}

describe('tar', () => {
  it('sorts entries, adds parents, zeroes times and owners, normalises modes; GNU tar reads it', () => {
    const entries: TarEntry[] = [
      { type: 'file', path: 'b/z.txt', data: Buffer.from('z'), mode: 0o664 },
      { type: 'file', path: 'a/run', data: Buffer.from('#!'), mode: 0o700 },
      { type: 'dir', path: 'tmp', mode: 0o1777 },
      { type: 'dir', path: 'home/nonroot', mode: 0o700, uid: 65532, gid: 65532 },
      { type: 'symlink', path: 'lib64/ld.so', target: '/lib/x/ld.so' },
      { type: 'file', path: long, data: Buffer.from('long') },
    ];
    const tar = writeTar(entries);
    const f = join(dir, 't.tar');
    writeFileSync(f, tar);
    const listing = execFileSync('tar', ['--numeric-owner', '--full-time', '-tvf', f], { encoding: 'utf8' }).trim().split('\n');
    const names = execFileSync('tar', ['-tf', f], { encoding: 'utf8' }).trim().split('\n');
    expect(names).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    expect(names).toEqual(expect.arrayContaining(['a/', 'a/run', 'b/', 'b/z.txt', 'home/', 'home/nonroot/', 'lib64/', 'tmp/', long, `${longDir}/`]));
    const line = (n: string) => listing.find((l) => l.endsWith(` ${n}`) || l.includes(` ${n} -> `))!;
    expect(line('a/run')).toMatch(/^-rwxr-xr-x 0\/0 .* 1970-01-01 00:00:00 a\/run$/);
    expect(line('b/z.txt')).toMatch(/^-rw-r--r-- 0\/0 /);
    expect(line('tmp/')).toMatch(/^drwxrwxrwt 0\/0 /);
    expect(line('home/nonroot/')).toMatch(/^drwx------ 65532\/65532 /);
    expect(line('lib64/ld.so')).toMatch(/^lrwxrwxrwx 0\/0 .* lib64\/ld\.so -> \/lib\/x\/ld\.so$/);
    const back = readTar(tar);
    expect(back.find((e) => e.path === long)).toMatchObject({ type: 'file', data: Buffer.from('long') });
    expect(writeTar(back)).toEqual(tar);
    expect(writeTar([...entries].reverse())).toEqual(tar);
  });

  it('refuses paths that leave the archive root', () => {
    expect(() => writeTar([{ type: 'file', path: 'a/../../etc/passwd', data: Buffer.alloc(0) }])).toThrow('leaves the archive root');
  });
});

describe('reproducible images', () => {
  it('two copies of a tree (other order, mtimes and modes) give the same layer, images and index digests', () => {
    const a = makeTree(join(dir, 'a'), 'forward', 1_700_000_000, 0o644);
    const b = makeTree(join(dir, 'b'), 'reverse', 1_800_000_000, 0o664);
    const ia = image(a);
    const ib = image(b);
    expect(ib.images[1]!.layers[1]!.diffId).toBe(ia.images[1]!.layers[1]!.diffId);
    expect(ib.images.map((i) => i.descriptor.digest)).toEqual(ia.images.map((i) => i.descriptor.digest));
    expect(ib.descriptor.digest).toBe(ia.descriptor.digest);
    // Written layouts are byte for byte the same.
    writeLayout(join(dir, 'la'), { app: ia });
    writeLayout(join(dir, 'lb'), { app: ib });
    const files = (d: string) => readdirSync(join(d, 'blobs', 'sha256')).sort();
    expect(files(join(dir, 'lb'))).toEqual(files(join(dir, 'la')));
    expect(readFileSync(join(dir, 'lb', 'index.json'))).toEqual(readFileSync(join(dir, 'la', 'index.json')));
    // A change of content changes the digest.
    writeFileSync(join(b, 'node_modules', 'a', 'index.js'), 'export const a = 3;\n');
    expect(image(b).descriptor.digest).not.toBe(ia.descriptor.digest);
  });

  it('writes an OCI layout: named index → one manifest per platform → config and layers, each blob under its digest', () => {
    const idx = image(makeTree(join(dir, 'c'), 'forward', 1_700_000_000, 0o644));
    const out = join(dir, 'layout');
    writeLayout(out, { backend: idx });
    writeLayout(out, { backend: idx }); // replaces a layout
    expect(JSON.parse(readFileSync(join(out, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
    const named = layoutIndex(out);
    expect(Object.keys(named)).toEqual(['backend']);
    expect(named['backend']!.mediaType).toBe(OCI_INDEX);
    const index = JSON.parse(readLayoutBlob(out, named['backend']!.digest).toString()) as { manifests: Array<{ digest: string; platform: unknown }> };
    expect(index.manifests.map((m) => m.platform)).toEqual([
      { architecture: 'amd64', os: 'linux' },
      { architecture: 'arm64', os: 'linux' },
    ]);
    const manifest = JSON.parse(readLayoutBlob(out, index.manifests[1]!.digest).toString()) as {
      config: { digest: string };
      layers: Array<{ digest: string }>;
    };
    const config = JSON.parse(readLayoutBlob(out, manifest.config.digest).toString()) as Record<string, any>;
    expect(config).toMatchObject({ architecture: 'arm64', os: 'linux', created: '1970-01-01T00:00:00Z', config: { User: '65532:65532' } });
    const diffIds = manifest.layers.map((l) => sha256(gunzipSync(readLayoutBlob(out, l.digest))));
    expect(config['rootfs'].diff_ids).toEqual(diffIds);
    mkdirSync(join(dir, 'not-a-layout'));
    expect(() => writeLayout(join(dir, 'not-a-layout'), { backend: idx })).toThrow('exists and is not an OCI image layout');
  });
});

describe('references', () => {
  it('--push targets: <registry>/<prefix>[:<tag>] gives one repository per image, tag default the version', () => {
    expect(pushRefs('127.0.0.1:5000/klutch-kit', '0.1.0')).toEqual({
      backend: '127.0.0.1:5000/klutch-kit/backend:0.1.0',
      konnector: '127.0.0.1:5000/klutch-kit/konnector:0.1.0',
    });
    expect(pushRefs('ghcr.io/my-org:v2', '0.1.0').konnector).toBe('ghcr.io/my-org/konnector:v2');
    expect(() => pushRefs('klutch', '0.1.0')).toThrow('expected "<registry>/<prefix>[:<tag>]"');
    expect(() => pushRefs('ghcr.io/my-org:latest', '0.1.0')).toThrow('not "latest"');
  });

  it('a base is named by digest; platforms are linux/amd64 and linux/arm64', () => {
    const d = `sha256:${'a'.repeat(64)}`;
    expect(parseDigestRef(`gcr.io/distroless/nodejs22-debian12:nonroot@${d}`)).toEqual({
      registry: 'gcr.io',
      repository: 'distroless/nodejs22-debian12',
      digest: d,
    });
    expect(() => parseDigestRef('gcr.io/distroless/nodejs22-debian12:nonroot')).toThrow('crane digest');
    expect(parsePlatform('linux/arm64')).toEqual({ os: 'linux', architecture: 'arm64' });
    expect(() => parsePlatform('linux/s390x')).toThrow('platform "linux/s390x" is not one of linux/amd64, linux/arm64');
  });

  it("the host's platform is Node.js' architecture in OCI's words; another architecture is named in the error", () => {
    expect(hostPlatform('x64')).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(hostPlatform('arm64')).toEqual({ os: 'linux', architecture: 'arm64' });
    expect(() => hostPlatform('s390x')).toThrow(`this host's architecture "s390x" is not one the images are built for (linux/amd64, linux/arm64)`);
  });
});

describe('klutch-kit image build options', () => {
  it('reports a bad option as a usage error (exit code 2) before any work', async () => {
    const io = { out: () => undefined, err: () => undefined };
    for (const [opts, msg] of [
      [{ platform: 'linux/s390x' }, 'platform "linux/s390x" is not one of'],
      [{ push: 'klutch' }, 'expected "<registry>/<prefix>[:<tag>]"'],
      [{ base: 'gcr.io/distroless/nodejs22-debian12:nonroot' }, 'is not "<registry>/<repository>@sha256:<64 hex>"'],
      [{ from: join(dir, 'missing.tgz') }, 'no such file'],
    ] as const) {
      const run = runImageBuild({ ...opts, output: join(dir, 'never') }, io);
      await expect(run).rejects.toBeInstanceOf(UsageError);
      await expect(run).rejects.toThrow(msg);
    }
  });
});
