/**
 * The Dex image (runtime/image/dex.ts) and Dex's place in the harness build (runtime/realinfra/build.ts): the
 * image's files, user and entrypoint, reproducible digests, clear errors for a missing or non-ELF binary, and the
 * build plan of tools/dex (static, stamped with the release, pinned to the release's pseudo-version).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildDexImage, DEX_BINARY_PATH, DEX_IMAGE_NAME, dexImage } from '../../runtime/image/dex.js';
import { layoutIndex, readLayoutBlob } from '../../runtime/image/oci.js';
import { readTar } from '../../runtime/image/tar.js';
import { ALL_COMPONENTS, DEX_COMPONENTS, DEX_SOURCE, defaultToolsDir, planComponent } from '../../runtime/realinfra/build.js';

const dir = mkdtempSync(join(tmpdir(), 'dex-image-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file that starts like an ELF executable (the image build checks only the magic). */
function fakeBinary(name: string, body: string): string {
  const f = join(dir, name);
  writeFileSync(f, Buffer.concat([Buffer.from('\x7fELF', 'latin1'), Buffer.from(body)]));
  return f;
}

const amd64 = { os: 'linux', architecture: 'amd64' } as const;

describe('the Dex image', () => {
  it('holds the binary at the construct’s path, passwd/group with the non-root user, its home and /tmp; runs as 65532', () => {
    const out = join(dir, 'layout');
    const idx = buildDexImage(out, { binary: fakeBinary('dex', 'one'), platform: amd64, version: DEX_SOURCE.version });
    expect(layoutIndex(out)[DEX_IMAGE_NAME]!.digest).toBe(idx.descriptor.digest);
    const [image] = idx.images;
    expect(image!.platform).toEqual(amd64);
    const config = JSON.parse(readLayoutBlob(out, JSON.parse(image!.manifest.toString()).config.digest).toString());
    expect(config.config).toMatchObject({ User: '65532:65532', Entrypoint: [DEX_BINARY_PATH], Cmd: ['serve', '/etc/dex/config.yaml'] });
    expect(config.config.Labels['org.opencontainers.image.version']).toBe('v2.45.1');
    const entries = readTar(gunzipSync(image!.layers[0]!.blob));
    const byPath = Object.fromEntries(entries.map((e) => [e.path, e]));
    expect(Object.keys(byPath).sort()).toEqual([
      'etc',
      'etc/group',
      'etc/passwd',
      'home',
      'home/nonroot',
      'tmp',
      'usr',
      'usr/local',
      'usr/local/bin',
      'usr/local/bin/dex',
    ]);
    const bin = byPath['usr/local/bin/dex']!;
    expect(bin.type === 'file' && bin.mode).toBe(0o755);
    expect(bin.type === 'file' && bin.data.toString('latin1')).toBe('\x7fELFone');
    const passwd = byPath['etc/passwd']!;
    expect(passwd.type === 'file' && passwd.data.toString()).toContain('nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin');
    const home = byPath['home/nonroot']!;
    expect(home.type === 'dir' && [home.mode, home.uid, home.gid]).toEqual([0o700, 65532, 65532]);
    const t = byPath['tmp']!;
    expect(t.type === 'dir' && t.mode).toBe(0o1777);
    // no shell
    expect(Object.keys(byPath).some((p) => p.startsWith('bin/') || p.endsWith('/sh'))).toBe(false);
  });

  it('is reproducible: the same binary gives the same digest, another binary another one', () => {
    const a = dexImage({ binary: fakeBinary('a', 'same'), platform: amd64, version: 'v2.45.1' });
    const b = dexImage({ binary: fakeBinary('b', 'same'), platform: amd64, version: 'v2.45.1' });
    const c = dexImage({ binary: fakeBinary('c', 'other'), platform: amd64, version: 'v2.45.1' });
    expect(b.descriptor.digest).toBe(a.descriptor.digest);
    expect(c.descriptor.digest).not.toBe(a.descriptor.digest);
  });

  it('refuses a missing binary and a file that is not an ELF executable, naming the path', () => {
    expect(() => dexImage({ binary: join(dir, 'nope'), version: 'v' })).toThrow(/binary ".*nope" does not exist; build it with npm run realinfra -- dex/);
    const script = join(dir, 'script');
    writeFileSync(script, '#!/bin/sh\n');
    expect(() => dexImage({ binary: script, version: 'v' })).toThrow(/".*script" is not an ELF executable/);
  });
});

describe('Dex in the harness build', () => {
  it('is a component of npm run realinfra, built static from tools/dex and stamped with the release', () => {
    expect(DEX_COMPONENTS).toEqual(['dex']);
    expect(ALL_COMPONENTS).toContain('dex');
    const plan = planComponent('dex', { cacheRoot: dir });
    expect(plan.pkg).toBe('github.com/dexidp/dex/cmd/dex');
    expect(plan.env['CGO_ENABLED']).toBe('0');
    expect(plan.args).toContain('-s -w -X main.version=v2.45.1');
    expect(plan.dir.startsWith(join(dir, 'realinfra', 'dex-'))).toBe(true);
    const goMod = readFileSync(join(defaultToolsDir(), 'dex', 'go.mod'), 'utf8');
    expect(goMod).toMatch(/github\.com\/dexidp\/dex v0\.0\.0-20260303133905-11d2eeb52b42/);
    expect(goMod).toMatch(/github\.com\/dexidp\/dex\/api\/v2 v2\.4\.0/);
  });

  it('refuses a wrapper module pinned to another Dex commit than DEX_SOURCE, naming both', () => {
    const tools = join(dir, 'tools');
    cpSync(join(defaultToolsDir(), 'dex'), join(tools, 'dex'), { recursive: true });
    const f = join(tools, 'dex', 'go.mod');
    writeFileSync(f, readFileSync(f, 'utf8').replace('v0.0.0-20260303133905-11d2eeb52b42', 'v0.0.0-20250101000000-000000000000'));
    expect(() => planComponent('dex', { cacheRoot: dir, toolsDir: tools })).toThrow(
      'tools/dex/go.mod: github.com/dexidp/dex is v0.0.0-20250101000000-000000000000, expected v0.0.0-20260303133905-11d2eeb52b42 (Dex v2.45.1)',
    );
  });
});
